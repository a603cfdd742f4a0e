/**
 * A long message stored once (schema 11; PostgreSQL's `texts.ts` is the same
 * design): the versions of an event that repeat its message refer to one row of
 * `texts`, keyed by the revision of the version that first wrote it, instead of
 * each holding a copy. A kubelet PATCHes a repeating event's count and time a
 * hundred times; each PATCH adds a version whose only new bytes are those, while
 * the message (up to kube-apiserver's 3 MiB body) stays the same.
 *
 * The stored object of such a version is its JSON with the message's JSON
 * string cut out and TEXT_MARK, the text's revision and TEXT_MARK in its place
 * (raw control characters, which JSON text never holds, so the mark is found by
 * a plain search and putting the text back is exact), then compressed as every
 * object is (`encodeObject`). The revision in the mark lets every read put the
 * text back from the object alone; the row's `text_rv` column says the same for
 * the collection of texts nobody refers to, through an index of the rows that
 * have one.
 *
 * A message is moved to `texts` at its first repeat, not when first written:
 * most long messages are never repeated, and a text row, its key and the
 * references cost more than the copy in one row. The first version's row is
 * rewritten to refer to the text in the same write, which updates that row
 * anyway (`superseded_rv`). Occurrences hold no message in SQLite (they are read
 * from the version they describe), so only versions refer to texts: `versions`,
 * their tombstones, and `past_versions` once compacted.
 */
import type Database from 'better-sqlite3';
import { LruCache } from '../../internal/index.js';
import { decodeObject, encodeObject } from '../shared/object-codec.js';
import { perConnection } from './per-connection.js';

/**
 * TEXT_MIN is the length (UTF-16 units of the message's JSON string) from which a repeated message is stored in
 * `texts`: below it a copy in each row costs less than the text's row, its key and the references (the mark, the
 * column and its index entry, some 20 bytes a version).
 */
export const TEXT_MIN = 256;

/** TEXT_MARK stands, around the text's revision, in a stored object for the message's JSON string. */
export const TEXT_MARK = '\x01';

/** TEXT_CACHE_CHARS bounds the texts a connection keeps decoded: a page of one event's versions reads its text once. */
const TEXT_CACHE_CHARS = 8 * 1024 * 1024;

const MESSAGE = '"message":';

/**
 * TEXTS_SCHEMA is the table of texts and the indexes of the references to them (the `text_rv` columns of
 * `versions` and `past_versions`), over the rows that have one: a version without a text adds no index entry.
 */
export const TEXTS_SCHEMA = `
CREATE TABLE IF NOT EXISTS texts (rv INTEGER PRIMARY KEY, json BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS versions_text ON versions(text_rv) WHERE text_rv IS NOT NULL;
CREATE INDEX IF NOT EXISTS past_versions_text ON past_versions(text_rv) WHERE text_rv IS NOT NULL;
`;

/** longText is the JSON string of a message long enough to be stored once when repeated; undefined for shorter ones. */
export function longText(message: string | null | undefined): string | undefined {
  if (typeof message !== 'string' || message.length + 2 < TEXT_MIN) return undefined;
  return JSON.stringify(message);
}

/** referTo is `json` with its message's JSON string `text` replaced by a reference to the text at `rv`; undefined when `json`'s message is not `text`. */
export function referTo(json: string, text: string, rv: number): string | undefined {
  const at = json.indexOf(MESSAGE + text);
  if (at < 0) return undefined;
  const start = at + MESSAGE.length;
  return json.slice(0, start) + TEXT_MARK + String(rv) + TEXT_MARK + json.slice(start + text.length);
}

/** referenceOf is the revision of the text a stored JSON refers to, with the mark's bounds; undefined when it holds its message. */
export function referenceOf(stored: string): { rv: number; start: number; end: number } | undefined {
  const start = stored.indexOf(TEXT_MARK);
  if (start < 0) return undefined;
  const end = stored.indexOf(TEXT_MARK, start + 1);
  const rv = Number(stored.slice(start + 1, end));
  if (end < 0 || !Number.isSafeInteger(rv)) throw new Error('stored object: a malformed text reference');
  return { rv, start, end: end + 1 };
}

/** StoredVersion is what a version's row stores: its object (`encodeObject`) and the text it refers to. */
export interface StoredVersion {
  object: Buffer;
  text_rv: number | null;
}

