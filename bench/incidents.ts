/**
 * Incidents benchmark: `kevents incidents -A --since 24h` as `kevents serve` answers it (collectIncidents over
 * the store), on a SQLite archive of a week of events (200 namespaces, 2% Warnings of the catalogue's common
 * kinds), with the read of the same window's events and occurrences alone as the baseline measured in the
 * same run. Sizes default to 100,000 and 1,000,000 events: the incidents' cost should follow the window's
 * events, not the archive's size. A filled archive is kept under the system's temp folder and reused
 * (BENCH_FRESH=1 refills it).
 *
 * Run: node --import tsx bench/incidents.ts   (BENCH_SIZES=100000 for a quick run, BENCH_SAMPLES=20)
 */
import { existsSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CoreEvent } from '../src/api/index.js';
import { formatMicroTime } from '../src/api/index.js';
import { collectIncidents } from '../src/diagnosis/index.js';
import type { ArchiveWrite } from '../src/storage/index.js';
import { SqliteEventStore } from '../src/storage/sqlite/index.js';
import { storeTimelineSource } from '../src/timeline/index.js';

const SIZES = (process.env.BENCH_SIZES ?? '100000,1000000').split(',').map(Number);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 20);
const NAMESPACES = 200;
const DAY = 86_400_000;
const SPAN = 7 * DAY;
const T0 = Date.UTC(2025, 0, 1);
const FILL_BATCH = 5_000;
const LAYOUT = 'v1';

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/** WARNINGS are the failures the archive holds, as their components write them. */
const WARNINGS: ((ns: string, n: number) => Pick<CoreEvent, 'involvedObject' | 'reason' | 'message' | 'source'>)[] = [
  (ns, n) => ({
    involvedObject: { kind: 'ReplicaSet', namespace: ns, name: `web-${n % 7}-7d4b9c8f5` },
    reason: 'FailedCreate',
    message: `Error creating: pods "web-${n % 7}-7d4b9c8f5-x2x7k" is forbidden: exceeded quota: compute-resources, requested: limits.memory=2Gi, used: limits.memory=7Gi, limited: limits.memory=8Gi`,
    source: { component: 'replicaset-controller' },
  }),
  (ns, n) => ({
    involvedObject: { kind: 'Pod', namespace: ns, name: `batch-${n % 11}-0` },
    reason: 'FailedScheduling',
    message: '0/50 nodes are available: 50 Insufficient cpu. preemption: 0/50 nodes are available: 50 No preemption victims found for incoming pod.',
    source: { component: 'default-scheduler' },
  }),
  (ns, n) => ({
    involvedObject: { kind: 'Pod', namespace: ns, name: `api-6d5f7c9b8-${(n % 13).toString(36).padStart(5, 'b')}`, fieldPath: 'spec.containers{api}' },
    reason: 'BackOff',
    message: `Back-off restarting failed container api in pod api_${ns}(uid)`,
    source: { component: 'kubelet', host: `node-${n % 50}` },
  }),
  (ns, n) => ({
    involvedObject: { kind: 'Pod', namespace: ns, name: `worker-${n % 5}`, fieldPath: 'spec.containers{worker}' },
    reason: 'Failed',
    message: 'Failed to pull image "registry.example/worker:9.9": failed to pull and unpack image "registry.example/worker:9.9": failed to resolve reference "registry.example/worker:9.9": registry.example/worker:9.9: not found',
    source: { component: 'kubelet', host: `node-${n % 50}` },
  }),
  (ns, n) => ({
    involvedObject: { kind: 'Pod', namespace: ns, name: `front-${n % 9}`, fieldPath: 'spec.containers{front}' },
    reason: 'Unhealthy',
    message: 'Readiness probe failed: HTTP probe failed with statuscode: 503',
    source: { component: 'kubelet', host: `node-${n % 50}` },
  }),
  (ns, n) => ({
    involvedObject: { kind: 'Pod', namespace: ns, name: `dns-${n % 17}` },
    reason: 'DNSConfigForming',
    message: 'Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 10.0.0.2 10.0.0.3 10.0.0.4',
    source: { component: 'kubelet', host: `node-${n % 50}` },
  }),
  (ns, n) => ({
    involvedObject: { kind: 'Pod', namespace: ns, name: `cache-${n % 3}` },
    reason: 'FailedSync',
    message: 'error determining status: rpc error: code = Unknown desc = unexpected',
    source: { component: 'kubelet', host: `node-${n % 50}` },
  }),
];

