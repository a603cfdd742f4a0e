/**
 * The PostgreSQL search index's writes: the write path computes each version's
 * columns (`searchColumns`) and the write function stores them in the row it
 * inserts, so the index is in step with the data in every transaction;
 * compaction, retention and the size cap remove hits by removing the rows. The
 * layout's columns and indexes, and the migration that fills the columns of a
 * database written before them, are here too.
 */
import { SEARCH_KEYWORD_FIELDS, searchFieldValue, searchTimeMs, searchWords, SEARCH_TEXT_FIELDS } from '../../api/index.js';
import type { CoreEvent } from '../../api/index.js';
import type { Logger } from '../../internal/index.js';
import type { PgClient } from './options.js';
import { storedOf } from './packed-rows.js';
import { MAX_WORD, REASON_KEY, UNINDEXED, keywordLexeme, quote } from './search-index.js';

/** SearchColumns are the search columns of one stored version: its vector (tsvector text) and its last time. */
export interface SearchColumns {
  search: string;
  lastMs: number;
}

/** VECTOR_FIELDS are the keyword fields the vector holds as `<field>=<value>` lexemes. */
const VECTOR_FIELDS = [...SEARCH_KEYWORD_FIELDS, 'type'] as const;

/** MAX_POSITION is the last word position a tsvector keeps exactly (larger ones are clamped), MAX_POSITIONS how many one lexeme keeps. */
const MAX_POSITION = 16_383;
const MAX_POSITIONS = 256;
/** searchColumns computes what the index holds of an event: its vector and its last time. */
export function searchColumns(e: CoreEvent): SearchColumns {
  const positions = new Map<string, number[]>();
  let at = 1;
  let indexed = true;
  for (const f of SEARCH_TEXT_FIELDS) {
    for (const w of searchWords(searchFieldValue(e, f))) {
      let p = positions.get(w);
      if (p === undefined) positions.set(w, (p = []));
      p.push(at++);
      if (w.length > MAX_WORD || p.length > MAX_POSITIONS) indexed = false;
    }
    // The gap keeps a phrase (`a <-> b`: b right after a) inside one field.
    at++;
  }
  if (at > MAX_POSITION) indexed = false;
  const parts: string[] = [];
  if (indexed) for (const [w, p] of positions) parts.push(`${quote(w)}:${p.join(',')}`);
  else parts.push(quote(UNINDEXED));
  for (const f of VECTOR_FIELDS) {
    const v = searchFieldValue(e, f);
    if (v !== '') parts.push(quote(keywordLexeme(f, v).lexeme));
  }
  return { search: parts.join(' '), lastMs: searchTimeMs(e) };
}

/** searchSql is the index's part of the layout: its columns (also added to a database written before them) and indexes. */
export function searchColumnsSql(s: string): string {
  return `ALTER TABLE ${s}.versions ADD COLUMN IF NOT EXISTS search tsvector, ADD COLUMN IF NOT EXISTS last_ms bigint;`;
}

/**
 * searchIndexSql creates the word index, after the columns are filled: the GIN over the vectors, over the rows a
 * search reads (tombstones have none). The time and reason indexes are `SEARCH_ORDER_INDEXES`.
 */
export function searchIndexSql(s: string): string {
  return `CREATE INDEX IF NOT EXISTS search_words ON ${s}.versions USING gin (search) WHERE op <> 3;`;
}

