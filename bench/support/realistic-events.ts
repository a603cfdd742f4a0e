import type { CoreEvent } from '../../src/api/index.js';
import type { ArchiveWrite } from '../../src/storage/index.js';

/**
 * realistic-events generates events whose messages follow the formats upstream
 * components write (kubelet, scheduler, controllers), with varied names,
 * images, nodes and numbers and a reason mix like a busy cluster's: mostly the
 * pod lifecycle (Scheduled, Pulling, Pulled, Created, Started), some probes and
 * back-offs, few mount, quota and certificate failures. Deterministic for a seed.
 */

/** Rng is a small deterministic generator (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const APPS = ['checkout', 'cart', 'web', 'api', 'payments', 'search', 'catalog', 'auth', 'orders', 'shipping', 'inventory', 'recommender', 'frontend', 'worker', 'ingest'];
const SUFFIXES = ['', '-db', '-cache', '-api', '-worker', '-cron'];
const IMAGES = ['nginx', 'redis', 'postgres', 'envoyproxy/envoy', 'busybox', 'python', 'node', 'golang', 'grafana/grafana', 'prom/prometheus'];
const CONTAINERS = ['app', 'sidecar', 'istio-proxy', 'init-db', 'migrate', 'main', 'envoy', 'log-shipper'];
const VOLUMES = ['certs', 'config', 'data', 'secrets', 'tls', 'cache'];

interface Ctx {
  r: () => number;
  ns: string;
  pod: string;
  node: string;
  container: string;
  image: string;
  ip: string;
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: () => number, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));
const hex = (r: () => number, n: number): string => Array.from({ length: n }, () => '0123456789abcdef'[Math.floor(r() * 16)]).join('');

/** Kind is one event shape: its weight in the mix, the reporter, and how its reason and message are written. */
interface Kind {
  weight: number;
  reason: string;
  type: 'Normal' | 'Warning';
  component: 'kubelet' | 'default-scheduler' | 'replicaset-controller' | 'deployment-controller' | 'job-controller' | 'node-controller' | 'persistentvolume-controller';
  object: 'Pod' | 'ReplicaSet' | 'Deployment' | 'Job' | 'Node' | 'PersistentVolumeClaim';
  message(c: Ctx): string;
}

