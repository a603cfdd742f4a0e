import type Database from 'better-sqlite3';
import { mapSliced } from '../../internal/index.js';
import type { Logger } from '../../internal/index.js';
import { ARCHIVE_API, eventLastSeen, formatMicroTime, occurrenceOf } from '../../api/index.js';
import type { CoreEvent, Occurrence } from '../../api/index.js';
import { occurrenceTimeMs } from '../archive-store.js';
import type { ClusterBinding, ClusterIdentity, EventOccurrencesQuery, EventRef, ObservedRange, OccurrencePage, OccurrenceQuery, ReasonCount, ReasonCountQuery, RetentionRule, SourceCheckpoint } from '../archive-store.js';
import { decodeEvent, eventKey, readEventOccurrences, readOccurrencePage, regardsNamedObject } from '../shared/index.js';
import type { EventOccurrenceRow } from '../shared/index.js';
import { CHAIN_CAP, EVENT_CHAINS, LOWEST_IS_BODY, OCCURRENCES_BY_ID, completeChains, firstOfEvents, firstOfEventsParam } from './event-occurrences.js';
import { anyOfSql } from './list-query.js';
import type { Params } from './list-query.js';
import { CURRENT, OCCURRENCES_TABLE, addMigrationFunctions, nameHash } from './schema.js';
import { idOf, internAll, internedValues } from './interned.js';
import type { InternedValues } from './interned.js';
import { storedTexts } from './texts.js';
import type { StoredTexts } from './texts.js';

/**
 * OCCURRENCE_INDEXES read occurrences in (observed_us, id) order. The id is the table's rowid, which SQLite ends
 * every index entry with: an index that names it as a column holds it twice (4 bytes more per entry, 11 B per
 * occurrence over the three), and reads the same order and ranges without it. Files written before hold the
 * longer forms, which `staleOccurrenceIndexes` finds and opening rebuilds.
 */
const OCCURRENCE_INDEXES = `CREATE INDEX IF NOT EXISTS occ_time ON occurrences(observed_us);
CREATE INDEX IF NOT EXISTS occ_regarding ON occurrences(regarding_hash, observed_us);
CREATE INDEX IF NOT EXISTS occ_regarding_ns ON occurrences(regarding_hash, namespace, observed_us);`;

/**
 * ARCHIVE_SCHEMA adds the archive's tables to a store file; they are created on
 * open, so files written before them gain them without a migration.
 *
 * `occurrences` is append-only, read in (observed_us, id) order: a keyset scan of
 * one of two indexes (all, or one regarding name, as its `nameHash`: the object
 * a timeline asks for). A namespace is a condition on the rows of the time scan, and the other
 * selectable fields are checked on decoded rows: each index costs every append a
 * random page write, and ingest speed is what a mirror is measured by.
 *
 * An occurrence's id is the revision of the event version written with it, and
 * the row holds only what that version does not say: when it was observed
 * (`observed_time` only when `observed_us` does not format back to it), the
 * counts around the change, the cluster. The rest (event, regarding, reason,
 * message, last-seen time) is read from the version: in `versions` while it is
 * live or in the history window, then in `past_versions`, where compaction moves
 * the object of every version an occurrence describes. Rows of files written
 * before schema 3 keep the whole occurrence in `body` (JSON) instead.
 *
 * Counts by reason over a window read the rows of the time index and sum columns,
 * decoding nothing: `type`, `reason`, the counts and `seen_ms` (when the change
 * happened: `occurrenceTimeMs`). The index orders by observed time, which
 * follows the time a change happened by a lag (a mirror's delay, a relist after
 * an outage, a sender's clock): `occurrence_lag` keeps, per hour of happening,
 * the least and greatest lag appended, so a window of happening maps exactly to
 * a range of observed time. It gains a row per hour, and is written only when an
 * append widens its hour's bounds.
 *
 * `clusters` binds each mirrored cluster's name to its `kube-system` UID
 * (`bindCluster`); `occurrences.cluster_uid`, added to files written before it,
 * is null in their rows.
 *
 * `write_marks` maps time to revision (one row per second of writing at most), so
 * retention can find the events last written before a time through the primary
 * key of `versions`, with no index of its own.
 */
