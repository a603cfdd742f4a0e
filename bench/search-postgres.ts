/**
 * Search benchmark for the PostgreSQL archive: a tsvector with a GIN index (what the store
 * uses, src/storage/postgres/search-index-writer.ts) against pg_trgm's trigram GIN over the same words,
 * measured on one archive of generated events whose messages follow upstream's formats
 * (bench/support/realistic-events.ts), written through PostgresEventStore.applyArchiveBatch
 * (the mirror's bulk path):
 *   - the index's cost at ingest: the store's batches with its search indexes and without them, same run;
 *   - the in-place migration of an archive written before the index (fill the columns, build the
 *     indexes), per million events; the trigram index's build over the same words;
 *   - sizes: each index and the vector column against the table (heap, TOAST and the other indexes);
 *   - the write cost of each index alone: version rows copied by SQL (rolled back), with none,
 *     with the tsvector's indexes, with the trigram's;
 *   - latency of the bench/search.ts queries, each BENCH_RUNS times, p50 and p99: through the
 *     store (the whole answer: snapshot, candidates, check, decode) and, for both indexes, the
 *     candidate query alone (the newest 101 candidates in SQL).
 *
 * Run: node --import tsx bench/search-postgres.ts   (BENCH_EVENTS=1000000 for a larger archive;
 * KEVENTS_BENCH_POSTGRES=postgres://user@host:port/db, default the test database on 127.0.0.1:55432;
 * pg_trgm must be available to CREATE EXTENSION). BENCH_PHASES=queries measures only the queries, through
 * the store and the tsvector candidate query (no archive without the index, no migration, no trigram);
 * BENCH_KEEP=1 keeps the indexed archive (schema kevents_bench_search_<events>) and a later run with it reuses it.
 */
import type { SearchQuery } from '../src/api/index.js';
import { parseSearchQuery, searchFieldValue, searchWords, SEARCH_TEXT_FIELDS } from '../src/api/index.js';
import pg from 'pg';
import type { SearchRequest } from '../src/storage/index.js';
import { PostgresEventStore } from '../src/storage/postgres/index.js';
import { compileQuery } from '../src/storage/postgres/search-index.js';
import { fillSearchColumns, searchColumns, searchIndexSql } from '../src/storage/postgres/search-index-writer.js';
import type { CoreEvent } from '../src/api/index.js';
import { noopLogger } from '../src/internal/index.js';
import { ARCHIVE_END as END, ARCHIVE_SPAN_MS as SPAN_MS, realisticArchive, writeRealisticArchive } from './support/realistic-events.js';

const URL = process.env.KEVENTS_BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:55432/test';
const EVENTS = Number(process.env.BENCH_EVENTS ?? 200_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const INSERTS = Number(process.env.BENCH_INSERTS ?? 20_000);
const PHASES = new Set((process.env.BENCH_PHASES ?? 'ingest,migration,trigram,writes,queries').split(','));
const KEEP = process.env.BENCH_KEEP === '1';
const A = KEEP ? `kevents_bench_search_${EVENTS}` : `kevents_bench_search_a_${process.pid}`;
const B = `kevents_bench_search_b_${process.pid}`;

const admin = new pg.Pool({ connectionString: URL, max: 2 });

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

/** writeArchive writes the events into a schema through the store's bulk path; without `indexed`, the search indexes are dropped first. */
async function writeArchive(schema: string, indexed: boolean): Promise<number> {
  const store = new PostgresEventStore({ connectionString: URL, schema, poolSize: 4 });
  await store.ready();
  if (!indexed) await admin.query(`DROP INDEX ${schema}.search_words, ${schema}.search_time, ${schema}.search_reason`);
  const seconds = await writeRealisticArchive(store, EVENTS);
  await store.close();
  return seconds;
}

/** trigramText is what the trigram index is built over: each text field's words between spaces, fields apart, then the `field=value` keywords. */
function trigramText(e: CoreEvent): string {
  const text = SEARCH_TEXT_FIELDS.map((f) => ` ${searchWords(searchFieldValue(e, f)).join(' ')} `).join('|');
  const keywords = (['reason', 'ns', 'kind', 'name', 'node', 'controller', 'cluster', 'type'] as const).map((f) => ` ${f}=${searchFieldValue(e, f).toLowerCase()} `).join('|');
  return `${text}|${keywords}`;
}

/** trigramWhere is a query's terms as LIKE conditions on trigramText (exact but for the phrase-in-one-field rule the store's check keeps). */
function trigramWhere(query: SearchQuery, values: unknown[]): string[] {
  const like = (pattern: string, not: boolean): string => {
    values.push(pattern);
    return `search_text ${not ? 'NOT ' : ''}LIKE $${values.length}`;
  };
  const conds: string[] = [];
  for (const t of query.terms) {
    if (t.kind === 'text') conds.push(like(`% ${t.words.join(' ')} %`, t.negated));
    else conds.push(like(`% ${t.field}=${t.value}${t.prefix ? '%' : ' %'}`, t.negated));
  }
  return conds;
}

async function relationBytes(schema: string, name: string): Promise<number> {
  const { rows } = await admin.query<{ n: string }>('SELECT pg_relation_size($1::regclass) AS n', [`${schema}.${name}`]);
  return Number(rows[0]!.n);
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, seconds: (performance.now() - started) / 1000 };
}

