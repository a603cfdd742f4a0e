/**
 * bench/storage-size-postgres.ts measures what a PostgreSQL archive of ordinary events costs on disk, per relation,
 * and checks that a change of its layout answers the same: BENCH_EVENTS events of bench/support/realistic-events.ts
 * (each written once with its occurrence, through applyArchiveBatch, 1,000 to a batch, two in flight as the mirror
 * writes) into a fresh schema by this tree's PostgresEventStore, and with BENCH_BASELINE_SRC (another tree's src/,
 * e.g. a checkout of main, `<main>/src`) by that tree's too, in its own schema. For each: the ingest rate, bytes per event of every
 * table and index (`sizeReport`, after VACUUM ANALYZE), and the p50/p99 of BENCH_RUNS runs of each read of READS
 * (search queries, list pages, occurrence pages: of the archive, a namespace, an object, a list page's events), the two stores taking turns read by read. With a baseline, every read's answer is compared as JSON between the
 * two stores (their resourceVersions agree: the same writes in the same order), and a difference fails the run.
 * Run: BENCH_STORAGE=postgres://postgres@127.0.0.1:55432/test node --import tsx bench/storage-size-postgres.ts
 * (BENCH_KEEP=1 keeps the schemas.)
 */
import { join } from 'node:path';
import pg from 'pg';
import { parseSearchQuery } from '../src/api/index.js';
import { FakeClock } from '../src/internal/index.js';
import type { Clock } from '../src/internal/index.js';
import type { ArchiveStore, EventStore, SearchRequest, SizeReport, SizeReporting } from '../src/storage/index.js';
import { ARCHIVE_END as END, ARCHIVE_SPAN_MS as SPAN_MS, writeRealisticArchive } from './support/realistic-events.js';

const URL = process.env.BENCH_STORAGE ?? 'postgres://postgres@127.0.0.1:55432/test';
const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const KEEP = process.env.BENCH_KEEP === '1';

type Store = EventStore & ArchiveStore & SizeReporting & { search(r: SearchRequest): Promise<unknown> };
type StoreModule = { PostgresEventStore: new (o: { connectionString: string; schema: string; poolSize?: number; clock?: Clock }) => Store };

const hour = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');
const MID = END - 3_600_000 - SPAN_MS / 2;
const search = (q: string, namespace?: string): ((s: Store) => Promise<unknown>) => (s) => {
  const request: SearchRequest = { query: parseSearchQuery(q, { nowMs: END }), limit: 100 };
  if (namespace !== undefined) request.namespace = namespace;
  return s.search(request);
};

/** READS are the reads timed and compared: bench/search-postgres.ts's queries, list pages and occurrence pages. */
const READS: { name: string; read: (s: Store) => Promise<unknown> }[] = [
  { name: 'search: rare word x509', read: search('x509') },
  { name: 'search: rare phrase', read: search('"certificate has expired"') },
  { name: 'search: common word', read: search('container') },
  { name: 'search: common phrase', read: search('"back-off restarting failed container"') },
  { name: 'search: field + word', read: search('reason:FailedMount secret') },
  { name: 'search: field', read: search('reason:FailedScheduling') },
  { name: 'search: wildcard name', read: search('name:checkout-db-*') },
  { name: 'search: window of a word', read: search(`probe since:${hour(MID)} until:${hour(MID + 3_600_000)}`) },
  { name: 'search: negation', read: search('failed -container') },
  { name: 'search: node', read: search('node:ip-10-0-3-17.ec2.internal') },
  { name: 'search: common word, one ns', read: search('image', 'team-7') },
  { name: 'search: newest 100, no words', read: search('') },
  { name: 'list: 500, all namespaces', read: (s) => s.list({ limit: 500 }) },
  { name: 'list: 500, one namespace', read: (s) => s.list({ namespace: 'team-7', limit: 500 }) },
  { name: 'list: reason=BackOff, 100', read: (s) => s.list({ fieldEquals: { reason: 'BackOff' }, limit: 100 }) },
  // An object's events (`kubectl describe`, `kubectl events --for`): `cur_involved_name`.
  { name: 'list: one object\'s events', read: (s) => s.list({ fieldEquals: { 'involvedObject.name': 'frontend-db-1' }, limit: 500 }) },
  // What incidents read of a window: its failures (`cur_since`), then the occurrences of its objects.
  { name: 'list: a day\'s Warnings (incidents)', read: (s) => s.list({ activeIn: { sinceMs: END - 25 * 3_600_000 }, anyOf: { types: ['Warning'] }, limit: 500 }) },
  { name: 'occurrences: newest 500', read: (s) => s.listOccurrences({ limit: 500 }) },
  { name: 'occurrences: one namespace, 500', read: (s) => s.listOccurrences({ namespace: 'team-3', limit: 500 }) },
  // An object's timeline (`occ_regarding`, `occ_regarding_ns`), and a list page's events' occurrences (`occ_event`).
  { name: 'occurrences: one object, 500', read: (s) => s.listOccurrences({ fieldEquals: { 'regarding.name': 'frontend-db-1' }, limit: 500 }) },
  { name: 'occurrences: one object in one ns', read: (s) => s.listOccurrences({ namespace: 'team-7', fieldEquals: { 'regarding.name': 'frontend-db-1' }, limit: 500 }) },
  {
    name: 'occurrences: 100 events\' (list + read)',
    read: async (s) => s.listEventOccurrences({ events: (await s.list({ namespace: 'team-7', limit: 100 })).items.map((e) => ({ namespace: e.metadata.namespace!, name: e.metadata.name! })) }),
  },
];