export const ARCHIVE_SCHEMA = `
${OCCURRENCES_TABLE}
${OCCURRENCE_INDEXES}
CREATE TABLE IF NOT EXISTS source_checkpoints (source TEXT PRIMARY KEY, resource_version TEXT NOT NULL, updated_at INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS write_marks (at INTEGER PRIMARY KEY, rv INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS occurrence_lag (hour INTEGER PRIMARY KEY, min_us INTEGER NOT NULL, max_us INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS clusters (name TEXT PRIMARY KEY, uid TEXT NOT NULL, bound_at INTEGER NOT NULL) WITHOUT ROWID;
`;

/** HOUR_MS is the span of happening time one `occurrence_lag` row bounds. */
const HOUR_MS = 3_600_000;

/** MAX_OCCURRENCE_BATCH caps the rows one occurrence page reads per query when a filter drops rows. */
const MAX_OCCURRENCE_BATCH = 5_000;

/** OccurrenceRow is an occurrence's row, with the encoded version it describes. */
export interface OccurrenceRow {
  id: number;
  observed_us: number;
  count_before: number;
  count_after: number;
  cluster: string | null;
  cluster_uid: string | null;
  observed_time: string | null;
  body: string | null;
  /** object is the encoded version the occurrence describes (null for a row with a body). */
  object: Buffer | null;
}


/** ArchiveTables holds the statements of the archive tables; every method runs synchronously on the store's connection. */
export class ArchiveTables {
  private readonly insertOccurrence: Database.Statement<
    [number, number, number, number, number, number, number, number, number | null, string | null, string | null, string | null]
  >;
  /** lags mirrors `occurrence_lag`: per hour of happening, the least and greatest observed-minus-happened lag (µs). */
  private lags = new Map<number, { min: number; max: number }>();
  private readonly pages = new Map<string, Database.Statement<Params, OccurrenceRow>>();
  private lastObserved: { time: string; canonical: boolean } | undefined;
  /** bodies is false once no occurrence stored whole is left (`bodiesLeft`). */
  private bodies = true;
  private readonly stmt;
  /** interned is the writer's copy of `interned`, which appends extend; readIds the reader's, which reads map their values with. */
  private readonly interned: InternedValues;
  private readonly readIds: InternedValues;