/** insertRate copies INSERTS stored version rows as new versions, 1,000 a statement, in a transaction it rolls back; rows/s. */
async function insertRate(schema: string): Promise<number> {
  const c = await admin.connect();
  try {
    await c.query('BEGIN');
    const { rows } = await c.query<{ m: string }>(`SELECT max(rv) AS m FROM ${schema}.versions`);
    const top = Number(rows[0]!.m);
    const cols = (await c.query<{ column_name: string }>('SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2', [schema, 'versions'])).rows
      .map((r) => r.column_name)
      .filter((n) => n !== 'rv' && n !== 'key');
    const started = performance.now();
    for (let i = 0; i < INSERTS; i += 1000) {
      await c.query(
        `INSERT INTO ${schema}.versions (rv, key, ${cols.join(', ')}) SELECT rv + $1, key || '-copy', ${cols.join(', ')} FROM ${schema}.versions WHERE op <> 3 AND rv > $2 ORDER BY rv LIMIT 1000`,
        [top, i],
      );
    }
    const rate = INSERTS / ((performance.now() - started) / 1000);
    await c.query('ROLLBACK');
    return rate;
  } finally {
    c.release();
  }
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
/** QUERIES are bench/search.ts's. */
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

function requestOf(query: Query): SearchRequest {
  const request: SearchRequest = { query: parseSearchQuery(query.q, { nowMs: END }), limit: query.limit ?? 100 };
  if (query.namespace !== undefined) request.namespace = query.namespace;
  if (query.histogram === true) request.histogram = { sinceMs: END - 25 * 3_600_000, untilMs: END - 3_600_000, bucketMs: 3_600_000 };
  return request;
}

async function measure(fn: () => Promise<number>): Promise<{ p50: number; p99: number; n: number }> {
  let n = await fn();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    n = await fn();
    times.push(performance.now() - t);
  }
  return { p50: pct(times, 50), p99: pct(times, 99), n };
}

/** candidateSql is the newest 101 candidates of a query in SQL, through the tsvector or the trigram index. */
function candidateSql(schema: string, query: Query, kind: 'tsvector' | 'trigram'): { text: string; values: unknown[] } {
  const request = requestOf(query);
  const values: unknown[] = [];
  const where = ['op <> 3', 'superseded_rv IS NULL'];
  if (kind === 'tsvector') {
    const { tsquery } = compileQuery(request.query);
    if (tsquery !== undefined) {
      values.push(tsquery);
      where.push(`search @@ $${values.length}::tsquery`);
    }
  } else where.push(...trigramWhere(request.query, values));
  if (request.namespace !== undefined) {
    values.push(`${request.namespace}/`, `${request.namespace}0`);
    where.push(`key >= $${values.length - 1} AND key < $${values.length}`);
  }
  for (const [bound, op] of [[request.query.sinceMs, '>='], [request.query.untilMs, '<']] as const) {
    if (bound === undefined) continue;
    values.push(bound);
    where.push(`last_ms ${op} $${values.length}`);
  }
  return { text: `SELECT rv, object FROM ${schema}.versions WHERE ${where.join(' AND ')} ORDER BY last_ms DESC, key LIMIT ${(request.limit ?? 100) + 1}`, values };
}

