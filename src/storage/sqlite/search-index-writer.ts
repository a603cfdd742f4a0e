import type Database from 'better-sqlite3';
import type { CoreEvent } from '../../api/index.js';
import type { Logger } from '../../internal/index.js';
import { SEARCH_TEXT_FIELDS, searchFieldValue, searchTimeMs, searchWords } from '../search/index.js';
import { migrationLog } from './migration-progress.js';
import type { MigrationProgress } from './migration-progress.js';
import { decodeObject } from './object-codec.js';
import { DOCID_SLOTS, SEARCH_TOKENIZER, docidSecond } from './search-index.js';
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
 * (the FTS5 rowid, in search order: see `search-index.ts`) to its version.
 */
export function searchIndexSchema(tokenizer: SearchTokenizer): string {
  const tokenize = tokenizer === 'trigram' ? 'trigram' : 'unicode61 remove_diacritics 0';
  return `
CREATE TABLE IF NOT EXISTS search_docs (docid INTEGER PRIMARY KEY, rv INTEGER NOT NULL UNIQUE);
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(${COLUMNS}, content='', contentless_delete=1, tokenize='${tokenize}');
`;
}

/** IndexedText is what the index holds of one version: each text field's words, and the second its docids start at. */
interface IndexedText {
  fields: string[];
  second: number;
}

/** indexedText is the entry of an event (of an undecodable version: no words, placed last). */
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
  const addDoc = db.prepare<[number | null, number]>('INSERT INTO search_docs (docid, rv) VALUES (?, ?)');
  const addText = db.prepare(`INSERT INTO search_fts (rowid, ${COLUMNS}) VALUES (?, ${SEARCH_TEXT_FIELDS.map(() => '?').join(', ')})`);
  const docOf = db.prepare<[number], { docid: number }>('SELECT docid FROM search_docs WHERE rv = ?');
  const dropDoc = db.prepare<[number]>('DELETE FROM search_docs WHERE docid = ?');
  const dropText = db.prepare<[number]>('DELETE FROM search_fts WHERE rowid = ?');
  const queued = new Map<number, IndexedText>();
  return {
    add(rv, event) {
      queued.set(rv, indexedText(event));
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
      // The next free docid of each second written: looked up once, then counted here.
      const next = new Map<number, number>();
      for (const [rv, text] of queued) {
        const at = text.second * DOCID_SLOTS;
        const slot = next.get(at) ?? nextSlot.get(at, at + DOCID_SLOTS)?.docid ?? at;
        // A second whose slots are all taken gets a docid past every other (see `docidSecond`).
        const free = slot < at + DOCID_SLOTS;
        const docid = Number(addDoc.run(free ? slot : null, rv).lastInsertRowid);
        if (free) next.set(at, slot + 1);
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
 * openSearchIndex readies the index on a writer's connection and returns its
 * writer. On a file written before the index (an archive of schema 5 or older)
 * it builds it in place in one transaction, logging its progress every million
 * versions and its time per million (`migrationLog`).
 */
export function openSearchIndex(db: Database.Database, logger: Pick<Logger, 'info'>): SearchIndexWriter {
  if (db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'search_fts'").get() !== undefined) return createSearchIndexWriter(db);
  const log = migrationLog(logger, { progress: 'indexing the archive for search', finished: 'the archive\'s search index is built' });
  const total = db.transaction(() => {
    db.exec(searchIndexSchema(SEARCH_TOKENIZER));
    return buildSearchIndex(db, log.progress);
  })();
  log.finished(total);
  return createSearchIndexWriter(db);
}