  /**
   * The reads (occurrence pages, counts) prepare on `reader` where there is one, the store's list connection: an
   * incidents read scans a window's occurrences, and on the writer's connection those pages, read once, would fill
   * its page cache (`cacheSizeMiB`, kept for writes), as lists would (LIST_CACHE_MIB).
   */
  constructor(
    private readonly db: Database.Database,
    logger?: Pick<Logger, 'info'>,
    private readonly reader: Database.Database = db,
  ) {
    this.interned = internedValues(db);
    this.readIds = internedValues(reader);
    migrateOccurrences(db);
    const building = logger !== undefined ? occurrencesToIndex(db) : 0;
    const stale = staleOccurrenceIndexes(db);
    const rebuilding = stale.length > 0 && logger !== undefined ? occurrencesToIndex(db, true) : 0;
    const started = performance.now();
    if (building > 0) logger?.info('indexing the occurrences by object and namespace', { occurrences: building });
    if (rebuilding > 0) logger?.info('rebuilding the occurrence indexes without their id twice', { occurrences: rebuilding, indexes: stale.length });
    // One transaction: a process killed while the indexes are built again leaves the file with its old ones.
    db.transaction(() => {
      for (const name of stale) db.exec(`DROP INDEX ${name}`);
      db.exec(ARCHIVE_SCHEMA);
    })();
    if (building > 0) logger?.info('the occurrences are indexed by object and namespace', { occurrences: building, seconds: Math.round(performance.now() - started) / 1000 });
    if (rebuilding > 0) logger?.info('the occurrence indexes are rebuilt', { occurrences: rebuilding, seconds: Math.round(performance.now() - started) / 1000 });
    if (!db.prepare<[], { name: string }>('PRAGMA table_info(occurrences)').all().some((c) => c.name === 'cluster_uid')) {
      db.exec('ALTER TABLE occurrences ADD COLUMN cluster_uid TEXT');
    }
    this.insertOccurrence = db.prepare(
      'INSERT INTO occurrences (id, observed_us, namespace, regarding_hash, type, reason, count_before, count_after, seen_ms, cluster, cluster_uid, observed_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.stmt = {
      clusterUID: db.prepare<[string], { uid: string }>('SELECT uid FROM clusters WHERE name = ?'),
      bindCluster: db.prepare<[string, string, number]>('INSERT INTO clusters (name, uid, bound_at) VALUES (?, ?, ?) ON CONFLICT(name) DO NOTHING'),
      clusterNames: db.prepare<[string], { name: string }>('SELECT name FROM clusters WHERE uid = ? ORDER BY name'),
      getCheckpoint: db.prepare<[string], { resource_version: string; updated_at: number }>(
        'SELECT resource_version, updated_at FROM source_checkpoints WHERE source = ?',
      ),
      setCheckpoint: db.prepare<[string, string, number]>(
        'INSERT INTO source_checkpoints (source, resource_version, updated_at) VALUES (?, ?, ?) ON CONFLICT(source) DO UPDATE SET resource_version = excluded.resource_version, updated_at = excluded.updated_at',
      ),
      mark: db.prepare<[number, number]>('INSERT OR REPLACE INTO write_marks (at, rv) VALUES (?, ?)'),
      markBefore: db.prepare<[number], { at: number; rv: number }>('SELECT at, rv FROM write_marks WHERE at <= ? ORDER BY at DESC LIMIT 1'),
      dropMarks: db.prepare<[number]>('DELETE FROM write_marks WHERE at < ?'),
      writtenUpTo: db.prepare<[number, string, number], { rv: number; key: string }>(
        `SELECT rv, key FROM versions WHERE rv <= ? AND ${CURRENT} AND (cluster IS NULL OR cluster NOT IN (SELECT value FROM json_each(?))) ORDER BY rv LIMIT ?`,
      ),
      clusterWrittenUpTo: db.prepare<[number, string, number], { rv: number; key: string }>(
        `SELECT rv, key FROM versions WHERE rv <= ? AND ${CURRENT} AND cluster = ? ORDER BY rv LIMIT ?`,
      ),
      oldestEvents: db.prepare<[number], { rv: number; key: string }>(`SELECT rv, key FROM versions WHERE ${CURRENT} ORDER BY rv LIMIT ?`),
      occurrencesBefore: db.prepare<[number, string, number], { id: number }>(
        'SELECT id FROM occurrences INDEXED BY occ_time WHERE observed_us < ? AND (cluster IS NULL OR cluster NOT IN (SELECT value FROM json_each(?))) ORDER BY observed_us, id LIMIT ?',
      ),
      clusterOccurrencesBefore: db.prepare<[number, string, number], { id: number }>(
        'SELECT id FROM occurrences INDEXED BY occ_time WHERE observed_us < ? AND cluster = ? ORDER BY observed_us, id LIMIT ?',
      ),
      oldestOccurrences: db.prepare<[number], { id: number }>('SELECT id FROM occurrences ORDER BY id LIMIT ?'),
      dropOccurrence: db.prepare<[number]>('DELETE FROM occurrences WHERE id = ?'),
      dropPastVersion: db.prepare<[number], { text_rv: number | null }>('DELETE FROM past_versions WHERE rv = ? RETURNING text_rv'),
      lags: db.prepare<[], { hour: number; min_us: number; max_us: number }>('SELECT hour, min_us, max_us FROM occurrence_lag'),
      widenLag: db.prepare<[number, number, number]>(
        'INSERT INTO occurrence_lag (hour, min_us, max_us) VALUES (?, ?, ?) ON CONFLICT(hour) DO UPDATE SET min_us = min(min_us, excluded.min_us), max_us = max(max_us, excluded.max_us)',
      ),
      lagOver: db.prepare<[number, number], { lo: number | null; hi: number | null }>(
        'SELECT min(min_us) AS lo, max(max_us) AS hi FROM occurrence_lag WHERE hour BETWEEN ? AND ?',
      ),
    };
    this.loadLags();
  }

  /** loadLags reads `occurrence_lag` into memory: on open, and after a rolled back transaction may have left the copy ahead of the file. */
  loadLags(): void {
    try {
      this.lags = new Map(this.stmt.lags.all().map((r) => [r.hour, { min: r.min_us, max: r.max_us }]));
    } catch {
      // An empty copy only costs writes: every append then widens its hour in the file.
      this.lags = new Map();
    }
  }

