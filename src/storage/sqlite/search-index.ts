import type Database from 'better-sqlite3';
import type { CoreEvent } from '../../api/index.js';
import type { Logger } from '../../internal/index.js';
import { SEARCH_TEXT_FIELDS, createSearchMatcher, searchFieldValue, searchTimeMs, searchWords } from '../search/index.js';
import { compareSearchOrder, countInHistogram, histogramBuckets, searchCursorOf } from '../search/index.js';
import type { SearchCursor, SearchField, SearchPage, SearchQuery, SearchRequest } from '../search/index.js';
import { decodeObject } from './object-codec.js';

/**
 * The SQLite search index: an FTS5 table over the text fields of every stored
 * version (`SEARCH_TEXT_FIELDS`), kept by triggers on `versions`, so that every
 * write path (creates, updates, deletes, expiry, archive batches, compaction,
 * retention) changes it in the transaction that changes the data.
 *
 * Its rowid (a `docid`) orders versions by the event's last time: the second
 * of the last time times DOCID_SLOTS, plus a slot within that second. A search
 * walks it from the newest down, so the newest hundred of a word read about a
 * hundred index entries, not every hit; within one second it reads every hit
 * and orders them exactly (by millisecond, then key). `search_docs` maps a
 * docid to the version (`rv`) it indexes.
 *
 * What is indexed is each field's words (`searchWords`) joined by spaces, so the
 * index splits text as the query language does; what the index returns is a
 * superset that `createSearchMatcher` then checks on the decoded event.
 */

/** SearchTokenizer is an FTS5 tokenizer the index can use. */
export type SearchTokenizer = 'unicode61' | 'trigram';

/**
 * SEARCH_TOKENIZER is the one the store uses, chosen by bench/search.ts (docs/benchmarks.md):
 * on 100,000 generated events trigram's index was 143% of the archive's size
 * against unicode61's 42%, built 1.3 times faster but wrote slower, and answered
 * rare words as fast; unicode61 matches whole words as the query language does.
 */
export const SEARCH_TOKENIZER: SearchTokenizer = 'unicode61';

/** DOCID_SLOTS is how many versions one second of last time holds in the docid space: 2^20, so docids stay exact JS numbers until 2242. */
const DOCID_SLOTS = 1_048_576;
/** MAX_DOCID_SECOND is the last second the docid space holds. */
const MAX_DOCID_SECOND = Math.floor(Number.MAX_SAFE_INTEGER / DOCID_SLOTS) - 1;

/**
 * docidSecond is the second a version's docids start at; a time before 1970 (or
 * none: Go's zero time) is placed at 0, last of all. A second whose slots are
 * all taken (a million versions whose events last happened in that one second)
 * gets docids past every other, out of order but still found.
 */
function docidSecond(timeMs: number): number {
  return Math.min(MAX_DOCID_SECOND, Math.max(0, Math.floor(timeMs / 1000)));
}

const COLUMNS = SEARCH_TEXT_FIELDS.join(', ');

/** searchIndexSchema is the SQL that creates the index and its triggers (idempotent). */
export function searchIndexSchema(tokenizer: SearchTokenizer): string {
  const tokenize = tokenizer === 'trigram' ? 'trigram' : 'unicode61 remove_diacritics 0';
  const words = SEARCH_TEXT_FIELDS.map((_, i) => `kevents_search_words(NEW.rv, NEW.object, ${i})`).join(', ');
  return `
CREATE TABLE IF NOT EXISTS search_docs (docid INTEGER PRIMARY KEY, rv INTEGER NOT NULL UNIQUE);
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(${COLUMNS}, content='', contentless_delete=1, tokenize='${tokenize}');
CREATE TRIGGER IF NOT EXISTS search_add AFTER INSERT ON versions WHEN NEW.op <> 3 BEGIN
  INSERT INTO search_docs (docid, rv)
    SELECT CASE WHEN n.next < n.at + ${DOCID_SLOTS} THEN n.next END, NEW.rv
    FROM (SELECT b.at, coalesce((SELECT max(docid) + 1 FROM search_docs WHERE docid >= b.at AND docid < b.at + ${DOCID_SLOTS}), b.at) AS next
          FROM (SELECT kevents_search_second(NEW.rv, NEW.object) * ${DOCID_SLOTS} AS at) AS b) AS n;
  INSERT INTO search_fts (rowid, ${COLUMNS}) VALUES (last_insert_rowid(), ${words});
END;
CREATE TRIGGER IF NOT EXISTS search_drop AFTER DELETE ON versions WHEN OLD.op <> 3 BEGIN
  DELETE FROM search_fts WHERE rowid = (SELECT docid FROM search_docs WHERE rv = OLD.rv);
  DELETE FROM search_docs WHERE rv = OLD.rv;
END;
`;
}