/** measureIndexes writes the archive with and without the search indexes, and measures sizes, the migration, trigram's index and the write costs. */
async function measureIndexes(): Promise<void> {
  await admin.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  console.log(`writing ${EVENTS.toLocaleString('en')} events through applyArchiveBatch, without the search indexes and with them …`);
  const plainSeconds = await writeArchive(B, false);
  const indexedSeconds = await writeArchive(A, true);
  console.log(
    `ingest: ${Math.round(EVENTS / plainSeconds).toLocaleString('en')} events/s without the search indexes, ${Math.round(EVENTS / indexedSeconds).toLocaleString('en')} with them ` +
      `(${((plainSeconds / indexedSeconds) * 100).toFixed(0)}%)`,
  );
  const sample = [...realisticArchive(Math.min(EVENTS, 20_000), 20_000)][0]!;
  const vecStarted = performance.now();
  for (const e of sample) searchColumns(e);
  console.log(`the vector of an event computed in ${(((performance.now() - vecStarted) * 1e3) / sample.length).toFixed(1)} µs (JS, in the write path)`);

  await admin.query(`VACUUM ANALYZE ${A}.versions`);
  await admin.query(`VACUUM ANALYZE ${A}.occurrences`);
  // The archive is every table of the schema (versions, occurrences and the small ones), with their indexes and TOAST.
  const sizes = await admin.query<{ total: string; column: string }>(
    `SELECT (SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r') AS total,
            (SELECT sum(pg_column_size(search)) FROM ${A}.versions) AS column`,
    [A],
  );
  const total = Number(sizes.rows[0]!.total);
  const words = await relationBytes(A, 'search_words');
  const time = (await relationBytes(A, 'search_time')) + (await relationBytes(A, 'search_reason'));
  const column = Number(sizes.rows[0]!.column);
  const others = total - words - time - column;
  console.log(
    `tsvector: archive ${mb(total)} in all (${Math.round(total / EVENTS)} bytes/event); the GIN ${mb(words)}, the time and reason b-trees ${mb(time)}, the vectors ${mb(column)}: ` +
      `${mb(words + time + column)} = ${Math.round((words + time + column) / EVENTS)} bytes/event, +${(((words + time + column) / others) * 100).toFixed(0)}% of the archive without them (${mb(others)})`,
  );

  // The migration of an archive written before the index: B as such an archive.
  await admin.query(`ALTER TABLE ${B}.versions DROP COLUMN search, DROP COLUMN last_ms`);
  await admin.query(`ALTER TABLE ${B}.versions ADD COLUMN search tsvector, ADD COLUMN last_ms bigint`);
  const fill = await timed(() => fillSearchColumns(admin, B, noopLogger));
  const build = await timed(() => admin.query(`${searchIndexSql(B)}`));
  const perMillion = (s: number): string => `${((s * 1e6) / EVENTS).toFixed(0)} s per million`;
  console.log(`migration: vectors filled in ${fill.seconds.toFixed(1)} s, indexes built in ${build.seconds.toFixed(1)} s: ${perMillion(fill.seconds + build.seconds)}`);
  await admin.query(`DROP INDEX ${B}.search_words`);
  const ginBuild = await timed(() => admin.query(`CREATE INDEX search_words ON ${B}.versions USING gin (search) WHERE op <> 3`));
  console.log(`tsvector GIN alone built in ${ginBuild.seconds.toFixed(1)} s (${perMillion(ginBuild.seconds)})`);

  // The trigram index over the same words, on B.
  await admin.query(`ALTER TABLE ${B}.versions ADD COLUMN search_text text`);
  const c = await admin.connect();
  const textFill = await timed(async () => {
    let after = 0;
    for (;;) {
      const { rows } = await c.query<{ rv: string; object: string }>(`SELECT rv, object FROM ${B}.versions WHERE op <> 3 AND rv > $1 ORDER BY rv LIMIT 20000`, [after]);
      if (rows.length === 0) return;
      await c.query(
        `UPDATE ${B}.versions v SET search_text = u.t FROM unnest($1::bigint[], $2::text[]) AS u(rv, t) WHERE v.rv = u.rv`,
        [rows.map((r) => r.rv), rows.map((r) => trigramText(JSON.parse(r.object) as CoreEvent))],
      );
      after = Number(rows[rows.length - 1]!.rv);
    }
  });
  c.release();
  const trgBuild = await timed(() => admin.query(`CREATE INDEX search_trgm ON ${B}.versions USING gin (search_text gin_trgm_ops) WHERE op <> 3`));
  await admin.query(`VACUUM ANALYZE ${B}.versions`);
  const trgBytes = await relationBytes(B, 'search_trgm');
  const { rows: textRows } = await admin.query<{ n: string }>(`SELECT sum(pg_column_size(search_text)) AS n FROM ${B}.versions`);
  console.log(
    `trigram: text filled in ${textFill.seconds.toFixed(1)} s, GIN built in ${trgBuild.seconds.toFixed(1)} s (${perMillion(trgBuild.seconds)}); ` +
      `the GIN ${mb(trgBytes)}, the text ${mb(Number(textRows[0]!.n))}: +${(((trgBytes + Number(textRows[0]!.n)) / others) * 100).toFixed(0)}% of the archive without them; ` +
      `tsvector's GIN ${mb(await relationBytes(B, 'search_words'))} on this table`,
  );

  // Write cost of each index alone, on B: none, the tsvector's two, the trigram's GIN and the time b-tree.
  await admin.query(`ALTER INDEX ${B}.search_trgm RENAME TO search_trgm_kept`);
  const setIndexes = async (which: 'none' | 'tsvector' | 'trigram'): Promise<void> => {
    await admin.query(`DROP INDEX IF EXISTS ${B}.search_words, ${B}.search_time, ${B}.search_trgm`);
    if (which === 'tsvector') await admin.query(searchIndexSql(B));
    if (which === 'trigram') {
      await admin.query(`CREATE INDEX search_time ON ${B}.versions (last_ms DESC, key) WHERE op <> 3`);
      await admin.query(`CREATE INDEX search_trgm ON ${B}.versions USING gin (search_text gin_trgm_ops) WHERE op <> 3`);
    }
  };
  await admin.query(`DROP INDEX ${B}.search_trgm_kept`);
  const rates: Record<string, number> = {};
  for (const which of ['none', 'tsvector', 'trigram'] as const) {
    await setIndexes(which);
    rates[which] = await insertRate(B);
  }
  console.log(
    `version rows inserted: ${Math.round(rates.none!).toLocaleString('en')}/s with no search index, ` +
      `${Math.round(rates.tsvector!).toLocaleString('en')}/s with the tsvector's (${((rates.tsvector! / rates.none!) * 100).toFixed(0)}%), ` +
      `${Math.round(rates.trigram!).toLocaleString('en')}/s with the trigram's (${((rates.trigram! / rates.none!) * 100).toFixed(0)}%)`,
  );
  // B keeps both word indexes for the candidate queries.
  await admin.query(`CREATE INDEX search_words ON ${B}.versions USING gin (search) WHERE op <> 3`);
  await admin.query(`ANALYZE ${B}.versions`);

}

