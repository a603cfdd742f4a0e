/**
 * What removes data from a store's file: TTL expiry, compaction of the history
 * window and the purge of rows no revision can see any more, and retention
 * (by age, per cluster, and the size cap). Apart from the write path because
 * it runs on timers and in bounded steps, so writers are never held up long.
 */
import { marksKeptFrom, retentionRules } from '../archive-store.js';
import type { RetentionPolicy, RetentionResult } from '../archive-store.js';
import type { Change } from '../shared/index.js';
import { storageFailure } from './connection.js';
import type { SqliteConnection } from './connection.js';
import type { SqliteWrites } from './write.js';

/** EXPIRY_BATCH and PURGE_BATCH bound the work of one sweep or purge step, so writers are never held up for long. */
const EXPIRY_BATCH = 1_000;
const PURGE_BATCH = 2_000;
/** RETENTION_STEP bounds the objects one retention step removes. */
const RETENTION_STEP = 5_000;
/** SIZE_CUT_CHUNK is how many of the oldest rows the size cap removes between two measurements of the file, so it removes little more than the excess. */
const SIZE_CUT_CHUNK = 50;
/** SIZE_PURGE_BUDGET bounds the history rows one size step purges, so a large window given up is purged over several steps, writers between them. */
const SIZE_PURGE_BUDGET = 20_000;

/** SqliteRetention expires, compacts, purges and retires a store's data over its connection. */
export class SqliteRetention {
  private sweeping = false;
  private purging = false;

  constructor(
    private readonly c: SqliteConnection,
    private readonly writes: SqliteWrites,
  ) {}

  enforceRetention(policy: RetentionPolicy): Promise<RetentionResult> {
    const c = this.c;
    if (c.writer !== undefined) return c.remote('enforceRetention', [policy]);
    return c.enqueue((changes) => {
      let events = 0;
      let occurrences = 0;
      let more = false;
      for (const rule of retentionRules(policy)) {
        const dropped = c.archive.dropOccurrencesBefore(rule, RETENTION_STEP);
        const rows = c.archive.writtenBefore(rule, RETENTION_STEP);
        events += this.retire(rows, changes);
        occurrences += dropped;
        more ||= dropped >= RETENTION_STEP || rows.length >= RETENTION_STEP;
      }
      const keptFrom = marksKeptFrom(policy);
      if (keptFrom !== undefined) c.archive.pruneMarks(keptFrom);
      if (policy.maxBytes !== undefined && policy.maxBytes > 0) {
        const cut = this.cutForSize(policy.maxBytes, changes);
        events += cut.events;
        occurrences += cut.occurrences;
        more ||= cut.more;
      }
      return { events, occurrences, more };
    });
  }

  /** retire deletes, through the delete path, each listed event still at the version listed; it returns how many it deleted. */
  private retire(rows: { rv: number; key: string }[], changes: Change[]): number {
    let n = 0;
    for (const { rv, key } of rows) {
      const cur = this.c.stmt.current.get(key);
      if (cur === undefined || cur.rv !== rv) continue;
      this.writes.tombstone(key, cur, changes);
      n++;
    }
    return n;
  }

  /**
   * cutForSize brings the file's pages in use under `maxBytes`, within one step's
   * bounds. Deleted rows free their pages only once purged, and a purge waits for
   * the compaction point to pass them, so a store over its cap first gives up its
   * history window (compacting to the newest revision: a watch resumed from before
   * it is answered 410, as after any compaction). Then, while still over, it
   * removes the oldest data in revision order, an event's older occurrences
   * before the event itself, and purges what that deleted at once, so every
   * measurement sees the space freed.
   */
  private cutForSize(maxBytes: number, changes: Change[]): RetentionResult {
    const c = this.c;
    const cut: RetentionResult = { events: 0, occurrences: 0, more: false };
    // The search index's waiting entries first, in this transaction: the size measured is the archive's with its index.
    while (c.searchIndex?.write(c.rv) === true);
    if (c.archive.usedBytes() <= maxBytes) return cut;
    let purgeBudget = SIZE_PURGE_BUDGET;
    const purgeAll = (): boolean => {
      this.compactTo(c.rv);
      let purged = 0;
      for (let n = 1; n > 0 && purgeBudget > 0; purgeBudget -= n) purged += n = this.purgeStep();
      // A contentless FTS5 table frees a deleted entry's space only when its segment is merged, and a catch-up of the
      // index writes a segment of thousands of versions: a bounded merge (64 pages) rewrites those mostly deleted.
      if (purged > 0 && c.searchIndex !== undefined) c.stmt.mergeSearchIndex.run();
      return purgeBudget > 0;
    };
    if (!purgeAll()) return { ...cut, more: true };
    while (c.archive.usedBytes() > maxBytes) {
      if (cut.events + cut.occurrences >= RETENTION_STEP) return { ...cut, more: true };
      const occ = c.archive.oldestOccurrences(SIZE_CUT_CHUNK);
      const ev = c.archive.oldestEvents(SIZE_CUT_CHUNK);
      if (occ.length + ev.length === 0) break;
      // The chunk is the oldest SIZE_CUT_CHUNK of both, by revision; an occurrence's id is its version's revision, so it goes before (or with) its event.
      const last = [...occ.map((o) => o.id), ...ev.map((e) => e.rv)].sort((a, b) => a - b)[Math.min(SIZE_CUT_CHUNK, occ.length + ev.length) - 1]!;
      cut.occurrences += c.archive.dropOccurrences(occ.filter((o) => o.id <= last));
      cut.events += this.retire(ev.filter((e) => e.rv <= last), changes);
      if (!purgeAll()) return { ...cut, more: true };
    }
    return cut;
  }