  /** append stores the occurrence of a change that produced `event` (stored at `rv`), seen at `observedTime` (`observedMicros`). */
  append(
    event: CoreEvent,
    rv: number,
    change: { countBefore: number; countAfter: number },
    observed: { time: string; micros: number },
    stamp: { cluster?: string | undefined; clusterUID?: string | undefined },
  ): void {
    const seen = occurrenceTimeMs({ lastSeen: eventLastSeen(event), observedTime: observed.time });
    this.insertOccurrence.run(
      rv,
      observed.micros,
      this.interned.id(event.metadata.namespace ?? ''),
      nameHash(event.involvedObject?.name ?? ''),
      this.interned.id(event.type ?? ''),
      this.interned.id(event.reason ?? ''),
      change.countBefore,
      change.countAfter,
      seen ?? null,
      stamp.cluster !== undefined && stamp.cluster !== '' ? stamp.cluster : null,
      stamp.clusterUID !== undefined && stamp.clusterUID !== '' ? stamp.clusterUID : null,
      this.observedText(observed),
    );
    if (seen !== undefined) this.noteLag(seen, observed.micros - seen * 1000);
  }

  /** observedText is what `observed_time` keeps of an observed time: nothing when `observed_us` formats back to it. Batches share one time, checked once. */
  private observedText(observed: { time: string; micros: number }): string | null {
    if (this.lastObserved?.time !== observed.time) {
      this.lastObserved = { time: observed.time, canonical: formatMicroTime({ epochMicros: BigInt(observed.micros) }) === observed.time };
    }
    return this.lastObserved.canonical ? null : observed.time;
  }

  /** noteLag widens the lag bounds of the hour `seenMs` falls in; most appends fall within them and write nothing. */
  private noteLag(seenMs: number, lag: number): void {
    const hour = Math.floor(seenMs / HOUR_MS);
    const b = this.lags.get(hour);
    if (b !== undefined && lag >= b.min && lag <= b.max) return;
    const next = b === undefined ? { min: lag, max: lag } : { min: Math.min(b.min, lag), max: Math.max(b.max, lag) };
    this.lags.set(hour, next);
    this.stmt.widenLag.run(hour, next.min, next.max);
  }

  /** observedRange is the range of observed time the lag bounds of the window's hours allow; null when nothing happened in those hours. */
  observedRange(sinceMs: number, untilMs: number): ObservedRange | null {
    if (!(untilMs > sinceMs)) return null;
    const lag = this.stmt.lagOver.get(Math.floor(sinceMs / HOUR_MS), Math.floor((untilMs - 1) / HOUR_MS));
    if (lag?.lo === null || lag?.lo === undefined || lag.hi === null) return null;
    return { sinceMicros: sinceMs * 1000 + lag.lo, untilMicros: untilMs * 1000 + lag.hi };
  }

  /** countByReason sums the repeats of the occurrences that happened in the window, over the observed-time range the lag bounds allow. */
  countByReason(q: ReasonCountQuery): ReasonCount[] {
    const range = this.observedRange(q.sinceMs, q.untilMs);
    if (range === null) return [];
    const params: Params = { lo: range.sinceMicros, hi: range.untilMicros, since: q.sinceMs, until: q.untilMs };
    if (q.namespace !== undefined) params.namespace = this.readIds.find(q.namespace);
    // Grouped by ids, answered with their values in the order of the values, as when the rows held them.
    const sql = `SELECT (SELECT value FROM interned WHERE id = o.type) AS type, (SELECT value FROM interned WHERE id = o.reason) AS reason,
        sum(max(0, count_after - count_before)) AS count, min(seen_ms) AS firstMs FROM occurrences o INDEXED BY occ_time
      WHERE observed_us >= @lo AND observed_us < @hi AND seen_ms >= @since AND seen_ms < @until${q.namespace !== undefined ? ' AND namespace = @namespace' : ''}
      GROUP BY o.type, o.reason ORDER BY 1, 2`;
    return this.statement<ReasonCount>(sql).all(params);
  }

