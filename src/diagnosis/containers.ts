import type { Facts, FailureKind, StepTemplate } from './kind.js';
import { renderStep } from './steps.js';
import { capital, containerOf, containerWords, defined, firstGroup, inNamespace, podWords, present, said, theNode, thePod } from './text.js';

/**
 * Container failures the kubelet reports on a pod: missing configuration, a
 * command that cannot start, the crash loop, probes, the pod sandbox and DNS.
 */

function logsStep(f: Facts): StepTemplate {
  return {
    words: ['kubectl', 'logs', ...podWords(f), ...containerWords(f, '-c'), '--previous'],
    why: 'the output of the last run that ended',
  };
}

/** debugCopyStep starts a copy of the pod with a shell in place of the failing command (the original keeps crashing untouched). */
function debugCopyStep(f: Facts): StepTemplate {
  const pod = f.objectKind === 'Pod' ? f.objectName : f.pod;
  return {
    words: [
      'kubectl',
      'debug',
      ...podWords(f),
      '-it',
      { value: pod === undefined ? undefined : `${pod}-debug`, role: 'pod', prefix: '--copy-to=' },
      ...containerWords(f, '--container='),
      '--',
      'sh',
    ],
    why: 'a copy of the pod with a shell in place of the failing command, to start it by hand',
  };
}

/** PROBE_URL reads the port and path of an HTTP probe's failure (`Get "http://10.0.0.5:8080/healthz": …`). */
const PROBE_URL = /https?:\/\/[^/:\s"]+:(\d+)(\/[^\s"]*)?/;

/**
 * portForwardStep forwards the probe's port, for an HTTP probe whose failure names it; its why says how to try
 * the endpoint as the probe does, that command checked and quoted as any step's (the path is event text).
 */
function portForwardStep(f: Facts): StepTemplate[] {
  const url = PROBE_URL.exec(f.output ?? '');
  if (url === null) return [];
  const port = url[1]!;
  const curl = renderStep({ words: ['curl', '-v', { value: `http://127.0.0.1:${port}${url[2] ?? '/'}`, role: 'text' }], why: '' });
  return [
    {
      words: ['kubectl', 'port-forward', { value: f.objectKind === 'Pod' ? f.objectName : f.pod, role: 'pod', prefix: 'pod/' }, '-n', { value: f.namespace, role: 'namespace' }, { value: port, role: 'port' }],
      // renderStep's why of a refused value is ` (the value … is …)`, appended as any step's.
      why: `then try the endpoint as the probe does: ${curl.command}${curl.why}`,
    },
  ];
}

/** nodeResolvConf opens a DNS sentence: `The node "node-a"'s resolv.conf`, or `A node's resolv.conf`. */
function nodeResolvConf(f: Facts): string {
  return present(f.node) ? `The node ${said(f.node)}'s resolv.conf` : "A node's resolv.conf";
}

function lastStateStep(f: Facts): StepTemplate {
  return {
    words: ['kubectl', 'get', 'pod', ...podWords(f), '-o', 'jsonpath={range .status.containerStatuses[*]}{.name}: {.lastState.terminated.reason} exit {.lastState.terminated.exitCode}{"\\n"}{end}'],
    why: 'how each container last ended: OOMKilled, Error, and its exit code',
  };
}

