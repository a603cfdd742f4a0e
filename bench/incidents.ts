/**
 * Incidents benchmark: `kevents incidents -A --since 24h` as `kevents serve` answers it (collectIncidents over
 * the store), on an archive of a week of events (200 namespaces, 2% Warnings of the catalogue's common kinds),
 * in SQLite and PostgreSQL, with the read of the same window's events and occurrences alone (every event that
 * happened in it, Normal ones included) as the baseline measured in the same run. Sizes default to 100,000 and
 * 1,000,000 events: the incidents' cost should follow the window's warnings, not the archive's size. Each
 * backend and size runs in a process of its own, the incidents first, so that its RSS is theirs and not the
 * baseline's or another size's. A filled archive (a file under the system's temp folder, a schema in
 * PostgreSQL) is kept and reused (BENCH_FRESH=1 refills it).
 *
 * Run: node --import tsx bench/incidents.ts   (BENCH_SIZES=100000 for a quick run, BENCH_BACKENDS=sqlite,postgres,
 * BENCH_SAMPLES=20 for the incidents, BENCH_READ_SAMPLES=5 for the baseline, KEVENTS_BENCH_POSTGRES=postgres://…,
 * BENCH_LOOK_BACK=0 for the incidents without their look-back before the window, default 24h as kevents incidents)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { CoreEvent, Occurrence } from '../src/api/index.js';
import { parseGoDuration } from '../src/api/index.js';
import { collectIncidents } from '../src/diagnosis/index.js';
import type { ArchiveStore } from '../src/storage/index.js';
import { PostgresEventStore } from '../src/storage/postgres/index.js';
import { SqliteEventStore } from '../src/storage/sqlite/index.js';
import { storeTimelineSource } from '../src/timeline/index.js';
import type { TimelineSource } from '../src/timeline/index.js';
import { seedArchive, seedSqliteArchive } from './support/seed-archive.js';

const SIZES = (process.env.BENCH_SIZES ?? '100000,1000000').split(',').map(Number);
const BACKENDS = (process.env.BENCH_BACKENDS ?? 'sqlite,postgres').split(',') as Backend[];
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 20);
const READ_SAMPLES = Number(process.env.BENCH_READ_SAMPLES ?? 5);
const PG_URL = process.env.KEVENTS_BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:55432/test';
const LOOK_BACK = process.env.BENCH_LOOK_BACK === undefined ? undefined : parseGoDuration(process.env.BENCH_LOOK_BACK);

type Backend = 'sqlite' | 'postgres';
const NAMESPACES = 200;
const DAY = 86_400_000;
const SPAN = 7 * DAY;
const T0 = Date.UTC(2025, 0, 1);
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

function archivePath(n: number): string {
  return join(tmpdir(), `kevents-bench-incidents-${LAYOUT}-${n}-${NAMESPACES}ns.db`);
}

function pgSchema(n: number): string {
  return `bench_incidents_${LAYOUT}_${n}_${NAMESPACES}ns`;
}

/** openSqlite opens the SQLite archive of n events, filling it first (under a temporary name) when there is none. */
async function openSqlite(n: number): Promise<ArchiveStore> {
  const path = archivePath(n);
  if (process.env.BENCH_FRESH === '1') rmSync(path, { force: true });
  if (!existsSync(path)) await seedSqliteArchive(path, { n, makeEvent, log: console.error, cacheSizeMiB: 1024 });
  return new SqliteEventStore({ path });
}

/** openPostgres opens the PostgreSQL archive of n events, filling it first (in a schema renamed when full) when there is none. */
async function openPostgres(n: number): Promise<ArchiveStore> {
  const schema = pgSchema(n);
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    if (process.env.BENCH_FRESH === '1') await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    const exists = (await admin.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema])).rowCount === 1;
    if (!exists) {
      const partial = `${schema}_partial`;
      await admin.query(`DROP SCHEMA IF EXISTS ${partial} CASCADE`);
      await seedArchive(new PostgresEventStore({ connectionString: PG_URL, schema: partial, synchronousCommit: false }), { n, makeEvent, log: console.error });
      await admin.query(`ALTER SCHEMA ${partial} RENAME TO ${schema}`);
      // What autovacuum does after a fill (VERSIONS_INSERT_VACUUM_SCALE): the pages all-visible, so index-only reads stay so.
      await admin.query(`VACUUM (ANALYZE) ${schema}.versions, ${schema}.occurrences`);
    }
  } finally {
    await admin.end();
  }
  return new PostgresEventStore({ connectionString: PG_URL, schema });
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

