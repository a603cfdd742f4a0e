import type { SearchTextField } from '../../api/index.js';
import { SEARCH_TEXT_FIELDS, searchFieldValue, searchTimeMs, searchWords } from '../../api/index.js';
import type Database from 'better-sqlite3';
import type { CoreEvent } from '../../api/index.js';
import type { Logger } from '../../internal/index.js';
import { migrationLog } from './migration-progress.js';
import type { MigrationProgress } from './migration-progress.js';
import { storedTexts } from './texts.js';
import { DOCID_SLOTS, INDEXED_RV_META, KEYED_FIELDS, SEARCH_TOKENIZER, VALUE_TOKENS_META, docidSecond, indexHoldsValueTokens, valueToken } from './search-index.js';
import type { SearchTokenizer } from './search-index.js';

/**
 * The write side of the SQLite search index (`search-index.ts`): the entries of
 * the versions a write transaction inserts, and the removal of those a purge
 * deletes, both in the transaction that changes the versions.
 *
 * The entries are queued while the transaction runs and written together just
 * before it commits, by plain statements rather than triggers: FTS5 writes what
 * it holds in memory to a new segment of its index whenever a statement of the
 * transaction opens a statement journal, and an INSERT that fires a trigger
 * always opens one. Kept by triggers, every version made a segment of its own,
 * and merging those segments was most of what the index cost a write; written
 * at the end, a group commit's versions make one.
 */

const COLUMNS = SEARCH_TEXT_FIELDS.join(', ');

/**
 * searchIndexSchema is the SQL that creates the index's tables (idempotent):
 * the FTS5 table of each version's words (contentless: the words are the
 * versions', so it keeps only its index), and `search_docs`, which maps a docid
 * (the FTS5 rowid, in search order: see `search-index.ts`) to its version, and
 * for a version whose long text repeats its predecessor's, the docid of the
 * entry that holds the text (`text`, see SHARED_TEXT_MIN; null: its own entry). It
 * marks the index as one with value tokens (`indexHoldsValueTokens`), which is
 * what this writer writes: it runs on a file with no index, or whose index was
 * just dropped to be rebuilt.
 */
export function searchIndexSchema(tokenizer: SearchTokenizer): string {
  const tokenize = tokenizer === 'trigram' ? 'trigram' : 'unicode61 remove_diacritics 0';
  return `
CREATE TABLE IF NOT EXISTS search_docs (docid INTEGER PRIMARY KEY, rv INTEGER NOT NULL UNIQUE, text INTEGER);
${SHARED_INDEXES}
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(${COLUMNS}, content='', contentless_delete=1, tokenize='${tokenize}');
INSERT INTO meta (name, value) VALUES ('${VALUE_TOKENS_META}', 1) ON CONFLICT (name) DO UPDATE SET value = excluded.value;
`;
}

/**
 * SHARED_INDEXES index the versions that share another's entry, a few of the
 * archive's: by docid, for a search's walk (`fromShared`), and by the entry
 * they share, for the drop of its last sharer.
 */
const SHARED_INDEXES = `
CREATE INDEX IF NOT EXISTS search_shared ON search_docs(docid, text) WHERE text IS NOT NULL;
CREATE INDEX IF NOT EXISTS search_sharers ON search_docs(text) WHERE text IS NOT NULL;`;

/**
 * SHARED_TEXT_MIN is the length, in characters of its fields' indexed text,
 * from which a version whose text equals its predecessor's (a repeat: only its
 * count and times moved) shares the predecessor's entry instead of having one
 * of its own. Below it, an entry costs about what the reference does, and the
 * search finds the version on its one path: ordinary events (a few hundred
 * characters) keep their own entries, and the sharers a search walks besides the
 * index's entries (`fromShared`) are the long texts' repeats, each of which
 * would otherwise add its whole text to the index again (a 1 MiB message
 * repeated 100 times: 100 MiB of index).
 */
export const SHARED_TEXT_MIN = 4096;

/** PreviousVersion is the version an added one replaces: its revision and its stored JSON. */
export interface PreviousVersion {
  rv: number;
  json: string;
}

