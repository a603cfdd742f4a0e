import type { Logger } from '../../internal/index.js';
import type { Clock } from '../../internal/index.js';
import type { EventWatch, WatchOptions } from '../event-store.js';
import { WatchHub } from '../shared/index.js';
import type { Change, ChangeLog } from '../shared/index.js';
import type { PgClient, PgPool } from './options.js';
import { PageEnd, ReplayWatch } from './replay-watch.js';
import type { ChangePage, ReplaySource } from './replay-watch.js';
import { Op } from './schema.js';
import { objectColumns, objectOf } from './packed-rows.js';
import type { PackedObject } from './packed-rows.js';

interface ChangeRow extends PackedObject {
  compacted: string;
  rv: string | null;
  key: string;
  op: number;
  prev_rv: string | null;
  prev_object: string | null;
  prev_object_z: Uint8Array | null;
  prev_object_text: string | null;
}

/** PUMP_BATCH is how many changes one read of the log delivers. */
const PUMP_BATCH = 1_000;
/** RETRY_MS: a replica that lost its connection tries again this often. */
const RETRY_MS = 1_000;

const TYPES = { [Op.ADDED]: 'ADDED', [Op.MODIFIED]: 'MODIFIED', [Op.DELETED]: 'DELETED' } as const;

/** ChangeFeedOptions wire a ChangeFeed to its database and process. */
export interface ChangeFeedOptions {
  pool: PgPool;
  schema: string;
  channel: string;
  /** origin is this replica's name in notifications. */
  origin: string;
  /** start is the revision the feed starts delivering after (the store's revision when it opened). */
  start: number;
  compacted: number;
  cacheSize: number;
  bufferSize: number;
  clock: Clock;
  logger: Logger;
}

/**
 * ChangeFeed delivers every committed change, from every replica, to this
 * replica's watchers in revision order. Writers notify the channel with their
 * last revision on commit; on a notification the feed reads the versions table
 * after the last revision it delivered. Revisions become visible in order (see
 * WriteBatch), so a read after revision N is always the next run of changes,
 * never one with a hole that fills in later. A local batch that directly follows
 * what was delivered is published without a read. The feed keeps the latest
 * `cacheSize` changes in memory for watchers that resume close to now; it is the
 * ChangeLog of the replica's WatchHub.
 */
export class ChangeFeed implements ChangeLog, ReplaySource {
  readonly hub: WatchHub;
  /** delivered is the newest revision published to this replica's watchers. */
  delivered: number;
  /** compacted is the compaction point as this replica last read it. */
  compacted: number;
  /** floor: every change after it, up to `delivered`, is in the cache. */
  floor: number;
  private cache: Change[] = [];
  private waiters: { rv: number; resolve: () => void }[] = [];
  private readonly watches = new Set<ReplayWatch>();
  private pumping = false;
  private pumpAgain = false;
  private listener: PgClient | undefined;
  private closed = false;
  private readonly readSql: string;

  constructor(private readonly o: ChangeFeedOptions) {
    this.delivered = o.start;
    this.floor = o.start;
    this.compacted = o.compacted;
    this.hub = new WatchHub(this, o.bufferSize);
    const s = o.schema;
    this.readSql =
      `SELECT m.value AS compacted, c.* FROM ${s}.meta m LEFT JOIN LATERAL (` +
      `SELECT v.rv, v.key, v.op, ${objectColumns(s, 'v')}, v.prev_rv, pp.* FROM ${s}.versions v ` +
      // Lateral: one lookup of the primary key for each row of the page, as the scalar subquery it replaces did.
      `LEFT JOIN LATERAL (SELECT ${objectColumns(s, 'p', 'prev_object')} FROM ${s}.versions p WHERE p.rv = v.prev_rv) pp ON true ` +
      `WHERE v.rv > $1 ORDER BY v.rv LIMIT $2) c ON true ` +
      `WHERE m.name = 'compacted' ORDER BY c.rv`;
  }

