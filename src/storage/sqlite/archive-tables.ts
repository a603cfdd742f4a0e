import type Database from 'better-sqlite3';
import { ARCHIVE_API, occurrenceOf } from '../../api/index.js';
import type { CoreEvent, Occurrence } from '../../api/index.js';
import type { OccurrenceCursor, OccurrencePage, OccurrenceQuery, SourceCheckpoint } from '../archive-store.js';
import { matchesOccurrence } from '../shared/index.js';
import { CURRENT } from './schema.js';

/**
 * ARCHIVE_SCHEMA adds the archive's tables to a store file; they are created on
 * open, so files written before them gain them without a migration.
 *
 * `occurrences` is append-only, read in (observed_us, id) order: a keyset scan of
 * one of two indexes (all, or one regarding name: the object a timeline asks
 * for). A namespace is a condition on the rows of the time scan, and the other
 * selectable fields are checked on decoded rows: each index costs every append a
 * random page write, and ingest speed is what a mirror is measured by. The row
 * keeps the occurrence without what its columns already say (names, namespace).
 *
 * `write_marks` maps time to revision (one row per second of writing at most), so
 * retention can find the events last written before a time through the primary
 * key of `versions`, with no index of its own.
 */
export const ARCHIVE_SCHEMA = `
CREATE TABLE IF NOT EXISTS occurrences (
  id INTEGER PRIMARY KEY,
  observed_us INTEGER NOT NULL,
  namespace TEXT NOT NULL,
  event_name TEXT NOT NULL,
  regarding_name TEXT NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS occ_time ON occurrences(observed_us, id);
CREATE INDEX IF NOT EXISTS occ_regarding ON occurrences(regarding_name, observed_us, id);
CREATE TABLE IF NOT EXISTS source_checkpoints (source TEXT PRIMARY KEY, resource_version TEXT NOT NULL, updated_at INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS write_marks (at INTEGER PRIMARY KEY, rv INTEGER NOT NULL);
`;

/** MAX_OCCURRENCE_BATCH caps the rows one occurrence page reads per query when a filter drops rows. */
const MAX_OCCURRENCE_BATCH = 5_000;

interface OccurrenceRow {
  id: number;
  observed_us: number;
  namespace: string;
  event_name: string;
  body: string;
}

type Params = Record<string, string | number>;

/** ArchiveTables holds the statements of the archive tables; every method runs synchronously on the store's connection. */
export class ArchiveTables {
  private readonly insertOccurrence: Database.Statement<[number, string, string, string, string]>;
  private readonly pages = new Map<string, Database.Statement<Params, OccurrenceRow>>();
  private readonly stmt;