/** Queued is an added version waiting for its entry: the event and the version it replaces. */
interface Queued {
  event: CoreEvent | undefined;
  prev: PreviousVersion | undefined;
}

/** IndexedText is what the index holds of one version: each text field's words, and the second its docids start at. */
interface IndexedText {
  fields: string[];
  second: number;
}

/** ASCII is text of ASCII characters only. */
const ASCII = /^[\x00-\x7f]*$/;

/**
 * columnText is what the index holds of one field: its words, then the value's
 * token when the field is keyed (`valueToken`). With `asIs` (the unicode61
 * tokenizer) a value of ASCII characters goes in as it is: unicode61 splits it
 * at every character but a letter or digit and folds its case, which gives
 * `searchWords`' words, so FTS5 finds them once instead of twice. Neither holds
 * beyond ASCII (unicode61 splits at marks, which are part of a word here), nor
 * with trigram, which indexes the separators too.
 */
function columnText(event: CoreEvent, f: SearchTextField, asIs: boolean): string {
  const value = searchFieldValue(event, f);
  const keyed = KEYED_FIELDS.has(f);
  if (asIs && ASCII.test(value)) {
    if (!keyed) return value;
    const token = valueToken(searchWords(value));
    return token === undefined ? value : `${value} ${token}`;
  }
  const words = searchWords(value);
  const token = keyed ? valueToken(words) : undefined;
  return token === undefined ? words.join(' ') : `${words.join(' ')} ${token}`;
}

/** indexedText is the entry of an event (of an undecodable version: no words, placed last) in an index of `tokenizer`. */
function indexedText(event: CoreEvent | undefined, tokenizer: SearchTokenizer): IndexedText {
  if (event === undefined) return { fields: SEARCH_TEXT_FIELDS.map(() => ''), second: 0 };
  const asIs = tokenizer === 'unicode61';
  return { fields: SEARCH_TEXT_FIELDS.map((f) => columnText(event, f, asIs)), second: docidSecond(searchTimeMs(event)) };
}

/** textLength is the characters of an entry's fields. */
function textLength(text: IndexedText): number {
  let n = 0;
  for (const f of text.fields) n += f.length;
  return n;
}

/** sameText tells that two entries hold the same words in every field. */
function sameText(a: IndexedText, b: IndexedText): boolean {
  return a.fields.every((f, i) => f === b.fields[i]);
}

