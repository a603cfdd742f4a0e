/**
 * The PostgreSQL search index's reads: a `tsvector` column of every stored
 * version (`search`), with a GIN index over it, and the event's last time
 * (`last_ms`) with a b-tree read backward in search order (`SEARCH_ORDER_INDEXES`), which search-index-writer.ts
 * fills. bench/search-postgres.ts chose a tsvector over pg_trgm
 * (docs/benchmarks.md).
 *
 * The vector holds each text field's words (`searchWords`, so the index splits
 * text as the query language does) with their positions, a gap between fields
 * so that a phrase never runs from one field into the next, and one lexeme
 * `<field>=<lowercased value>` per keyword field, which `field:value` compares
 * whole and `name:web-*` as a prefix. A query compiles to a `tsquery` that is
 * exact for every row but the few whose text is too large to index word by
 * word, which carry the lexeme `~` instead of their words; the store still
 * checks every candidate with `createSearchMatcher`, the definition.
 */
import type { FieldTerm, SearchField, SearchQuery } from '../../api/index.js';
import { createSearchMatcher, searchTimeMs } from '../../api/index.js';
import type { CoreEvent } from '../../api/index.js';
import { StorageError } from '../errors.js';
import { countInHistogram, histogramBuckets, searchCursorOf } from '../search/index.js';
import { compareSearchOrder } from '../search/index.js';
import type { SearchBucket, SearchCursor, SearchPage, SearchRequest } from '../search/index.js';
import { decodeEvent, listRevision, namespaceRange } from '../shared/index.js';
import { pgFailure } from './driver.js';
import { DEFAULT_SEARCH_TIMEOUT_MS } from './options.js';
import type { PgClient, PgPool } from './options.js';
import { objectColumns, objectOf } from './packed-rows.js';
import type { PackedObject } from './packed-rows.js';

/** UNINDEXED is the lexeme of a version whose words are not in its vector: every text term takes it as a candidate. */
export const UNINDEXED = '~';

/** MAX_WORD is the longest word (UTF-16 units) the vector holds; a longer one makes the version UNINDEXED (a lexeme is at most 2 kB). */
export const MAX_WORD = 200;
/** MAX_VALUE is how many code points of a keyword value the vector keeps: a longer value is compared by its start, and rechecked. */
const MAX_VALUE = 200;

/** quote writes a lexeme as tsvector and tsquery input take it: in single quotes, `'` and `\` doubled. */
export function quote(lexeme: string): string {
  return `'${lexeme.replace(/['\\]/g, (c) => c + c)}'`;
}

/**
 * keywordLexeme is the lexeme of a keyword value, for the vector and the query
 * alike: lowercased, NUL and lone surrogates (which text cannot hold) as spaces, cut to
 * MAX_VALUE code points. `plain` says the lexeme is the value itself, so that
 * an exclusion of it is exact.
 */
export function keywordLexeme(field: string, value: string): { lexeme: string; cut: boolean; plain: boolean } {
  const clean = value.toLowerCase().replace(/\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, ' ');
  const points = [...clean];
  const cut = points.length >= MAX_VALUE;
  return { lexeme: `${field}=${cut ? points.slice(0, MAX_VALUE).join('') : clean}`, cut, plain: !cut && clean === value };
}

/**
 * REASON_KEY is the SQL of a version's reason as `reason:` compares it, which `search_reason` indexes with the
 * last time: lowercased as JavaScript lowercases it, for every reason a value of printable ASCII can match. The
 * column's "C" collation lowercases ASCII letters alone, and of the other characters only the Kelvin sign
 * lowercases to ASCII in JavaScript (to `k`): it is translated first.
 */
export const REASON_KEY = "lower(translate(reason, '\u212a', 'k'))";

const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/**
 * CompiledQuery is a query's tsquery (undefined: nothing narrows), whether it is exact on every row without the
 * UNINDEXED lexeme, and the value of the `reason:` term the row's reason is compared with instead (REASON_KEY).
 */
export interface CompiledQuery {
  tsquery: string | undefined;
  exact: boolean;
  reason?: string;
}