  private statement<R>(sql: string): Database.Statement<Params, R> {
    let stmt = this.pages.get(sql);
    if (stmt === undefined) {
      stmt = this.reader.prepare<Params, OccurrenceRow>(sql);
      this.pages.set(sql, stmt);
    }
    return stmt as unknown as Database.Statement<Params, R>;
  }

  /** bindCluster binds a free name to the UID (see `ArchiveStore.bindCluster`); the caller runs it in a write transaction. */
  bindCluster(identity: ClusterIdentity, now: number): ClusterBinding {
    const boundUID = this.stmt.clusterUID.get(identity.name)?.uid;
    if (boundUID === undefined) this.stmt.bindCluster.run(identity.name, identity.uid, now);
    const otherNames = this.stmt.clusterNames.all(identity.uid).map((r) => r.name).filter((n) => n !== identity.name);
    return { ...(boundUID !== undefined ? { boundUID } : {}), otherNames };
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

  /** writtenBefore lists up to `limit` live keys of a rule's rows last written before its cutoff (ms), oldest first. */
  writtenBefore(rule: RetentionRule, limit: number): { rv: number; key: string }[] {
    const m = this.stmt.markBefore.get(rule.cutoffMs);
    if (m === undefined) return [];
    return 'cluster' in rule ? this.stmt.clusterWrittenUpTo.all(m.rv, rule.cluster, limit) : this.stmt.writtenUpTo.all(m.rv, JSON.stringify(rule.except), limit);
  }

  /** pruneMarks drops the marks no cutoff from `oldestCutoff` (ms) on will need. */
  pruneMarks(oldestCutoff: number): void {
    const m = this.stmt.markBefore.get(oldestCutoff);
    if (m !== undefined) this.stmt.dropMarks.run(m.at);
  }

  oldestEvents(limit: number): { rv: number; key: string }[] {
    return this.stmt.oldestEvents.all(limit);
  }

  /** dropOccurrencesBefore drops up to `limit` of a rule's occurrences observed before its cutoff, oldest first. */
  dropOccurrencesBefore(rule: RetentionRule, limit: number): number {
    const before = rule.cutoffMs * 1000;
    return this.dropOccurrences(
      'cluster' in rule ? this.stmt.clusterOccurrencesBefore.all(before, rule.cluster, limit) : this.stmt.occurrencesBefore.all(before, JSON.stringify(rule.except), limit),
    );
  }

  /** oldestOccurrences lists up to `limit` occurrences with the lowest ids: the revisions of the versions they describe, oldest first. */
  oldestOccurrences(limit: number): { id: number }[] {
    return this.stmt.oldestOccurrences.all(limit);
  }

  /** dropOccurrences deletes occurrences, and the past versions only they kept, and the texts only those referred to. */
  dropOccurrences(rows: { id: number }[]): number {
    const texts: (number | null)[] = [];
    for (const { id } of rows) {
      this.stmt.dropOccurrence.run(id);
      const past = this.stmt.dropPastVersion.get(id);
      if (past !== undefined) texts.push(past.text_rv);
    }
    storedTexts(this.db).drop(texts);
    return rows.length;
  }

  /** usedBytes is the space of the file's pages in use (free pages excluded). */
  usedBytes(): number {
    const pageSize = this.db.pragma('page_size', { simple: true }) as number;
    const pages = this.db.pragma('page_count', { simple: true }) as number;
    const free = this.db.pragma('freelist_count', { simple: true }) as number;
    return (pages - free) * pageSize;
  }

  /** list reads one page of occurrences with keyset scans, in growing batches while a filter drops rows (`readOccurrencePage`). */
  list(q: OccurrenceQuery): Promise<OccurrencePage> {
    const { sql, params } = this.build(q);
    const stmt = this.statement<OccurrenceRow>(sql);
    // The versions the caller read (incidents' failures: most of their occurrences) are rebuilt from its events.
    const read = new Map<string, CoreEvent>();
    for (const e of q.events ?? []) if (e.read?.metadata.resourceVersion !== undefined) read.set(e.read.metadata.resourceVersion, e.read);
    // Decoded a time slice at a time: a page of a long event's versions is seconds of decoding.
    return readOccurrencePage(q, MAX_OCCURRENCE_BATCH, (pos, batch) =>
      mapSliced(stmt.all({ ...params, t: pos.observedMicros, id: pos.id, batch }), (row) => ({
        occurrence: decodeOccurrence(row, storedTexts(this.db), read.size > 0 ? readCopy(read.get(String(row.id)), row.id) : undefined),
        at: { observedMicros: row.observed_us, id: row.id },
      })),
    );
  }

  /** bodiesLeft tells whether occurrences stored whole may be left (`LOWEST_IS_BODY`); once none is, none comes back. */
  private bodiesLeft(): boolean {
    if (this.bodies) this.bodies = this.statement<{ body: number }>(LOWEST_IS_BODY).get({}) !== undefined;
    return this.bodies;
  }

  /**
   * listEventOccurrences reads the first occurrences of a page's events: by the chain of each event's versions
   * (`EVENT_CHAINS`, a primary-key read of its own occurrences) where it is complete, else in one seek of their
   * objects (`firstOfEvents`); the rare event neither exhausted is completed with `list`.
   */
  listEventOccurrences(q: EventOccurrencesQuery): Promise<Occurrence[][]> {
    return readEventOccurrences(q, MAX_OCCURRENCE_BATCH, {
      batchable: regardsNamedObject,
      readFirst: async (events, batch) => {
        const read = new Map(events.map(({ index, event }) => [index, event.read]));
        const toRow = (row: OccurrenceRow & { i: number }): EventOccurrenceRow => ({
          index: row.i,
          occurrence: decodeOccurrence(row, storedTexts(this.db), readCopy(read.get(row.i), row.id)),
          at: { observedMicros: row.observed_us, id: row.id },
        });
        const bodies = this.bodiesLeft();
        const chains = bodies ? new Map<number, number[]>() : this.eventChains(events);
        const rows: (OccurrenceRow & { i: number })[] = [];
        if (chains.size > 0) {
          const ids = [...chains].flatMap(([i, rvs]) => rvs.map((rv) => [i, rv]));
          const byEvent = new Map<number, (OccurrenceRow & { i: number })[]>();
          for (const row of this.statement<OccurrenceRow & { i: number }>(OCCURRENCES_BY_ID).all({ ids: JSON.stringify(ids) })) {
            const list = byEvent.get(row.i);
            if (list === undefined) byEvent.set(row.i, [row]);
            else list.push(row);
          }
          // Each event's first `batch` in (observed time, id) order, as the seek would have read them.
          for (const list of byEvent.values()) {
            list.sort((a, b) => a.observed_us - b.observed_us || a.id - b.id);
            for (const row of list.slice(0, batch)) rows.push(row);
          }
        }
        const sought = events.filter(({ index }) => !chains.has(index));
        if (sought.length > 0) {
          const param = firstOfEventsParam(sought, (namespace) => this.readIds.find(namespace));
          for (const row of this.statement<OccurrenceRow & { i: number }>(firstOfEvents(bodies)).all({ events: param, batch })) rows.push(row);
        }
        // Decoded a time slice at a time, as a page is.
        return mapSliced(rows, toRow);
      },
      list: (query) => this.list(query),
    });
  }

  /**
   * eventChains walks the versions of the events a caller read (with their uid and revision) back to their key's first
   * version (`EVENT_CHAINS`), and returns the revisions of each event whose walk is complete (`completeChains`).
   */
  private eventChains(events: readonly { index: number; event: EventRef }[]): Map<number, number[]> {
    const through = new Map<number, number>();
    const walk: [number, string][] = [];
    for (const { index, event } of events) {
      const rv = Number(event.read?.metadata.resourceVersion);
      if (event.uid === undefined || event.uid === '' || !Number.isSafeInteger(rv)) continue;
      through.set(index, rv);
      walk.push([index, eventKey(event.namespace, event.name)]);
    }
    if (walk.length === 0) return new Map();
    const rows = this.statement<{ i: number; rv: number; prev: number }>(EVENT_CHAINS).all({ events: JSON.stringify(walk), cap: CHAIN_CAP });
    return completeChains(rows, through);
  }

  private build(q: OccurrenceQuery): { sql: string; params: Params } {
    const params: Params = {};
    const conds = ['(observed_us, id) > (@t, @id)'];
    let index = 'occ_time';
    const regarding = q.fieldEquals?.['regarding.name'];
    if (regarding !== undefined) {
      // The hash narrows the rows; each decoded row is checked for the name itself. Names repeat across
      // namespaces (web-1, db-0), so a namespaced read seeks (hash, namespace) rather than testing the
      // namespace of every row of the hash in the table: 100 search hits' occurrences in 1 ms, not 110.
      index = q.namespace !== undefined ? 'occ_regarding_ns' : 'occ_regarding';
      conds.unshift('regarding_hash = @regarding');
      params.regarding = nameHash(regarding);
    }
    if (q.namespace !== undefined) {
      conds.push('namespace = @namespace');
      params.namespace = this.readIds.find(q.namespace);
    }
    const eventName = q.fieldEquals?.['event.name'];
    const eventNamespace = q.fieldEquals?.['metadata.namespace'] ?? q.namespace;
    if (eventName !== undefined && eventNamespace !== undefined) {
      // One event's occurrences (a search hit's): the rows of other events about the same object are left out
      // by their version's key, before their objects are read and decoded. A row whose version is past (compacted)
      // or that is stored whole has no key here, and is checked decoded as before.
      conds.push('(v.rv IS NULL OR v.key = @eventKey)');
      params.eventKey = eventKey(eventNamespace, eventName);
    }
    if (q.untilMicros !== undefined) {
      conds.push('observed_us < @until');
      params.until = q.untilMicros;
    }
    // The type and reason are the row's own, so the occurrences an AnyOf leaves out are never joined to their versions nor decoded.
    if (q.anyOf !== undefined) conds.push(anyOfSql(q.anyOf, { type: 'o.type', reason: 'o.reason' }, params, 'any', this.readIds));
    const sql = `SELECT o.id, o.observed_us, o.count_before, o.count_after, o.cluster, o.cluster_uid, o.observed_time, o.body, coalesce(v.object, p.object) AS object
      FROM occurrences o INDEXED BY ${index}
      LEFT JOIN versions v ON o.body IS NULL AND v.rv = o.id
      LEFT JOIN past_versions p ON o.body IS NULL AND v.rv IS NULL AND p.rv = o.id
      WHERE ${conds.join(' AND ')} ORDER BY o.observed_us, o.id LIMIT @batch`;
    return { sql, params };
  }
}

/** staleOccurrenceIndexes names the occurrence indexes a file holds in a form that lists the id (see OCCURRENCE_INDEXES). */
export function staleOccurrenceIndexes(db: Database.Database): string[] {
  const rows = db.prepare<[], { name: string; sql: string | null }>("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'occurrences'").all();
  return rows.filter((r) => ['occ_time', 'occ_regarding', 'occ_regarding_ns'].includes(r.name) && r.sql !== null && /,\s*id\s*\)\s*$/.test(r.sql)).map((r) => r.name);
}

