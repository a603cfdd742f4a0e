import type Database from 'better-sqlite3';
import type { CoreEvent } from '../../api/index.js';
import type { Logger } from '../../internal/index.js';
import { SEARCH_TEXT_FIELDS, searchFieldValue, searchTimeMs, searchWords } from '../search/index.js';
import type { SearchTextField } from '../search/index.js';
import { migrationLog } from './migration-progress.js';
import type { MigrationProgress } from './migration-progress.js';
import { decodeObject } from './object-codec.js';
import { DOCID_SLOTS, KEYED_FIELDS, SEARCH_TOKENIZER, VALUE_TOKENS_META, docidSecond, indexHoldsValueTokens, valueToken } from './search-index.js';
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
 * (the FTS5 rowid, in search order: see `search-index.ts`) to its version. It
 * marks the index as one with value tokens (`indexHoldsValueTokens`), which is
 * what this writer writes: it runs on a file with no index, or whose index was
 * just dropped to be rebuilt.
 */
export function searchIndexSchema(tokenizer: SearchTokenizer): string {
  const tokenize = tokenizer === 'trigram' ? 'trigram' : 'unicode61 remove_diacritics 0';
  return `
CREATE TABLE IF NOT EXISTS search_docs (docid INTEGER PRIMARY KEY, rv INTEGER NOT NULL UNIQUE);
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(${COLUMNS}, content='', contentless_delete=1, tokenize='${tokenize}');
INSERT INTO meta (name, value) VALUES ('${VALUE_TOKENS_META}', 1) ON CONFLICT (name) DO UPDATE SET value = excluded.value;
`;
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

/** indexTokenizer is the tokenizer of the file's FTS5 table (SEARCH_TOKENIZER when it has none yet). */
function indexTokenizer(db: Database.Database): SearchTokenizer {
  const table = db.prepare<[], { sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'search_fts'").get();
  return table === undefined ? SEARCH_TOKENIZER : /tokenize='trigram'/.test(table.sql) ? 'trigram' : 'unicode61';
}

function decodeEvent(blob: Uint8Array): CoreEvent | undefined {
  try {
    return JSON.parse(decodeObject(blob)) as CoreEvent;
  } catch {
    return undefined;
  }
}

/** prepareAddText prepares the insert of one version's entry in the FTS5 table: its docid, then its fields' text. */
function prepareAddText(db: Database.Database): Database.Statement<unknown[]> {
  return db.prepare(`INSERT INTO search_fts (rowid, ${COLUMNS}) VALUES (?, ${SEARCH_TEXT_FIELDS.map(() => '?').join(', ')})`);
}

/** SearchIndexWriter keeps the index on a writing connection, in step with its writes of `versions`. */
export interface SearchIndexWriter {
  /** add queues the entry of the version just inserted at `rv` (never a tombstone), for `write`. */
  add(rv: number, event: CoreEvent | undefined): void;
  /** drop removes the entry of the version at `rv`, which the caller deletes in the same transaction (a queued one is forgotten). */
  drop(rv: number): void;
  /** write writes the queued entries inside the transaction that inserted their versions: the last thing before it commits. */
  write(): void;
  /** discard forgets the queued entries of a transaction rolled back. */
  discard(): void;
}

/** createSearchIndexWriter prepares the index's statements on a connection whose file has the index's tables. */
export function createSearchIndexWriter(db: Database.Database): SearchIndexWriter {
  const nextSlot = db.prepare<[number, number], { docid: number | null }>('SELECT max(docid) + 1 AS docid FROM search_docs WHERE docid >= ? AND docid < ?');
  const lastDoc = db.prepare<[], { docid: number | null }>('SELECT max(docid) AS docid FROM search_docs');
  const addDoc = db.prepare<[number | null, number]>('INSERT INTO search_docs (docid, rv) VALUES (?, ?)');
  const addText = prepareAddText(db);
  const docOf = db.prepare<[number], { docid: number }>('SELECT docid FROM search_docs WHERE rv = ?');
  const dropDoc = db.prepare<[number]>('DELETE FROM search_docs WHERE docid = ?');
  const dropText = db.prepare<[number]>('DELETE FROM search_fts WHERE rowid = ?');
  const tokenizer = indexTokenizer(db);
  const queued = new Map<number, IndexedText>();
  return {
    add(rv, event) {
      queued.set(rv, indexedText(event, tokenizer));
    },
    drop(rv) {
      if (queued.delete(rv)) return;
      const doc = docOf.get(rv);
      if (doc === undefined) return;
      dropText.run(doc.docid);
      dropDoc.run(doc.docid);
    },
    write() {
      if (queued.size === 0) return;
      // The next free docid of each second written: looked up once, then counted here. No docid is at or past
      // `above`, so a second starting there has every slot free without a look-up: the usual case, as an archive
      // mostly receives events newer than those it holds, often each of its own second.
      const next = new Map<number, number>();
      let above = (lastDoc.get()?.docid ?? -1) + 1;
      for (const [rv, text] of queued) {
        const at = text.second * DOCID_SLOTS;
        const slot = next.get(at) ?? (at >= above ? at : (nextSlot.get(at, at + DOCID_SLOTS)?.docid ?? at));
        // A second whose slots are all taken gets a docid past every other (see `docidSecond`).
        const free = slot < at + DOCID_SLOTS;
        const docid = Number(addDoc.run(free ? slot : null, rv).lastInsertRowid);
        if (free) next.set(at, slot + 1);
        if (docid >= above) above = docid + 1;
        addText.run(docid, ...text.fields);
      }
      queued.clear();
    },
    discard() {
      queued.clear();
    },
  };
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
    for (const { rv, object } of batch) writer.add(rv, decodeEvent(object));
    writer.write();
    done += batch.length;
    after = batch[batch.length - 1]!.rv;
    progress?.(done, total);
  }
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
    'SELECT d.docid AS docid, v.object AS object FROM search_docs d JOIN versions v ON v.rv = d.rv WHERE d.docid > ? ORDER BY d.docid LIMIT ?',
  );
  let after = -1;
  let done = 0;
  for (;;) {
    const batch = rows.all(after, chunk);
    if (batch.length === 0) break;
    for (const { docid, object } of batch) addText.run(docid, ...indexedText(decodeEvent(object), tokenizer).fields);
    done += batch.length;
    after = batch[batch.length - 1]!.docid;
    progress?.(done, total);
  }
  return done;
}

