import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { Incident, IncidentObjectList } from '../src/api/index.js';
import { kwokStagesYaml } from '../src/lab/index.js';
import { runBuiltCli } from './support/cli-process.js';
import { findPeers, startControlPlane } from './support/control-plane.js';
import type { ControlPlane } from './support/control-plane.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { until } from './support/wait.js';

/**
 * Incidents against what real upstream components write: the lab's kube-apiserver (its quota, ServiceAccount,
 * PodSecurity and policy admission), kube-scheduler, kube-controller-manager (ReplicaSet, Job, PersistentVolume,
 * HPA and node lifecycle controllers) and kwok, archived by `kevents serve --mirror`, each failure built as a
 * user would build it and its incident read from the served incidents route (and once through `kevents incidents`).
 *
 * Not produced here, because kwok runs no kubelet (the kubelet-side kinds have their own table tests in
 * src/diagnosis): image pulls, crash loops with their `Failed` cause, probes, OOM, evictions, mounts,
 * sandboxes, DNS and node disk. kwok's own events (Pulling, Started, …) are fixed texts.
 */

/** NODES are the kwok nodes, 2 CPU each; the last one is the node that stops. */
const NODES = ['kwok-node-0', 'kwok-node-1', 'kwok-node-2'];
const STOPPING_NODE = NODES[2]!;
/** RESERVED is a taint on every node: the taint case's pods do not tolerate it, every other pod does. */
const RESERVED = { key: 'kevents.test/reserved', value: 'yes', effect: 'NoSchedule' };
const TOLERATE = [{ key: RESERVED.key, operator: 'Equal', value: RESERVED.value, effect: RESERVED.effect }];
/** EXIT_LABEL marks the pods this file's kwok stage fails (phase Failed, exit code 1), as a Job's failing pods. */
const EXIT_LABEL = 'kevents.test/exit';
/**
 * HOSTILE is text a user controls (an annotation) that a real admission refusal repeats into an event. No
 * newline: the API server drops a messageExpression result with a line break for the policy's static message.
 */
const HOSTILE = 'nope"; rm -rf / #$(id) `whoami`\t\u001b[31mred\u001b[0m \'quoted\'';
/** NODE_GRACE is kube-controller-manager's node monitor grace: short, with kwok renewing each node's Lease every few seconds. */
const NODE_GRACE = '40s';
const NODE_LEASE_SECONDS = '20';

/**
 * kwokConfig is the lab's pod stages, plus one that fails a pod labelled EXIT_LABEL once its
 * containers are created (the lab's own `started` stage leaves those pods alone).
 */
function kwokConfig(): string {
  const docs = parseAllDocuments(kwokStagesYaml()).map((d) => d.toJS() as { metadata: { name: string }; spec: { selector: { matchExpressions: unknown[] } } });
  const started = docs.find((d) => d.metadata.name === 'kevents-lab-started');
  assert.ok(started, 'the lab has a started stage');
  started.spec.selector.matchExpressions.push({ key: `.metadata.labels["${EXIT_LABEL}"]`, operator: 'DoesNotExist' });
  const exit = {
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'Stage',
    metadata: { name: 'kevents-test-exit' },
    spec: {
      resourceRef: { apiGroup: 'v1', kind: 'Pod' },
      selector: {
        matchExpressions: [
          { key: '.metadata.deletionTimestamp', operator: 'DoesNotExist' },
          { key: '.status.phase', operator: 'In', values: ['Pending'] },
          { key: '.status.conditions.[] | select( .type == "Initialized" ) | .status', operator: 'In', values: ['True'] },
          { key: `.metadata.labels["${EXIT_LABEL}"]`, operator: 'Exists' },
        ],
      },
      delay: { durationMilliseconds: 200, jitterDurationMilliseconds: 500 },
      next: {
        statusTemplate: [
          '{{ $now := Now }}',
          'phase: Failed',
          'containerStatuses:',
          '{{ range .spec.containers }}',
          '- image: {{ .image | Quote }}',
          '  name: {{ .name | Quote }}',
          '  ready: false',
          '  started: false',
          '  restartCount: 0',
          '  state:',
          '    terminated:',
          '      exitCode: 1',
          '      reason: Error',
          '      startedAt: {{ $now | Quote }}',
          '      finishedAt: {{ $now | Quote }}',
          '{{ end }}',
        ].join('\n') + '\n',
      },
    },
  };
  return [...docs, exit].map((d) => stringify(d, { lineWidth: 0 })).join('---\n');
}

