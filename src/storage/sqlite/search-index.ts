import type { FieldTerm, SearchField, SearchMatcher, SearchQuery } from '../../api/index.js';
import { createSearchMatcher, searchTimeMs, searchWords } from '../../api/index.js';
import type Database from 'better-sqlite3';
import type { CoreEvent } from '../../api/index.js';
import { countInHistogram } from '../search/index.js';
import { compareSearchOrder, searchCursorOf } from '../search/index.js';
import type { SearchBucket, SearchCursor, SearchHit, SearchPage, SearchRequest } from '../search/index.js';
import { storedTexts } from './texts.js';
import { searchHistogram } from './search-histogram.js';
import type { Candidate, SearchScope } from './search-histogram.js';
import { columnFilter, decidedByColumns } from './search-columns.js';
import { internedValues } from './interned.js';

/**
 * The SQLite search index: an FTS5 table over the text fields of every stored
 * version (`SEARCH_TEXT_FIELDS`), kept by the write path and the purge
 * (`search-index-writer.ts`) in the transaction that changes the data.
 *
 * Its rowid (a `docid`) orders versions by the event's last time: the second
 * of the last time times DOCID_SLOTS, plus a slot within that second. A search
 * walks it from the newest down, so the newest hundred of a word read about a
 * hundred index entries, not every hit; within one second it reads every hit
 * and orders them exactly (by millisecond, then key). `search_docs` maps a
 * docid to the version (`rv`) it indexes.
 *
 * What is indexed is each field's words (`searchWords`) joined by spaces (for
 * unicode61, a value of ASCII characters as it is, which it splits into the same
 * words), so the index splits text as the query language does, and after them,
 * in a keyword field of KEYED_FIELDS whose value has several words, one token for the whole
 * value (`valueToken`), which `field:value` reads instead of the phrase of its
 * words; what the index returns is a superset that `createSearchMatcher` then
 * checks on the decoded event.
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
export const DOCID_SLOTS = 1_048_576;
/** MAX_DOCID_SECOND is the last second the docid space holds. */
const MAX_DOCID_SECOND = Math.floor(Number.MAX_SAFE_INTEGER / DOCID_SLOTS) - 1;

/**
 * docidSecond is the second a version's docids start at; a time before 1970 (or
 * none: Go's zero time) is placed at 0, last of all. A second whose slots are
 * all taken (a million versions whose events last happened in that one second)
 * gets docids past every other, out of order but still found.
 */
export function docidSecond(timeMs: number): number {
  return Math.min(MAX_DOCID_SECOND, Math.max(0, Math.floor(timeMs / 1000)));
}

/**
 * KEYED_FIELDS are the keyword fields whose column also holds each value of
 * several words as one token (`valueToken`). Their values are made of words
 * common to much of the archive (`ip 10 0 3 17 ec2 internal`, `team 7`,
 * `deployment controller`), so the phrase of a value's words reads those
 * words' entries over the whole walk: 74 ms of FTS5 for one node at 1,000,000
 * events, where its token reads its own (docs/benchmarks.md). The involved
 * object's name is left out: its values are as many as the objects, each a
 * word of the index's vocabulary, and its words (`checkout db 0`) are rarer.
 */
export const KEYED_FIELDS: ReadonlySet<SearchField> = new Set<SearchField>(['ns', 'controller', 'node']);

/**
 * VALUE_MARK starts a value token: a private-use character, which unicode61
 * (categories L*, N*, Co) keeps inside a token and `searchWords` never makes a
 * word of, so no word of a text or query is a value token, and a phrase or an
 * excluded word can never take one for a word.
 */
const VALUE_MARK = '\u{e000}';

/**
 * valueToken is the token that stands for a keyword value of several words
 * (its words, lowercased, joined after VALUE_MARK), or undefined for a value of
 * one word or none, whose word already is its token. Two values may share one
 * (`a-bc`, `ab-c`): the index then returns both, and the check of each
 * candidate keeps the one asked for.
 */
export function valueToken(words: readonly string[]): string | undefined {
  return words.length > 1 ? VALUE_MARK + words.join('') : undefined;
}

/** ftsPhrase quotes words as one FTS5 phrase; words hold only letters, digits and marks, so nothing in them is FTS5 syntax. */
function ftsPhrase(words: readonly string[]): string {
  return `"${words.join(' ')}"`;
}

/**
 * MIN_PREFIX is the shortest last word of a prefix term the index expands: a
 * shorter one (`reason:f*`) stands for much of the index's words, which FTS5
 * merges into one list before the first hit, at a cost growing with the archive.
 */
const MIN_PREFIX = 3;

/**
 * betterByColumn tells that a field term is better left to the row's columns
 * than to the index: a namespace (the key holds it, and its words, such as
 * `team` and `7`, are in every version of the archive, a phrase the index reads
 * at the cost of all their entries), or a prefix whose last word is too short
 * to expand. Measured by bench/search-vs-victorialogs.ts: `ns:team-1* probe`
 * read 627 ms of index entries at 1,000,000 events, `probe` alone 1 ms.
 */