/** indexTokenizer is the tokenizer of the file's FTS5 table (SEARCH_TOKENIZER when it has none yet). */
function indexTokenizer(db: Database.Database): SearchTokenizer {
  const table = db.prepare<[], { sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'search_fts'").get();
  return table === undefined ? SEARCH_TOKENIZER : /tokenize='trigram'/.test(table.sql) ? 'trigram' : 'unicode61';
}

/** decodeEvent reads a stored object with its message put back (`texts.ts`): the index holds the message's words. */
function decodeEvent(db: Database.Database, blob: Uint8Array): CoreEvent | undefined {
  try {
    return JSON.parse(storedTexts(db).json(blob)) as CoreEvent;
  } catch {
    return undefined;
  }
}

/** prepareAddText prepares the insert of one version's entry in the FTS5 table: its docid, then its fields' text. */
function prepareAddText(db: Database.Database): Database.Statement<unknown[]> {
  return db.prepare(`INSERT INTO search_fts (rowid, ${COLUMNS}) VALUES (?, ${SEARCH_TEXT_FIELDS.map(() => '?').join(', ')})`);
}

/** REREAD_CHUNK is how many versions one catch-up reads back from the file when the writer lost its queue (a rolled back transaction). */
const REREAD_CHUNK = 20_000;

/** LAG_BOUNDS are the upper bounds, in seconds, of the buckets of the index's lag (`SearchIndexLag`). */
export const LAG_BOUNDS: readonly number[] = [0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 10];

/** SearchIndexLag is a cumulative histogram of the time each version waited, from its commit to its index entry's commit. */
export interface SearchIndexLag {
  /** counts holds the versions of each bucket of LAG_BOUNDS, then those past the last bound. */
  counts: number[];
  sum: number;
  count: number;
}

/** SearchIndexWriter keeps the index on a writing connection, behind its writes of `versions` by a bounded time. */
export interface SearchIndexWriter {
  /**
   * add queues the entry of the version just inserted at `rv` (never a tombstone), of `bytes` stored, for a later
   * `write`; with `prev`, the version it replaces, whose entry it shares when their long texts are the same.
   */
  add(rv: number, event: CoreEvent | undefined, bytes?: number, prev?: PreviousVersion): void;
  /**
   * drop removes the entry of the version at `rv`, which the caller deletes in the same transaction (a queued one
   * is forgotten). An entry other versions share stays until the last of them is dropped.
   */
  drop(rv: number): void;
  /** committed says the transaction that queued entries since the last call committed, at `nowMs`: their lag counts from there. */
  committed(nowMs: number): void;
  /**
   * write writes the queued entries inside the caller's transaction and moves the high-water mark to `upTo` (every
   * version at or below it committed: by default the newest queued). After a `discard` it reads the versions
   * above the mark back from the file instead, REREAD_CHUNK at a time. It returns true while more is left to index.
   */
  write(upTo?: number): boolean;
  /** written says the transaction of the last `write` committed, at `nowMs`: its versions' lag is counted. */
  written(nowMs: number): void;
  /** discard forgets the queue (a transaction rolled back, the index's own or a write's): the next `write` reads the file above the mark. */
  discard(): void;
  /** waiting is what waits for the next `write`: versions and their stored bytes (none known while the queue is lost). */
  readonly waiting: { versions: number; bytes: number; lost: boolean };
  /** indexedRv is the high-water mark. */
  readonly indexedRv: number;
  /** lag is the histogram of the lag of the versions indexed so far. */
  lag(): SearchIndexLag;
}

/** createSearchIndexWriter prepares the index's statements on a connection whose file has the index's tables. */
export function createSearchIndexWriter(db: Database.Database): SearchIndexWriter {
  const nextSlot = db.prepare<[number, number], { docid: number | null }>('SELECT max(docid) + 1 AS docid FROM search_docs WHERE docid >= ? AND docid < ?');
  const lastDoc = db.prepare<[], { docid: number | null }>('SELECT max(docid) AS docid FROM search_docs');
  const addDoc = db.prepare<[number | null, number, number | null]>('INSERT INTO search_docs (docid, rv, text) VALUES (?, ?, ?)');
  const addText = prepareAddText(db);
  const docOf = db.prepare<[number], { docid: number; text: number | null }>('SELECT docid, text FROM search_docs WHERE rv = ?');
  const sharerOf = db.prepare<[number], { docid: number }>('SELECT docid FROM search_docs INDEXED BY search_sharers WHERE text = ? LIMIT 1');
  const entryKept = db.prepare<[number], { rv: number }>('SELECT d.rv AS rv FROM search_docs d JOIN versions v ON v.rv = d.rv WHERE d.docid = ?');
  const dropDoc = db.prepare<[number]>('DELETE FROM search_docs WHERE docid = ?');
  const dropText = db.prepare<[number]>('DELETE FROM search_fts WHERE rowid = ?');
  const setMark = db.prepare<[string, number]>('INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value');
  const unindexed = db.prepare<[number, number, number], { rv: number; object: Buffer }>('SELECT rv, object FROM versions WHERE rv > ? AND rv <= ? AND op <> 3 ORDER BY rv LIMIT ?');
  const tokenizer = indexTokenizer(db);
  // The events, not their entries: an entry is made when it is written, off the write's path.
  const queued = new Map<number, Queued>();
  let bytes = 0;
  let indexedRv = readIndexedRv(db);
  // A file whose index its writes kept in their transactions gets its mark here, before any write moves ahead of it.
  if (db.prepare<[string], { value: number }>('SELECT value FROM meta WHERE name = ?').get(INDEXED_RV_META) === undefined) setMark.run(INDEXED_RV_META, indexedRv);
  // Versions above the mark were committed and not indexed (the process ended first): the first writes read them back.
  let lost = indexedRv < maxRv(db);
  /** commits are the queued versions of each commit not yet indexed: how many, and when they committed. */
  let commits: { versions: number; atMs: number }[] = [];
  let uncommitted = 0;
  let writing: { versions: number; atMs: number }[] = [];
  const lag: SearchIndexLag = { counts: LAG_BOUNDS.map(() => 0).concat(0), sum: 0, count: 0 };

  /**
   * sharedEntry is the docid of the entry a version of `text` shares: its predecessor's (or the one that shares),
   * when the text is long and the same. Undefined: the version gets an entry of its own.
   */
  const sharedEntry = (text: IndexedText, prev: PreviousVersion | undefined): number | undefined => {
    if (prev === undefined || textLength(text) < SHARED_TEXT_MIN) return undefined;
    const doc = docOf.get(prev.rv);
    if (doc === undefined) return undefined;
    let before: CoreEvent;
    try {
      before = JSON.parse(prev.json) as CoreEvent;
    } catch {
      return undefined;
    }
    return sameText(text, indexedText(before, tokenizer)) ? (doc.text ?? doc.docid) : undefined;
  };

  /** writeEntries writes the entries of `events` (in ascending rv). */
  const writeEntries = (events: Iterable<[number, Queued]>): void => {
    // The next free docid of each second written: looked up once, then counted here. No docid is at or past
    // `above`, so a second starting there has every slot free without a look-up: the usual case, as an archive
    // mostly receives events newer than those it holds, often each of its own second.
    const next = new Map<number, number>();
    let above = (lastDoc.get()?.docid ?? -1) + 1;
    for (const [rv, { event, prev }] of events) {
      const text = indexedText(event, tokenizer);
      const shared = event === undefined ? undefined : sharedEntry(text, prev);
      const at = text.second * DOCID_SLOTS;
      const slot = next.get(at) ?? (at >= above ? at : (nextSlot.get(at, at + DOCID_SLOTS)?.docid ?? at));
      // A second whose slots are all taken gets a docid past every other (see `docidSecond`).
      const free = slot < at + DOCID_SLOTS;
      const docid = Number(addDoc.run(free ? slot : null, rv, shared ?? null).lastInsertRowid);
      if (free) next.set(at, slot + 1);
      if (docid >= above) above = docid + 1;
      if (shared === undefined) addText.run(docid, ...text.fields);
    }
  };

  return {
    add(rv, event, size = 0, prev) {
      uncommitted++;
      if (lost) return;
      queued.set(rv, { event, prev });
      bytes += size;
    },
    drop(rv) {
      if (queued.delete(rv)) return;
      const doc = docOf.get(rv);
      if (doc === undefined) return;
      if (doc.text === null) {
        // An entry others share stays, its row too (its docid taken): the last sharer's drop removes both.
        if (sharerOf.get(doc.docid) !== undefined) return;
        dropText.run(doc.docid);
        dropDoc.run(doc.docid);
        return;
      }
      dropDoc.run(doc.docid);
      // The shared entry goes with its last sharer once its own version is gone (dropped before: see above).
      if (sharerOf.get(doc.text) !== undefined || entryKept.get(doc.text) !== undefined) return;
      dropText.run(doc.text);
      dropDoc.run(doc.text);
    },
    committed(nowMs) {
      if (uncommitted > 0 && !lost) commits.push({ versions: uncommitted, atMs: nowMs });
      uncommitted = 0;
    },
    write(upTo) {
      if (lost) {
        const top = upTo ?? Number.MAX_SAFE_INTEGER;
        const rows = unindexed.all(indexedRv, top, REREAD_CHUNK);
        writeEntries(rows.map(({ rv, object }) => [rv, { event: decodeEvent(db, object), prev: undefined }] as [number, Queued]));
        const more = rows.length === REREAD_CHUNK;
        indexedRv = more ? rows[rows.length - 1]!.rv : Math.max(indexedRv, upTo ?? rows[rows.length - 1]?.rv ?? indexedRv);
        setMark.run(INDEXED_RV_META, indexedRv);
        // Caught up: what is written from now on is queued again.
        if (!more) lost = false;
        writing = [];
        return more;
      }
      writeEntries(queued);
      let top = indexedRv;
      for (const rv of queued.keys()) if (rv > top) top = rv;
      indexedRv = Math.max(top, upTo ?? top);
      setMark.run(INDEXED_RV_META, indexedRv);
      queued.clear();
      bytes = 0;
      writing = commits;
      commits = [];
      return false;
    },
    written(nowMs) {
      for (const c of writing) {
        const seconds = Math.max(0, nowMs - c.atMs) / 1000;
        const i = LAG_BOUNDS.findIndex((b) => seconds <= b);
        lag.counts[i < 0 ? LAG_BOUNDS.length : i]! += c.versions;
        lag.sum += seconds * c.versions;
        lag.count += c.versions;
      }
      writing = [];
    },
    discard() {
      queued.clear();
      bytes = 0;
      commits = [];
      writing = [];
      uncommitted = 0;
      lost = true;
      // The mark as the file holds it: a write of the index rolled back did not move it.
      indexedRv = readIndexedRv(db);
    },
    get waiting() {
      return { versions: queued.size, bytes, lost };
    },
    get indexedRv() {
      return indexedRv;
    },
    lag() {
      return { counts: [...lag.counts], sum: lag.sum, count: lag.count };
    },
  };
}

/** readIndexedRv is a file's high-water mark; a file without one has its index written in its writes' transactions: every version. */
function readIndexedRv(db: Database.Database): number {
  const mark = db.prepare<[string], { value: number }>('SELECT value FROM meta WHERE name = ?').get(INDEXED_RV_META);
  return mark !== undefined ? mark.value : maxRv(db);
}

function maxRv(db: Database.Database): number {
  return db.prepare<[], { rv: number | null }>('SELECT max(rv) AS rv FROM versions').get()?.rv ?? 0;
}

/** IndexProgress reports a migration's progress: versions indexed so far of the total. */
export type IndexProgress = MigrationProgress;

/**
 * buildSearchIndex indexes the versions already stored (a file written before
 * the index), in chunks, inside the caller's transaction: the write path keeps
 * it from then on. The index's tables must exist.
 */
export function buildSearchIndex(db: Database.Database, progress?: IndexProgress, chunk = 50_000): number {
  const writer = createSearchIndexWriter(db);
  const total = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM versions WHERE op <> 3').get()!.n;
  const rows = db.prepare<[number, number], { rv: number; object: Buffer }>('SELECT rv, object FROM versions WHERE op <> 3 AND rv > ? ORDER BY rv LIMIT ?');
  let after = 0;
  let done = 0;
  for (;;) {
    const batch = rows.all(after, chunk);
    if (batch.length === 0) break;
    for (const { rv, object } of batch) writer.add(rv, decodeEvent(db, object));
    writer.write();
    done += batch.length;
    after = batch[batch.length - 1]!.rv;
    progress?.(done, total);
  }
  db.prepare<[string, number]>('INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value').run(INDEXED_RV_META, maxRv(db));
  return done;
}

/**
 * rebuildSearchText writes the FTS5 table of an index anew from the versions
 * `search_docs` maps (schema 9's migration: the value tokens), inside the
 * caller's transaction, in chunks of docids in ascending order, so that FTS5
 * appends to each word's entries; the docids and the tokenizer stay. It drops the old table
 * first rather than deleting its entries one by one: a contentless table
 * keeps a deleted entry until its segment is merged, so an index rewritten
 * row by row would hold every entry twice. It returns the versions indexed.
 */
export function rebuildSearchText(db: Database.Database, progress?: IndexProgress, chunk = 50_000): number {
  const total = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM search_docs').get()!.n;
  // The table is written again with the tokenizer it had.
  const tokenizer = indexTokenizer(db);
  db.exec('DROP TABLE IF EXISTS search_fts');
  db.exec(searchIndexSchema(tokenizer));
  const addText = prepareAddText(db);
  const rows = db.prepare<[number, number], { docid: number; object: Buffer }>(
    'SELECT d.docid AS docid, v.object AS object FROM search_docs d JOIN versions v ON v.rv = d.rv WHERE d.docid > ? AND d.text IS NULL ORDER BY d.docid LIMIT ?',
  );
  let after = -1;
  let done = 0;
  for (;;) {
    const batch = rows.all(after, chunk);
    if (batch.length === 0) break;
    for (const { docid, object } of batch) addText.run(docid, ...indexedText(decodeEvent(db, object), tokenizer).fields);
    done += batch.length;
    after = batch[batch.length - 1]!.docid;
    progress?.(done, total);
  }
  return done;
}

/**
 * addSharedColumn gives an index written before shared entries (schema 9 or
 * older) the `text` column of `search_docs` and its indexes, in one
 * transaction: null in every row (each version has its entry), which SQLite
 * adds without rewriting the table.
 */
function addSharedColumn(db: Database.Database): void {
  if (db.prepare<[], { name: string }>('PRAGMA table_info(search_docs)').all().some((c) => c.name === 'text')) return;
  db.transaction(() => {
    db.exec('ALTER TABLE search_docs ADD COLUMN text INTEGER');
    db.exec(SHARED_INDEXES);
  })();
}

/**
 * catchUpSearchIndex indexes, in one transaction, the versions a writer
 * committed and had not indexed when its process ended (kill -9 between a
 * write and its index's), logging what it did when there were any.
 */
function catchUpSearchIndex(db: Database.Database, writer: SearchIndexWriter, logger: Pick<Logger, 'info'>): void {
  if (!writer.waiting.lost) return;
  const from = writer.indexedRv;
  const top = maxRv(db);
  const total = db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM versions WHERE rv > ? AND op <> 3').get(from)!.n;
  const log = migrationLog(logger, { progress: 'indexing for search the versions written before the last stop', finished: 'the search index caught up with the versions written before the last stop' });
  db.transaction(() => {
    while (writer.write(top)) log.progress(db.prepare<[number, number], { n: number }>('SELECT count(*) AS n FROM versions WHERE rv > ? AND rv <= ? AND op <> 3').get(from, writer.indexedRv)!.n, total);
  })();
  writer.written(Date.now());
  log.finished(total);
}

/**
 * openSearchIndex readies the index on a writer's connection and returns its
 * writer. On a file written before the index (an archive of schema 5 or older)
 * it builds it in place in one transaction; on one whose index has no value
 * tokens (schema 8 or older) it rebuilds the FTS5 table (`rebuildSearchText`)
 * in one transaction, queries reading the phrases of the values' words until it
 * commits. Either logs its progress every million versions and its time per
 * million (`migrationLog`). Versions committed above the index's high-water mark
 * (a process that ended before indexing them) are indexed before it returns.
 * An index written before shared entries gains their column (`addSharedColumn`).
 */
export function openSearchIndex(db: Database.Database, logger: Pick<Logger, 'info'>): SearchIndexWriter {
  if (db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'search_fts'").get() !== undefined) {
    addSharedColumn(db);
    if (!indexHoldsValueTokens(db)) {
      const log = migrationLog(logger, { progress: 'adding keyword values to the search index', finished: 'the search index holds keyword values whole' });
      const total = db.transaction(() => rebuildSearchText(db, log.progress))();
      log.finished(total);
    }
    const writer = createSearchIndexWriter(db);
    catchUpSearchIndex(db, writer, logger);
    return writer;
  }
  const log = migrationLog(logger, { progress: 'indexing the archive for search', finished: 'the archive\'s search index is built' });
  const total = db.transaction(() => {
    db.exec(searchIndexSchema(SEARCH_TOKENIZER));
    return buildSearchIndex(db, log.progress);
  })();
  log.finished(total);
  return createSearchIndexWriter(db);
}