interface Template {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  nodeSelector?: Record<string, string>;
  tolerate?: boolean;
  cpu?: string;
  limits?: Record<string, string>;
  claim?: string;
  restartPolicy?: string;
  serviceAccount?: string;
}

function podTemplate(app: string, t: Template = {}): unknown {
  return {
    metadata: { labels: { app, ...t.labels }, ...(t.annotations !== undefined ? { annotations: t.annotations } : {}) },
    spec: {
      ...(t.nodeSelector !== undefined ? { nodeSelector: t.nodeSelector } : {}),
      ...(t.tolerate === false ? {} : { tolerations: TOLERATE }),
      ...(t.restartPolicy !== undefined ? { restartPolicy: t.restartPolicy } : {}),
      ...(t.serviceAccount !== undefined ? { serviceAccountName: t.serviceAccount } : {}),
      containers: [
        {
          name: 'app',
          image: 'registry.example/app:1',
          resources: { requests: { cpu: t.cpu ?? '100m', memory: '64Mi' }, ...(t.limits !== undefined ? { limits: t.limits } : {}) },
          ...(t.claim !== undefined ? { volumeMounts: [{ name: 'data', mountPath: '/data' }] } : {}),
        },
      ],
      ...(t.claim !== undefined ? { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: t.claim } }] } : {}),
    },
  };
}

function deployment(name: string, replicas: number, t: Template = {}): unknown {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: podTemplate(name, t) },
  };
}

async function stopKwok(k: ChildProcess): Promise<void> {
  if (k.exitCode !== null || k.signalCode !== null) return;
  const exited = new Promise((r) => k.once('exit', r));
  k.kill('SIGTERM');
  await exited;
}

interface SourceEvent {
  reason?: string;
  eventTime?: string | null;
  firstTimestamp?: string | null;
  involvedObject: { kind?: string; name?: string };
}