/** compileQuery turns a query's terms into a tsquery that selects a superset of its hits (the window and namespace are SQL conditions). */
export function compileQuery(query: SearchQuery): CompiledQuery {
  const parts: string[] = [];
  let exact = true;
  const reason = byReason(query);
  for (const t of query.terms) {
    if (t === reason) continue;
    if (t.kind === 'text') {
      if (t.words.some((w) => w.length > MAX_WORD)) {
        exact = false;
        continue;
      }
      const phrase = t.words.map(quote).join(' <-> ');
      parts.push(t.negated ? `(!(${phrase}) | ${quote(UNINDEXED)})` : `(${phrase} | ${quote(UNINDEXED)})`);
      continue;
    }
    const { lexeme, cut, plain } = keywordLexeme(t.field, t.value);
    // A cut value is compared whole by its start, which a longer prefix needs no wildcard for.
    const term = `${quote(lexeme)}${t.prefix && !cut ? ':*' : ''}`;
    if (!plain) exact = false;
    if (!t.negated) parts.push(term);
    else if (plain) parts.push(`!${term}`);
  }
  const compiled: CompiledQuery = { tsquery: parts.length === 0 ? undefined : parts.join(' & '), exact };
  if (reason !== undefined) compiled.reason = reason.value;
  return compiled;
}

/**
 * byReason is the term `reason:VALUE` (whole, of printable ASCII) that a search compares with the row's reason
 * through `search_reason`, newest first, rather than with the vector: the planner then counts that reason's rows
 * from its statistics. Given a word and a reason as lexemes of one vector, it multiplies their shares as if they
 * were unrelated and reads every row of both from the heap (49,702 rows, 1.4 s cold, for `reason:FailedMount
 * secret` at 10,000,000 events, where half the FailedMount events hold the word).
 */
export function byReason(query: SearchQuery): FieldTerm | undefined {
  return query.terms.find((t): t is FieldTerm => t.kind === 'field' && t.field === 'reason' && !t.negated && !t.prefix && PRINTABLE_ASCII.test(t.value));
}

/**
 * The first read of a page asks for the page and one more candidate (the
 * candidates are hits but for the rare rows `compileQuery` cannot answer
 * exactly): a read through the time b-tree that tests the tsquery on each row
 * scans in proportion to what it asks for. Later reads double it up to MAX_SEARCH_CHUNK.
 */
const MAX_SEARCH_CHUNK = 4096;
/**
 * MAX_EXAMINED bounds the candidates one request decodes and checks: a page
 * that reaches it ends early, short, with a continue position, as a list that
 * reaches its maxExamined does. A candidate the check refuses is rare (see
 * `compileQuery`), so this binds only a pathological query or archive.
 */
export const MAX_EXAMINED = 20_000;

interface CandidateRow {
  rv: string;
  key: string;
  object: string;
  last_ms: string;
}

/** StoredCandidateRow is a candidate as read, its object in objectColumns. */
type StoredCandidateRow = Omit<CandidateRow, 'object'> & PackedObject;

/** unpacked is a candidate with its object's whole text. */
function unpacked(row: StoredCandidateRow): CandidateRow {
  return { rv: row.rv, key: row.key, object: objectOf(row)!, last_ms: row.last_ms };
}

/**
 * NewestFirstOptions tune the read of a phrase of common words, and of several
 * common terms. A GIN holds no word positions, so `a <-> b` rechecks every row
 * that holds all its words in the heap (44,152 rows, 175 ms, for "back-off
 * restarting failed container" at 1,000,000 events), and the planner, which
 * multiplies the words' frequencies as if they were unrelated, expects a few
 * hundred and takes that path. Terms that go together (`kind:Deployment scaled`:
 * every Scaled event is a Deployment's) mislead it the same way: it expected 843
 * rows there, and read and sorted 29,181 from the heap (277 ms). Such a query
 * reads the newest rows of the time b-tree first, checking the tsquery on each,
 * in scans of a bounded size that stop at the page's last hit, then the word
 * index from where they stopped: the same rows in the same order, without reading every row the
 * index holds when the hits are common.
 */
export interface NewestFirstOptions {
  /** commonRows is how many rows each word of a phrase (and every other term) must be held by, by the table's statistics, for the scan to go first. */
  commonRows: number;
  /** scans are the sizes of the scans, newest first, before the word index takes over. */
  scans: readonly number[];
  /** statsMs is how long the statistics read are kept before they are read again. */
  statsMs: number;
}