/** IndexedText is what the index holds of one version: each text field's words, and the second its docids start at. */
interface IndexedText {
  fields: string[];
  second: number;
}

function indexedText(event: CoreEvent | undefined): IndexedText {
  if (event === undefined) return { fields: SEARCH_TEXT_FIELDS.map(() => ''), second: 0 };
  return { fields: SEARCH_TEXT_FIELDS.map((f) => searchWords(searchFieldValue(event, f)).join(' ')), second: docidSecond(searchTimeMs(event)) };
}

function decodeEvent(blob: Uint8Array): CoreEvent | undefined {
  try {
    return JSON.parse(decodeObject(blob)) as CoreEvent;
  } catch {
    return undefined;
  }
}

/** SearchIndexWriter is the side of the index a writing connection holds. */
export interface SearchIndexWriter {
  /**
   * remember hands the triggers the event of a version about to be inserted at
   * `rv`, so that they need not decode the row the writer has just encoded. A
   * version inserted without it is decoded: the index is kept either way.
   */
  remember(rv: number, event: CoreEvent): void;
}

/**
 * addSearchFunctions registers what the triggers call, on every connection that
 * writes `versions`. A trigger asks for each field of one row in turn: the
 * row's text is computed once, from the remembered event or else the stored object.
 */
export function addSearchFunctions(db: Database.Database): SearchIndexWriter {
  const pending = new Map<number, CoreEvent>();
  let last: { rv: number; text: IndexedText } | undefined;
  const textOf = (rv: unknown, blob: unknown): IndexedText => {
    const n = Number(rv);
    if (last?.rv !== n) {
      const remembered = pending.get(n);
      pending.delete(n);
      last = { rv: n, text: indexedText(remembered ?? decodeEvent(blob as Buffer)) };
    }
    return last.text;
  };
  db.function('kevents_search_words', { deterministic: true }, (rv: unknown, blob: unknown, field: unknown) => textOf(rv, blob).fields[Number(field)] ?? '');
  db.function('kevents_search_second', { deterministic: true }, (rv: unknown, blob: unknown) => textOf(rv, blob).second);
  return {
    remember(rv, event) {
      // Only the next few rows are ever pending: a write that failed before its insert leaves at most its own.
      if (pending.size > 1024) pending.clear();
      pending.set(rv, event);
    },
  };
}

/** IndexProgress reports a migration's progress: versions indexed so far of the total. */
export type IndexProgress = (done: number, total: number) => void;

/**
 * buildSearchIndex indexes the versions already stored (a file written before
 * the index), in chunks, inside the caller's transaction: the triggers keep it
 * from then on. The schema must be applied and the functions added first.
 */
export function buildSearchIndex(db: Database.Database, progress?: IndexProgress, chunk = 50_000): number {
  const total = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM versions WHERE op <> 3').get()!.n;
  const rows = db.prepare<[number, number], { rv: number; object: Buffer }>('SELECT rv, object FROM versions WHERE op <> 3 AND rv > ? ORDER BY rv LIMIT ?');
  const nextSlot = db.prepare<[number, number], { docid: number | null }>('SELECT max(docid) + 1 AS docid FROM search_docs WHERE docid >= ? AND docid < ?');
  const addDoc = db.prepare<[number | null, number]>('INSERT INTO search_docs (docid, rv) VALUES (?, ?)');
  const addText = db.prepare(`INSERT INTO search_fts (rowid, ${COLUMNS}) VALUES (${SEARCH_TEXT_FIELDS.map(() => '?').join(', ')}, ?)`);
  let after = 0;
  let done = 0;
  for (;;) {
    const batch = rows.all(after, chunk);
    if (batch.length === 0) break;
    for (const { rv, object } of batch) {
      const text = indexedText(decodeEvent(object));
      const at = text.second * DOCID_SLOTS;
      const next = nextSlot.get(at, at + DOCID_SLOTS)?.docid ?? at;
      const docid = Number(addDoc.run(next < at + DOCID_SLOTS ? next : null, rv).lastInsertRowid);
      addText.run(docid, ...text.fields);
    }
    done += batch.length;
    after = batch[batch.length - 1]!.rv;
    progress?.(done, total);
  }
  return done;
}