/** CONTAINER_KINDS are the kubelet's container failure kinds. */
export const CONTAINER_KINDS: readonly FailureKind[] = [
  {
    // pkg/kubelet/kuberuntime/kuberuntime_container.go: `Failed` `Error: %v` with the environment's error from
    // pkg/kubelet/kubelet_pods.go (`configmap "%s" not found`, `secret "%s" not found`,
    // `couldn't find key %v in ConfigMap %v/%v`, `couldn't find key %v in Secret %v/%v`).
    id: 'config-missing',
    role: 'cause',
    subject: 'object',
    reasons: ['Failed', 'CreateContainerConfigError'],
    match: (e) => {
      const m = e.message ?? '';
      const key = /couldn't find key (\S+) in (ConfigMap|Secret) ([^/\s]+)\/(\S+)/i.exec(m);
      if (key) return { key: key[1]!, sourceKind: key[2]!.toLowerCase() === 'secret' ? 'Secret' : 'ConfigMap', source: key[4]! };
      const obj = /\b(configmap|secret)s? "([^"]*)" not found/i.exec(m);
      if (obj && /^Error: /.test(m.trim())) return { sourceKind: obj[1]!.toLowerCase() === 'secret' ? 'Secret' : 'ConfigMap', source: obj[2]! };
      return undefined;
    },
    cause: (f) =>
      present(f.key)
        ? `${thePod(f)} cannot start its container: ${present(f.source) ? `the ${f.sourceKind} ${said(f.source)}` : `its ${f.sourceKind}`} has no key ${said(f.key)}.`
        : `${thePod(f)} cannot start its container: it refers to ${present(f.source) ? `the ${f.sourceKind} ${said(f.source)}, which does` : `a ${f.sourceKind} that does`} not exist${inNamespace(f)}.`,
    steps: (f) => [
      { words: ['kubectl', 'get', f.sourceKind === 'Secret' ? 'secret' : 'configmap', { value: f.source, role: 'name' }, '-n', { value: f.namespace, role: 'namespace' }, '-o', 'yaml'], why: 'whether it exists and the keys it has' },
      { words: ['kubectl', 'get', 'pod', ...podWords(f), '-o', 'jsonpath={.spec.containers[*].env} {.spec.containers[*].envFrom}'], why: 'where the pod refers to it' },
    ],
  },
  {
    // The runtime's start error in `Error: %v` (kuberuntime_container.go startContainer): runc's
    // `exec: "%s": executable file not found in $PATH`, `exec format error` (an image for another CPU),
    // `no such file or directory` and `permission denied` for the entrypoint.
    id: 'start-error',
    role: 'cause',
    subject: 'object',
    reasons: ['Failed', 'StartError', 'RunContainerError'],
    match: (e) => {
      const m = e.message ?? '';
      const notFound = firstGroup(/exec: "([^"]*)": executable file not found/, m);
      if (notFound !== undefined) return { command: notFound, problem: 'not-found' };
      if (/exec format error/.test(m)) return { problem: 'exec-format' };
      const noFile = firstGroup(/exec: "([^"]*)": (?:stat [^:]*: )?no such file or directory/, m) ?? firstGroup(/exec ([^:\s]+): no such file or directory/, m);
      if (noFile !== undefined) return { command: noFile, problem: 'not-found' };
      const denied = firstGroup(/exec: "([^"]*)": permission denied/, m) ?? firstGroup(/exec ([^:\s]+): permission denied/, m);
      if (denied !== undefined) return { command: denied, problem: 'permission' };
      return undefined;
    },
    cause: (f) =>
      f.problem === 'exec-format'
        ? `${containerOf(f)} cannot start: its binary is built for another CPU architecture (exec format error).`
        : f.problem === 'permission'
          ? `${containerOf(f)} cannot start: its command${present(f.command) ? ` ${said(f.command)}` : ''} is not executable.`
          : `${containerOf(f)} cannot start: its command${present(f.command) ? ` ${said(f.command)}` : ''} is not in the image (a typo, or an image without it).`,
    steps: (f) => [
      { words: ['kubectl', 'get', 'pod', ...podWords(f), '-o', 'jsonpath={range .spec.containers[*]}{.name}: {.image} {.command} {.args}{"\\n"}{end}'], why: 'the command and image of each container' },
      // An image without a shell (distroless) is looked into from an ephemeral container that shares its processes and files.
      ...(f.problem === 'not-found'
        ? [
            {
              words: ['kubectl', 'debug', '-it', ...podWords(f), '--image=busybox:1.36', ...containerWords(f, '--target=')],
              why: 'an ephemeral debug container sharing the pod\'s processes and filesystem, to look for the command',
            },
          ]
        : []),
    ],
  },
  {
    // pkg/kubelet/kuberuntime/kuberuntime_manager.go doBackOff: `Back-off restarting failed container %s in pod
    // %s` (older: `Back-off restarting failed container`). It says the container keeps ending, not why: an OOM
    // kill is only in the pod's last state, never an event.
    id: 'crash-loop',
    role: 'symptom',
    subject: 'object',
    reasons: ['BackOff', 'CrashLoopBackOff'],
    match: (e) => {
      const m = e.message ?? '';
      if (e.reason === 'CrashLoopBackOff') return {};
      if (!/Back-off restarting failed container/i.test(m)) return undefined;
      return defined({ container: firstGroup(/failed container (\S+) in pod/, m) });
    },
    cause: (f) =>
      `${containerOf(f)} is crash-looping; events do not record why: read its last state and logs.`,
    steps: (f) => [lastStateStep(f), logsStep(f), debugCopyStep(f)],
    explainedBy: ['start-error', 'config-missing', 'probe-liveness', 'oom-node', 'other'],
  },
  {
    // pkg/kubelet/prober/prober.go: `Unhealthy` `%s probe failed: %s` / `%s probe errored: %v` (1.25+: `%s probe
    // errored and resulted in %s state: %s`); the restart,
    // kuberuntime_manager.go: `Killing` (Normal) `Container %s failed liveness probe, will be restarted`.
    id: 'probe-liveness',
    role: 'cause',
    subject: 'object',
    reasons: ['Unhealthy', 'Killing'],
    match: (e) => {
      const m = e.message ?? '';
      const killed = /Container (\S+) failed (liveness|startup) probe/.exec(m);
      if (killed) return { container: killed[1]!, probe: killed[2]! };
      const p = /^(Liveness|Startup) probe (?:failed|errored(?: and resulted in \w+ state)?):?\s*([\s\S]*)$/.exec(m.trim());
      return p ? defined({ probe: p[1]!.toLowerCase(), output: p[2]?.trim() === '' ? undefined : p[2]?.trim() }) : undefined;
    },
    cause: (f) =>
      `${containerOf(f)} is restarted by the kubelet because its ${f.probe} probe fails${present(f.output) ? ` (${said(f.output)})` : ''}.`,
    steps: (f) => [
      { words: ['kubectl', 'get', 'pod', ...podWords(f), '-o', `jsonpath={.spec.containers[*].${f.probe === 'startup' ? 'startup' : 'liveness'}Probe}`], why: 'the probe: its path, port, timeout and thresholds, to compare with what the app serves' },
      logsStep(f),
      ...portForwardStep(f),
    ],
  },
  {
    // pkg/kubelet/prober/prober.go: `Unhealthy` `Readiness probe failed: %s` / `Readiness probe errored: %v` (1.25+:
    // `… errored and resulted in %s state: %s`).
    id: 'probe-readiness',
    role: 'cause',
    subject: 'object',
    reasons: ['Unhealthy'],
    match: (e) => {
      const p = /^Readiness probe (?:failed|errored(?: and resulted in \w+ state)?):?\s*([\s\S]*)$/.exec((e.message ?? '').trim());
      return p ? defined({ probe: 'readiness', output: p[1]?.trim() === '' ? undefined : p[1]?.trim() }) : undefined;
    },
    cause: (f) =>
      `${thePod(f)} is not ready, so Services send it no traffic: its readiness probe fails${present(f.output) ? ` (${said(f.output)})` : ''}.`,
    steps: (f) => [
      { words: ['kubectl', 'get', 'pod', ...podWords(f), '-o', 'jsonpath={.spec.containers[*].readinessProbe}'], why: 'the probe: its path, port, timeout and thresholds' },
      { words: ['kubectl', 'logs', ...podWords(f), ...containerWords(f, '-c')], why: 'what the app says while it is not ready' },
      ...portForwardStep(f),
    ],
  },
  {
    // kuberuntime_manager.go SyncPod: `FailedCreatePodSandBox` `Failed to create pod sandbox: %v` (the CNI
    // plugin's error: `plugin type="%s" failed (add): …`); `NetworkNotReady` `network is not ready: %v`.
    // A node's network failing fails every pod there, so the node is the incident.
    id: 'sandbox-failed',
    role: 'cause',
    subject: 'node',
    reasons: ['FailedCreatePodSandBox', 'NetworkNotReady'],
    match: (e) => {
      const m = e.message ?? '';
      if (e.reason === 'NetworkNotReady') return defined({ error: m, plugin: firstGroup(/reason:(\S+)/, m) });
      if (!/Failed to create pod sandbox/i.test(m)) return undefined;
      return defined({ error: m.replace(/^Failed to create pod sandbox:\s*/i, ''), plugin: firstGroup(/plugin type="([^"]*)"/, m) });
    },
    cause: (f) =>
      `${capital(theNode(f))} cannot create pod sandboxes${present(f.plugin) ? ` (network plugin ${said(f.plugin)})` : ''}${present(f.error) ? `: ${said(f.error)}` : ''}.`,
    steps: (f) => [
      { words: ['kubectl', 'get', 'pods', '-A', '-o', 'wide', '--field-selector', { value: f.node, role: 'node', prefix: 'spec.nodeName=' }], why: "the node's pods: is its network plugin's pod (CNI DaemonSet) running there?" },
      { words: ['kubectl', 'describe', 'node', { value: f.node, role: 'node' }], why: "the node's conditions and recent events" },
    ],
  },
  {
    // pkg/kubelet/network/dns/dns.go: `Nameserver limits were exceeded, some nameservers have been omitted, the
    // applied nameserver line is: %s`, and `Search Line limits were exceeded, …`. Every pod of the node gets it.
    id: 'dns-config',
    role: 'cause',
    subject: 'node',
    reasons: ['DNSConfigForming'],
    match: (e) => {
      const m = e.message ?? '';
      const ns = firstGroup(/applied nameserver line is:\s*(.*)$/, m);
      if (ns !== undefined) return { limit: 'nameservers', applied: ns };
      const search = firstGroup(/applied search line is:\s*(.*)$/, m);
      return search !== undefined ? { limit: 'search', applied: search } : { limit: 'dns', applied: m };
    },
    cause: (f) =>
      f.limit === 'search'
        ? `${nodeResolvConf(f)} has more search domains than the kubelet passes on; ${present(f.applied) ? `its pods use ${said(f.applied)}` : 'it drops the rest'}. Cosmetic unless a dropped domain mattered.`
        : `${nodeResolvConf(f)} lists more than 3 nameservers; ${present(f.applied) ? `the kubelet keeps ${said(f.applied)}` : 'the kubelet keeps the first 3'}. Cosmetic unless a dropped server mattered.`,
    steps: (f) => [{ words: ['kubectl', 'describe', 'node', { value: f.node, role: 'node' }], why: "the node whose /etc/resolv.conf (or the kubelet's --resolv-conf) to trim" }],
  },
];