function betterByColumn(t: FieldTerm, words: readonly string[]): boolean {
  if (!decidedByColumns(t)) return false;
  return t.field === 'ns' || (cutShort(t) && words[words.length - 1]!.length < MIN_PREFIX);
}

const ENDS_IN_WORD = /[\p{L}\p{N}\p{M}]$/u;

/**
 * cutShort tells that a prefix term's last word may go on in the values it
 * matches (`reason:Fail*`), so that the index must expand it; a prefix that
 * ends between words (`name:checkout-db-*`) matches values holding its words whole.
 */
function cutShort(t: FieldTerm): boolean {
  return t.prefix && ENDS_IN_WORD.test(t.value);
}

/**
 * matchExpression is the FTS5 query that narrows a search to a superset of its
 * hits, or undefined when no term can narrow it (the search then walks every
 * version by time). Words and phrases go in as phrases; field terms as a phrase
 * of their words on their column (a prefix on the last word when wildcarded);
 * with unicode61, excluded words and phrases as NOT (it matches whole words, as
 * the query language does). Trigram matches substrings of three characters or
 * more: a shorter word cannot narrow, and an exclusion would leave out more
 * than it should, so both are left to the check of each event. A field term
 * the version row's columns decide (`columnFilter`) stays out where the index
 * would cost more than the columns: see betterByColumn. With `keyed` (the
 * index holds value tokens, `indexHoldsValueTokens`), a field of KEYED_FIELDS
 * compared whole (no wildcard) goes in as its value token. With `loose`, a
 * phrase goes in as its words (an excluded phrase not at all), for a search
 * whose every word is common (`SqliteSearch.costly`): FTS5 checks a phrase's
 * positions in every version holding its words, over the whole index (a
 * rowid range does not narrow it), so a phrase of common words that matches
 * little costs a pass over the archive in one statement (345 ms for 32 words
 * at 150,000 events), where the words' entries merge in a few milliseconds and
 * the candidates are checked a bounded number at a time.
 */
export function matchExpression(query: SearchQuery, tokenizer: SearchTokenizer, namespace?: string, keyed = false, loose = false): string | undefined {
  const positive: string[] = [];
  const negative: string[] = [];
  const usable = (words: readonly string[]): boolean => words.length > 0 && (tokenizer !== 'trigram' || words.join(' ').length >= 3);
  for (const t of query.terms) {
    if (t.kind === 'text') {
      if (!usable(t.words)) continue;
      if (loose && t.words.length > 1) {
        // A phrase as its words, each once: FTS5 merges their entries cheaply, and the check of each candidate reads the phrase.
        if (!t.negated) positive.push(...new Set(t.words.map((w) => ftsPhrase([w]))));
        continue;
      }
      (t.negated ? negative : positive).push(ftsPhrase(t.words));
      continue;
    }
    if (t.negated || t.field === 'type' || t.field === 'cluster') continue;
    const words = searchWords(t.value);
    const token = keyed && !t.prefix && KEYED_FIELDS.has(t.field) ? valueToken(words) : undefined;
    if (token !== undefined) {
      positive.push(`${t.field} : ${ftsPhrase([token])}`);
      continue;
    }
    if (!usable(words) || betterByColumn(t, words)) continue;
    // A prefix's last word may be cut short: as a phrase prefix (unicode61), or a substring (trigram). One that ends
    // between words (`checkout-db-*`) has whole words: a phrase, which FTS5 reads newest first without expanding it.
    positive.push(`${t.field} : ${ftsPhrase(words)}${cutShort(t) && tokenizer === 'unicode61' ? ' *' : ''}`);
  }
  if (namespace !== undefined) {
    const words = searchWords(namespace);
    const token = keyed ? valueToken(words) : undefined;
    if (token !== undefined) positive.push(`ns : ${ftsPhrase([token])}`);
    else if (usable(words)) positive.push(`ns : ${ftsPhrase(words)}`);
  }
  if (positive.length === 0) return undefined;
  let expr = positive.join(' AND ');
  if (tokenizer === 'unicode61') for (const n of negative) expr = `(${expr}) NOT ${n}`;
  return expr;
}

/**
 * probeWords are the match expressions of one word or value token each that
 * a search's candidates must hold (`matchExpression`'s positive terms, word by
 * word): what tells how costly its index walk is (`SqliteSearch.costly`). The
 * last word of a prefix is left out, as FTS5 expands it.
 */
