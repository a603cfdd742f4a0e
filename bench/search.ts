/**
 * Search benchmark for the SQLite archive: which FTS5 tokenizer the index uses
 * (unicode61 or trigram), measured on one archive of generated events whose
 * messages follow upstream's formats (bench/support/realistic-events.ts):
 *   - the index build over an existing archive (the in-place migration), per event and per million;
 *   - the index's size against the archive's (pages in use before and after);
 *   - the index's cost at ingest: applyArchiveBatch with the index and without it, same run,
 *     BENCH_INGEST_ROUNDS times each, alternating on fresh files: events/s and the process's CPU per event;
 *   - latency of 14 queries (rare and common words, phrases, fields, wildcard, window,
 *     negation, histogram, words trigram cannot index), each run BENCH_RUNS times: p50 and p99.
 *
 * The archive is written once through SqliteEventStore.applyArchiveBatch (the mirror's bulk
 * path) and copied for each tokenizer.
 *
 * Run: node --import tsx bench/search.ts   (BENCH_EVENTS=1000000 for a larger archive;
 * BENCH_TOKENIZERS=unicode61 or BENCH_QUERIES=0 to measure less)
 */
import { parseSearchQuery } from '../src/api/index.js';
import Database from 'better-sqlite3';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SearchRequest } from '../src/storage/index.js';
import { SqliteEventStore } from '../src/storage/sqlite/index.js';
import { SqliteSearch } from '../src/storage/sqlite/search-index.js';
import type { SearchTokenizer } from '../src/storage/sqlite/search-index.js';
import { buildSearchIndex, searchIndexSchema } from '../src/storage/sqlite/search-index-writer.js';
import { ARCHIVE_END as END, ARCHIVE_SPAN_MS as SPAN_MS, archiveWrites, realisticArchive } from './support/realistic-events.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 200_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const INGEST_ROUNDS = Number(process.env.BENCH_INGEST_ROUNDS ?? 3);
const TOKENIZERS = (process.env.BENCH_TOKENIZERS ?? 'unicode61,trigram').split(',') as SearchTokenizer[];
const QUERIES_ON = process.env.BENCH_QUERIES !== '0';

