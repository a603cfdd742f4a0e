import { escapeTerminalLine, shellArg, shellCommand } from '../api/index.js';
import type { CoreEvent, ShellArg, ShellCommand, TimelineHint } from '../api/index.js';

/**
 * Next steps by reason: each a command the reader can paste, filled in with the
 * pod, container, node, image or probe endpoint the events name. Those values are
 * event text, written by anyone who may create an Event: each goes through
 * shellArg (a valid name for its role, quoted where needed, else a placeholder
 * and the reason, added to the hint's why).
 */

/** HintContext is what a rule knows beyond the event: where the pods ran, and the object the timeline is for. */
export interface HintContext {
  /** nodeOfPod maps `namespace/pod` to the node it was scheduled to. */
  nodeOfPod: ReadonlyMap<string, string>;
  /** rootPod is the pod the timeline is for, if it is for one (Node events then point at it). */
  rootPod?: { namespace: string; name: string };
}

/** HintRule turns one kind of event into next steps. */
export interface HintRule {
  id: string;
  matches(e: CoreEvent): boolean;
  hints(e: CoreEvent, ctx: HintContext): TimelineHint[];
}

const IMAGE_PULL_REASONS = new Set(['ErrImagePull', 'ImagePullBackOff', 'ErrImageNeverPull', 'InvalidImageName']);
const PRESSURE_REASONS = new Set([
  'Evicted',
  'EvictionThresholdMet',
  'NodeHasDiskPressure',
  'NodeHasInsufficientMemory',
  'NodeHasInsufficientPID',
  'FreeDiskSpaceFailed',
  'ImageGCFailed',
]);
const OOM_REASONS = new Set(['OOMKilling', 'SystemOOM', 'OOMKilled']);

function message(e: CoreEvent): string {
  return (e.message ?? '').trim();
}

/** containerOf finds the container an event is about: its fieldPath, else its message. */
export function containerOf(e: CoreEvent): string | undefined {
  const fp = /^spec\.(?:initContainers|containers|ephemeralContainers)\{([^}]+)\}/.exec(e.involvedObject.fieldPath ?? '');
  if (fp) return fp[1];
  const m = /container "?([a-z0-9]([-a-z0-9]*[a-z0-9])?)"? in pod/.exec(message(e)) ?? /victim process: ([a-z0-9][-a-z0-9]*)/.exec(message(e));
  return m?.[1];
}

interface PodRef {
  namespace: string;
  name: string | undefined;
}

/** podOf is the pod an event points at: its involved Pod, else the timeline's pod. */
function podOf(e: CoreEvent, ctx: HintContext): PodRef {
  if (e.involvedObject.kind === 'Pod') {
    return { namespace: e.involvedObject.namespace ?? e.metadata.namespace ?? 'default', name: e.involvedObject.name };
  }
  return ctx.rootPod ?? { namespace: e.metadata.namespace ?? 'default', name: undefined };
}

/** nodeOf is the node an event happened on: the Node itself, the pod's scheduled node, else the reporting host. */
function nodeOf(e: CoreEvent, ctx: HintContext): ShellArg {
  if (e.involvedObject.kind === 'Node' && e.involvedObject.name) return shellArg(e.involvedObject.name, 'node');
  const pod = podOf(e, ctx);
  const scheduled = pod.name === undefined ? undefined : ctx.nodeOfPod.get(`${pod.namespace}/${pod.name}`);
  return shellArg(scheduled ?? (e.source?.host || e.reportingInstance || undefined), 'node');
}

/** podArgs is `<pod> -n <namespace>`, each checked. */
function podArgs(p: PodRef): ShellCommand {
  return shellCommand`${shellArg(p.name, 'pod')} -n ${shellArg(p.namespace, 'namespace')}`;
}

/** optional is a flag that is left out when the events name no value for it. */
function optional(value: string | undefined, flag: (a: ShellArg) => ShellCommand, role: 'container'): ShellCommand {
  return value === undefined ? shellCommand`` : flag(shellArg(value, role));
}

function containerFlag(c: string | undefined): ShellCommand {
  return optional(c, (a) => shellCommand` -c ${a}`, 'container');
}

/**
 * hint makes a TimelineHint of a built command, its why followed by the reasons for
 * any placeholder in it or in the commands `also` (those its why quotes).
 */
function hint(reason: string, cmd: ShellCommand, why: string, also: readonly ShellCommand[] = []): TimelineHint {
  const refused = [...new Set([cmd, ...also].flatMap((c) => c.refused))];
  const because = refused.length === 0 ? '' : ` (placeholders: ${refused.join('; ')})`;
  return { reason, command: cmd.command, why: escapeTerminalLine(why + because) };
}