export function probeWords(query: SearchQuery, tokenizer: SearchTokenizer, namespace?: string, keyed = false): string[] {
  if (tokenizer !== 'unicode61') return [];
  const probes = new Set<string>();
  const add = (words: readonly string[]): void => {
    for (const w of words) probes.add(ftsPhrase([w]));
  };
  for (const t of query.terms) {
    if (t.negated) continue;
    if (t.kind === 'text') {
      add(t.words);
      continue;
    }
    if (t.field === 'type' || t.field === 'cluster') continue;
    const words = searchWords(t.value);
    const token = keyed && !t.prefix && KEYED_FIELDS.has(t.field) ? valueToken(words) : undefined;
    if (token !== undefined) probes.add(`${t.field} : ${ftsPhrase([token])}`);
    else if (!betterByColumn(t, words)) add(cutShort(t) ? words.slice(0, -1) : words);
  }
  if (namespace !== undefined) {
    const words = searchWords(namespace);
    const token = keyed ? valueToken(words) : undefined;
    if (token !== undefined) probes.add(`ns : ${ftsPhrase([token])}`);
    else add(words);
  }
  return [...probes];
}

/** VISIBLE is what a candidate version must be: not a tombstone, visible at revision `@at`, in the key range `@nsLow`..`@nsHigh`. */
const VISIBLE = 'v.op <> 3 AND v.rv <= @at AND (v.superseded_rv IS NULL OR v.superseded_rv > @at) AND v.key >= @nsLow AND v.key < @nsHigh';
/**
 * INDEXED_VISIBLE is a visible version the index holds: at or below `@indexed`, the index's high-water mark
 * as the search read it, so that a catch-up committed while a search reads adds nothing its scan of the versions
 * above the mark (`unindexedRows`) also finds.
 */
const INDEXED_VISIBLE = `v.rv <= @indexed AND ${VISIBLE}`;

/**
 * fromCandidates is the FROM and WHERE of a search's candidates: the versions
 * the index finds (by `@match`, or every one) between docids `@low` and `@high`,
 * visible at revision `@at`, in the key range `@nsLow`..`@nsHigh`.
 */
export function fromCandidates(byMatch: boolean): string {
  return byMatch
    ? `FROM search_fts f JOIN search_docs d ON d.docid = f.rowid JOIN versions v ON v.rv = d.rv WHERE search_fts MATCH @match AND f.rowid < @high AND f.rowid >= @low AND ${INDEXED_VISIBLE}`
    : `FROM search_docs d JOIN versions v ON v.rv = d.rv WHERE d.docid < @high AND d.docid >= @low AND ${INDEXED_VISIBLE}`;
}

/**
 * fromShared is the FROM and WHERE of the candidates that share another
 * version's entry (a repeat of a long text, see `SHARED_TEXT_MIN`): the
 * versions between docids `@low` and `@high` whose shared entry matches
 * `@match`, visible as `fromCandidates`' are. Their own docids place them in
 * the search's order; they are few (long texts repeated), walked by their own
 * index, each tested against its entry by rowid.
 */
export function fromShared(): string {
  return `FROM search_docs d INDEXED BY search_shared JOIN versions v ON v.rv = d.rv WHERE d.text IS NOT NULL AND d.docid < @high AND d.docid >= @low AND ${INDEXED_VISIBLE} AND EXISTS (SELECT 1 FROM search_fts WHERE search_fts MATCH @match AND rowid = d.text)`;
}

/**
 * INDEXED_RV_META is the `meta` row holding the index's high-water mark: every version at or below it is indexed
 * (or needs no entry). The writer moves it in the transaction that writes the entries (`SearchIndexWriter.write`).
 */
export const INDEXED_RV_META = 'search_indexed_rv';

/** VALUE_TOKENS_META is the `meta` row that says the index holds value tokens: set by the build that writes them. */
export const VALUE_TOKENS_META = 'search_value_tokens';

/**
 * indexHoldsValueTokens tells whether a file's search index holds the value
 * tokens of KEYED_FIELDS: an index written before them (schema 8) answers by
 * the phrases of the values' words until `openSearchIndex` rebuilds it.
 */
export function indexHoldsValueTokens(db: Database.Database): boolean {
  if (db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get() === undefined) return false;
  return db.prepare<[string], { value: number }>('SELECT value FROM meta WHERE name = ?').get(VALUE_TOKENS_META)?.value === 1;
}

/**
 * MAX_WINDOW_MATCHES is the most index entries a window in the past is read
 * for in ascending order (see `SqliteSearch.search`): beyond it, the window's
 * newest are read from its end down.
 */
const MAX_WINDOW_MATCHES = 4096;

/** MAX_FILTERED_STATEMENTS bounds the prepared statements of filtered reads a connection keeps. */
const MAX_FILTERED_STATEMENTS = 64;

/** SEARCH_CHUNK is how many index entries a search reads at a time. */
const SEARCH_CHUNK = 256;
/**
 * MAX_DECODED_PER_READ bounds the characters of events one bounded read (a `maxExamined` request, as the route's
 * pages make) decodes before it ends at the second it is in: 256 candidates of a 3 MiB message would hold the
 * event loop for seconds; two of a MiB take a few ms.
 */
