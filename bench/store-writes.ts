/**
 * bench/store-writes.ts measures SqliteEventStore's writes in one process, without HTTP: the store's share of a
 * create's CPU, which `bench/creates.ts` sees only among the server's other costs. Three shapes on fresh files:
 *   creates: BENCH_WRITES creates from 64 concurrent callers (several to a group commit, as `kevents serve` under load);
 *   one at a time: BENCH_SINGLE creates, each after the one before (a commit each);
 *   archive batches: BENCH_WRITES events through applyArchiveBatch, 1,000 to a batch (as the mirror writes);
 *   long repeats: BENCH_LONG_EVENTS events whose message is BENCH_LONG_KIB KiB of words, each written again
 *     BENCH_LONG_REPEATS times with its count bumped (a batch per round of all of them), as the mirror writes a
 *     repeating event with a long message.
 * Each reports writes/s and the process's CPU per write (the checkpoint thread's included), the store closed within
 * the measure (so a search index that follows the writes has caught up). With BENCH_BASELINE_SRC (another tree's
 * src/, e.g. a `git archive` of main) that tree's store alternates with this one's, BENCH_ROUNDS times each, and
 * each figure gets its ratio to it.
 * With BENCH_STORAGE=postgres://… it measures PostgresEventStore instead, each shape in a fresh schema: the figures
 * add the CPU per write of the PostgreSQL backends serving the store (read from /proc: the server runs on this
 * machine), and a third build, "no search index", is this tree's store with the search index's GIN and `search_reason`
 * dropped after it opens: what the index costs the server per write. A last line gives the CPU per event of
 * `searchColumns`, the vector each write computes in this process.
 * Run: node --import tsx bench/store-writes.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CoreEvent } from '../src/api/index.js';
import type { ArchiveWrite } from '../src/storage/index.js';
import pg from 'pg';
import { statSeconds } from './support/servers.js';

const env = (name: string, fallback: number): number => Number(process.env[`BENCH_${name}`] ?? fallback);
const WRITES = env('WRITES', 20_000);
const SINGLE = env('SINGLE', 2_000);
const ROUNDS = env('ROUNDS', 4);
const CLIENTS = 64;
const BATCH = 1_000;
const LONG_EVENTS = env('LONG_EVENTS', 8);
const LONG_KIB = env('LONG_KIB', 64);
const LONG_REPEATS = env('LONG_REPEATS', 50);

interface Store {
  ready(): Promise<void>;
  create(e: CoreEvent): Promise<unknown>;
  applyArchiveBatch(batch: { writes: ArchiveWrite[]; stamp: object }): Promise<unknown>;
  close(): Promise<void>;
}
type StoreModule = {
  SqliteEventStore: new (o: { path: string }) => Store;
  PostgresEventStore: new (o: { connectionString: string; schema: string }) => Store;
  /** dropSearchIndex makes the store the "no search index" build (PostgreSQL only). */
  dropSearchIndex?: boolean;
};

const STORAGE = process.env.BENCH_STORAGE;
const admin = STORAGE === undefined ? undefined : new pg.Pool({ connectionString: STORAGE, max: 1 });
let schemas = 0;

/** dbCpuSeconds is the CPU time so far of the PostgreSQL backends whose application_name is `name`. */
async function dbCpuSeconds(name: string): Promise<number> {
  const { rows } = await admin!.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [name]);
  return rows.reduce((sum, r) => sum + statSeconds(`/proc/${r.pid}/stat`), 0);
}

function event(i: number): CoreEvent {
  const ns = `ns-${i % 20}`;
  const t = new Date(Date.UTC(2026, 0, 1) + i * 10).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    kind: 'Event',
    apiVersion: 'v1',
    metadata: { namespace: ns, name: `pod-${i}.${((i * 2_654_435_761) >>> 0).toString(16)}` },
    involvedObject: { kind: 'Pod', namespace: ns, name: `pod-${i % 500}`, uid: `uid-${i % 500}`, apiVersion: 'v1' },
    reason: i % 3 === 0 ? 'Pulled' : 'BackOff',
    type: i % 3 === 0 ? 'Normal' : 'Warning',
    message: `Back-off restarting failed container app-${i % 97} in pod pod-${i % 500}_${ns}(uid-${i % 500})`,
    source: { component: 'kubelet', host: `node-${i % 13}` },
    firstTimestamp: t,
    lastTimestamp: t,
    count: 1,
  };
}