/**
 * NEWEST_FIRST: a phrase whose every word 2,000 rows or more hold costs more to
 * recheck than the newest 7,168 rows cost to scan (3 ms for 4,096 warm rows at
 * 1,000,000 events): 101 hits are in those rows when 1.4% of them hold the phrase.
 * One scan, which stops at the page's last hit, so a common phrase reads only
 * the rows down to it.
 */
export const NEWEST_FIRST: NewestFirstOptions = { commonRows: 2_000, scans: [7_168], statsMs: 60_000 };

/** WordStats are the table's statistics of the vector: each common lexeme's share of the rows, and the rows. */
interface WordStats {
  readAt: number;
  shares: Map<string, number>;
  rows: number;
}

/**
 * termRows estimates how many rows hold the lexemes of each term the index
 * narrows by (not the excluded ones): a lexeme the statistics do not list as
 * common counts as rare (0), as does a prefix. It is an upper bound of the
 * rows the word index reads for the term, which is what decides the order.
 */
export function termRows(query: SearchQuery, stats: Pick<WordStats, 'shares' | 'rows'>): number[] {
  const rows = (lexeme: string): number => (stats.shares.get(lexeme) ?? 0) * stats.rows;
  const out: number[] = [];
  for (const t of query.terms) {
    if (t.negated) continue;
    if (t.kind === 'text') out.push(Math.min(...t.words.map(rows)));
    else out.push(t.prefix ? 0 : rows(keywordLexeme(t.field, t.value).lexeme));
  }
  return out;
}

/**
 * newestFirst tells whether a query is read newest first: a phrase of common
 * words (a text term of several words, every term held by `commonRows` rows or
 * more), or several terms each common enough that, were they to go together,
 * the scans would find the page (`limit` and one more) among their rows. Terms
 * that do not go together cost the scans' rows before the word index answers:
 * a few ms, where the index alone would read every row of their commonest
 * combination. One term is left to the planner, whose estimate of one word is right.
 */
export function newestFirst(query: SearchQuery, stats: Pick<WordStats, 'shares' | 'rows'>, o: Pick<NewestFirstOptions, 'commonRows' | 'scans'>, limit: number): boolean {
  const rows = termRows(query, stats);
  if (query.terms.some((t) => t.kind === 'text' && !t.negated && t.words.length > 1)) return rows.every((n) => n >= o.commonRows);
  const fill = (stats.rows * (limit + 1)) / o.scans.reduce((a, b) => a + b, 0);
  return rows.length > 1 && rows.every((n) => n >= Math.max(o.commonRows, fill));
}

/** Conditions is the WHERE of a search's reads and their parameters, built once per request. */
interface Conditions {
  where: string[];
  values: unknown[];
}

/** positioned adds a read's window and position to its conditions: the rows after `after`, newest first, then by key. */
function positioned(base: Conditions, window: { sinceMs?: number; untilMs?: number }, after: SearchCursor | undefined): { where: string[]; values: unknown[]; param: (v: unknown) => string } {
  const values = [...base.values];
  const where = [...base.where];
  const param = (v: unknown): string => {
    values.push(v);
    return `$${values.length}`;
  };
  if (window.sinceMs !== undefined) where.push(`last_ms >= ${param(window.sinceMs)}`);
  if (window.untilMs !== undefined) where.push(`last_ms < ${param(window.untilMs)}`);
  if (after !== undefined) {
    const t = param(after.timeMs);
    where.push(`(last_ms < ${t} OR (last_ms = ${t} AND key > ${param(after.key)}))`);
  }
  return { where, values, param };
}

/** PostgresSearch answers searches over a store's pool. */
export class PostgresSearch {
  private stats: WordStats | undefined;

  constructor(
    private readonly s: string,
    /** idle resolves once the maintenance this replica runs (expiry, compaction) is done, so a search reads its outcome. */
    private readonly idle: () => Promise<void>,
    private readonly order: NewestFirstOptions = NEWEST_FIRST,
    /** timeoutMs is each statement's statement_timeout (searchTimeoutOf), a whole number of ms, at least 1 (0 would mean none). */
    private readonly timeoutMs: number = DEFAULT_SEARCH_TIMEOUT_MS,
  ) {}