const MAX_DECODED_PER_READ = 2 * 1024 * 1024;

/**
 * DEEP_SAMPLE is the share of events, one in DEEP_SAMPLE, below which a word is
 * left to the index when a read starts below its head: the newest
 * (limit + 1) × DEEP_SAMPLE versions there are examined by time first, up to
 * MAX_DEEP_SAMPLE.
 */
const DEEP_SAMPLE = 3;
/**
 * FirstRead is the candidates of `deepFirst`, newest first: `last` says they are every candidate left, and `next`,
 * when set, reads the older ones that follow (in place of the index read from the last one down).
 */
interface FirstRead {
  rows: Candidate[];
  last: boolean;
  next?: () => FirstRead;
}

/**
 * RANGE_VERSIONS is how many versions (by docid, visible or not) one read of a
 * search with no match spans: its candidates are every version, which the
 * row's columns may all refuse without one examined (`ns:team`), so such a
 * search is read a range at a time, the caller letting the event loop go
 * between two (`searchPage`). A FTS5 read is not split so: given a rowid
 * range, it still reads a phrase's whole entries, and seeks a word's by
 * reading them up to the range.
 */
export const RANGE_VERSIONS = 8192;
/** PROBE_ENTRIES is how many of a word's newest index entries tell whether it is common (`frequent`). */
const PROBE_ENTRIES = 64;
/**
 * COMMON_SHARE is the share of versions, one in COMMON_SHARE, from which a word
 * is common: the index walk of a query whose every word is so common costs a
 * pass over the word's entries, a growing share of the archive.
 */
const COMMON_SHARE = 256;
/** AFTER_EVERY_KEY is a key after every key a search orders (a namespace is a DNS label): a position past a whole second. */
const AFTER_EVERY_KEY = '\uffff';

/** ONE_WORD is a match expression of one word (`matchExpression`'s phrase of it). */
const ONE_WORD = /^"[\p{L}\p{N}\p{M}]+"$/u;
const MAX_DEEP_SAMPLE = 1024;

/**
 * SqliteSearch answers searches on one connection. A page walks the index newest
 * first from the request's position, reads the versions visible at the
 * revision (`rv <= at < superseded_rv`), decodes and checks each, and stops once
 * it holds the page and every hit of the last hit's second (within one second
 * the docids follow the writes, so the hits are ordered after reading), or once
 * it has examined `maxExamined` candidates and the rest of that second's: it
 * then ends short, at the oldest candidate it examined, past which every
 * candidate is in an older second.
 */
export class SqliteSearch {
  private readonly byMatch: Database.Statement<Record<string, string | number>, Candidate>;
  private readonly byTime: Database.Statement<Record<string, string | number>, Candidate>;
  private readonly head: Database.Statement<[], { docid: number | null }>;
  private readonly tail: Database.Statement<[], { docid: number | null }>;
  private readonly windowMatches: Database.Statement<[string, number, number], { docid: number }>;
  private readonly newestMatches: Database.Statement<[string, number], { docid: number }>;
  private readonly versionsBetween: Database.Statement<[number, number, number], { n: number }>;
  private readonly rangeStart: Database.Statement<[number, number], { docid: number }>;
  private readonly sharedInWindow: Database.Statement<{ match: string; low: number; high: number; limit: number }, { docid: number }>;

  /** frequent tells that a match of one word or token is in at least one version of COMMON_SHARE near the head. */
  private frequent(match: string): boolean {
    const newest = this.newestMatches.all(match, PROBE_ENTRIES);
    if (newest.length < PROBE_ENTRIES) return false;
    const most = PROBE_ENTRIES * COMMON_SHARE;
    return this.versionsBetween.get(newest[PROBE_ENTRIES - 1]!.docid, newest[0]!.docid, most + 1)!.n <= most;
  }

  /**
   * costly tells that a search's every word is common, the rarest first: FTS5 walks the entries of its words
   * until it finds a page, so a phrase of common words that matches little walks much of the archive, and is
   * read loosely (`matchExpression`). The words are probed one at a time, and the first rare one ends it: the
   * index then finds the few candidates through it cheaply.
   */
  private costly(query: SearchQuery, namespace: string | undefined): boolean {
    if (!query.terms.some((t) => t.kind === 'text' && !t.negated && t.words.length > 1)) return false;
    const probes = probeWords(query, this.tokenizer, namespace, this.keyed);
    return probes.length > 0 && probes.every((p) => this.frequent(p));
  }