const dir = mkdtempSync(join(tmpdir(), 'kevents-bench-search-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

function usedBytes(db: Database.Database): number {
  const pages = (db.pragma('page_count', { simple: true }) as number) - (db.pragma('freelist_count', { simple: true }) as number);
  return pages * (db.pragma('page_size', { simple: true }) as number);
}

/**
 * writeArchive writes the events through the store's bulk path. Without `indexed`, the index is
 * dropped first (reaching into the store's connection, as only a bench may): the baseline of the
 * index's cost at ingest, and a file as an archive of schema 5 is, for the migration. The CPU is
 * the whole process's (the store's checkpoint thread included) per event.
 */
async function writeArchive(path: string, indexed: boolean): Promise<{ seconds: number; cpuUs: number }> {
  for (const f of [path, `${path}-wal`, `${path}-shm`]) rmSync(f, { force: true });
  const store = new SqliteEventStore({ path });
  await store.ready();
  if (!indexed) {
    const c = (store as unknown as { c: { db: Database.Database; searchIndex: unknown } }).c;
    c.searchIndex = undefined;
    c.db.exec('DROP TABLE search_fts; DROP TABLE search_docs');
  }
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  for (const events of realisticArchive(EVENTS, 1000)) {
    await store.applyArchiveBatch({ writes: archiveWrites(events), stamp: {} });
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await store.close();
  const db = new Database(path);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return { seconds, cpuUs: (cpu.user + cpu.system) / EVENTS };
}

interface Query {
  name: string;
  q: string;
  limit?: number;
  namespace?: string;
  histogram?: boolean;
}

const hour = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');
const MID = END - 3_600_000 - SPAN_MS / 2;
const QUERIES: Query[] = [
  { name: 'rare word', q: 'x509' },
  { name: 'rare phrase', q: '"certificate has expired"' },
  { name: 'common word', q: 'container' },
  { name: 'common phrase', q: '"back-off restarting failed container"' },
  { name: 'field + word', q: 'reason:FailedMount secret' },
  { name: 'field', q: 'reason:FailedScheduling' },
  { name: 'wildcard name', q: 'name:checkout-db-*' },
  { name: 'window of a word', q: `probe since:${hour(MID)} until:${hour(MID + 3_600_000)}` },
  { name: 'negation', q: 'failed -container' },
  { name: 'node', q: 'node:ip-10-0-3-17.ec2.internal' },
  { name: 'common word, one ns', q: 'image', namespace: 'team-7' },
  { name: 'histogram, common word, 1 day', q: 'image', limit: 1, histogram: true },
  { name: 'short word (2 chars)', q: 'db' },
  { name: 'newest 100, no words', q: '' },
];

function runQueries(db: Database.Database, tokenizer: SearchTokenizer, at: number): string[] {
  const search = new SqliteSearch(db, tokenizer);
  const rows: string[] = [];
  for (const query of QUERIES) {
    const request: SearchRequest = { query: parseSearchQuery(query.q, { nowMs: END }), limit: query.limit ?? 100 };
    if (query.namespace !== undefined) request.namespace = query.namespace;
    if (query.histogram === true) request.histogram = { sinceMs: END - 25 * 3_600_000, untilMs: END - 3_600_000, bucketMs: 3_600_000 };
    const times: number[] = [];
    let hits = 0;
    let counted = 0;
    search.search(request, at);
    for (let i = 0; i < RUNS; i++) {
      const t = performance.now();
      const page = search.search(request, at);
      times.push(performance.now() - t);
      hits = page.items.length;
      counted = page.histogram?.reduce((n, b) => n + b.hits, 0) ?? 0;
    }
    rows.push(`${tokenizer.padEnd(9)} ${query.name.padEnd(30)} p50 ${pct(times, 50).toFixed(2).padStart(8)} ms  p99 ${pct(times, 99).toFixed(2).padStart(8)} ms  hits ${hits}${query.histogram === true ? ` (histogram ${counted})` : ''}`);
  }
  return rows;
}

async function main(): Promise<void> {
  const base = join(dir, 'base.db');
  console.log(`writing ${EVENTS.toLocaleString('en')} events through applyArchiveBatch, without the index and with it, ${INGEST_ROUNDS} times each …`);
  const without: { seconds: number; cpuUs: number }[] = [];
  const indexed: { seconds: number; cpuUs: number }[] = [];
  for (let round = 0; round < INGEST_ROUNDS; round++) {
    without.push(await writeArchive(base, false));
    indexed.push(await writeArchive(join(dir, 'indexed.db'), true));
    const [w, i] = [without[round]!, indexed[round]!];
    console.log(`  round ${round + 1}: ${Math.round(EVENTS / w.seconds).toLocaleString('en')} events/s (${w.cpuUs.toFixed(0)} µs CPU/event) without, ${Math.round(EVENTS / i.seconds).toLocaleString('en')} (${i.cpuUs.toFixed(0)} µs) with: ${((w.seconds / i.seconds) * 100).toFixed(0)}%`);
  }
  const median = (xs: number[]): number => pct(xs, 50);
  const [w, i] = [median(without.map((r) => r.seconds)), median(indexed.map((r) => r.seconds))];
  const [wc, ic] = [median(without.map((r) => r.cpuUs)), median(indexed.map((r) => r.cpuUs))];
  console.log(
    `ingest (medians): ${Math.round(EVENTS / w).toLocaleString('en')} events/s without the index, ${Math.round(EVENTS / i).toLocaleString('en')} with it (${((w / i) * 100).toFixed(0)}%); ` +
      `CPU ${wc.toFixed(0)} and ${ic.toFixed(0)} µs/event (the index ${(ic - wc).toFixed(0)} µs, rate by CPU ${((wc / ic) * 100).toFixed(0)}%)`,
  );
  const plain = new Database(base, { readonly: true });
  const baseBytes = usedBytes(plain);
  plain.close();
  console.log(`archive: ${(baseBytes / 1e6).toFixed(1)} MB in use, ${Math.round(baseBytes / EVENTS)} bytes/event (events and occurrences)`);
  const live = new Database(join(dir, 'indexed.db'), { readonly: true });
  const liveBytes = usedBytes(live);
  live.close();
  console.log(`with the index kept by the writes: ${(liveBytes / 1e6).toFixed(1)} MB, the index +${(((liveBytes - baseBytes) / baseBytes) * 100).toFixed(0)}%`);

  const results: string[] = [];
  for (const tokenizer of TOKENIZERS) {
    const path = join(dir, `${tokenizer}.db`);
    copyFileSync(base, path);
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    const started = performance.now();
    db.transaction(() => {
      db.exec(searchIndexSchema(tokenizer));
      buildSearchIndex(db);
    })();
    const buildSeconds = (performance.now() - started) / 1000;
    const bytes = usedBytes(db);
    const at = (db.prepare('SELECT max(rv) AS m FROM versions').get() as { m: number }).m;
    console.log(
      `${tokenizer}: index built in ${buildSeconds.toFixed(1)} s (${Math.round(EVENTS / buildSeconds).toLocaleString('en')} events/s, ${((buildSeconds * 1e6) / EVENTS).toFixed(0)} s per million); ` +
        `index ${((bytes - baseBytes) / 1e6).toFixed(1)} MB = ${Math.round((bytes - baseBytes) / EVENTS)} bytes/event, +${(((bytes - baseBytes) / baseBytes) * 100).toFixed(0)}% of the archive`,
    );
    if (QUERIES_ON) results.push(...runQueries(db, tokenizer, at));
    db.close();
  }
  console.log(`\nqueries (${RUNS} runs each, newest 100 unless said):`);
  for (const r of results) console.log(r);
}

await main();