async function sample(samples: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

/** counted is a source that counts what it hands out: the events and occurrences a reader took from the store. */
function counted(source: TimelineSource): { source: TimelineSource; read: { events: number; occurrences: number } } {
  const read = { events: 0, occurrences: 0 };
  return {
    read,
    source: {
      async listEvents(q): Promise<CoreEvent[]> {
        const got = await source.listEvents(q);
        read.events += got.length;
        return got;
      },
      async listOccurrences(q): Promise<Occurrence[] | undefined> {
        const got = await source.listOccurrences(q);
        read.occurrences += got?.length ?? 0;
        return got;
      },
    },
  };
}

/** runOne measures one backend and size, in this process: the incidents first, then the baseline read. */
async function runOne(backend: Backend, n: number): Promise<Record<string, string | number>> {
  const store = backend === 'sqlite' ? await openSqlite(n) : await openPostgres(n);
  await store.ready();
  const until = T0 + SPAN;
  const since = until - DAY;
  let incidents = 0;
  let rssMax = 0;
  const rss = (): void => {
    rssMax = Math.max(rssMax, process.memoryUsage().rss);
  };
  const probe = counted(storeTimelineSource(store));
  // This process's CPU time a build: all of SQLite's work, the client's part of PostgreSQL's. A loaded machine stretches
  // the wall time of a build far more than its CPU time.
  const cpu: number[] = [];
  const built = await sample(SAMPLES, async () => {
    probe.read.events = 0;
    probe.read.occurrences = 0;
    const before = process.cpuUsage();
    incidents = (await collectIncidents({ source: probe.source, since, until, lookBack: LOOK_BACK, now: until })).incidents.length;
    const used = process.cpuUsage(before);
    cpu.push((used.user + used.system) / 1000);
    rss();
  });
  const incidentsRss = rssMax;
  const source = storeTimelineSource(store);
  let windowEvents = 0;
  let windowOccurrences = 0;
  const read = await sample(READ_SAMPLES, async () => {
    windowEvents = (await source.listEvents({ since, until, inWindowOnly: true })).length;
    windowOccurrences = (await source.listOccurrences({ since, until, inWindowOnly: true }))?.length ?? 0;
    rss();
  });
  await store.close();
  return {
    backend,
    events: n,
    'window events / occurrences': `${windowEvents} / ${windowOccurrences}`,
    'incidents read': `${probe.read.events} / ${probe.read.occurrences}`,
    incidents,
    'read p50 ms': pct(read, 50).toFixed(1),
    'incidents p50 ms': pct(built, 50).toFixed(1),
    'incidents p99 ms': pct(built, 99).toFixed(1),
    'incidents CPU p50 ms': pct(cpu, 50).toFixed(1),
    'incidents / read (p50)': (pct(built, 50) / pct(read, 50)).toFixed(3),
    'incidents max RSS MiB': (incidentsRss / 1024 / 1024).toFixed(0),
    'with read max RSS MiB': (rssMax / 1024 / 1024).toFixed(0),
  };
}

const one = process.env.BENCH_ONE;
if (one !== undefined) {
  const [backend, n] = one.split(':');
  const row = await runOne(backend as Backend, Number(n));
  process.stdout.write(`${JSON.stringify(row)}\n`);
} else {
  const rows: Record<string, string | number>[] = [];
  for (const backend of BACKENDS) {
    for (const n of SIZES) {
      const r = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
        env: { ...process.env, BENCH_ONE: `${backend}:${n}` },
        stdio: ['ignore', 'pipe', 'inherit'],
        encoding: 'utf8',
        maxBuffer: 1 << 20,
      });
      if (r.status !== 0) throw new Error(`${backend} at ${n} events failed (exit ${r.status ?? r.signal})`);
      const row = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, string | number>;
      console.error(JSON.stringify(row));
      rows.push(row);
    }
  }
  console.table(rows);
}