/**
 * openSearchIndex readies the index on a writer's connection and returns its
 * writer. On a file written before the index (an archive of schema 5 or older)
 * it builds it in place in one transaction; on one whose index has no value
 * tokens (schema 8 or older) it rebuilds the FTS5 table (`rebuildSearchText`)
 * in one transaction, queries reading the phrases of the values' words until it
 * commits. Either logs its progress every million versions and its time per
 * million (`migrationLog`).
 */
export function openSearchIndex(db: Database.Database, logger: Pick<Logger, 'info'>): SearchIndexWriter {
  if (db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'search_fts'").get() !== undefined) {
    if (!indexHoldsValueTokens(db)) {
      const log = migrationLog(logger, { progress: 'adding keyword values to the search index', finished: 'the search index holds keyword values whole' });
      const total = db.transaction(() => rebuildSearchText(db, log.progress))();
      log.finished(total);
    }
    return createSearchIndexWriter(db);
  }
  const log = migrationLog(logger, { progress: 'indexing the archive for search', finished: 'the archive\'s search index is built' });
  const total = db.transaction(() => {
    db.exec(searchIndexSchema(SEARCH_TOKENIZER));
    return buildSearchIndex(db, log.progress);
  })();
  log.finished(total);
  return createSearchIndexWriter(db);
}