/**
 * occurrencesToIndex counts the occurrences of a file written before `occ_regarding_ns`, which opening it builds (0 when
 * there is none to build), or with `all`, of any file that has the table.
 */
function occurrencesToIndex(db: Database.Database, all = false): number {
  const has = (type: string, name: string): boolean => db.prepare('SELECT 1 FROM sqlite_master WHERE type = ? AND name = ?').get(type, name) !== undefined;
  if (!has('table', 'occurrences') || (!all && has('index', 'occ_regarding_ns'))) return 0;
  return (db.prepare('SELECT count(*) AS n FROM occurrences').get() as { n: number }).n;
}

/**
 * readCopy is the event a caller read, when it read the version `id` (the occurrence of that version is rebuilt from
 * it, not decoded a second time). The occurrence takes the objects it holds from the event (regarding, related), so it
 * gets copies: an answer that holds both shares nothing (a YAML encoder would write a shared object as an alias).
 */
function readCopy(event: CoreEvent | undefined, id: number): CoreEvent | undefined {
  if (event?.metadata.resourceVersion !== String(id)) return undefined;
  const copy: CoreEvent = { ...event, involvedObject: { ...event.involvedObject } };
  if (event.related !== undefined && event.related !== null) copy.related = { ...event.related };
  return copy;
}