/** Predecessor is the version a write replaces: its revision, the text its row refers to, and its whole JSON. */
export interface Predecessor {
  rv: number;
  text_rv: number | null;
  json: string;
}

/** StoredTexts reads and writes the texts of one connection to a store's file. */
export class StoredTexts {
  private readonly cache = new LruCache<number, string>({ maxEntries: 256, maxWeight: TEXT_CACHE_CHARS, weigh: (t) => t.length });
  private stmt:
    | {
        read: Database.Statement<[number], { json: Buffer }>;
        add: Database.Statement<[number, Buffer]>;
        refer: Database.Statement<[Buffer, number, number]>;
        drop: Database.Statement<{ rv: number }>;
      }
    | undefined;

  constructor(private readonly db: Database.Database) {}

  /** statements are prepared when first used: a connection opened on a file before its migration has no `texts` yet. */
  private statements(): NonNullable<StoredTexts['stmt']> {
    this.stmt ??= {
      read: this.db.prepare<[number], { json: Buffer }>('SELECT json FROM texts WHERE rv = ?'),
      add: this.db.prepare<[number, Buffer]>('INSERT OR IGNORE INTO texts (rv, json) VALUES (?, ?)'),
      refer: this.db.prepare<[Buffer, number, number]>('UPDATE versions SET object = ?, text_rv = ? WHERE rv = ?'),
      drop: this.db.prepare<{ rv: number }>(
        'DELETE FROM texts WHERE rv = @rv AND NOT EXISTS (SELECT 1 FROM versions WHERE text_rv = @rv) AND NOT EXISTS (SELECT 1 FROM past_versions WHERE text_rv = @rv)',
      ),
    };
    return this.stmt;
  }

  /** json decodes a stored object (`decodeObject`) and puts back the message it refers to: every read gets the whole JSON. */
  json(blob: Uint8Array): string {
    const stored = decodeObject(blob);
    const ref = referenceOf(stored);
    if (ref === undefined) return stored;
    return stored.slice(0, ref.start) + this.text(ref.rv) + stored.slice(ref.end);
  }

  /** text is the message's JSON string stored at `rv`, read and decoded once while it stays among the recent ones. */
  text(rv: number): string {
    const cached = this.cache.get(rv);
    if (cached !== undefined) return cached;
    const row = this.statements().read.get(rv);
    if (row === undefined) throw new Error(`stored object: the text at ${rv} it refers to is missing`);
    const text = decodeObject(row.json);
    this.cache.set(rv, text);
    return text;
  }

  /**
   * version decides how a version whose JSON is `json` is stored, inside the write that adds it after `prev` (the
   * key's current version, undefined for a new key). `text` is the JSON string of its message when long
   * (`longText`), `encoded` its object when already encoded. A message `prev` holds too is stored once: in the text
   * `prev` refers to, or in a new one at `prev`'s revision, `prev`'s row rewritten to refer to it.
   */
  version(json: string, text: string | undefined, prev: Predecessor | undefined, encoded?: Buffer): StoredVersion {
    const whole = (): StoredVersion => ({ object: encoded ?? encodeObject(json), text_rv: null });
    if (text === undefined || prev === undefined) return whole();
    if (prev.text_rv !== null) {
      if (this.text(prev.text_rv) !== text) return whole();
      const stored = referTo(json, text, prev.text_rv);
      return stored === undefined ? whole() : { object: encodeObject(stored), text_rv: prev.text_rv };
    }
    const prevStored = referTo(prev.json, text, prev.rv);
    const stored = prevStored === undefined ? undefined : referTo(json, text, prev.rv);
    if (prevStored === undefined || stored === undefined) return whole();
    const s = this.statements();
    s.add.run(prev.rv, encodeObject(text));
    s.refer.run(encodeObject(prevStored), prev.rv, prev.rv);
    this.cache.set(prev.rv, text);
    return { object: encodeObject(stored), text_rv: prev.rv };
  }

  /** drop deletes each text of `rvs` (the references of rows just deleted) that no version and no past version refers to any more. */
  drop(rvs: Iterable<number | null>): void {
    const seen = new Set<number>();
    for (const rv of rvs) {
      if (rv === null || seen.has(rv)) continue;
      seen.add(rv);
      if (this.statements().drop.run({ rv }).changes > 0) this.cache.delete(rv);
    }
  }
}

/** storedTexts is the texts of a connection, one StoredTexts (and its cache of decoded texts) per connection. */
export const storedTexts = perConnection((db) => new StoredTexts(db));