  /**
   * rangeLow is where the range of a costly search's read below `high` starts: RANGE_VERSIONS versions down,
   * at the first docid of that second (so that a range holds whole seconds, and a read ending at a range's start
   * has examined every candidate of its seconds), at least a whole second below the one `high` is in, and never
   * below `low`.
   */
  private rangeLow(high: number, low: number): number {
    const d = this.rangeStart.get(high, RANGE_VERSIONS - 1)?.docid;
    if (d === undefined) return low;
    const below = (Math.ceil(high / DOCID_SLOTS) - 2) * DOCID_SLOTS;
    return Math.max(low, Math.min(below, Math.floor(d / DOCID_SLOTS) * DOCID_SLOTS));
  }

  /**
   * common tells that a match of one word is in at least one version of DEEP_SAMPLE near the head: its newest
   * `n` entries (cheap to read, at the head) span at most n × DEEP_SAMPLE versions. A longer expression is
   * left to the index, whose walk from the head to find them may cost what the deep read would.
   */
  private common(match: string, n: number): boolean {
    if (!ONE_WORD.test(match)) return false;
    const newest = this.newestMatches.all(match, n);
    if (newest.length < n) return false;
    const most = n * DEEP_SAMPLE;
    return this.versionsBetween.get(newest[n - 1]!.docid, newest[0]!.docid, most + 1)!.n <= most;
  }

  private readonly mark: Database.Statement<[string], { value: number }>;

  /**
   * scopeAt is what every read of a search at revision `at` binds: the revision, the index's high-water mark at
   * most `at` (a file without one has every version indexed: its writes indexed them), and the namespace's key range.
   */
  private scopeAt(at: number, ns: string | undefined): SearchScope {
    const indexed = Math.min(at, this.mark.get(INDEXED_RV_META)?.value ?? at);
    return { at, indexed, nsLow: ns === undefined ? '' : `${ns}/`, nsHigh: ns === undefined ? '\u{10ffff}' : `${ns}0` };
  }

  /**
   * unindexedRows reads the visible versions above the index's high-water mark (written a moment ago: the index
   * follows the writes by a bounded time, see `SEARCH_INDEX_DELAY_MS`), which the columns of a query's field
   * terms may leave out (`filter`): a search checks each with the matcher, as the scan search does.
   */
  private unindexedRows(scope: SearchScope, filter: string[], params: Record<string, string | number>): Candidate[] {
    if (scope.indexed >= scope.at) return [];
    const sql = `SELECT v.rv AS docid, v.rv AS rv, v.key AS key, v.object AS object FROM versions v WHERE v.rv > @indexed AND ${[VISIBLE, ...filter].join(' AND ')}`;
    return this.prepared(sql).all({ ...params, ...scope });
  }

  /**
   * withUnindexed adds to a page read from the index the hits among the versions it does not hold yet: those
   * in the part of the order the page covers (up to its `next`, or all), so that no page misses a hit and the
   * next one starts where this one ends.
   */
  private withUnindexed(page: SearchPage, request: SearchRequest, matcher: SearchMatcher, rows: Candidate[]): SearchPage {
    const ns = request.namespace;
    const end = page.next;
    const found: { hit: SearchHit; at: SearchCursor }[] = [];
    for (const row of rows) {
      const event = JSON.parse(storedTexts(this.db).json(row.object)) as CoreEvent;
      event.metadata.resourceVersion = String(row.rv);
      const at = searchCursorOf(event);
      if (request.after !== undefined && compareSearchOrder(at, request.after) <= 0) continue;
      if (end !== undefined && compareSearchOrder(at, end) > 0) continue;
      const matched = matcher.matches(event);
      if (matched !== undefined && (ns === undefined || event.metadata.namespace === ns)) found.push({ hit: { event, matched }, at });
    }
    if (found.length === 0) return page;
    const all = page.items.map((hit) => ({ hit, at: searchCursorOf(hit.event) })).concat(found);
    all.sort((a, b) => compareSearchOrder(a.at, b.at));
    const items = all.slice(0, request.limit);
    const merged: SearchPage = { items: items.map((h) => h.hit), resourceVersion: page.resourceVersion };
    if (all.length > request.limit) merged.next = items[items.length - 1]!.at;
    else if (end !== undefined) merged.next = end;
    return merged;
  }

  /** keyed says the index holds value tokens (`indexHoldsValueTokens`), read when the connection opens: the writer rebuilds an older index before. */
  private readonly keyed: boolean;