const NORMALS = ['Scheduled', 'Pulled', 'Created', 'Started', 'SuccessfulCreate', 'ScalingReplicaSet'];

function makeEvent(i: number, n: number): CoreEvent {
  const ns = `ns-${String(i % NAMESPACES).padStart(3, '0')}`;
  const first = T0 + Math.floor((i / n) * SPAN);
  const warning = i % 50 === 0;
  const count = warning ? 1 + (i % 20) : 1;
  const base = warning
    ? WARNINGS[(i / 50) % WARNINGS.length]!(ns, i)
    : {
        involvedObject: { kind: 'Pod', namespace: ns, name: `pod-${i % 20_000}` },
        reason: NORMALS[i % NORMALS.length]!,
        message: i % NORMALS.length === 0 ? `Successfully assigned ${ns}/pod-${i % 20_000} to node-${i % 50}` : 'Container image "registry.example/app:1.2.3" already present on machine',
        source: { component: 'kubelet', host: `node-${i % 50}` },
      };
  return {
    kind: 'Event',
    apiVersion: 'v1',
    metadata: { namespace: ns, name: `${base.involvedObject.name ?? 'x'}.${i.toString(16)}`, uid: `uid-${i}`, creationTimestamp: iso(first) },
    ...base,
    firstTimestamp: iso(first),
    lastTimestamp: iso(first + (count - 1) * 60_000),
    count,
    type: warning ? 'Warning' : 'Normal',
  };
}

function archiveWrite(e: CoreEvent): ArchiveWrite {
  return {
    namespace: e.metadata.namespace!,
    name: e.metadata.name!,
    decide: (current) => (current === undefined ? { action: 'write', object: e, occurrence: { countBefore: 0, countAfter: e.count ?? 1 } } : { action: 'skip' }),
  };
}

function archivePath(n: number): string {
  return join(tmpdir(), `kevents-bench-incidents-${LAYOUT}-${n}-${NAMESPACES}ns.db`);
}

async function fill(path: string, n: number): Promise<void> {
  const partial = `${path}.partial`;
  for (const suffix of ['', '-wal', '-shm']) rmSync(partial + suffix, { force: true });
  const store = new SqliteEventStore({ path: partial, cacheSizeMiB: 1024 });
  await store.ready();
  const t0 = performance.now();
  for (let i = 0; i < n; i += FILL_BATCH) {
    const events: CoreEvent[] = [];
    for (let j = i; j < Math.min(n, i + FILL_BATCH); j++) events.push(makeEvent(j, n));
    const seen = Math.max(...events.map((e) => Date.parse(e.lastTimestamp!))) + 60_000;
    await store.applyArchiveBatch({ writes: events.map(archiveWrite), stamp: { observedTime: formatMicroTime(seen)! } });
  }
  await store.close();
  for (const suffix of ['-wal', '-shm']) rmSync(partial + suffix, { force: true });
  renameSync(partial, path);
  console.log(`filled ${n.toLocaleString('en')} events in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

async function sample(fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

async function run(n: number): Promise<Record<string, string | number>> {
  const path = archivePath(n);
  if (process.env.BENCH_FRESH === '1') rmSync(path, { force: true });
  if (!existsSync(path)) await fill(path, n);
  const store = new SqliteEventStore({ path });
  await store.ready();
  const source = storeTimelineSource(store);
  const until = T0 + SPAN;
  const since = until - DAY;
  let incidents = 0;
  let windowEvents = 0;
  let rssMax = 0;
  const rss = (): void => {
    rssMax = Math.max(rssMax, process.memoryUsage().rss);
  };
  const read = await sample(async () => {
    const events = await source.listEvents({ since, until, inWindowOnly: true });
    await source.listOccurrences({ since, until, inWindowOnly: true });
    windowEvents = events.length;
    rss();
  });
  const built = await sample(async () => {
    incidents = (await collectIncidents({ source, since, until, now: until })).incidents.length;
    rss();
  });
  await store.close();
  return {
    events: n,
    'window events': windowEvents,
    incidents,
    'read p50 ms': pct(read, 50).toFixed(1),
    'incidents p50 ms': pct(built, 50).toFixed(1),
    'incidents p99 ms': pct(built, 99).toFixed(1),
    'incidents / read (p50)': (pct(built, 50) / pct(read, 50)).toFixed(2),
    'max RSS MiB': (rssMax / 1024 / 1024).toFixed(0),
  };
}

const rows: Record<string, string | number>[] = [];
for (const n of SIZES) rows.push(await run(n));
console.table(rows);
