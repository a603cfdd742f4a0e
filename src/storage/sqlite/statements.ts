/**
 * The prepared statements of a store's connection, apart from the store so the
 * list, write, watch and retention parts read the SQL they run in one place.
 */
import type Database from 'better-sqlite3';
import { CURRENT, Op } from './schema.js';

/** CurrentRow is the live version of a key. */
export interface CurrentRow {
  rv: number;
  /** object is the encoded event (`decodeObject`). */
  object: Buffer;
  expires_at: number | null;
  /** text_rv is the text the object refers to (`texts.ts`), null when it holds its message. */
  text_rv: number | null;
}

/** ChangeRow is one version read as a change of the log, with the version it replaced. */
export interface ChangeRow {
  rv: number;
  key: string;
  op: number;
  object: Buffer;
  prev_rv: number | null;
  prev_object: Buffer | null;
}

type Statement<P extends unknown[] | object, R = unknown> = Database.Statement<P, R>;

/** Statements are the prepared statements a store runs on its connection. */
export interface Statements {
  current: Statement<[string], CurrentRow>;
  insert: Statement<unknown[]>;
  supersede: Statement<[number, number]>;
  tombstone: Statement<[number, number]>;
  changesAfter: Statement<[number, number], ChangeRow>;
  expired: Statement<[number, number], { rv: number; key: string }>;
  maxRv: Statement<[], { rv: number | null }>;
  maxOccurrenceId: Statement<[], { id: number | null }>;
  getMeta: Statement<[string], { value: number }>;
  setMeta: Statement<[string, number]>;
  checkpoint: Statement<[number, number]>;
  horizon: Statement<[number], { at: number; rv: number }>;
  dropCheckpoints: Statement<[number]>;
  supersededUpTo: Statement<[number, number], { rv: number }>;
  keepPast: Statement<{ rv: number }>;
  dropVersion: Statement<[number], { text_rv: number | null }>;
  purgeTombstones: Statement<[number, number], { text_rv: number | null }>;
  /** mergeSearchIndex merges a bounded part of the search index's segments (FTS5's `merge` of 64 pages), those mostly deleted first. */
  mergeSearchIndex: { run(): unknown };
}

/** prepareStatements prepares the statements a store runs on its connection (the writer's, or a follower's one). */
export function prepareStatements(db: Database.Database): Statements {
  return {
    current: db.prepare<[string], CurrentRow>(`SELECT rv, object, expires_at, text_rv FROM versions INDEXED BY cur_key WHERE key = ? AND ${CURRENT}`),
    insert: db.prepare(
      `INSERT INTO versions (rv, key, op, object, prev_rv, expires_at, involved_kind, involved_hash, reason, type, first_s, span_s, cluster, labels, text_rv)
       VALUES (@rv, @key, @op, @object, @prev_rv, @expires_at, @involved_kind, @involved_hash, @reason, @type, @first_s, @span_s, @cluster, @labels, @text_rv)`,
    ),
    supersede: db.prepare<[number, number]>('UPDATE versions SET superseded_rv = ? WHERE rv = ?'),
    tombstone: db.prepare<[number, number]>(
      `INSERT INTO versions (rv, key, op, object, prev_rv, involved_kind, involved_hash, reason, type, text_rv)
       SELECT ?, key, ${Op.DELETED}, object, rv, involved_kind, involved_hash, reason, type, text_rv FROM versions WHERE rv = ?`,
    ),
    changesAfter: db.prepare<[number, number], ChangeRow>(
      `SELECT v.rv, v.key, v.op, v.object, v.prev_rv, p.object AS prev_object
       FROM versions v LEFT JOIN versions p ON p.rv = v.prev_rv WHERE v.rv > ? ORDER BY v.rv LIMIT ?`,
    ),
    expired: db.prepare<[number, number], { rv: number; key: string }>(
      `SELECT rv, key FROM versions INDEXED BY cur_expiry WHERE ${CURRENT} AND expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at LIMIT ?`,
    ),
    maxRv: db.prepare<[], { rv: number | null }>('SELECT max(rv) AS rv FROM versions'),
    // Occurrence ids are revisions; those of files written before schema 3 were a sequence of their own, never ahead of the revisions.
    maxOccurrenceId: db.prepare<[], { id: number | null }>('SELECT max(id) AS id FROM occurrences'),
    getMeta: db.prepare<[string], { value: number }>('SELECT value FROM meta WHERE name = ?'),
    setMeta: db.prepare<[string, number]>('INSERT INTO meta(name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value'),
    checkpoint: db.prepare<[number, number]>('INSERT OR REPLACE INTO checkpoints(at, rv) VALUES (?, ?)'),
    horizon: db.prepare<[number], { at: number; rv: number }>('SELECT at, rv FROM checkpoints WHERE at <= ? ORDER BY at DESC LIMIT 1'),
    dropCheckpoints: db.prepare<[number]>('DELETE FROM checkpoints WHERE at < ?'),
    supersededUpTo: db.prepare<[number, number], { rv: number }>(
      'SELECT rv FROM versions INDEXED BY superseded WHERE superseded_rv IS NOT NULL AND superseded_rv <= ? LIMIT ?',
    ),
    // A superseded version an occurrence describes keeps its object in past_versions, and its link to the version
    // before it (0: none), so that its event's versions are still read as a chain.
    keepPast: db.prepare<{ rv: number }>(
      'INSERT OR IGNORE INTO past_versions (rv, object, prev_rv, text_rv) SELECT rv, object, coalesce(prev_rv, 0), text_rv FROM versions WHERE rv = @rv AND EXISTS (SELECT 1 FROM occurrences WHERE id = @rv AND body IS NULL)',
    ),
    // Both answer the texts the rows they delete referred to (`StoredTexts.drop`).
    dropVersion: db.prepare<[number], { text_rv: number | null }>('DELETE FROM versions WHERE rv = ? RETURNING text_rv'),
    purgeTombstones: db.prepare<[number, number], { text_rv: number | null }>(
      `DELETE FROM versions WHERE rv IN (SELECT rv FROM versions INDEXED BY tombstones WHERE op = ${Op.DELETED} AND rv <= ? LIMIT ?) RETURNING text_rv`,
    ),
    // Prepared when first run: a follower's connection, and a file before its index, have no search_fts to prepare it on.
    mergeSearchIndex: { run: () => db.prepare("INSERT INTO search_fts (search_fts, rank) VALUES ('merge', 64)").run() },
  };
}