  changesAfter(after: number, limit: number): Change[] {
    if (after < this.floor) throw new PageEnd(after);
    let lo = 0;
    let hi = this.cache.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cache[mid]!.rv <= after) lo = mid + 1;
      else hi = mid;
    }
    return this.cache.slice(lo, lo + limit);
  }

  committedRv(): number {
    return this.delivered;
  }

  compactedRv(): number {
    return this.compacted;
  }

  /** read fetches up to `limit` committed changes after `after`, with the compaction point of the same snapshot. */
  async read(after: number, limit: number): Promise<ChangePage> {
    const { rows } = await this.o.pool.query<ChangeRow>(this.readSql, [after, limit]);
    const changes: Change[] = [];
    for (const r of rows) {
      if (r.rv === null) continue;
      const change: Change = { rv: Number(r.rv), type: TYPES[r.op as 1 | 2 | 3], key: r.key, json: objectOf(r)! };
      const prev = objectOf({ object: r.prev_object, object_z: r.prev_object_z, object_text: r.prev_object_text });
      if (r.prev_rv !== null && prev !== null) {
        change.prevJson = prev;
        change.prevRv = Number(r.prev_rv);
      }
      changes.push(change);
    }
    return { changes, compacted: Number(rows[0]?.compacted ?? 0) };
  }

  /** watch starts a watcher: a live one now, or one that replays from a revision (from the cache, else from SQL) and then goes live. */
  watch(options: WatchOptions): EventWatch {
    const { resourceVersion, ...filter } = options;
    const inner = resourceVersion === undefined || resourceVersion >= this.floor ? this.hub.watch(options) : undefined;
    const w = new ReplayWatch(this, filter, resourceVersion ?? this.delivered, inner, () => this.watches.delete(w));
    this.watches.add(w);
    return w;
  }

  /** listen subscribes to the channel on a connection of its own and catches up on anything committed before. */
  async listen(): Promise<void> {
    const client = await this.o.pool.connect();
    client.on('notification', (m) => {
      if (m.channel !== this.o.channel || m.payload === undefined) return;
      // The payload is `<origin> <revision>`. This replica's own commits are delivered by `committed`.
      const [origin, rv] = m.payload.split(' ');
      if (origin !== this.o.origin && Number(rv) > this.delivered) this.pump();
    });
    client.on('error', (e) => {
      if (this.listener !== client) return;
      this.listener = undefined;
      this.o.logger.warn('postgres change listener lost its connection', { error: e.message });
      client.release(e);
      this.retry(() => this.listen());
    });
    try {
      await client.query(`LISTEN ${this.o.channel}`);
    } catch (e) {
      client.release(e instanceof Error ? e : true);
      throw e;
    }
    if (this.closed) {
      client.release();
      return;
    }
    this.listener = client;
    this.pump();
  }

  /**
   * committed is told of a batch this replica committed (revisions base+1..last)
   * and resolves once its changes are delivered here, so a write is acknowledged
   * only when this replica's watchers can see it.
   */
  committed(base: number, last: number, changes: Change[]): Promise<void> {
    if (last <= this.delivered || this.closed) return Promise.resolve();
    if (base === this.delivered) {
      this.deliver(changes);
      return Promise.resolve();
    }
    // Some other commit sits between: read the log in order, which delivers this batch too.
    return new Promise((resolve) => {
      this.waiters.push({ rv: last, resolve });
      this.pump();
    });
  }

  /** pump reads and delivers whatever was committed after `delivered`; concurrent calls fold into one more read. */
  pump(): void {
    if (this.closed) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    void this.pumpLoop().finally(() => {
      this.pumping = false;
    });
  }

  /** close ends every watcher and settles every pending acknowledgement (those writes are committed). */
  close(): void {
    this.closed = true;
    for (const w of [...this.watches]) w.stop();
    this.hub.closeAll();
    for (const w of this.waiters) w.resolve();
    this.waiters = [];
    if (this.listener !== undefined) {
      this.listener.release(true);
      this.listener = undefined;
    }
  }

  private async pumpLoop(): Promise<void> {
    for (;;) {
      this.pumpAgain = false;
      let page: ChangePage;
      try {
        page = await this.read(this.delivered, PUMP_BATCH);
      } catch (e) {
        if (this.closed) return;
        this.o.logger.warn('postgres change feed read failed', { error: e instanceof Error ? e.message : String(e) });
        this.retry(() => Promise.resolve(this.pump()));
        return;
      }
      if (this.closed) return;
      if (page.compacted > this.compacted) this.compacted = page.compacted;
      // A local batch may have been delivered directly while the read was under way.
      const fresh = page.changes.filter((c) => c.rv > this.delivered);
      if (fresh.length > 0) this.deliver(fresh);
      if (page.changes.length < PUMP_BATCH && !this.pumpAgain) return;
    }
  }

  private deliver(changes: Change[]): void {
    this.cache.push(...changes);
    if (this.cache.length > 2 * this.o.cacheSize) {
      const drop = this.cache.length - this.o.cacheSize;
      this.floor = this.cache[drop - 1]!.rv;
      this.cache = this.cache.slice(drop);
    }
    this.delivered = changes[changes.length - 1]!.rv;
    this.hub.publish(changes);
    if (this.waiters.length > 0) {
      const done = this.waiters.filter((w) => w.rv <= this.delivered);
      if (done.length > 0) {
        this.waiters = this.waiters.filter((w) => w.rv > this.delivered);
        for (const w of done) w.resolve();
      }
    }
  }

  private retry(fn: () => Promise<void>): void {
    this.o.clock.setTimeout(
      () => {
        if (this.closed) return;
        fn().catch((e: unknown) => {
          this.o.logger.warn('postgres change feed retry failed', { error: e instanceof Error ? e.message : String(e) });
          this.retry(fn);
        });
      },
      RETRY_MS,
      { unref: true },
    );
  }
}
