/**
 * bench/storage-size-sqlite.ts measures what a SQLite archive of ordinary events costs on disk, per table and
 * index, and checks that a change of its layout answers the same: BENCH_EVENTS events of
 * bench/support/realistic-events.ts (each written once with its occurrence, through applyArchiveBatch, 1,000 to a
 * batch, two in flight as the mirror writes) into a fresh file by this tree's SqliteEventStore, and with
 * BENCH_BASELINE_SRC (another tree's src/, e.g. a checkout of main, `<main>/src`) into another by that tree's. For
 * each: the fill's rate and bytes per event of every table and index (`sizeReport`, after a checkpoint). Then the
 * reads of READS (lists selected by the interned fields and by none, a window's failures, searches by field and
 * word, histograms, occurrence pages, counts by reason), BENCH_RUNS rounds of each, the two stores' runs alternating
 * so that the machine's load falls on both alike: p50/p99 and this tree's ÷ the baseline's. Every read's answer is
 * compared as JSON between the two stores (the same writes in the same order), and a difference fails the run.
 * BENCH_FILES=BASELINE.db,THIS.db reads two archives already written instead (copies of one archive, each opened,
 * and so migrated, by its own tree: the events of realistic-events.ts, whose reads READS names), their sizes as found.
 * Run: node --import tsx bench/storage-size-sqlite.ts   (BENCH_EVENTS 100,000, BENCH_RUNS 15, BENCH_KEEP=1 keeps the files)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSearchQuery } from '../src/api/index.js';
import { FakeClock } from '../src/internal/index.js';
import type { Clock } from '../src/internal/index.js';
import type { ArchiveStore, EventStore, ReasonCountQuery, SearchRequest, SizeReport, SizeReporting } from '../src/storage/index.js';
import { ARCHIVE_END as END, writeRealisticArchive } from './support/realistic-events.js';
import { pct } from './support/https-load.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const KEEP = process.env.BENCH_KEEP === '1';

type Store = EventStore &
  ArchiveStore &
  SizeReporting & { search(r: SearchRequest): Promise<unknown>; countByReason(q: ReasonCountQuery): Promise<unknown>; close(): Promise<void> };
type StoreModule = { SqliteEventStore: new (o: { path: string; clock?: Clock; cacheSizeMiB?: number }) => Store };

const hour = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');
const DAY = 86_400_000;
const search = (q: string, more: Partial<SearchRequest> = {}): ((s: Store) => Promise<unknown>) => (s) => s.search({ query: parseSearchQuery(q, { nowMs: END }), limit: 100, ...more });

/** READS are the reads timed and compared: those the interned columns decide first, then others for their share of the file's cache. */
const READS: { name: string; read: (s: Store) => Promise<unknown> }[] = [
  { name: 'list: 500, all namespaces', read: (s) => s.list({ limit: 500 }) },
  { name: 'list: reason=BackOff, 500', read: (s) => s.list({ fieldEquals: { reason: 'BackOff' }, predicate: (e) => e.reason === 'BackOff', predicateIsSelection: true, limit: 500 }) },
  { name: 'list: type=Warning, one ns', read: (s) => s.list({ namespace: 'team-7', fieldEquals: { type: 'Warning' }, predicate: (e) => e.type === 'Warning', predicateIsSelection: true }) },
  { name: 'list: kind=Node (all)', read: (s) => s.list({ fieldEquals: { 'involvedObject.kind': 'Node' }, predicate: (e) => e.involvedObject.kind === 'Node', predicateIsSelection: true }) },
  { name: 'list: reason=NoSuch (none)', read: (s) => s.list({ fieldEquals: { reason: 'NoSuch' }, predicate: (e) => e.reason === 'NoSuch', predicateIsSelection: true }) },
  { name: "list: a day's Warnings (incidents)", read: (s) => s.list({ activeIn: { sinceMs: END - DAY }, anyOf: { types: ['Warning'] }, limit: 500 }) },
  { name: 'list: a week of failures by reason', read: (s) => s.list({ activeIn: { sinceMs: END - 7 * DAY }, anyOf: { reasons: ['FailedMount', 'FailedScheduling', 'Evicted'] }, limit: 500 }) },
  { name: 'search: field', read: search('reason:FailedScheduling') },
  { name: 'search: type and kind', read: search('type:warning kind:Node') },
  { name: 'search: prefix of a reason', read: search('reason:Fail*') },
  { name: 'search: negated type', read: search('-type:normal') },
  { name: 'search: field + word', read: search('reason:FailedMount secret') },
  { name: 'search: common word, one ns', read: search('image', { namespace: 'team-7' }) },
  { name: 'search: histogram of a reason', read: search(`reason:BackOff since:${hour(END - 7 * DAY)}`, { histogram: { sinceMs: END - 7 * DAY, untilMs: END, bucketMs: 3_600_000 } }) },
  { name: 'occurrences: newest 500', read: (s) => s.listOccurrences({ limit: 500 }) },
  { name: 'occurrences: one namespace, 500', read: (s) => s.listOccurrences({ namespace: 'team-3', limit: 500 }) },
  { name: 'occurrences: Warnings, 500', read: (s) => s.listOccurrences({ anyOf: { types: ['Warning'] }, limit: 500 }) },
  { name: 'counts by reason: a day', read: (s) => s.countByReason({ sinceMs: END - DAY, untilMs: END }) },
  { name: 'counts by reason: a day, one ns', read: (s) => s.countByReason({ sinceMs: END - DAY, untilMs: END, namespace: 'team-7' }) },
];