const KINDS: Kind[] = [
  { weight: 60, reason: 'Scheduled', type: 'Normal', component: 'default-scheduler', object: 'Pod', message: (c) => `Successfully assigned ${c.ns}/${c.pod} to ${c.node}` },
  { weight: 55, reason: 'Pulling', type: 'Normal', component: 'kubelet', object: 'Pod', message: (c) => `Pulling image "${c.image}"` },
  {
    weight: 50,
    reason: 'Pulled',
    type: 'Normal',
    component: 'kubelet',
    object: 'Pod',
    message: (c) =>
      c.r() < 0.5
        ? `Container image "${c.image}" already present on machine`
        : `Successfully pulled image "${c.image}" in ${(c.r() * 20).toFixed(3)}s (${(c.r() * 30).toFixed(3)}s including waiting). Image size: ${int(c.r, 2_000_000, 900_000_000)} bytes.`,
  },
  { weight: 60, reason: 'Created', type: 'Normal', component: 'kubelet', object: 'Pod', message: (c) => `Created container: ${c.container}` },
  { weight: 60, reason: 'Started', type: 'Normal', component: 'kubelet', object: 'Pod', message: (c) => `Started container ${c.container}` },
  { weight: 20, reason: 'Killing', type: 'Normal', component: 'kubelet', object: 'Pod', message: (c) => `Stopping container ${c.container}` },
  { weight: 25, reason: 'SuccessfulCreate', type: 'Normal', component: 'replicaset-controller', object: 'ReplicaSet', message: (c) => `Created pod: ${c.pod}` },
  { weight: 10, reason: 'SuccessfulDelete', type: 'Normal', component: 'replicaset-controller', object: 'ReplicaSet', message: (c) => `Deleted pod: ${c.pod}` },
  {
    weight: 12,
    reason: 'ScalingReplicaSet',
    type: 'Normal',
    component: 'deployment-controller',
    object: 'Deployment',
    message: (c) => `Scaled ${c.r() < 0.6 ? 'up' : 'down'} replica set ${c.pod.replace(/-[a-z0-9]+$/, '')} from ${int(c.r, 1, 9)} to ${int(c.r, 0, 10)}`,
  },
  { weight: 18, reason: 'BackOff', type: 'Warning', component: 'kubelet', object: 'Pod', message: (c) => `Back-off restarting failed container ${c.container} in pod ${c.pod}_${c.ns}(${hex(c.r, 8)}-${hex(c.r, 4)}-${hex(c.r, 4)}-${hex(c.r, 4)}-${hex(c.r, 12)})` },
  {
    weight: 15,
    reason: 'Unhealthy',
    type: 'Warning',
    component: 'kubelet',
    object: 'Pod',
    message: (c) =>
      c.r() < 0.5
        ? `Readiness probe failed: Get "http://${c.ip}:${int(c.r, 8000, 9100)}/healthz": dial tcp ${c.ip}:${int(c.r, 8000, 9100)}: connect: connection refused`
        : `Liveness probe failed: HTTP probe failed with statuscode: ${pick(c.r, [500, 502, 503, 504])}`,
  },
  {
    weight: 8,
    reason: 'FailedScheduling',
    type: 'Warning',
    component: 'default-scheduler',
    object: 'Pod',
    message: (c) => {
      const n = int(c.r, 3, 60);
      const cpu = int(c.r, 1, n);
      return `0/${n} nodes are available: ${cpu} Insufficient cpu, ${n - cpu} node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }. preemption: 0/${n} nodes are available: ${cpu} No preemption victims found for incoming pod, ${n - cpu} Preemption is not helpful for scheduling.`;
    },
  },
  {
    weight: 4,
    reason: 'FailedMount',
    type: 'Warning',
    component: 'kubelet',
    object: 'Pod',
    message: (c) =>
      c.r() < 0.5
        ? `MountVolume.SetUp failed for volume "${pick(c.r, VOLUMES)}" : secret "${c.pod.split('-')[0]}-${pick(c.r, VOLUMES)}" not found`
        : `MountVolume.SetUp failed for volume "kube-api-access-${hex(c.r, 5)}" : object "${c.ns}"/"kube-root-ca.crt" not registered`,
  },
  {
    weight: 3,
    reason: 'Failed',
    type: 'Warning',
    component: 'kubelet',
    object: 'Pod',
    message: (c) =>
      `Failed to pull image "${c.image}": rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/${c.image}": failed to resolve reference "docker.io/library/${c.image}": docker.io/library/${c.image}: not found`,
  },
  { weight: 3, reason: 'NodeNotReady', type: 'Warning', component: 'node-controller', object: 'Node', message: (c) => `Node ${c.node} status is now: NodeNotReady` },
  { weight: 2, reason: 'Completed', type: 'Normal', component: 'job-controller', object: 'Job', message: () => 'Job completed' },
  {
    weight: 2,
    reason: 'FailedCreate',
    type: 'Warning',
    component: 'replicaset-controller',
    object: 'ReplicaSet',
    message: (c) => `Error creating: pods "${c.pod}" is forbidden: exceeded quota: compute-resources, requested: limits.cpu=${int(c.r, 1, 4)}, used: limits.cpu=${int(c.r, 4, 16)}, limited: limits.cpu=16`,
  },
  {
    weight: 1,
    reason: 'Evicted',
    type: 'Warning',
    component: 'kubelet',
    object: 'Pod',
    message: (c) => `The node was low on resource: memory. Threshold quantity: 100Mi, available: ${int(c.r, 10, 99)}Mi. Container ${c.container} was using ${int(c.r, 600, 4000)}Mi, request is ${int(c.r, 128, 1024)}Mi, has larger consumption of memory.`,
  },
  { weight: 1, reason: 'FailedBinding', type: 'Warning', component: 'persistentvolume-controller', object: 'PersistentVolumeClaim', message: () => 'no persistent volumes available for this claim and no storage class is set' },
];
const TOTAL_WEIGHT = KINDS.reduce((n, k) => n + k.weight, 0);

/** RARE_EVERY is how often the rare certificate failure happens: one event in this many. */
export const RARE_EVERY = 25_000;

/**
 * realisticEvent is the i-th event of a generated archive: it last happened at
 * `lastMs` (second resolution, as core/v1 writers record it), in one of 40
 * namespaces, on one of 4,000 nodes. One event in RARE_EVERY is an x509 pull failure.
 */