/** archiveRows is how many versions a kept archive holds (0: none). */
async function archiveRows(schema: string): Promise<number> {
  const { rows } = await admin.query<{ t: string | null }>('SELECT to_regclass($1) AS t', [`${schema}.versions`]);
  if (rows[0]?.t == null) return 0;
  const { rows: n } = await admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.versions`);
  return Number(n[0]!.n);
}

async function main(): Promise<void> {
  const full = PHASES.has('ingest');
  if (full) await measureIndexes();
  else if ((await archiveRows(A)) < EVENTS) {
    await admin.query(`DROP SCHEMA IF EXISTS ${A} CASCADE`);
    console.log(`writing ${EVENTS.toLocaleString('en')} events through applyArchiveBatch …`);
    const seconds = await writeArchive(A, true);
    console.log(`ingest: ${Math.round(EVENTS / seconds).toLocaleString('en')} events/s`);
    await admin.query(`VACUUM ANALYZE ${A}.versions`);
  } else console.log(`reusing the archive of ${A}`);
  // The candidate queries run on B (both word indexes) after the full run, on A when only the queries are measured.
  const sqlSchema = full ? B : A;
  const kinds = full ? (['tsvector', 'trigram'] as const) : (['tsvector'] as const);
  const store = new PostgresEventStore({ connectionString: URL, schema: A, poolSize: 4 });
  await store.ready();
  console.log(`\nqueries (${RUNS} runs each, newest 100 unless said): the store's answer; the candidate query alone, tsvector and trigram`);
  for (const query of QUERIES) {
    const request = requestOf(query);
    let counted = 0;
    const whole = await measure(async () => {
      const page = await store.search(request);
      counted = page.histogram?.reduce((n, b) => n + b.hits, 0) ?? 0;
      return page.items.length;
    });
    const sql: Record<string, { p50: number; p99: number; n: number }> = {};
    for (const kind of kinds) {
      const q = candidateSql(sqlSchema, query, kind);
      sql[kind] = await measure(async () => (await admin.query(q.text, q.values)).rows.length);
    }
    const f = (x: { p50: number; p99: number }): string => `${x.p50.toFixed(1).padStart(7)} /${x.p99.toFixed(1).padStart(7)} ms`;
    console.log(
      `${query.name.padEnd(30)} store ${f(whole)}  hits ${String(whole.n).padStart(3)}${query.histogram === true ? ` (histogram ${counted})` : ''}   ` +
        `SQL tsvector ${f(sql.tsvector!)} (${sql.tsvector!.n})${sql.trigram !== undefined ? `  trigram ${f(sql.trigram)} (${sql.trigram.n})` : ''}`,
    );
  }
  await store.close();
}

try {
  await main();
} finally {
  if (!KEEP) await admin.query(`DROP SCHEMA IF EXISTS ${A} CASCADE`).catch(() => undefined);
  await admin.query(`DROP SCHEMA IF EXISTS ${B} CASCADE`).catch(() => undefined);
  await admin.end();
}