describe('incidents from a real control plane', { timeout: 900_000 }, () => {
  let cp: ControlPlane;
  const kwoks: ChildProcess[] = [];
  let kwokErr = '';
  let archive: ServerProcess;
  let dir = '';

  const api = async (method: string, path: string, body?: unknown): Promise<any> => {
    let r = await cp.request(method, path, body);
    // etcd under a loaded machine can time out a write kube-apiserver then answers 500 (it may or may not have
    // stored it): asked again, as a client would, a create that did land answers 409, and the object is read.
    for (let i = 0; i < 5 && r.status >= 500 && /etcdserver: request timed out|Timeout/.test(r.text); i++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      r = await cp.request(method, path, body);
      const name = (body as { metadata?: { name?: string } } | undefined)?.metadata?.name;
      if (method === 'POST' && r.status === 409 && name !== undefined) r = await cp.request('GET', `${path}/${name}`);
    }
    assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${r.text}`);
    return r.json;
  };

  /** namespace makes a namespace and waits for its default ServiceAccount, so no pod is refused for want of it. */
  const namespace = async (name: string, labels: Record<string, string> = {}): Promise<void> => {
    await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
    await until(`the default ServiceAccount of ${name}`, async () => (await cp.request('GET', `/api/v1/namespaces/${name}/serviceaccounts/default`)).status === 200, 120_000, 250);
  };

  const create = (ns: string, path: string, obj: unknown): Promise<unknown> => api('POST', `${path.startsWith('/apis/') ? path.replace('{ns}', ns) : `/api/v1/namespaces/${ns}/${path}`}`, obj);
  const createDeployment = (ns: string, d: unknown): Promise<unknown> => create(ns, '/apis/apps/v1/namespaces/{ns}/deployments', d);

  /** sourceEvents are the events the API server holds in a namespace ("" for all). */
  const sourceEvents = async (ns: string): Promise<SourceEvent[]> => (await api('GET', ns === '' ? '/api/v1/events' : `/api/v1/namespaces/${ns}/events`)).items as SourceEvent[];

  /** firstSeen is the earliest first time, in the API server, of a namespace's events of these reasons. */
  const firstSeen = async (ns: string, reasons: string[], filter: (e: SourceEvent) => boolean = () => true): Promise<string> => {
    const times = (await sourceEvents(ns))
      .filter((e) => reasons.includes(e.reason ?? '') && filter(e))
      .map((e) => Date.parse(e.eventTime ?? e.firstTimestamp ?? ''))
      .filter((ms) => !Number.isNaN(ms));
    assert.ok(times.length > 0, `no ${reasons.join('/')} event in ${ns || 'any namespace'}`);
    return new Date(Math.min(...times)).toISOString().replace('.000Z', 'Z');
  };

  const incidents = async (ns?: string): Promise<Incident[]> => {
    const path = ns === undefined ? '/apis/archive.kevents.io/v1alpha1/incidents' : `/apis/archive.kevents.io/v1alpha1/namespaces/${ns}/incidents`;
    const res = await fetch(`${archive.url}${path}?since=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`);
    assert.equal(res.status, 200, await res.clone().text());
    return ((await res.json()) as IncidentObjectList).items.map((i) => i.status);
  };

  /** incidentWhen polls the served incidents until one satisfies `ready`, then returns it. */
  const incidentWhen = async (what: string, ns: string | undefined, ready: (i: Incident) => boolean, timeoutMs = 240_000): Promise<Incident> => {
    let last: Incident[] = [];
    try {
      await until(what, async () => {
        last = await incidents(ns);
        return last.some(ready);
      }, timeoutMs, 1_000);
    } catch (e) {
      const events = (await sourceEvents(ns ?? '')).map((x) => `${x.involvedObject.kind}/${x.involvedObject.name} ${x.reason}: ${(x as { message?: string }).message ?? ''}`);
      throw new Error(`${String(e)}\nincidents: ${JSON.stringify(last, null, 1)}\nsource events:\n${events.join('\n')}\nkwok: ${kwokErr}`);
    }
    return last.find(ready)!;
  };

  /** oneLine checks that an incident's words stay one line each, whatever the events held. */
  const assertOneLine = (i: Incident): void => {
    const control = /[\u0000-\u001f\u007f]/;
    assert.doesNotMatch(i.cause, control, i.cause);
    for (const h of i.hints) {
      assert.doesNotMatch(h.command, control, h.command);
      assert.doesNotMatch(h.why, control, h.why);
    }
  };

  before(async () => {
    const peers = findPeers();
    cp = await startControlPlane({
      scheduler: true,
      controllerManager: true,
      controllerManagerArgs: [`--node-monitor-grace-period=${NODE_GRACE}`, '--node-monitor-period=2s'],
    });
    dir = mkdtempSync(join(tmpdir(), 'kevents-incidents-cp-'));
    writeFileSync(join(dir, 'kwok.yaml'), kwokConfig());
    // Two kwoks, as two groups of kubelets: the second simulates only the node that stops, so stopping it stops
    // that node's heartbeat (its Lease) and nothing else. kwok keeps a node's Lease while it runs, whatever its annotations.
    const startKwok = (manage: string): ChildProcess => {
      const child = spawn(peers.kwok, [
        `--kubeconfig=${cp.kubeconfigFile()}`,
        `--config=${join(dir, 'kwok.yaml')}`,
        manage,
        `--node-lease-duration-seconds=${NODE_LEASE_SECONDS}`,
        '--cidr=10.0.0.1/16',
        '--node-ip=10.0.255.1',
        '--v=WARN',
      ], { stdio: ['ignore', 'ignore', 'pipe'] });
      child.stderr?.on('data', (d: Buffer) => (kwokErr = (kwokErr + d.toString()).slice(-20_000)));
      return child;
    };
    kwoks.push(startKwok('--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake'), startKwok(`--manage-single-node=${STOPPING_NODE}`));
    for (const name of NODES) {
      const resources = { cpu: '2', memory: '4Gi', pods: '110' };
      await api('POST', '/api/v1/nodes', {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name, annotations: { 'kwok.x-k8s.io/node': name === STOPPING_NODE ? 'single' : 'fake', 'node.alpha.kubernetes.io/ttl': '0' }, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', type: 'kwok' } },
        spec: { taints: [RESERVED] },
        status: { capacity: resources, allocatable: resources },
      });
    }
    await until('the kwok nodes are Ready', async () => {
      const nodes = (await api('GET', '/api/v1/nodes')).items as { status?: { conditions?: { type: string; status: string }[] } }[];
      return nodes.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === NODES.length;
    }, 120_000, 500);
    archive = await startServer(['--storage', `sqlite:${join(dir, 'archive.db')}`, '--event-ttl', '0', '--mirror', cp.kubeconfigFile(), '--cluster', 'lab', '--log-level', 'warn']);

    // Every case starts at once, so the file waits for the slowest controller once, not for each in turn.
    await namespace('healthy');
    await createDeployment('healthy', deployment('web', 2));

    await namespace('quota');
    await create('quota', 'resourcequotas', { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'compute-resources' }, spec: { hard: { 'limits.memory': '1Gi' } } });
    // Admission refuses every pod while the quota's status is not computed yet: wait for it, as a real refusal is what is tested.
    await until('the quota controller has counted the namespace', async () => ((await api('GET', '/api/v1/namespaces/quota/resourcequotas/compute-resources')).status?.hard?.['limits.memory'] ?? '') !== '', 120_000, 250);
    await createDeployment('quota', deployment('web', 2, { limits: { memory: '2Gi' } }));

    // Two failures at once in one namespace, and a Warning no catalogue knows on one of the same Deployments.
    await namespace('mixed');
    await create('mixed', 'resourcequotas', { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'compute' }, spec: { hard: { 'limits.memory': '1Gi' } } });
    await until('the quota controller has counted mixed', async () => ((await api('GET', '/api/v1/namespaces/mixed/resourcequotas/compute')).status?.hard?.['limits.memory'] ?? '') !== '', 120_000, 250);
    await createDeployment('mixed', deployment('web', 2, { limits: { memory: '2Gi' } }));
    await createDeployment('mixed', deployment('big', 1, { cpu: '3', limits: { memory: '512Mi' } }));
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    await create('mixed', 'events', {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'web.rollout-stuck' },
      involvedObject: { kind: 'Deployment', namespace: 'mixed', name: 'web', apiVersion: 'apps/v1' },
      reason: 'RolloutStuck',
      message: 'rollout of web has not progressed',
      type: 'Warning',
      source: { component: 'rollout-watcher' },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    });

    await namespace('volume');
    await create('volume', 'persistentvolumeclaims', {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data' },
      spec: { storageClassName: 'missing-class', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    await createDeployment('volume', deployment('web', 1, { claim: 'data' }));

    await namespace('affinity');
    await createDeployment('affinity', deployment('web', 1, { nodeSelector: { disktype: 'ssd' } }));
    await namespace('taint');
    await createDeployment('taint', deployment('web', 1, { tolerate: false }));
    await namespace('cpu');
    await createDeployment('cpu', deployment('web', 1, { cpu: '3' }));

    await namespace('restricted', { 'pod-security.kubernetes.io/enforce': 'restricted' });
    await createDeployment('restricted', deployment('web', 1));

    // A ValidatingAdmissionPolicy repeats text the user controls (an annotation) in its refusal.
    await namespace('policy', { 'kevents.test/policy': 'on' });
    await api('POST', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'kevents-test-deny' },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }] },
        validations: [{ expression: "!has(object.metadata.annotations) || !('kevents.test/deny' in object.metadata.annotations)", messageExpression: "string(object.metadata.annotations['kevents.test/deny'])" }],
      },
    });
    await api('POST', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'kevents-test-deny' },
      spec: { policyName: 'kevents-test-deny', validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { 'kevents.test/policy': 'on' } } } },
    });
    // The policy reaches the API server's admission through an informer: wait until it refuses.
    await until('the admission policy is in force', async () => {
      const r = await cp.request('POST', '/api/v1/namespaces/policy/pods?dryRun=All', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probe', annotations: { 'kevents.test/deny': 'x' } }, spec: { containers: [{ name: 'app', image: 'x' }] } });
      return r.status === 422 || r.status === 403;
    }, 60_000, 500);
    await createDeployment('policy', deployment('web', 1, { annotations: { 'kevents.test/deny': HOSTILE } }));

    await namespace('job');
    await create('job', '/apis/batch/v1/namespaces/{ns}/jobs', {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'migrate' },
      spec: { backoffLimit: 1, template: podTemplate('migrate', { labels: { [EXIT_LABEL]: '1' }, restartPolicy: 'Never' }) },
    });

    // A Job refused for a ServiceAccount that does not exist yet: the test creates it, and the pods then fail.
    await namespace('batch');
    await create('batch', '/apis/batch/v1/namespaces/{ns}/jobs', {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'migrate' },
      spec: { backoffLimit: 0, template: podTemplate('migrate', { labels: { [EXIT_LABEL]: '1' }, restartPolicy: 'Never', serviceAccount: 'migrator' }) },
    });

    await namespace('hpa');
    await createDeployment('hpa', deployment('web', 1));
    await create('hpa', '/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers', {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'web' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        minReplicas: 1,
        maxReplicas: 3,
        metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
      },
    });

    await namespace('node');
    await createDeployment('node', deployment('web', 2, { nodeSelector: { 'kubernetes.io/hostname': STOPPING_NODE } }));
  });

  after(async () => {
    await archive?.stop();
    for (const k of kwoks) await stopKwok(k);
    await cp?.stop();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  it('a ResourceQuota refusing a Deployment\'s pods is create-forbidden-quota, rooted at the Deployment', async () => {
    const i = await incidentWhen('the quota incident', 'quota', (x) => x.kind === 'create-forbidden-quota');
    assert.equal(i.root, 'Deployment/web');
    assert.equal(i.objects[0], 'Deployment/web', 'the root leads its objects');
    assert.equal(i.namespace, 'quota');
    assert.equal(i.cluster, 'lab');
    assert.equal(i.facts.quota, 'compute-resources');
    assert.equal(i.facts.problem, 'exceeded');
    assert.match(i.facts.requested ?? '', /limits\.memory=2Gi/);
    assert.equal(i.facts.limited, 'limits.memory=1Gi');
    assert.equal(i.facts.objectKind, 'ReplicaSet');
    assert.ok(i.objects.includes(`ReplicaSet/${i.facts.objectName}`), i.objects.join(' '));
    assert.match(i.cause, /^ReplicaSet "web-[a-z0-9]+" cannot create pods: ResourceQuota "compute-resources" would be exceeded/);
    assert.ok(i.hints.some((h) => h.command === 'kubectl describe resourcequota compute-resources -n quota'), JSON.stringify(i.hints));
    assert.equal(i.ongoing, true);
    assert.equal(i.start.estimated, false);
    assert.equal(i.start.time, await firstSeen('quota', ['FailedCreate']));
    assertOneLine(i);
    assert.equal((await incidents('quota')).length, 1);
  });

  it('two failures at once and an unrecognised Warning on one Deployment: each catalogued cause on its own root, the Warning a row of the quota\'s incident, the CLI as the route, a short window as a long one', async () => {
    const quota = await incidentWhen('the mixed quota incident', 'mixed', (x) => x.kind === 'create-forbidden-quota' && x.evidence.some((r) => r.reason === 'RolloutStuck'));
    const cpu = await incidentWhen('the mixed cpu incident', 'mixed', (x) => x.kind === 'unschedulable-resources');
    assert.equal(quota.root, 'Deployment/web');
    assert.equal(quota.facts.quota, 'compute');
    assert.ok(quota.hints.some((h) => h.command === 'kubectl describe resourcequota compute -n mixed'), JSON.stringify(quota.hints));
    assert.equal(quota.start.time, await firstSeen('mixed', ['FailedCreate']), 'the quota refusal, not the later Warning, starts it');
    assert.equal(cpu.root, 'Deployment/big');
    const all = await incidents('mixed');
    assert.deepEqual(all.map((x) => x.kind).sort(), ['create-forbidden-quota', 'unschedulable-resources'], 'no `other` incident of the RolloutStuck Warning');
    for (const i of all) assertOneLine(i);

    // The CLI asks the served route: the same incidents for the same window.
    const since = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const cli = await runBuiltCli(['incidents', '-n', 'mixed', '--since-time', since, '-o', 'json', '--server', archive.url]);
    assert.equal(cli.code, 0, cli.stderr);
    const served = ((await (await fetch(`${archive.url}/apis/archive.kevents.io/v1alpha1/namespaces/mixed/incidents?since=${encodeURIComponent(since)}`)).json()) as IncidentObjectList).items.map((x) => x.status);
    const shape = (l: Incident[]): string[] => l.map((x) => `${x.kind} ${x.root} ${x.start.time}`).sort();
    assert.deepEqual(shape((JSON.parse(cli.stdout) as { incidents: Incident[] }).incidents), shape(served));

    // A window shorter than the failure: it still holds a refusal (the last one), and the look-back gives the same cause, root and start.
    const last = Math.max(...(await sourceEvents('mixed')).filter((e) => e.reason === 'FailedCreate').map((e) => Date.parse((e as { lastTimestamp?: string }).lastTimestamp ?? e.firstTimestamp ?? '')));
    const short = new Date(last - 1_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const r = await runBuiltCli(['incidents', '-n', 'mixed', '--since-time', short, '-o', 'json', '--server', archive.url]);
    assert.equal(r.code, 0, r.stderr);
    const inShort = (JSON.parse(r.stdout) as { incidents: Incident[] }).incidents.find((x) => x.kind === 'create-forbidden-quota');
    assert.ok(inShort !== undefined, r.stdout);
    assert.equal(inShort.root, quota.root);
    assert.equal(inShort.cause, quota.cause);
    assert.equal(inShort.start.time, quota.start.time);
  });

  it('a PVC whose StorageClass does not exist explains its pods that cannot schedule: one incident, rooted at the Deployment', async () => {
    const i = await incidentWhen('the volume incident', 'volume', (x) => x.objects.includes('PersistentVolumeClaim/data') && x.objects.some((o) => o.startsWith('Pod/')));
    assert.equal(i.kind, 'volume-provisioning');
    assert.equal(i.facts.storageClass, 'missing-class');
    assert.equal(i.facts.problem, 'class-missing');
    assert.equal(i.root, 'Deployment/web');
    assert.match(i.cause, /^PersistentVolumeClaim "data" cannot be provisioned: its StorageClass "missing-class" does not exist\.$/);
    assert.ok(i.objects.some((o) => /^Pod\/web-[a-z0-9]+-[a-z0-9]+$/.test(o)), i.objects.join(' '));
    // The pods' symptom is joined, not an incident of its own, and the claim is no incident of its own either.
    assert.equal((await incidents('volume')).length, 1);
    assert.ok(i.evidence.some((r) => r.reason === 'FailedScheduling'), JSON.stringify(i.evidence));
    assert.equal(i.start.time, await firstSeen('volume', ['ProvisioningFailed', 'FailedScheduling']));
    assertOneLine(i);
  });

  const scheduling: [string, string, RegExp, (i: Incident) => void][] = [
    ['affinity', 'unschedulable-affinity', /no node matches its node selector or affinity rules \(0\/3 nodes are available: "3 node\(s\) didn't match Pod's node affinity\/selector"\)/, () => undefined],
    ['taint', 'unschedulable-taint', /nodes carry the taint \{"kevents\.test\/reserved: yes"\} it does not tolerate/, (i) => assert.equal(i.facts.taint, 'kevents.test/reserved: yes')],
    ['cpu', 'unschedulable-resources', /no node has enough free "cpu" for its requests \(0\/3 nodes are available: "3 Insufficient cpu"\)/, (i) => assert.equal(i.facts.resources, 'cpu')],
  ];
  for (const [ns, kind, cause, facts] of scheduling) {
    it(`a pod the scheduler cannot place (${ns}) is ${kind}, rooted at its Deployment`, async () => {
      const i = await incidentWhen(`the ${ns} incident`, ns, (x) => x.kind === kind);
      assert.equal(i.root, 'Deployment/web');
      assert.equal(i.facts.nodes, '3');
      assert.equal(i.facts.objectKind, 'Pod');
      assert.ok(i.objects.includes(`Pod/${i.facts.objectName}`), i.objects.join(' '));
      assert.match(i.cause, cause);
      assert.equal(i.start.time, await firstSeen(ns, ['FailedScheduling']));
      facts(i);
      assertOneLine(i);
      assert.equal((await incidents(ns)).length, 1);
    });
  }

  it('PodSecurity restricted refusing a Deployment\'s pods is create-forbidden-admission', async () => {
    const i = await incidentWhen('the PodSecurity incident', 'restricted', (x) => x.kind === 'create-forbidden-admission');
    assert.equal(i.root, 'Deployment/web');
    assert.equal(i.facts.problem, 'pod-security');
    assert.deepEqual(i.objects, ['Deployment/web', `ReplicaSet/${i.facts.objectName}`]);
    assert.equal(i.facts.level, 'restricted:latest');
    assert.match(i.facts.detail ?? '', /allowPrivilegeEscalation != false/);
    assert.match(i.cause, /cannot create pods: they violate the namespace's PodSecurity level "restricted:latest"/);
    assert.ok(i.hints.some((h) => h.command === 'kubectl get namespace restricted --show-labels'), JSON.stringify(i.hints));
    assert.equal(i.start.time, await firstSeen('restricted', ['FailedCreate']));
    assertOneLine(i);
  });

  it('an admission policy\'s refusal that repeats hostile text stays one sentence and quoted commands', async () => {
    const i = await incidentWhen('the admission policy incident', 'policy', (x) => x.kind === 'create-forbidden-admission');
    assert.equal(i.root, 'Deployment/web');
    assert.equal(i.facts.problem, 'forbidden');
    assert.deepEqual(i.objects, ['Deployment/web', `ReplicaSet/${i.facts.objectName}`]);
    // The fact keeps the text as the API server wrote it; the sentence shows its controls, never obeys them.
    assert.ok((i.facts.detail ?? '').includes('rm -rf / #$(id) `whoami`'), i.facts.detail);
    assert.ok(i.cause.includes('rm -rf / #$(id) `whoami` '), i.cause);
    assert.ok((i.facts.detail ?? '').includes('\u001b[31m'), 'the event carries the escape as written');
    assert.ok(!i.cause.includes('\u001b'), i.cause);
    assertOneLine(i);
    assert.equal(i.start.time, await firstSeen('policy', ['FailedCreate']));
  });

  it('a Job whose pods fail past its backoff limit is job-backoff-limit, and says events do not record why', async () => {
    const i = await incidentWhen('the Job incident', 'job', (x) => x.kind === 'job-backoff-limit');
    assert.equal(i.root, 'Job/migrate');
    // The incident names the pods the Job created, and reads the last one's logs by its own name first.
    assert.equal(i.objects[0], 'Job/migrate');
    const pods = i.objects.filter((o) => /^Pod\/migrate-[a-z0-9]+$/.test(o));
    assert.ok(pods.length >= 1 && pods.length === i.objects.length - 1, i.objects.join(' '));
    assert.ok(pods.some((p) => i.hints[0]!.command === `kubectl logs ${p.slice('Pod/'.length)} -n job`), JSON.stringify(i.hints));
    assert.equal(i.facts.reason, 'BackoffLimitExceeded');
    assert.match(i.cause, /^Job "migrate" failed: its pods kept failing until it reached its backoff limit; events do not record why they failed/);
    assert.ok(i.hints.some((h) => h.command === 'kubectl logs job/migrate -n job'), JSON.stringify(i.hints));
    assert.equal(i.start.time, await firstSeen('job', ['BackoffLimitExceeded']));
    assertOneLine(i);
  });

  it('a Job refused for a missing ServiceAccount, then failing past its backoff limit: the resolved refusal is a step, not the cause', async () => {
    const refused = await incidentWhen('the ServiceAccount refusal', 'batch', (x) => x.kind === 'create-forbidden-serviceaccount');
    assert.equal(refused.root, 'Job/migrate');
    assert.equal(refused.facts.serviceAccount, 'migrator');
    assertOneLine(refused);
    await create('batch', 'serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'migrator' } });
    // The Job controller's next try creates the pod, kwok fails it, and the Job gives up (backoffLimit 0).
    const i = await incidentWhen('the backoff limit', 'batch', (x) => x.kind === 'job-backoff-limit');
    assert.equal(i.root, 'Job/migrate');
    assert.match(i.cause, /events do not record why they failed/);
    assert.equal(i.start.time, await firstSeen('batch', ['BackoffLimitExceeded']), 'the refusal that ended before is not the start');
    assert.ok(i.evidence.some((r) => r.reason === 'FailedCreate'), 'the resolved step stays in the evidence');
    assert.equal((await incidents('batch')).length, 1, 'the refusal is no incident of its own');
    assertOneLine(i);
    // `kevents incidents` prints the same cause from the served route (the archive names the cluster, so the table does).
    const r = await runBuiltCli(['incidents', '-n', 'batch', '--since', '1h', '--server', archive.url]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout.split('\n')[0] ?? '', /^CLUSTER +STATUS +SINCE +ROOT +CAUSE$/);
    assert.match(r.stdout.split('\n')[1] ?? '', /^lab +ongoing +\S+ +Job\/migrate +Job "migrate" failed: its pods kept failing until it reached its backoff limit; events do not record why they failed/);
  });

  it('an HPA with no metrics API is hpa-metrics', async () => {
    const i = await incidentWhen('the HPA incident', 'hpa', (x) => x.kind === 'hpa-metrics');
    assert.equal(i.root, 'HorizontalPodAutoscaler/web');
    assert.equal(i.facts.problem, 'no-api');
    assert.equal(i.facts.metric, 'cpu');
    assert.match(i.cause, /^HorizontalPodAutoscaler "web" cannot scale: it gets no "cpu" metrics from the metrics API/);
    assert.equal(i.start.time, await firstSeen('hpa', ['FailedGetResourceMetric', 'FailedComputeMetricsReplicas']));
    assertOneLine(i);
    assert.equal((await incidents('hpa')).length, 1);
  });

  it('a healthy rollout is no incident', async () => {
    await until('the healthy Deployment is available', async () => (await api('GET', '/apis/apps/v1/namespaces/healthy/deployments/web')).status?.availableReplicas === 2, 120_000, 500);
    // The rollout's own events reach the archive before its (absent) incidents are read.
    await until('the rollout is archived', async () => {
      const res = await fetch(`${archive.url}/api/v1/namespaces/healthy/events`);
      const items = ((await res.json()) as { items: { reason?: string }[] }).items;
      return items.filter((e) => e.reason === 'Started').length >= 2;
    }, 120_000, 500);
    assert.deepEqual(await incidents('healthy'), []);
  });

  it('a node that stops reporting is node-not-ready, one node incident over its pods', async () => {
    await until('the pods on the stopping node run', async () => (await api('GET', '/apis/apps/v1/namespaces/node/deployments/web')).status?.availableReplicas === 2, 120_000, 500);
    const pods = ((await api('GET', '/api/v1/namespaces/node/pods')).items as { metadata: { name: string } }[]).map((p) => `Pod/${p.metadata.name}`);
    // The kwok that simulates the node stops: its Lease is no longer renewed, and after the grace period
    // kube-controller-manager marks the node NotReady and its pods not ready.
    await stopKwok(kwoks[1]!);
    const i = await incidentWhen('the node incident', undefined, (x) => x.root === `Node/${STOPPING_NODE}` && pods.every((p) => x.objects.includes(p)), 300_000);
    assert.equal(i.kind, 'node-not-ready');
    assert.equal(i.namespace, '');
    assert.equal(i.facts.node, STOPPING_NODE);
    assert.match(i.cause, new RegExp(`^The node "${STOPPING_NODE}" stopped reporting \\(NotReady\\); its pods were marked not ready`));
    assert.ok(i.hints.some((h) => h.command === `kubectl describe node ${STOPPING_NODE}`), JSON.stringify(i.hints));
    assert.equal(i.start.time, await firstSeen('', ['NodeNotReady'], (e) => e.involvedObject.name === STOPPING_NODE || pods.includes(`Pod/${e.involvedObject.name ?? ''}`)));
    assertOneLine(i);
    // Its pods' NotReady is the node's incident, not one per pod or per namespace.
    assert.deepEqual((await incidents('node')).map((x) => x.root), [`Node/${STOPPING_NODE}`]);
  });
});