/**
 * SEARCH_ORDER_INDEXES are the b-trees a search reads newest first, over the rows it reads (tombstones have no
 * time), both read backward (schema 7):
 *
 * - `search_time`: the last time, then the key in descending order, which read backward is the search's order (the
 *   last time, newest first, then the key). Schema 6 held `last_ms DESC, key`: the newest entry landed on the
 *   leftmost page, which splits in half where the rightmost splits 90/10, so the pages stayed half full (142 B/event
 *   at 100,000 events); ascending, the newest lands on the rightmost (85). The key stays in it: a search of one
 *   namespace tests its key range on the index's entries and reads only its rows (the last time alone, 23 B/event,
 *   read 15,000 rows for a page of 101 in one namespace of 50, 34 ms against 5).
 * - `search_reason`: REASON_KEY, then the last time: a reason's rows newest first, the rows of one millisecond put in
 *   key order as they come (an incremental sort, a few rows at a time), so it holds no key (165 → 51 B/event): a
 *   search of a reason in one namespace reads that reason's rows of every namespace.
 *
 * An index of another form is an earlier schema's, which `applySchema` rebuilds in place (`rebuildIndex`).
 */
export const SEARCH_ORDER_INDEXES = [
  { name: 'search_time', keys: 2, expression: false, order: ['asc', 'desc'], by: 'time', columns: 'last_ms, key DESC' },
  { name: 'search_reason', keys: 2, expression: true, order: ['asc', 'asc'], by: 'reason and time', columns: `(${REASON_KEY}), last_ms` },
] as const;

/** searchOrderIndexSql is the definition of one of SEARCH_ORDER_INDEXES. */
export function searchOrderIndexSql(s: string, index: (typeof SEARCH_ORDER_INDEXES)[number]): string {
  return `CREATE INDEX ${index.name} ON ${s}.versions (${index.columns}) WHERE op <> 3`;
}

/** FILL_CHUNK is how many versions a migration reads and updates at a time. */
const FILL_CHUNK = 20_000;
/** PROGRESS_EVERY is how many versions a migration fills between two progress lines. */
const PROGRESS_EVERY = 1_000_000;

/**
 * fillSearchColumns computes the search columns of the versions stored before
 * the index (a database of schema 3 or older), in chunks, inside the caller's
 * transaction, logging progress every million versions and the time per million
 * (the CLI's logger writes to stderr). It returns how many it filled.
 */
export async function fillSearchColumns(client: Pick<PgClient, 'query'>, s: string, logger: Pick<Logger, 'info'>): Promise<number> {
  const started = performance.now();
  const seconds = (): number => Math.round(performance.now() - started) / 1000;
  const { rows: counted } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${s}.versions WHERE op <> 3 AND search IS NULL`);
  const total = Number(counted[0]?.n ?? 0);
  if (total === 0) return 0;
  let after = 0;
  let done = 0;
  let reported = 0;
  for (;;) {
    const { rows } = await client.query<{ rv: string; object: string | null; object_z: Uint8Array | null }>(
      `SELECT rv, object, object_z FROM ${s}.versions WHERE op <> 3 AND search IS NULL AND rv > $1 ORDER BY rv LIMIT $2`,
      [after, FILL_CHUNK],
    );
    if (rows.length === 0) break;
    const cols = rows.map((r) => searchColumns(JSON.parse(storedOf(r)!) as CoreEvent));
    await client.query(
      `UPDATE ${s}.versions v SET search = u.search::tsvector, last_ms = u.last_ms
       FROM unnest(ARRAY(SELECT json_array_elements_text($1::json))::bigint[], ARRAY(SELECT json_array_elements_text($2::json)), ARRAY(SELECT json_array_elements_text($3::json))::bigint[]) AS u(rv, search, last_ms)
       WHERE v.rv = u.rv`,
      [JSON.stringify(rows.map((r) => r.rv)), JSON.stringify(cols.map((c) => c.search)), JSON.stringify(cols.map((c) => c.lastMs))],
    );
    done += rows.length;
    after = Number(rows[rows.length - 1]!.rv);
    if (done - reported >= PROGRESS_EVERY && done < total) {
      reported = done;
      logger.info('indexing the archive for search', { versions: done, of: total, seconds: seconds() });
    }
  }
  logger.info('the archive\'s search index is built', { versions: done, seconds: seconds(), secondsPerMillion: Math.round((seconds() * 1e6) / done) });
  return done;
}