  constructor(
    private readonly db: Database.Database,
    private readonly tokenizer: SearchTokenizer,
  ) {
    this.head = db.prepare('SELECT max(docid) AS docid FROM search_docs');
    this.tail = db.prepare('SELECT min(docid) AS docid FROM search_docs');
    // The window's start alone: FTS5 given its end too reads on past it, to the end of the word's entries
    // (28 ms against 1.8 for a window's 2,072 entries of a word in 366,000 at 10,000,000 events).
    this.windowMatches = db.prepare('SELECT rowid AS docid FROM search_fts WHERE search_fts MATCH ? AND rowid >= ? ORDER BY rowid ASC LIMIT ?');
    this.newestMatches = db.prepare('SELECT rowid AS docid FROM search_fts WHERE search_fts MATCH ? ORDER BY rowid DESC LIMIT ?');
    this.versionsBetween = db.prepare('SELECT count(*) AS n FROM (SELECT 1 FROM search_docs WHERE docid >= ? AND docid <= ? LIMIT ?)');
    this.rangeStart = db.prepare('SELECT docid FROM search_docs WHERE docid < ? ORDER BY docid DESC LIMIT 1 OFFSET ?');
    this.sharedInWindow = db.prepare(
      'SELECT d.docid AS docid FROM search_docs d INDEXED BY search_shared WHERE d.text IS NOT NULL AND d.docid >= @low AND d.docid < @high AND EXISTS (SELECT 1 FROM search_fts WHERE search_fts MATCH @match AND rowid = d.text) LIMIT @limit',
    );
    this.keyed = indexHoldsValueTokens(db);
    this.mark = db.prepare<[string], { value: number }>('SELECT value FROM meta WHERE name = ?');
    this.byMatch = db.prepare(
      `SELECT f.rowid AS docid, v.rv AS rv, v.key AS key, v.object AS object ${fromCandidates(true)} ORDER BY f.rowid DESC LIMIT @limit`,
    );
    this.byTime = db.prepare(`SELECT d.docid AS docid, v.rv AS rv, v.key AS key, v.object AS object ${fromCandidates(false)} ORDER BY d.docid DESC LIMIT @limit`);
  }

  /** filtered is the candidates' statement with a columnFilter, by its SQL: a few shapes of query, each prepared once. */
  private readonly filtered = new Map<string, Database.Statement<Record<string, string | number>, Candidate>>();

  private candidates(byMatch: boolean, filter: string[]): Database.Statement<Record<string, string | number>, Candidate> {
    if (filter.length === 0) return byMatch ? this.byMatch : this.byTime;
    const docid = byMatch ? 'f.rowid' : 'd.docid';
    return this.prepared(`SELECT ${docid} AS docid, v.rv AS rv, v.key AS key, v.object AS object ${fromCandidates(byMatch)} AND ${filter.join(' AND ')} ORDER BY ${docid} DESC LIMIT @limit`);
  }

  /** byDocids is the statement of the visible versions of a JSON array of docids (`@ids`), newest first. */
  private byDocids(filter: string[]): Database.Statement<Record<string, string | number>, Candidate> {
    const where = [INDEXED_VISIBLE, ...filter].join(' AND ');
    return this.prepared(
      `SELECT d.docid AS docid, v.rv AS rv, v.key AS key, v.object AS object FROM json_each(@ids) j CROSS JOIN search_docs d ON d.docid = j.value JOIN versions v ON v.rv = d.rv WHERE ${where} ORDER BY d.docid DESC`,
    );
  }

  /**
   * deepFirst is the first read of a search that starts below the index's head (a continued page, a window in
   * the past), where FTS5 would walk every entry of the query's words newer than `high` before the first it
   * returns: a common word's cost grew with the archive above. A one-word match common near the head is looked
   * for among the newest versions below `high` by time (as many as a page of a word in one event of DEEP_SAMPLE
   * needs; a page they fill never reaches the index, and one they do not goes on below them); a window (`since:`)
   * holding at most MAX_WINDOW_MATCHES entries, nearer the index's oldest entry than its head, is read in
   * ascending order from its start, and those entries are every candidate left. FTS5 finds an entry by reading
   * the word's entries up to it from the end it starts at (a seek costs 1 ms at the oldest twentieth of a word in
   * 366,000 entries, 20 ms at the newest), so a window nearer the head is read from `high` down. Undefined when
   * neither applies: the index is read from `high` down.
   */
  private deepFirst(
    match: string,
    filter: string[],
    params: Record<string, string | number>,
    window: { low: number; high: number; head: number; since: boolean },
    limit: number,
  ): FirstRead | undefined {
    if (this.common(match, limit + 1)) {
      const n = Math.min(MAX_DEEP_SAMPLE, (limit + 1) * DEEP_SAMPLE);
      const rows = this.candidates(false, filter).all({ ...params, high: window.high, limit: n });
      // Every version of the sampled span is a candidate: a sample shorter than asked is all there is.
      return { rows, last: rows.length < n };
    }
    if (!window.since || window.low - (this.tail.get()?.docid ?? 0) > window.head - window.high) return undefined;
    const ids: number[] = [];
    const read = this.windowMatches.all(match, window.low, MAX_WINDOW_MATCHES + 1);
    for (const r of read) {
      if (r.docid >= window.high) break;
      ids.push(r.docid);
    }
    // The window's versions that share a matching entry are candidates too, in their own docids' places.
    const shared = this.sharedInWindow.all({ match, low: window.low, high: window.high, limit: MAX_WINDOW_MATCHES + 1 });
    if (shared.length > 0) {
      for (const r of shared) ids.push(r.docid);
      ids.sort((a, b) => a - b);
    }
    // Past the limit with no entry at or past the window's end: the window holds more than the read takes.
    if (ids.length > MAX_WINDOW_MATCHES) return undefined;
    // The versions of the newest entries first, SEARCH_CHUNK at a time: a page is usually found in the first.
    const statement = this.byDocids(filter);
    const from = (end: number): FirstRead => {
      const start = Math.max(0, end - SEARCH_CHUNK);
      const rows = statement.all({ ...params, ids: JSON.stringify(ids.slice(start, end)) });
      return start === 0 ? { rows, last: true } : { rows, last: false, next: () => from(start) };
    };
    return from(ids.length);
  }