/** jsonpath is a jsonpath template as one shell word (the template is ours; values in it are already checked). */
function jsonpath(template: string): ShellArg {
  return shellArg(template, 'text');
}

/** HINT_RULES are the rules, most specific first; an event takes the first that matches. */
export const HINT_RULES: readonly HintRule[] = [
  {
    id: 'FailedScheduling',
    matches: (e) => e.reason === 'FailedScheduling',
    hints(e, ctx) {
      const pod = podOf(e, ctx);
      const m = message(e);
      const out: TimelineHint[] = [
        hint('FailedScheduling', shellCommand`kubectl describe nodes`, `the scheduler said "${firstSentence(m)}": compare each node's Allocatable, Allocated resources and Taints with what the pod needs`),
      ];
      if (/Insufficient /.test(m)) {
        const what = [...m.matchAll(/Insufficient ([\w./-]*\w)/g)].map((x) => x[1]).filter((x, i, a) => a.indexOf(x) === i);
        out.push(
          hint(
            'FailedScheduling',
            shellCommand`kubectl get pod ${podArgs(pod)} -o jsonpath='{.spec.containers[*].resources.requests}'`,
            `the pod's requests: no node has enough ${what.join(' and ')} left for them`,
          ),
        );
      }
      if (/taint/.test(m)) {
        const compare = shellCommand`kubectl get pod ${podArgs(pod)} -o jsonpath='{.spec.tolerations}'`;
        out.push(
          hint(
            'FailedScheduling',
            shellCommand`kubectl get nodes -o custom-columns=NAME:.metadata.name,TAINTS:.spec.taints`,
            `nodes carry taints the pod does not tolerate: compare with ${compare.command}`,
            [compare],
          ),
        );
      }
      if (/affinity|selector/.test(m)) {
        out.push(
          hint(
            'FailedScheduling',
            shellCommand`kubectl get pod ${podArgs(pod)} -o jsonpath='{.spec.nodeSelector} {.spec.affinity.nodeAffinity}'`,
            "no node matches the pod's node selector or affinity: compare with kubectl get nodes --show-labels",
          ),
        );
      }
      return out;
    },
  },
  {
    id: 'ErrImagePull',
    matches: (e) =>
      IMAGE_PULL_REASONS.has(e.reason ?? '') ||
      ((e.reason === 'Failed' || e.reason === 'BackOff') && /pull(ing)? image|ErrImagePull|ImagePullBackOff/i.test(message(e))),
    hints(e, ctx) {
      const pod = podOf(e, ctx);
      const image = /image "([^"]+)"/.exec(message(e))?.[1];
      const reason = IMAGE_PULL_REASONS.has(e.reason ?? '') ? e.reason! : 'ErrImagePull';
      return [
        hint(
          reason,
          shellCommand`kubectl get pod ${podArgs(pod)} -o jsonpath='{.spec.containers[*].image}'`,
          image === undefined ? 'check the image reference: registry, repository and tag' : `check that the image reference "${image}" exists: registry, repository and tag`,
        ),
        hint(
          reason,
          shellCommand`kubectl get pod ${podArgs(pod)} -o jsonpath='{.spec.serviceAccountName} {.spec.imagePullSecrets}'`,
          'a private registry needs pull secrets, on the pod or its service account',
        ),
      ];
    },
  },
  {
    id: 'OOMKilled',
    matches: (e) => OOM_REASONS.has(e.reason ?? '') || /OOMKilled|out of memory/i.test(message(e)),
    hints(e, ctx) {
      const pod = podOf(e, ctx);
      const container = e.involvedObject.kind === 'Pod' ? containerOf(e) : undefined;
      return [
        hint(
          'OOMKilled',
          shellCommand`kubectl get pod ${podArgs(pod)} -o jsonpath='{range .status.containerStatuses[*]}{.name}: {.lastState.terminated.reason}{"\\n"}{end}'`,
          'OOMKilled here confirms which container ran out of memory',
        ),
        hint(
          'OOMKilled',
          shellCommand`kubectl get pod ${podArgs(pod)} -o jsonpath='{range .spec.containers[*]}{.name}: {.resources.limits.memory}{"\\n"}{end}'`,
          'the memory limit to raise, or the usage to bring down',
        ),
        hint('OOMKilled', shellCommand`kubectl logs ${podArgs(pod)}${containerFlag(container)} --previous`, 'what the container was doing when it was killed'),
      ];
    },
  },
  {
    id: 'BackOff',
    matches: (e) => e.reason === 'CrashLoopBackOff' || (e.reason === 'BackOff' && /restarting failed container/i.test(message(e))),
    hints(e, ctx) {
      const pod = podOf(e, ctx);
      const container = containerOf(e);
      const copy = shellArg(pod.name === undefined ? undefined : `${pod.name}-debug`, 'pod');
      const containerOpt = optional(container, (a) => shellCommand` --container=${a}`, 'container');
      return [
        hint(e.reason ?? 'BackOff', shellCommand`kubectl logs ${podArgs(pod)}${containerFlag(container)} --previous`, 'the output of the last run that crashed'),
        hint(
          e.reason ?? 'BackOff',
          shellCommand`kubectl debug ${podArgs(pod)} -it --copy-to=${copy}${containerOpt} -- sh`,
          'a copy of the pod with a shell in place of the failing command, to start it by hand',
        ),
      ];
    },
  },
  {
    id: 'Unhealthy',
    matches: (e) => e.reason === 'Unhealthy' || e.reason === 'ProbeWarning',
    hints(e, ctx) {
      const pod = podOf(e, ctx);
      const m = message(e);
      const probe = /^(Liveness|Readiness|Startup) probe/.exec(m)?.[1]?.toLowerCase() ?? 'readiness';
      const container = containerOf(e);
      const url = /https?:\/\/[^/:\s"]+:(\d+)(\/[^\s"]*)?/.exec(m);
      const port = shellArg(url?.[1], 'port');
      const path = url?.[2] ?? '/';
      const named = container === undefined ? undefined : shellArg(container, 'container');
      // A container name that is not a valid label stays out of the jsonpath: every container's probe is shown instead.
      const selector = named?.ok === true ? `?(@.name=="${container}")` : '*';
      const curl = shellCommand`curl -v ${shellArg(`http://127.0.0.1:${port.ok ? url?.[1] : '<port>'}${path}`, 'text')}`;
      return [
        hint(
          'Unhealthy',
          shellCommand`kubectl get pod ${podArgs(pod)} -o jsonpath=${jsonpath(`{.spec.containers[${selector}].${probe}Probe}`)}`,
          `the ${probe} probe: its path, port, timeout and thresholds`,
          named === undefined ? [] : [shellCommand`${named}`],
        ),
        hint(
          'Unhealthy',
          shellCommand`kubectl port-forward pod/${shellArg(pod.name, 'pod')} -n ${shellArg(pod.namespace, 'namespace')} ${port}:${port}`,
          `then try the endpoint as the probe does: ${curl.command}`,
          [curl],
        ),
      ];
    },
  },
  {
    id: 'Evicted',
    matches: (e) => PRESSURE_REASONS.has(e.reason ?? ''),
    hints(e, ctx) {
      const node = nodeOf(e, ctx);
      return [
        hint(e.reason ?? 'Evicted', shellCommand`kubectl describe node ${node}`, "the node's Conditions (MemoryPressure, DiskPressure, PIDPressure) and what is allocated on it"),
        hint(e.reason ?? 'Evicted', shellCommand`kubectl get pods -A --field-selector spec.nodeName=${node}`, 'the other pods on that node, competing for the same memory and disk'),
      ];
    },
  },
];