/** decodeOccurrence rebuilds an occurrence from its row and the version it describes (or, for rows of earlier layouts, its body). */
export function decodeOccurrence(row: OccurrenceRow, texts: StoredTexts, decoded?: CoreEvent): Occurrence {
  if (row.body !== null) return decodeBody(row.id, row.body);
  if (row.object === null) throw new Error(`occurrence ${row.id}: the event version it describes is missing`);
  // A caller that needs the event as well passes it decoded, so the stored object is decoded once.
  const event = decoded ?? decodeEvent(texts.json(row.object), row.id);
  const observedTime = row.observed_time ?? formatMicroTime({ epochMicros: BigInt(row.observed_us) })!;
  const change = { countBefore: row.count_before, countAfter: row.count_after };
  return occurrenceOf(event, change, { observedTime, cluster: row.cluster ?? undefined, clusterUID: row.cluster_uid ?? undefined }, row.id);
}

/** decodeBody reads an occurrence stored whole (files written before schema 3: the event's name and namespace were added to `event` by the migration). */
function decodeBody(id: number, text: string): Occurrence {
  const body = JSON.parse(text) as Omit<Occurrence, 'metadata'>;
  const event = body.event;
  return {
    kind: 'Occurrence',
    apiVersion: ARCHIVE_API,
    metadata: { name: `${event.name}.${id}`, namespace: event.namespace, creationTimestamp: (body.observedTime ?? '').replace(/\.\d+Z$/, 'Z') },
    ...body,
    event,
  };
}