  /** shared is the statement of `fromShared`'s candidates with a columnFilter, newest first, at most `@limit`. */
  private shared(filter: string[]): Database.Statement<Record<string, string | number>, Candidate> {
    return this.prepared(`SELECT d.docid AS docid, v.rv AS rv, v.key AS key, v.object AS object ${[fromShared(), ...filter].join(' AND ')} ORDER BY d.docid DESC LIMIT @limit`);
  }

  /**
   * withShared adds to a read of the index's candidates below `high` (newest first, `full` when it held `limit`)
   * the versions sharing a matching entry in the span it covers, at most `limit` of them. The merged read ends at
   * the higher of the two reads' last docids when either was full, so that the next read, below its last, misses
   * none of either.
   */
  private withShared(rows: Candidate[], limit: number, filter: string[], params: Record<string, string | number>, low: number, high: number): { rows: Candidate[]; full: boolean } {
    const full = rows.length >= limit;
    const from = full ? rows[rows.length - 1]!.docid : low;
    const shared = this.shared(filter).all({ ...params, low: from, high, limit });
    if (shared.length === 0) return { rows, full };
    const sharedFull = shared.length >= limit;
    const end = sharedFull ? Math.max(from, shared[shared.length - 1]!.docid) : from;
    const merged = rows.concat(shared).filter((r) => r.docid >= end);
    merged.sort((a, b) => b.docid - a.docid);
    return { rows: merged, full: full || sharedFull };
  }

  /** prepared is a statement of candidates prepared once per SQL text (a few shapes of query). */
  private prepared(sql: string): Database.Statement<Record<string, string | number>, Candidate> {
    let statement = this.filtered.get(sql);
    if (statement === undefined) {
      if (this.filtered.size >= MAX_FILTERED_STATEMENTS) this.filtered.clear();
      this.filtered.set(sql, (statement = this.db.prepare(sql)));
    }
    return statement;
  }