/** DISTROLESS_RULE catches containers without a shell, whatever the reason of the event. */
export const DISTROLESS_RULE: HintRule = {
  id: 'distroless',
  matches: (e) => /distroless|executable file not found in \$PATH|exec: "?(?:sh|bash|\/bin\/sh)"?/.test(message(e)),
  hints(e, ctx) {
    const pod = podOf(e, ctx);
    const container = containerOf(e);
    const target = optional(container, (a) => shellCommand` --target=${a}`, 'container');
    return [
      hint(
        'distroless',
        shellCommand`kubectl debug -it ${podArgs(pod)} --image=busybox:1.36${target}`,
        'the container has no shell: an ephemeral debug container shares its processes and filesystem',
      ),
    ];
  },
};

function firstSentence(m: string): string {
  const cut = m.indexOf('. ');
  return cut < 0 ? m.replace(/\.$/, '') : m.slice(0, cut);
}

/**
 * hintsFor lists the next steps for events in time order: the rules of the
 * earliest trouble first, each rule once (for the first event it matches), so
 * ten crashing replicas give one set of steps rather than ten.
 */
export function hintsFor(events: readonly CoreEvent[], ctx: HintContext): TimelineHint[] {
  const out: TimelineHint[] = [];
  const seen = new Set<string>();
  const push = (hs: TimelineHint[]): void => {
    for (const h of hs) {
      if (seen.has(h.command)) continue;
      seen.add(h.command);
      out.push(h);
    }
  };
  const fired = new Set<string>();
  for (const e of events) {
    for (const rule of [HINT_RULES.find((r) => r.matches(e)), DISTROLESS_RULE.matches(e) ? DISTROLESS_RULE : undefined]) {
      if (rule === undefined || fired.has(rule.id)) continue;
      fired.add(rule.id);
      push(rule.hints(e, ctx));
    }
  }
  return out;
}
