/**
 * Search benchmark for the SQLite archive: which FTS5 tokenizer the index uses
 * (unicode61 or trigram), measured on one archive of generated events whose
 * messages follow upstream's formats (bench/support/realistic-events.ts):
 *   - the index build over an existing archive (the in-place migration), per event and per million;
 *   - the index's size against the archive's (pages in use before and after);
 *   - the index's cost at ingest: applyArchiveBatch with the index and without it, same run;
 *   - the write cost of the triggers alone: version rows copied by SQL, which no writer has
 *     handed the event (so each is decoded), with and without the index;
 *   - latency of 14 queries (rare and common words, phrases, fields, wildcard, window,
 *     negation, histogram, words trigram cannot index), each run BENCH_RUNS times: p50 and p99.
 *
 * The archive is written once through SqliteEventStore.applyArchiveBatch (the mirror's bulk
 * path) and copied for each tokenizer.
 *
 * Run: node --import tsx bench/search.ts   (BENCH_EVENTS=1000000 for a larger archive)
 */
import Database from 'better-sqlite3';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSearchQuery } from '../src/storage/index.js';
import type { SearchRequest } from '../src/storage/index.js';
import { SqliteEventStore } from '../src/storage/sqlite/index.js';
import { SqliteSearch, addSearchFunctions, buildSearchIndex, searchIndexSchema } from '../src/storage/sqlite/search-index.js';
import type { SearchTokenizer } from '../src/storage/sqlite/search-index.js';
import { ARCHIVE_END as END, ARCHIVE_SPAN_MS as SPAN_MS, archiveWrites, realisticArchive } from './support/realistic-events.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 200_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const INSERTS = Number(process.env.BENCH_INSERTS ?? 20_000);

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
 * index's cost at ingest, and a file as an archive of schema 5 is, for the migration.
 */
async function writeArchive(path: string, indexed: boolean): Promise<{ seconds: number }> {
  const store = new SqliteEventStore({ path });
  await store.ready();
  if (!indexed) {
    (store as unknown as { c: { db: Database.Database } }).c.db.exec('DROP TRIGGER search_add; DROP TRIGGER search_drop; DROP TABLE search_fts; DROP TABLE search_docs');
  }
  const started = performance.now();
  for (const events of realisticArchive(EVENTS, 1000)) {
    await store.applyArchiveBatch({ writes: archiveWrites(events), stamp: {} });
  }
  const seconds = (performance.now() - started) / 1000;
  await store.close();
  const db = new Database(path);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return { seconds };
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

/** insertRate inserts INSERTS copies of stored version rows as new versions, 500 a transaction, and returns rows/s. */
function insertRate(db: Database.Database): number {
  const maxRv = (db.prepare('SELECT max(rv) AS m FROM versions').get() as { m: number }).m;
  const source = db.prepare('SELECT * FROM versions WHERE op <> 3 ORDER BY rv LIMIT ?').all(INSERTS) as Record<string, unknown>[];
  const cols = Object.keys(source[0]!);
  const insert = db.prepare(`INSERT INTO versions (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`);
  const started = performance.now();
  for (let i = 0; i < source.length; i += 500) {
    db.transaction(() => {
      for (let j = i; j < Math.min(source.length, i + 500); j++) insert.run({ ...source[j], rv: maxRv + 1 + j, key: `${String(source[j]!.key)}-copy` });
    })();
  }
  return source.length / ((performance.now() - started) / 1000);
}

async function main(): Promise<void> {
  const base = join(dir, 'base.db');
  console.log(`writing ${EVENTS.toLocaleString('en')} events through applyArchiveBatch, without the index and with it …`);
  const written = await writeArchive(base, false);
  const withIndex = await writeArchive(join(dir, 'indexed.db'), true);
  console.log(
    `ingest: ${Math.round(EVENTS / written.seconds).toLocaleString('en')} events/s without the index, ${Math.round(EVENTS / withIndex.seconds).toLocaleString('en')} with it ` +
      `(${((written.seconds / withIndex.seconds) * 100).toFixed(0)}%)`,
  );
  const plainCopy = join(dir, 'plain.db');
  copyFileSync(base, plainCopy);
  const plain = new Database(plainCopy);
  const baseBytes = usedBytes(plain);
  console.log(`archive: ${(baseBytes / 1e6).toFixed(1)} MB in use, ${Math.round(baseBytes / EVENTS)} bytes/event (events and occurrences)`);
  const plainRate = insertRate(plain);
  plain.close();

  const results: string[] = [];
  for (const tokenizer of ['unicode61', 'trigram'] as const) {
    const path = join(dir, `${tokenizer}.db`);
    copyFileSync(base, path);
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    addSearchFunctions(db);
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
    results.push(...runQueries(db, tokenizer, at));
    const rate = insertRate(db);
    console.log(`${tokenizer}: version rows inserted ${Math.round(rate).toLocaleString('en')}/s with the index, ${Math.round(plainRate).toLocaleString('en')}/s without (${((rate / plainRate) * 100).toFixed(0)}%)`);
    db.close();
  }
  console.log(`\nqueries (${RUNS} runs each, newest 100 unless said):`);
  for (const r of results) console.log(r);
}

await main();