  constructor(private readonly db: Database.Database) {
    db.exec(ARCHIVE_SCHEMA);
    this.insertOccurrence = db.prepare('INSERT INTO occurrences (observed_us, namespace, event_name, regarding_name, body) VALUES (?, ?, ?, ?, ?)');
    this.stmt = {
      getCheckpoint: db.prepare<[string], { resource_version: string; updated_at: number }>(
        'SELECT resource_version, updated_at FROM source_checkpoints WHERE source = ?',
      ),
      setCheckpoint: db.prepare<[string, string, number]>(
        'INSERT INTO source_checkpoints (source, resource_version, updated_at) VALUES (?, ?, ?) ON CONFLICT(source) DO UPDATE SET resource_version = excluded.resource_version, updated_at = excluded.updated_at',
      ),
      mark: db.prepare<[number, number]>('INSERT OR REPLACE INTO write_marks (at, rv) VALUES (?, ?)'),
      markBefore: db.prepare<[number], { at: number; rv: number }>('SELECT at, rv FROM write_marks WHERE at <= ? ORDER BY at DESC LIMIT 1'),
      dropMarks: db.prepare<[number]>('DELETE FROM write_marks WHERE at < ?'),
      writtenUpTo: db.prepare<[number, number], { rv: number; key: string }>(
        `SELECT rv, key FROM versions WHERE rv <= ? AND ${CURRENT} ORDER BY rv LIMIT ?`,
      ),
      oldestEvents: db.prepare<[number], { rv: number; key: string }>(`SELECT rv, key FROM versions WHERE ${CURRENT} ORDER BY rv LIMIT ?`),
      dropOccurrencesBefore: db.prepare<[number, number]>(
        'DELETE FROM occurrences WHERE id IN (SELECT id FROM occurrences INDEXED BY occ_time WHERE observed_us < ? ORDER BY observed_us, id LIMIT ?)',
      ),
      dropOldestOccurrences: db.prepare<[number]>(
        'DELETE FROM occurrences WHERE id IN (SELECT id FROM occurrences INDEXED BY occ_time ORDER BY observed_us, id LIMIT ?)',
      ),
      countOccurrences: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM occurrences'),
      countEvents: db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM versions INDEXED BY cur_key WHERE ${CURRENT}`),
    };
  }

  /** append stores the occurrence of a change that produced `event` (stored at `rv`), seen at `observedTime` (`observedMicros`). */
  append(
    event: CoreEvent,
    rv: number,
    change: { countBefore: number; countAfter: number },
    observed: { time: string; micros: number },
    cluster: string | undefined,
  ): void {
    const o = occurrenceOf(event, change, { observedTime: observed.time, cluster }, 0);
    const ref = o.event;
    const body = o as unknown as Record<string, unknown>;
    delete body.kind;
    delete body.apiVersion;
    delete body.metadata;
    body.event = { uid: ref.uid, resourceVersion: String(rv) };
    this.insertOccurrence.run(observed.micros, ref.namespace, ref.name, o.regarding.name ?? '', JSON.stringify(body));
  }

  getCheckpoint(source: string): SourceCheckpoint | undefined {
    const row = this.stmt.getCheckpoint.get(source);
    if (row === undefined) return undefined;
    return { source, resourceVersion: row.resource_version, updatedAt: new Date(row.updated_at).toISOString().replace(/\.\d{3}Z$/, 'Z') };
  }

  setCheckpoint(c: SourceCheckpoint, now: number): void {
    this.stmt.setCheckpoint.run(c.source, c.resourceVersion, now);
  }

  /** mark records that every revision up to `rv` was written by `at`. */
  mark(at: number, rv: number): void {
    this.stmt.mark.run(at, rv);
  }

  /** writtenBefore lists up to `limit` live keys last written before `cutoff` (ms), oldest first, and prunes marks no cutoff will need. */
  writtenBefore(cutoff: number, limit: number): { rv: number; key: string }[] {
    const m = this.stmt.markBefore.get(cutoff);
    if (m === undefined) return [];
    this.stmt.dropMarks.run(m.at);
    return this.stmt.writtenUpTo.all(m.rv, limit);
  }

  oldestEvents(limit: number): { rv: number; key: string }[] {
    return this.stmt.oldestEvents.all(limit);
  }

  dropOccurrencesBefore(cutoffMicros: number, limit: number): number {
    return this.stmt.dropOccurrencesBefore.run(cutoffMicros, limit).changes;
  }

  dropOldestOccurrences(limit: number): number {
    return this.stmt.dropOldestOccurrences.run(limit).changes;
  }

  /** counts are the numbers of occurrences and live events (index scans: for the size cap only). */
  counts(): { occurrences: number; events: number } {
    return { occurrences: this.stmt.countOccurrences.get()?.n ?? 0, events: this.stmt.countEvents.get()?.n ?? 0 };
  }

  /** usedBytes is the space of the file's pages in use (free pages excluded). */
  usedBytes(): number {
    const pageSize = this.db.pragma('page_size', { simple: true }) as number;
    const pages = this.db.pragma('page_count', { simple: true }) as number;
    const free = this.db.pragma('freelist_count', { simple: true }) as number;
    return (pages - free) * pageSize;
  }

  /** list reads one page of occurrences with keyset scans, in growing batches while a filter drops rows. */
  list(q: OccurrenceQuery): OccurrencePage {
    const limit = q.limit !== undefined && q.limit > 0 ? q.limit : Infinity;
    const { sql, params } = this.build(q);
    let stmt = this.pages.get(sql);
    if (stmt === undefined) {
      stmt = this.db.prepare<Params, OccurrenceRow>(sql);
      this.pages.set(sql, stmt);
    }
    let pos: OccurrenceCursor = q.after ?? { observedMicros: q.sinceMicros ?? Number.MIN_SAFE_INTEGER, id: 0 };
    let batch = Math.min(limit + 1, MAX_OCCURRENCE_BATCH);
    const items: Occurrence[] = [];
    let last: OccurrenceCursor | undefined;
    for (;;) {
      const rows = stmt.all({ ...params, t: pos.observedMicros, id: pos.id, batch });
      for (const row of rows) {
        pos = { observedMicros: row.observed_us, id: row.id };
        const o = decodeOccurrence(row);
        if (!matchesOccurrence(o, pos, q)) continue;
        if (items.length >= limit) return { items, next: last! };
        items.push(o);
        last = pos;
      }
      if (rows.length < batch) return { items };
      batch = Math.min(batch * 2, MAX_OCCURRENCE_BATCH);
    }
  }

  private build(q: OccurrenceQuery): { sql: string; params: Params } {
    const params: Params = {};
    const conds = ['(observed_us, id) > (@t, @id)'];
    let index = 'occ_time';
    const regarding = q.fieldEquals?.['regarding.name'];
    if (regarding !== undefined) {
      index = 'occ_regarding';
      conds.unshift('regarding_name = @regarding');
      params.regarding = regarding;
    }
    if (q.namespace !== undefined) {
      conds.push('namespace = @namespace');
      params.namespace = q.namespace;
    }
    if (q.untilMicros !== undefined) {
      conds.push('observed_us < @until');
      params.until = q.untilMicros;
    }
    const sql = `SELECT id, observed_us, namespace, event_name, body FROM occurrences INDEXED BY ${index} WHERE ${conds.join(' AND ')} ORDER BY observed_us, id LIMIT @batch`;
    return { sql, params };
  }
}

function decodeOccurrence(row: OccurrenceRow): Occurrence {
  const body = JSON.parse(row.body) as Omit<Occurrence, 'metadata' | 'event'> & { event: { uid?: string; resourceVersion?: string } };
  const event: Occurrence['event'] = { name: row.event_name, namespace: row.namespace };
  if (body.event.uid !== undefined) event.uid = body.event.uid;
  if (body.event.resourceVersion !== undefined) event.resourceVersion = body.event.resourceVersion;
  return {
    kind: 'Occurrence',
    apiVersion: ARCHIVE_API,
    metadata: {
      name: `${row.event_name}.${row.id}`,
      namespace: row.namespace,
      creationTimestamp: (body.observedTime ?? '').replace(/\.\d+Z$/, 'Z'),
    },
    ...body,
    event,
  };
}