  /** compactTo moves the compaction point to `rv` inside the running write (a rollback restores it: see `SqliteConnection.flush`). */
  private compactTo(rv: number): void {
    if (rv <= this.c.compacted) return;
    this.c.stmt.setMeta.run('compacted', rv);
    this.c.compacted = rv;
  }

  /** sweep deletes expired events through the write path, so each expiry is a revision that watchers see as DELETED. */
  sweep(): void {
    const c = this.c;
    if (this.sweeping || c.db === undefined) return;
    const now = c.o.clock.now();
    let rows: { rv: number; key: string }[];
    try {
      rows = c.stmt.expired.all(now, EXPIRY_BATCH);
    } catch (e) {
      c.o.logger.error('sqlite expiry sweep failed', { error: storageFailure(e) });
      return;
    }
    if (rows.length === 0) return;
    this.sweeping = true;
    const writes = rows.map(({ rv, key }) =>
      c.enqueue((changes) => {
        const cur = c.stmt.current.get(key);
        // The event may have been renewed or deleted since the sweep read it.
        if (cur === undefined || cur.rv !== rv || cur.expires_at === null || cur.expires_at > now) return;
        this.writes.tombstone(key, cur, changes);
      }),
    );
    void Promise.allSettled(writes).then((results) => {
      this.sweeping = false;
      const failed = results.find((r) => r.status === 'rejected');
      if (failed !== undefined) c.o.logger.warn('sqlite expiry failed', { error: failed.reason });
      else if (rows.length === EXPIRY_BATCH) this.sweep();
    });
  }

  /**
   * compact moves the compaction point to the newest revision older than the
   * history window (found through checkpoints, one per tick) and starts purging
   * rows that no revision after that point can see.
   */
  compact(): void {
    const c = this.c;
    if (c.db === undefined) return;
    try {
      const now = c.o.clock.now();
      c.stmt.checkpoint.run(now, c.rv);
      const h = c.stmt.horizon.get(now - c.o.historyWindowSeconds * 1000);
      if (h !== undefined && h.rv > c.compacted) {
        c.db.transaction(() => {
          c.stmt.setMeta.run('compacted', h.rv);
          c.stmt.dropCheckpoints.run(h.at);
        })();
        c.compacted = h.rv;
        c.onCommit?.(c.rv, c.compacted);
      }
      this.purge();
    } catch (e) {
      c.o.logger.error('sqlite compaction failed', { error: storageFailure(e) });
    }
  }

  private purge(): void {
    if (this.purging || this.c.db === undefined) return;
    if (this.purgeStep() === 0) return;
    this.purging = true;
    setImmediate(() => {
      this.purging = false;
      try {
        this.purge();
      } catch (e) {
        this.c.o.logger.error('sqlite purge failed', { error: storageFailure(e) });
      }
    });
  }

  /**
   * purgeStep deletes up to PURGE_BATCH superseded versions (keeping the objects occurrences describe) with their
   * search index entries, and PURGE_BATCH tombstones (never indexed) up to the compaction point.
   */
  private purgeStep(): number {
    const c = this.c;
    const db = c.checkOpen();
    const superseded = c.stmt.supersededUpTo.all(c.compacted, PURGE_BATCH);
    // The texts the deleted rows referred to go with them once nothing else refers to them (a past version kept is one).
    const texts: (number | null)[] = [];
    try {
      db.transaction(() => {
        for (const { rv } of superseded) {
          c.stmt.keepPast.run({ rv });
          c.searchIndex?.drop(rv);
          const text = c.stmt.dropVersion.get(rv)?.text_rv ?? null;
          if (text !== null) texts.push(text);
        }
        c.texts.drop(texts);
      })();
    } catch (e) {
      // A drop may have forgotten a queued entry of a version the rollback keeps: the index reads the file again.
      c.searchIndex?.discard();
      throw e;
    }
    return (
      superseded.length +
      db.transaction(() => {
        const tombstones = c.stmt.purgeTombstones.all(c.compacted, PURGE_BATCH);
        c.texts.drop(tombstones.map((t) => t.text_rv));
        return tombstones.length;
      })()
    );
  }
}