const admin = new pg.Pool({ connectionString: URL, max: 1 });

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

interface Run {
  label: string;
  rate: number;
  report: SizeReport;
  times: Map<string, { p50: number; p99: number }>;
  answers: Map<string, string>;
}

interface Filled {
  label: string;
  schema: string;
  store: Store;
  rate: number;
  report: SizeReport;
}

/** fill writes a fresh schema through `mod`'s store and reports its size; the store stays open for the reads. */
async function fill(label: string, mod: StoreModule): Promise<Filled> {
  const schema = `kevents_bench_size_${label}_${process.pid}`;
  // One clock for both stores: an occurrence's observed time is the writer's clock, which the answers compared hold.
  const store = new mod.PostgresEventStore({ connectionString: URL, schema, poolSize: 4, clock: new FakeClock(END) });
  await store.ready();
  const rate = EVENTS / (await writeRealisticArchive(store, EVENTS));
  for (const t of ['versions', 'occurrences']) await admin.query(`VACUUM ANALYZE ${schema}.${t}`);
  return { label, schema, store, rate, report: await store.sizeReport() };
}

/**
 * measure times each read of READS BENCH_RUNS times on every filled store, the stores taking turns read by read and
 * the first of them changing every run, so that a shift of the machine's load falls on all of them alike.
 */
async function measure(filled: Filled[]): Promise<Run[]> {
  const runs = filled.map((f) => ({ label: f.label, rate: f.rate, report: f.report, times: new Map<string, { p50: number; p99: number }>(), answers: new Map<string, string>() }));
  for (const { name, read } of READS) {
    for (const [i, f] of filled.entries()) runs[i]!.answers.set(name, JSON.stringify(await read(f.store)));
    const ts: number[][] = filled.map(() => []);
    for (let r = 0; r < RUNS; r++) {
      for (let k = 0; k < filled.length; k++) {
        const i = (k + r) % filled.length;
        const t = performance.now();
        await read(filled[i]!.store);
        ts[i]!.push(performance.now() - t);
      }
    }
    for (const [i, run] of runs.entries()) run.times.set(name, { p50: pct(ts[i]!, 50), p99: pct(ts[i]!, 99) });
  }
  for (const f of filled) {
    await f.store.close();
    if (!KEEP) await admin.query(`DROP SCHEMA ${f.schema} CASCADE`);
  }
  return runs;
}

function print(run: Run, base?: Run): void {
  const per = (b: number): string => (b / EVENTS).toFixed(0).padStart(6);
  console.log(`\n${run.label}: ${Math.round(run.rate).toLocaleString('en')} events/s${base ? ` (${((run.rate / base.rate) * 100).toFixed(0)}% of ${base.label})` : ''}; ` +
    `${run.report.events} events, ${run.report.versions} versions, ${run.report.occurrences} occurrences; ` +
    `${(run.report.totalBytes / 2 ** 20).toFixed(1)} MiB, ${per(run.report.totalBytes).trim()} B/event`);
  for (const r of run.report.relations) if (r.bytes >= 16_384) console.log(`  ${`${r.kind} ${r.name}`.padEnd(40)} ${per(r.bytes)} B/event`);
  for (const [name, t] of run.times) {
    const b = base?.times.get(name);
    console.log(`  ${name.padEnd(36)} ${t.p50.toFixed(1).padStart(7)} / ${t.p99.toFixed(1).padStart(7)} ms${b ? `  (${(t.p50 / b.p50).toFixed(2)}× / ${(t.p99 / b.p99).toFixed(2)}×)` : ''}`);
  }
}

try {
  const baselineSrc = process.env.BENCH_BASELINE_SRC;
  const filled = [await fill('this', (await import('../src/storage/postgres/index.js')))];
  if (baselineSrc !== undefined) filled.unshift(await fill('baseline', (await import(join(baselineSrc, 'storage/postgres/index.ts'))) as StoreModule));
  const runs = await measure(filled);
  const mine = runs[runs.length - 1]!;
  const base = runs.length > 1 ? runs[0] : undefined;
  if (base !== undefined) print(base);
  print(mine, base);
  if (base !== undefined) {
    const differ = READS.filter(({ name }) => base.answers.get(name) !== mine.answers.get(name)).map((r) => r.name);
    console.log(differ.length === 0 ? `\nevery read's answer is the same JSON in both (${READS.length} reads)` : `\nanswers differ: ${differ.join('; ')}`);
    if (differ.length > 0) process.exitCode = 1;
  }
} finally {
  await admin.end();
}