  /** search reads one page at revision `at` (the store's latest, or the request's snapshot, checked by the caller). */
  search(request: SearchRequest, at: number): SearchPage {
    const { query } = request;
    const matcher = createSearchMatcher(query);
    const loose = this.costly(query, request.namespace);
    const match = matchExpression(query, this.tokenizer, request.namespace, this.keyed, loose);
    const ns = request.namespace;
    const scope = this.scopeAt(at, ns);
    const low = query.sinceMs === undefined ? 0 : docidSecond(query.sinceMs) * DOCID_SLOTS;
    const top = request.after !== undefined ? docidSecond(request.after.timeMs) + 1 : query.untilMs !== undefined ? docidSecond(query.untilMs - 1) + 1 : MAX_DOCID_SECOND + 1;
    const params: Record<string, string | number> = { ...scope, low };
    if (match !== undefined) params.match = match;
    const filter = columnFilter(query.terms.filter((t): t is FieldTerm => t.kind === 'field'), params, internedValues(this.db));
    const candidates = this.candidates(match !== undefined, filter);
    let high = top * DOCID_SLOTS;
    const head = this.head.get()?.docid ?? 0;
    let first: FirstRead | undefined = match !== undefined && high <= head ? this.deepFirst(match, filter, params, { low, high, head, since: query.sinceMs !== undefined }, request.limit) : undefined;
    const bound = request.maxExamined !== undefined && request.maxExamined > 0 ? request.maxExamined : Infinity;
    const ranged = match === undefined;
    /** floor is the start of the range a costly search reads (`rangeLow`), computed as its first statement needs it. */
    let floor: number | undefined;

    const hits: { event: CoreEvent; matched: SearchField[]; at: SearchCursor }[] = [];
    let cutSecond: number | undefined;
    let examined = 0;
    /** decoded counts the characters of the candidates decoded: large events end a bounded read sooner than SEARCH_CHUNK of them would. */
    let decoded = 0;
    /** oldest is the last position, in search order, of the candidates examined past the request's. */
    let oldest: SearchCursor | undefined;
    let more = false;
    /** spanned is set when a costly read has read its range and ends there: the position past its seconds. */
    let spanned: SearchCursor | undefined;
    // The first read asks for the page and one more: a rare phrase of common words (`node:ip-10-0-3-17…`) costs the
    // index entries it walks, and a larger read walks on past the hits the page needs.
    let chunk = Math.min(SEARCH_CHUNK, request.limit + 1);
    for (;;) {
      let rows: Candidate[];
      let stop: boolean;
      let rangeRead = false;
      if (first !== undefined) {
        rows = first.rows;
        stop = first.last;
      } else {
        if (ranged) floor ??= this.rangeLow(high, low);
        rows = candidates.all({ ...params, low: floor ?? low, high, limit: chunk });
        stop = rows.length < chunk;
        if (!ranged) {
          const read = this.withShared(rows, chunk, filter, params, low, high);
          rows = read.rows;
          stop = !read.full;
        }
        // A range read to its start, with more below it: the next range, or the end of this read.
        if (stop && floor !== undefined && floor > low) [stop, rangeRead] = [false, true];
      }
      const next = first?.next;
      first = undefined;
      chunk = SEARCH_CHUNK;
      for (const row of rows) {
        const rowSecond = Math.floor(row.docid / DOCID_SLOTS);
        if (cutSecond !== undefined && rowSecond < cutSecond) {
          stop = more = true;
          break;
        }
        const text = storedTexts(this.db).json(row.object);
        decoded += text.length;
        const event = JSON.parse(text) as CoreEvent;
        event.metadata.resourceVersion = String(row.rv);
        const pos = searchCursorOf(event);
        // The previous page's second is read again: its candidates up to the position are not examined twice.
        if (request.after !== undefined && compareSearchOrder(pos, request.after) <= 0) continue;
        examined++;
        if (oldest === undefined || compareSearchOrder(pos, oldest) > 0) oldest = pos;
        const matched = matcher.matches(event);
        if (matched !== undefined && (ns === undefined || event.metadata.namespace === ns)) {
          hits.push({ event, matched, at: pos });
          if (hits.length > request.limit && cutSecond === undefined) cutSecond = rowSecond;
        }
        if ((examined >= bound || (bound !== Infinity && decoded >= MAX_DECODED_PER_READ)) && cutSecond === undefined) cutSecond = rowSecond;
      }
      if (stop) break;
      // A chunk of deepFirst's candidates may hold no visible version: the next one is read all the same.
      if (next !== undefined) {
        first = next();
        continue;
      }
      if (rangeRead) {
        // A range holds whole seconds: the cut second is read to its end, and so is every second of the range.
        if (cutSecond !== undefined) {
          more = true;
          break;
        }
        if (bound !== Infinity) {
          spanned = { timeMs: (floor! / DOCID_SLOTS) * 1000, key: AFTER_EVERY_KEY };
          break;
        }
        high = floor!;
        floor = undefined;
        continue;
      }
      if (rows.length === 0) break;
      high = rows[rows.length - 1]!.docid;
    }
    hits.sort((a, b) => compareSearchOrder(a.at, b.at));
    const items = hits.slice(0, request.limit);
    const page: SearchPage = { items: items.map(({ event, matched }) => ({ event, matched })), resourceVersion: at };
    if (hits.length > request.limit) page.next = items[items.length - 1]!.at;
    else if (spanned !== undefined) page.next = spanned;
    else if (more && oldest !== undefined) page.next = oldest;
    return this.withUnindexed(page, request, matcher, this.unindexedRows(scope, filter, params));
  }

  /**
   * histogram counts the hits of a search's whole window per bucket at revision `at` (`searchHistogram`), its
   * reads made between calls of `pause`, which lets the event loop go (and fails once the store is closed).
   */
  histogram(request: SearchRequest, at: number, pause: () => Promise<void>): Promise<SearchBucket[]> {
    const { query } = request;
    const ns = request.namespace;
    const scope = this.scopeAt(at, ns);
    const match = matchExpression(query, this.tokenizer, ns, this.keyed);
    const textExact = this.tokenizer === 'unicode61';
    const matcher = createSearchMatcher(query);
    const input = { request, match, matcher, scope, textExact, slots: DOCID_SLOTS, second: docidSecond, from: fromCandidates, shared: fromShared };
    // The versions above the mark, read first: the index's part is read at the same mark, between pauses.
    const unindexed = this.unindexedRows(scope, [], {});
    return searchHistogram(this.db, input, pause).then((buckets) => {
      const h = request.histogram!;
      for (const row of unindexed) {
        const event = JSON.parse(storedTexts(this.db).json(row.object)) as CoreEvent;
        if (matcher.matches(event) !== undefined && (ns === undefined || event.metadata.namespace === ns)) countInHistogram(buckets, h, searchTimeMs(event));
      }
      return buckets;
    });
  }
}