interface Filled {
  label: string;
  store: Store;
  rate: number;
  report: SizeReport;
}

const dir = mkdtempSync(join(tmpdir(), 'kevents-bench-size-'));

const FILES = process.env.BENCH_FILES?.split(',');

/** fill writes the archive into a fresh file through `mod`'s store (or opens the given one) and measures its size. */
async function fill(label: string, mod: StoreModule, file?: string): Promise<Filled> {
  // One clock for both stores: an occurrence's observed time is the writer's clock, which the answers compared hold.
  const store = new mod.SqliteEventStore({ path: file ?? join(dir, `${label}.db`), clock: new FakeClock(END) });
  await store.ready();
  const rate = file === undefined ? EVENTS / (await writeRealisticArchive(store, EVENTS)) : NaN;
  return { label, store, rate, report: await store.sizeReport() };
}

function printSizes(run: Filled, base?: Filled): void {
  const per = (b: number): string => (b / run.report.events).toFixed(1).padStart(7);
  const rate = Number.isNaN(run.rate) ? 'opened' : `filled at ${Math.round(run.rate).toLocaleString('en')} events/s${base ? ` (${(run.rate / base.rate).toFixed(2)}× ${base.label})` : ''}`;
  console.log(`\n${run.label}: ${rate}; ` +
    `${run.report.events} events, ${run.report.occurrences} occurrences; ${(run.report.totalBytes / 2 ** 20).toFixed(1)} MiB, ${per(run.report.totalBytes).trim()} B/event`);
  for (const r of run.report.relations) {
    if (r.bytes < 16_384) continue;
    const b = base?.report.relations.find((x) => x.name === r.name);
    console.log(`  ${`${r.kind} ${r.name}`.padEnd(40)} ${per(r.bytes)} B/event${b ? `  (${per(b.bytes).trim()} in ${base!.label})` : ''}`);
  }
}

try {
  const baselineSrc = process.env.BENCH_BASELINE_SRC;
  const base = baselineSrc === undefined ? undefined : await fill('baseline', (await import(join(baselineSrc, 'storage/sqlite/index.ts'))) as StoreModule, FILES?.[0]);
  const mine = await fill('this', await import('../src/storage/sqlite/index.js'), FILES?.[1]);
  if (base !== undefined) printSizes(base);
  printSizes(mine, base);
  const stores = base === undefined ? [mine] : [base, mine];
  const differ: string[] = [];
  console.log(`\nreads, ${RUNS} rounds each, the stores alternating (p50 / p99 ms; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}):`);
  for (const { name, read } of READS) {
    const answers = await Promise.all(stores.map(async (s) => JSON.stringify(await read(s.store))));
    if (answers.some((a) => a !== answers[0])) differ.push(name);
    const times = stores.map(() => [] as number[]);
    for (let i = 0; i < RUNS; i++) {
      for (const [j, s] of stores.entries()) {
        const t = performance.now();
        await read(s.store);
        times[j]!.push(performance.now() - t);
      }
    }
    const sorted = times.map((ts) => ts.sort((a, b) => a - b));
    const cells = sorted.map((ts) => `${pct(ts, 50).toFixed(1).padStart(7)} / ${pct(ts, 99).toFixed(1).padStart(7)}`);
    const ratio = sorted.length === 2 ? `  ${(pct(sorted[1]!, 50) / pct(sorted[0]!, 50)).toFixed(2)}× / ${(pct(sorted[1]!, 99) / pct(sorted[0]!, 99)).toFixed(2)}×` : '';
    console.log(`  ${name.padEnd(38)} ${cells.join('   ')}${ratio}`);
  }
  console.log(`load average after: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  if (base !== undefined) {
    console.log(differ.length === 0 ? `\nevery read's answer is the same JSON in both (${READS.length} reads)` : `\nanswers differ: ${differ.join('; ')}`);
    if (differ.length > 0) process.exitCode = 1;
  }
  for (const s of stores) await s.store.close();
} finally {
  if (!KEEP) rmSync(dir, { recursive: true, force: true });
  else console.log(`files kept in ${dir}`);
}