const WORDS = ['volume', 'mount', 'failed', 'timeout', 'pod', 'container', 'image', 'pull', 'node', 'secret', 'config', 'probe', 'restart', 'error', 'exit', 'code'];

/** longMessage is KiB of words in a fixed pseudo-random order, a different text for each event. */
function longMessage(seed: number, kib: number): string {
  const out: string[] = [];
  let x = seed * 2_654_435_761 + 1;
  for (let n = 0; n < kib * 1024; ) {
    x = (Math.imul(x, 1_103_515_245) + 12_345) >>> 0;
    const w = `${WORDS[x % WORDS.length]!}${(x >>> 8) % 1000}`;
    out.push(w);
    n += w.length + 1;
  }
  return out.join(' ').slice(0, kib * 1024);
}

const upsert = (object: CoreEvent): ArchiveWrite => ({
  namespace: object.metadata.namespace!,
  name: object.metadata.name!,
  decide: () => ({ action: 'write', object, occurrence: { countBefore: 0, countAfter: 1 } }),
});

const SHAPES: Record<string, { writes: number; run: (s: Store) => Promise<void> }> = {
  creates: {
    writes: WRITES,
    run: async (s) => {
      for (let i = 0; i < WRITES; i += CLIENTS) await Promise.all(Array.from({ length: CLIENTS }, (_, j) => s.create(event(i + j))));
    },
  },
  'one at a time': {
    writes: SINGLE,
    run: async (s) => {
      for (let i = 0; i < SINGLE; i++) await s.create(event(i));
    },
  },
  'archive batches': {
    writes: WRITES,
    run: async (s) => {
      for (let i = 0; i < WRITES; i += BATCH) await s.applyArchiveBatch({ writes: Array.from({ length: BATCH }, (_, j) => upsert(event(i + j))), stamp: {} });
    },
  },
  'long repeats': {
    writes: LONG_EVENTS * LONG_REPEATS,
    run: async (s) => {
      const events = Array.from({ length: LONG_EVENTS }, (_, i) => ({ ...event(i), message: longMessage(i, LONG_KIB) }));
      for (let r = 1; r <= LONG_REPEATS; r++) {
        const at = new Date(Date.UTC(2026, 0, 1) + r * 30_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
        await s.applyArchiveBatch({ writes: events.map((e) => upsert({ ...e, count: r, lastTimestamp: at })), stamp: {} });
      }
    },
  },
};

interface Figure {
  rate: number;
  cpuUs: number;
  /** dbUs is the PostgreSQL backends' CPU per write (BENCH_STORAGE). */
  dbUs?: number;
}

async function measure(m: StoreModule, shape: string): Promise<Figure> {
  if (STORAGE !== undefined) return measurePostgres(m, shape);
  const dir = mkdtempSync(join(tmpdir(), 'kevents-store-writes-'));
  try {
    const store = new m.SqliteEventStore({ path: join(dir, 'events.db') });
    await store.ready();
    const { writes, run } = SHAPES[shape]!;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await run(store);
    await store.close();
    const cpu = process.cpuUsage(cpu0);
    return { rate: writes / ((performance.now() - t0) / 1000), cpuUs: (cpu.user + cpu.system) / writes };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** measurePostgres runs a shape on a fresh schema; the backends' CPU is read before the store closes (its connections end). */
async function measurePostgres(m: StoreModule, shape: string): Promise<Figure> {
  const schema = `bench_writes_${process.pid}_${++schemas}`;
  const store = new m.PostgresEventStore({ connectionString: `${STORAGE}${STORAGE!.includes('?') ? '&' : '?'}application_name=${schema}`, schema });
  try {
    await store.ready();
    if (m.dropSearchIndex === true) await admin!.query(`DROP INDEX ${schema}.search_words, ${schema}.search_reason`);
    const { writes, run } = SHAPES[shape]!;
    const db0 = await dbCpuSeconds(schema);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await run(store);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const db = await dbCpuSeconds(schema);
    return { rate: writes / seconds, cpuUs: (cpu.user + cpu.system) / writes, dbUs: ((db - db0) * 1e6) / writes };
  } finally {
    await store.close();
    await admin!.query(`DROP SCHEMA ${schema} CASCADE`);
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const load = async (src: string): Promise<StoreModule> => ({ ...(await import(join(src, 'storage/sqlite/index.ts'))), ...(await import(join(src, 'storage/postgres/index.ts'))) }) as StoreModule;
  const here = await load(join(import.meta.dirname, '../src'));
  const builds: [string, StoreModule][] = [['this tree', here]];
  if (STORAGE !== undefined) builds.push(['no search index', { ...here, dropSearchIndex: true }]);
  const baseline = process.env.BENCH_BASELINE_SRC;
  if (baseline !== undefined) builds.unshift(['baseline', await load(baseline)]);
  const results = new Map<string, Figure[]>();
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which build goes first, so that a change of the machine's load falls on both.
    for (const [name, m] of round % 2 === 0 ? builds : [...builds].reverse()) {
      for (const shape of Object.keys(SHAPES)) {
        const r = await measure(m, shape);
        const key = `${shape}\0${name}`;
        results.set(key, [...(results.get(key) ?? []), r]);
        process.stderr.write(`round ${round + 1} ${name}: ${shape} ${r.rate.toFixed(0)}/s, ${r.cpuUs.toFixed(1)} µs CPU/write${r.dbUs !== undefined ? `, postgres ${r.dbUs.toFixed(1)} µs` : ''}\n`);
      }
    }
  }
  console.log(`store writes${STORAGE !== undefined ? ' (PostgreSQL)' : ''} (medians of ${ROUNDS}, ${new Date().toISOString()}, node ${process.version})`);
  for (const shape of Object.keys(SHAPES)) {
    const base = results.get(`${shape}\0baseline`);
    for (const [name] of builds) {
      const rs = results.get(`${shape}\0${name}`)!;
      const [rate, cpu] = [median(rs.map((r) => r.rate)), median(rs.map((r) => r.cpuUs))];
      const dbs = rs.map((r) => r.dbUs).filter((d): d is number => d !== undefined);
      const baseDbs = (base ?? []).map((r) => r.dbUs).filter((d): d is number => d !== undefined);
      const db = dbs.length > 0 ? `  postgres ${median(dbs).toFixed(1).padStart(6)} µs/write` : '';
      const dbVs = dbs.length > 0 && baseDbs.length > 0 ? `, postgres ${(median(dbs) / median(baseDbs)).toFixed(2)}×` : '';
      const vs =
        base !== undefined && name !== 'baseline'
          ? ` (${(rate / median(base.map((r) => r.rate))).toFixed(2)}×, CPU ${(cpu / median(base.map((r) => r.cpuUs))).toFixed(2)}×${dbVs})`
          : '';
      console.log(`${shape.padEnd(16)} ${name.padEnd(15)} ${rate.toFixed(0).padStart(6)}/s  ${cpu.toFixed(1).padStart(6)} µs CPU/write${db}${vs}`);
    }
  }
}

await main();
if (STORAGE !== undefined) {
  const { searchColumns } = await import('../src/storage/postgres/search-index-writer.js');
  const n = 20_000;
  const events = Array.from({ length: n }, (_, i) => event(i));
  const cpu0 = process.cpuUsage();
  for (const e of events) searchColumns(e);
  const cpu = process.cpuUsage(cpu0);
  console.log(`searchColumns (the vector a write computes in this process): ${((cpu.user + cpu.system) / n).toFixed(1)} µs CPU/event`);
  await admin!.end();
}