  /**
   * search reads one page in a read-only transaction of its own (one snapshot):
   * the revision and compaction point, then the candidates newest first from the
   * request's position, in growing chunks, each decoded and checked, until the
   * page and one more hit are found, the candidates end, or MAX_EXAMINED. Each
   * statement runs under the transaction's statement_timeout, set with BEGIN in
   * one round trip; one cancelled by it fails the search with Timeout.
   */
  async search(pool: PgPool, request: SearchRequest): Promise<SearchPage> {
    await this.idle();
    return this.underTimeout(pool, (client) => this.read(client, request));
  }

  /**
   * underTimeout runs `read` in a read-only transaction of its own (one snapshot) whose every statement runs under
   * the search's statement_timeout: a search, and the occurrences of its hits the search route reads after it. A
   * statement cancelled by it fails the read with Timeout (504), naming the limit.
   */
  async underTimeout<T>(pool: PgPool, read: (client: PgClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      // SET LOCAL ends with the transaction, so the pooled connection goes back with the server's setting.
      await client.query(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL statement_timeout = ${this.timeoutMs}`);
      const out = await read(client);
      await client.query('COMMIT');
      return out;
    } catch (e) {
      await client.query('ROLLBACK').catch((r: unknown) => {
        broken = r instanceof Error ? r : new Error(String(r));
      });
      if (e instanceof StorageError) throw e;
      const failure = pgFailure(e);
      if (failure.code !== 'Timeout') throw failure;
      const limit = this.timeoutMs % 1000 === 0 ? `${this.timeoutMs / 1000} s` : `${this.timeoutMs} ms`;
      throw new StorageError('Timeout', `the search took longer than its limit of ${limit} per statement and was cancelled: narrow the query or its window (since, until)`, { cause: e });
    } finally {
      client.release(broken);
    }
  }

  private async read(client: PgClient, request: SearchRequest): Promise<SearchPage> {
    const { rows: meta } = await client.query<{ name: string; value: string }>(`SELECT name, value FROM ${this.s}.meta WHERE name IN ('revision', 'compacted')`);
    const value = (n: string): number => Number(meta.find((r) => r.name === n)?.value ?? 0);
    const at = listRevision({ ...(request.resourceVersion !== undefined ? { resourceVersion: request.resourceVersion } : {}), match: 'Exact' }, value('revision'), value('compacted'));
    const { query } = request;
    const compiled = compileQuery(query);
    const matcher = createSearchMatcher(query);
    const base = this.conditions(at, request.namespace, compiled.tsquery, compiled.reason);
    const window = { ...(query.sinceMs !== undefined ? { sinceMs: query.sinceMs } : {}), ...(query.untilMs !== undefined ? { untilMs: query.untilMs } : {}) };

    const hits: { event: CoreEvent; matched: SearchField[]; at: SearchCursor }[] = [];
    let after = request.after;
    let chunk = Math.min(request.limit + 1, MAX_SEARCH_CHUNK);
    let examined = 0;
    let stopped: SearchCursor | undefined;
    // The reason compared on its column is not a term of the vector the scans would test.
    const reason = byReason(query);
    const vectorQuery = reason === undefined ? query : { ...query, terms: query.terms.filter((t) => t !== reason) };
    const scans = compiled.tsquery !== undefined && (await this.isNewestFirst(client, vectorQuery, request.limit)) ? [...this.order.scans] : [];
    const plain = scans.length > 0 ? this.conditions(at, request.namespace, undefined, compiled.reason) : base;
    for (;;) {
      const want = Math.min(chunk, MAX_EXAMINED - examined);
      const scan = scans.shift();
      const read = scan === undefined ? { rows: await this.candidates(client, base, window, after, want) } : await this.scanNewest(client, plain, compiled.tsquery!, window, after, want, scan);
      const { rows } = read;
      for (const row of rows) {
        examined++;
        const event = decodeEvent(row.object, Number(row.rv));
        const pos = { timeMs: Number(row.last_ms), key: row.key };
        after = pos;
        const matched = matcher.matches(event);
        if (matched !== undefined) hits.push({ event, matched, at: searchCursorOf(event) });
        if (hits.length > request.limit) break;
      }
      // A scan that stopped at its size before `want` candidates goes on from the last row it scanned.
      const more = 'stoppedAt' in read && read.stoppedAt !== undefined && rows.length < want;
      if (more) after = read.stoppedAt;
      if (hits.length > request.limit || (rows.length < want && !more)) break;
      if (examined >= MAX_EXAMINED) {
        stopped = after;
        break;
      }
      // While every candidate is a hit, the next read asks for what the page lacks; once the check refuses some, for twice as many.
      chunk = examined === hits.length ? Math.min(request.limit + 1 - hits.length, MAX_SEARCH_CHUNK) : Math.min(chunk * 2, MAX_SEARCH_CHUNK);
    }
    hits.sort((a, b) => compareSearchOrder(a.at, b.at));
    const items = hits.slice(0, request.limit);
    const page: SearchPage = { items: items.map(({ event, matched }) => ({ event, matched })), resourceVersion: at };
    if (hits.length > request.limit) page.next = items[items.length - 1]!.at;
    else if (stopped !== undefined) page.next = stopped;
    if (request.histogram !== undefined) page.histogram = await this.histogram(client, request, base, compiled, matcher);
    return page;
  }

  /** conditions selects the versions visible at revision `at`, in the namespace, that the tsquery matches, of the reason (REASON_KEY). */
  private conditions(at: number, namespace: string | undefined, tsquery: string | undefined, reason?: string): Conditions {
    const values: unknown[] = [at];
    const where = ['op <> 3', 'rv <= $1', '(superseded_rv IS NULL OR superseded_rv > $1)'];
    if (namespace !== undefined) {
      const { low, high } = namespaceRange(namespace);
      values.push(low, high);
      where.push(`key >= $${values.length - 1} AND key < $${values.length}`);
    }
    if (tsquery !== undefined) {
      values.push(tsquery);
      where.push(`search @@ $${values.length}::tsquery`);
    }
    if (reason !== undefined) {
      values.push(reason);
      where.push(`${REASON_KEY} = $${values.length}`);
    }
    return { where, values };
  }

  /** candidates reads the next `limit` candidates after a position, newest first, then by key. */
  private async candidates(client: PgClient, base: Conditions, window: { sinceMs?: number; untilMs?: number }, after: SearchCursor | undefined, limit: number): Promise<CandidateRow[]> {
    const { where, param, values } = positioned(base, window, after);
    const { rows } = await client.query<StoredCandidateRow>(
      `SELECT rv, key, ${objectColumns(this.s, 'v')}, last_ms FROM ${this.s}.versions v WHERE ${where.join(' AND ')} ORDER BY last_ms DESC, key LIMIT ${param(limit)}`,
      values,
    );
    return rows.map(unpacked);
  }

  /**
   * scanNewest reads the next `limit` candidates after a position as `candidates`
   * does, through the time b-tree: it scans at most `scan` rows newest first,
   * tests the tsquery on each, and stops at the `limit`th that holds it. When it
   * scanned `scan` rows and found fewer than `limit`, `stoppedAt` is the last row
   * it scanned (read by the second branch, which runs only then): the candidates
   * up to there are all read, and the next read starts after it.
   */
  private async scanNewest(
    client: PgClient,
    plain: Conditions,
    tsquery: string,
    window: { sinceMs?: number; untilMs?: number },
    after: SearchCursor | undefined,
    limit: number,
    scan: number,
  ): Promise<{ rows: CandidateRow[]; stoppedAt?: SearchCursor }> {
    const { where, param, values } = positioned(plain, window, after);
    const [n, want] = [param(scan), param(limit)];
    const newest = `FROM ${this.s}.versions WHERE ${where.join(' AND ')} ORDER BY last_ms DESC, key`;
    const { rows } = await client.query<StoredCandidateRow & { hit: boolean }>(
      `(SELECT rv, key, ${objectColumns(this.s, 's')}, last_ms, true AS hit FROM (SELECT rv, key, object, object_z, text_rv, last_ms, search ${newest} LIMIT ${n}) s WHERE search @@ ${param(tsquery)}::tsquery LIMIT ${want})
       UNION ALL
       (SELECT rv, key, NULL, NULL, NULL, last_ms, false ${newest} OFFSET ${param(scan - 1)} LIMIT 1)
       LIMIT ${want}`,
      values,
    );
    const found = rows.filter((r) => r.hit).map(unpacked).sort((a, b) => compareSearchOrder({ timeMs: Number(a.last_ms), key: a.key }, { timeMs: Number(b.last_ms), key: b.key }));
    const last = rows.find((r) => !r.hit);
    if (last === undefined || found.length >= limit) return { rows: found };
    return { rows: found, stoppedAt: { timeMs: Number(last.last_ms), key: last.key } };
  }

  /** isNewestFirst reads the vector's statistics (kept statsMs) and tells whether the query is read newest first (`newestFirst`). */
  private async isNewestFirst(client: PgClient, query: SearchQuery, limit: number): Promise<boolean> {
    const phrase = query.terms.some((t) => t.kind === 'text' && !t.negated && t.words.length > 1);
    if (!phrase && query.terms.filter((t) => !t.negated).length < 2) return false;
    const now = Date.now();
    if (this.stats === undefined || now - this.stats.readAt >= this.order.statsMs) {
      const { rows } = await client.query<{ elems: string[] | null; freqs: number[] | null; rows: number | null }>(
        `SELECT s.most_common_elems::text::text[] AS elems, s.most_common_elem_freqs AS freqs, c.reltuples AS rows
         FROM pg_class c LEFT JOIN pg_stats s ON s.schemaname = $1 AND s.tablename = 'versions' AND s.attname = 'search'
         WHERE c.oid = $2::regclass`,
        [this.s, `${this.s}.versions`],
      );
      const r = rows[0];
      const shares = new Map<string, number>();
      (r?.elems ?? []).forEach((e, i) => shares.set(e, r?.freqs?.[i] ?? 0));
      this.stats = { readAt: now, shares, rows: Math.max(0, r?.rows ?? 0) };
    }
    return newestFirst(query, this.stats, this.order, limit);
  }

  /**
   * histogram counts every hit of the window, not only the page's. Where the
   * tsquery is exact it counts in SQL, and checks only the UNINDEXED rows of the
   * window; otherwise it checks every candidate of the window, up to MAX_EXAMINED
   * chunks of them (a histogram of such a query over a large window is a lower bound).
   */
  private async histogram(
    client: PgClient,
    request: SearchRequest,
    base: Conditions,
    compiled: { tsquery: string | undefined; exact: boolean },
    matcher: ReturnType<typeof createSearchMatcher>,
  ): Promise<SearchBucket[]> {
    const h = request.histogram!;
    const buckets = histogramBuckets(h);
    const lo = Math.max(h.sinceMs, request.query.sinceMs ?? h.sinceMs);
    const hi = Math.min(h.untilMs, request.query.untilMs ?? h.untilMs);
    if (!(hi > lo)) return buckets;
    const check = async (extra: string): Promise<void> => {
      let after: SearchCursor | undefined;
      let examined = 0;
      for (;;) {
        const rows = await this.candidates(client, { where: [...base.where, extra], values: base.values }, { sinceMs: lo, untilMs: hi }, after, MAX_SEARCH_CHUNK);
        for (const row of rows) {
          const event = decodeEvent(row.object, Number(row.rv));
          if (matcher.matches(event) !== undefined) countInHistogram(buckets, h, searchTimeMs(event));
          after = { timeMs: Number(row.last_ms), key: row.key };
        }
        examined += rows.length;
        if (rows.length < MAX_SEARCH_CHUNK || examined >= MAX_EXAMINED * 10) return;
      }
    };
    if (!compiled.exact) {
      await check('true');
      return buckets;
    }
    // A row holding UNINDEXED matches a text term whatever its words: those rows are checked, the others counted.
    const text = request.query.terms.some((t) => t.kind === 'text');
    const values = [...base.values, lo, hi, h.sinceMs, h.bucketMs];
    const n = values.length;
    const { rows } = await client.query<{ b: string; hits: string }>(
      `SELECT (last_ms - $${n - 1}) / $${n} AS b, count(*) AS hits FROM ${this.s}.versions
       WHERE ${base.where.join(' AND ')} AND last_ms >= $${n - 3} AND last_ms < $${n - 2}${text ? ` AND NOT (search @@ ${quote(UNINDEXED)}::tsquery)` : ''} GROUP BY 1`,
      values,
    );
    for (const r of rows) {
      const b = buckets[Number(r.b)];
      if (b !== undefined) b.hits += Number(r.hits);
    }
    if (text) await check(`search @@ ${quote(UNINDEXED)}::tsquery`);
    return buckets;
  }
}