/** PROGRESS_EVERY is how many versions a migration indexes between two progress lines. */
const PROGRESS_EVERY = 1_000_000;

/**
 * openSearchIndex readies the index on a writer's connection: it registers the
 * triggers' functions and, on a file written before the index (an archive of
 * schema 5 or older), builds it in place in one transaction, logging its
 * progress every million versions and its time per million (the CLI's logger
 * writes to stderr).
 */
export function openSearchIndex(db: Database.Database, logger: Pick<Logger, 'info'>): SearchIndexWriter {
  const writer = addSearchFunctions(db);
  if (db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'search_fts'").get() !== undefined) return writer;
  const started = performance.now();
  const seconds = (): number => Math.round(performance.now() - started) / 1000;
  let reported = 0;
  const total = db.transaction(() => {
    db.exec(searchIndexSchema(SEARCH_TOKENIZER));
    return buildSearchIndex(db, (done, all) => {
      if (done - reported < PROGRESS_EVERY || done === all) return;
      reported = done;
      logger.info('indexing the archive for search', { versions: done, of: all, seconds: seconds() });
    });
  })();
  if (total > 0) logger.info('the archive\'s search index is built', { versions: total, seconds: seconds(), secondsPerMillion: Math.round((seconds() * 1e6) / total) });
  return writer;
}

/** ftsPhrase quotes words as one FTS5 phrase; words hold only letters, digits and marks, so nothing in them is FTS5 syntax. */
function ftsPhrase(words: readonly string[]): string {
  return `"${words.join(' ')}"`;
}

/**
 * matchExpression is the FTS5 query that narrows a search to a superset of its
 * hits, or undefined when no term can narrow it (the search then walks every
 * version by time). Words and phrases go in as phrases; field terms as a phrase
 * of their words on their column (a prefix on the last word when wildcarded);
 * with unicode61, excluded words and phrases as NOT (it matches whole words, as
 * the query language does). Trigram matches substrings of three characters or
 * more: a shorter word cannot narrow, and an exclusion would leave out more
 * than it should, so both are left to the check of each event.
 */
export function matchExpression(query: SearchQuery, tokenizer: SearchTokenizer, namespace?: string): string | undefined {
  const positive: string[] = [];
  const negative: string[] = [];
  const usable = (words: readonly string[]): boolean => words.length > 0 && (tokenizer !== 'trigram' || words.join(' ').length >= 3);
  for (const t of query.terms) {
    if (t.kind === 'text') {
      if (!usable(t.words)) continue;
      (t.negated ? negative : positive).push(ftsPhrase(t.words));
      continue;
    }
    if (t.negated || t.field === 'type' || t.field === 'cluster') continue;
    const words = searchWords(t.value);
    if (!usable(words)) continue;
    // A prefix's last word may be cut short: as a phrase prefix (unicode61), or a substring (trigram).
    positive.push(`${t.field} : ${ftsPhrase(words)}${t.prefix && tokenizer === 'unicode61' ? ' *' : ''}`);
  }
  if (namespace !== undefined && usable(searchWords(namespace))) positive.push(`ns : ${ftsPhrase(searchWords(namespace))}`);
  if (positive.length === 0) return undefined;
  let expr = positive.join(' AND ');
  if (tokenizer === 'unicode61') for (const n of negative) expr = `(${expr}) NOT ${n}`;
  return expr;
}

/** SEARCH_CHUNK is how many index entries a search reads at a time. */
const SEARCH_CHUNK = 256;

interface Candidate {
  docid: number;
  rv: number;
  key: string;
  object: Buffer;
}

/**
 * SqliteSearch answers searches on one connection. A page walks the index newest
 * first from the request's position, reads the versions visible at the
 * revision (`rv <= at < superseded_rv`), decodes and checks each, and stops once
 * it holds the page and every hit of the last hit's second (within one second
 * the docids follow the writes, so the hits are ordered after reading).
 */
export class SqliteSearch {
  private readonly byMatch: Database.Statement<Record<string, string | number>, Candidate>;
  private readonly byTime: Database.Statement<Record<string, string | number>, Candidate>;

  constructor(
    db: Database.Database,
    private readonly tokenizer: SearchTokenizer,
  ) {
    const visible = 'v.op <> 3 AND v.rv <= @at AND (v.superseded_rv IS NULL OR v.superseded_rv > @at) AND v.key >= @nsLow AND v.key < @nsHigh';
    this.byMatch = db.prepare(
      `SELECT f.rowid AS docid, v.rv AS rv, v.key AS key, v.object AS object FROM search_fts f JOIN search_docs d ON d.docid = f.rowid JOIN versions v ON v.rv = d.rv
       WHERE search_fts MATCH @match AND f.rowid < @high AND f.rowid >= @low AND ${visible} ORDER BY f.rowid DESC LIMIT @limit`,
    );
    this.byTime = db.prepare(
      `SELECT d.docid AS docid, v.rv AS rv, v.key AS key, v.object AS object FROM search_docs d JOIN versions v ON v.rv = d.rv
       WHERE d.docid < @high AND d.docid >= @low AND ${visible} ORDER BY d.docid DESC LIMIT @limit`,
    );
  }

  /** search reads one page at revision `at` (the store's latest, or the request's snapshot, checked by the caller). */
  search(request: SearchRequest, at: number): SearchPage {
    const { query } = request;
    const matcher = createSearchMatcher(query);
    const match = matchExpression(query, this.tokenizer, request.namespace);
    const ns = request.namespace;
    const scope = { at, nsLow: ns === undefined ? '' : `${ns}/`, nsHigh: ns === undefined ? '\u{10ffff}' : `${ns}0` };
    const low = query.sinceMs === undefined ? 0 : docidSecond(query.sinceMs) * DOCID_SLOTS;
    const top = request.after !== undefined ? docidSecond(request.after.timeMs) + 1 : query.untilMs !== undefined ? docidSecond(query.untilMs - 1) + 1 : MAX_DOCID_SECOND + 1;
    const read = (high: number, limit: number): Candidate[] =>
      match === undefined ? this.byTime.all({ ...scope, high, low, limit }) : this.byMatch.all({ ...scope, match, high, low, limit });

    const hits: { event: CoreEvent; matched: SearchField[]; at: SearchCursor }[] = [];
    let high = top * DOCID_SLOTS;
    let cutSecond: number | undefined;
    for (;;) {
      const rows = read(high, SEARCH_CHUNK);
      let stop = rows.length < SEARCH_CHUNK;
      for (const row of rows) {
        const rowSecond = Math.floor(row.docid / DOCID_SLOTS);
        if (cutSecond !== undefined && rowSecond < cutSecond) {
          stop = true;
          break;
        }
        const event = JSON.parse(decodeObject(row.object)) as CoreEvent;
        event.metadata.resourceVersion = String(row.rv);
        const matched = matcher.matches(event);
        if (matched === undefined || (ns !== undefined && event.metadata.namespace !== ns)) continue;
        const pos = searchCursorOf(event);
        if (request.after !== undefined && compareSearchOrder(pos, request.after) <= 0) continue;
        hits.push({ event, matched, at: pos });
        if (hits.length > request.limit && cutSecond === undefined) cutSecond = rowSecond;
      }
      if (stop || rows.length === 0) break;
      high = rows[rows.length - 1]!.docid;
    }
    hits.sort((a, b) => compareSearchOrder(a.at, b.at));
    const items = hits.slice(0, request.limit);
    const page: SearchPage = { items: items.map(({ event, matched }) => ({ event, matched })), resourceVersion: at };
    if (hits.length > request.limit) page.next = items[items.length - 1]!.at;
    if (request.histogram !== undefined) page.histogram = this.histogram(request, match, matcher, scope);
    return page;
  }

  /** histogram counts every hit of the window: the whole search, not the page, so it reads (and checks) each candidate. */
  private histogram(
    request: SearchRequest,
    match: string | undefined,
    matcher: ReturnType<typeof createSearchMatcher>,
    scope: { at: number; nsLow: string; nsHigh: string },
  ): ReturnType<typeof histogramBuckets> {
    const h = request.histogram!;
    const buckets = histogramBuckets(h);
    const low = docidSecond(h.sinceMs) * DOCID_SLOTS;
    let high = (docidSecond(h.untilMs - 1) + 1) * DOCID_SLOTS;
    for (;;) {
      const rows = match === undefined ? this.byTime.all({ ...scope, high, low, limit: 4096 }) : this.byMatch.all({ ...scope, match, high, low, limit: 4096 });
      for (const row of rows) {
        const event = JSON.parse(decodeObject(row.object)) as CoreEvent;
        if (matcher.matches(event) === undefined) continue;
        if (request.namespace !== undefined && event.metadata.namespace !== request.namespace) continue;
        countInHistogram(buckets, h, searchTimeMs(event));
      }
      if (rows.length < 4096) break;
      high = rows[rows.length - 1]!.docid;
    }
    return buckets;
  }
}