/**
 * migrateOccurrences moves the rows of an `occurrences` table written before
 * schema 3 (a JSON body per row, with or without the count columns) into the
 * new table, once, in one transaction: each keeps its body, with the event's
 * name and namespace written into it, and its id; the count columns and the lag
 * bounds are filled from the bodies with the same rules as an append.
 */
function migrateOccurrences(db: Database.Database): void {
  const columns = db.prepare<[], { name: string }>('PRAGMA table_info(occurrences)').all();
  if (!columns.some((c) => c.name === 'event_name')) return;
  db.function('kevents_occurrence_ms', { deterministic: true }, (lastSeen: unknown, observed: unknown) => {
    const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
    return occurrenceTimeMs({ lastSeen: str(lastSeen) ?? '', observedTime: str(observed) ?? '' }) ?? null;
  });
  db.function('kevents_hour', { deterministic: true }, (ms: unknown) => Math.floor(Number(ms) / HOUR_MS));
  addMigrationFunctions(db);
  db.transaction(() => {
    db.exec('DROP INDEX IF EXISTS occ_time; DROP INDEX IF EXISTS occ_regarding; ALTER TABLE occurrences RENAME TO occurrences_v2;');
    db.exec(ARCHIVE_SCHEMA);
    const type = "coalesce(json_extract(body, '$.type'), '')";
    const reason = "coalesce(json_extract(body, '$.reason'), '')";
    internAll(db, [`SELECT namespace AS value FROM occurrences_v2`, `SELECT ${type} AS value FROM occurrences_v2`, `SELECT ${reason} AS value FROM occurrences_v2`]);
    db.exec(`INSERT INTO occurrences (id, observed_us, namespace, regarding_hash, type, reason, count_before, count_after, seen_ms, cluster, body)
      SELECT id, observed_us, ${idOf('namespace')}, kevents_name_hash(regarding_name), ${idOf(type)}, ${idOf(reason)},
        coalesce(json_extract(body, '$.countBefore'), 0), coalesce(json_extract(body, '$.countAfter'), 0),
        kevents_occurrence_ms(json_extract(body, '$.lastSeen'), json_extract(body, '$.observedTime')),
        json_extract(body, '$.cluster'),
        json_set(body, '$.event.name', event_name, '$.event.namespace', namespace)
      FROM occurrences_v2 ORDER BY id`);
    db.exec('DROP TABLE occurrences_v2');
    db.exec(`INSERT INTO occurrence_lag (hour, min_us, max_us)
      SELECT kevents_hour(seen_ms), min(observed_us - seen_ms * 1000), max(observed_us - seen_ms * 1000) FROM occurrences WHERE seen_ms IS NOT NULL GROUP BY 1
      ON CONFLICT(hour) DO UPDATE SET min_us = min(min_us, excluded.min_us), max_us = max(max_us, excluded.max_us)`);
  })();
}