export function realisticEvent(i: number, lastMs: number, r: () => number): CoreEvent {
  const app = pick(r, APPS) + pick(r, SUFFIXES);
  const ns = `team-${int(r, 1, 40)}`;
  const pod = app.endsWith('-db') ? `${app}-${int(r, 0, 2)}` : `${app}-${hex(r, 9)}-${hex(r, 5)}`;
  const c: Ctx = {
    r,
    ns,
    pod,
    node: `ip-10-0-${int(r, 0, 15)}-${int(r, 1, 254)}.ec2.internal`,
    container: pick(r, CONTAINERS),
    image: `${pick(r, IMAGES)}:${int(r, 1, 3)}.${int(r, 0, 30)}.${int(r, 0, 9)}`,
    ip: `10.244.${int(r, 0, 255)}.${int(r, 1, 254)}`,
  };
  let kind: Kind | undefined;
  let message: string;
  if (i % RARE_EVERY === RARE_EVERY - 1) {
    kind = KINDS.find((k) => k.reason === 'Failed')!;
    message = `Failed to pull image "registry.internal/${c.image}": rpc error: code = Unknown desc = failed to pull and unpack image: failed to resolve reference: tls: failed to verify certificate: x509: certificate has expired or is not yet valid`;
  } else {
    let w = r() * TOTAL_WEIGHT;
    for (const k of KINDS) {
      w -= k.weight;
      if (w < 0) {
        kind = k;
        break;
      }
    }
    kind ??= KINDS[0]!;
    message = kind.message(c);
  }
  const object = kind.object === 'Node' ? c.node : kind.object === 'Pod' ? pod : kind.object === 'Job' ? `${app}-${int(r, 28000000, 29999999)}` : app;
  const t = new Date(Math.floor(lastMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  const onNode = kind.component === 'kubelet';
  const namespace = kind.object === 'Node' ? 'default' : ns;
  return {
    kind: 'Event',
    apiVersion: 'v1',
    metadata: { namespace, name: `${object}.${(0x17a2b3c4d5e6f7an + BigInt(i) * 7919n).toString(16)}`, uid: `${hex(r, 8)}-${hex(r, 4)}-4${hex(r, 3)}-8${hex(r, 3)}-${hex(r, 12)}`, creationTimestamp: t },
    involvedObject: { kind: kind.object, ...(kind.object === 'Node' ? {} : { namespace }), name: object, apiVersion: kind.object === 'Pod' || kind.object === 'Node' ? 'v1' : 'apps/v1' },
    reason: kind.reason,
    message,
    source: { component: kind.component, ...(onNode ? { host: c.node } : {}) },
    firstTimestamp: t,
    lastTimestamp: t,
    count: 1,
    type: kind.type,
    reportingComponent: kind.component,
    reportingInstance: onNode ? c.node : '',
  };
}

/** ARCHIVE_SPAN_MS is how long a generated archive covers: a week, its newest event an hour before ARCHIVE_END. */
export const ARCHIVE_SPAN_MS = 7 * 24 * 3_600_000;
/** ARCHIVE_END is the instant the benches read a generated archive at ("now"). */
export const ARCHIVE_END = Date.UTC(2025, 5, 1, 12);

/**
 * realisticArchive yields the `total` events of a generated archive, `batch` at
 * a time, in the order a mirror sees them: by last time over ARCHIVE_SPAN_MS, a
 * few seconds out of order. The same events for the same total in every bench.
 */
export function* realisticArchive(total: number, batch: number): Generator<CoreEvent[]> {
  const r = rng(42);
  for (let i = 0; i < total; i += batch) {
    const events: CoreEvent[] = [];
    for (let j = i; j < Math.min(total, i + batch); j++) {
      const lastMs = ARCHIVE_END - 3_600_000 - ARCHIVE_SPAN_MS + Math.floor((j / total) * ARCHIVE_SPAN_MS) + Math.floor(r() * 5000);
      events.push(realisticEvent(j, lastMs, r));
    }
    yield events;
  }
}

/** archiveWrites are the writes of `applyArchiveBatch` that archive each event as new, with its one occurrence (the mirror's bulk path). */
export function archiveWrites(events: readonly CoreEvent[]): ArchiveWrite[] {
  return events.map((e) => ({ namespace: e.metadata.namespace!, name: e.metadata.name!, decide: () => ({ action: 'write', object: e, occurrence: { countBefore: 0, countAfter: 1 } }) }));
}

/**
 * writeRealisticArchive writes the `total` events of `realisticArchive` through a store's `applyArchiveBatch`, 1,000
 * to a batch with two batches in flight, as the mirror's pipeline keeps them; the seconds it took.
 */
export async function writeRealisticArchive(store: { applyArchiveBatch(batch: { writes: ArchiveWrite[]; stamp: object }): Promise<unknown> }, total: number): Promise<number> {
  const started = performance.now();
  const inFlight: Promise<unknown>[] = [];
  for (const events of realisticArchive(total, 1000)) {
    inFlight.push(store.applyArchiveBatch({ writes: archiveWrites(events), stamp: {} }));
    if (inFlight.length >= 2) await inFlight.shift();
  }
  await Promise.all(inFlight);
  return (performance.now() - started) / 1000;
}
