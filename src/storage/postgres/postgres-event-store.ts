import { randomUUID } from 'node:crypto';
import { nowMicroTime, occurrenceChange } from '../../api/index.js';
import type { CoreEvent, OccurrenceStamp } from '../../api/index.js';
import type {
  ArchiveBatch,
  ArchiveBatchResult,
  ArchiveStore,
  ClusterBinding,
  ClusterIdentity,
  ObservedRange,
  OccurrencePage,
  OccurrenceQuery,
  ReasonCount,
  ReasonCountQuery,
  RetentionPolicy,
  RetentionRule,
  RetentionResult,
  SourceCheckpoint,
} from '../archive-store.js';
import { marksKeptFrom, retentionRules } from '../archive-store.js';
import type {
  EventWatch,
  ListOptions,
  ListResult,
  Preconditions,
  StoreWatchEvent,
  TryUpdate,
  UpdateOptions,
  UpdateResult,
  WatchOptions,
  WriteOptions,
} from '../event-store.js';
import { StorageError } from '../errors.js';
import {
  Ticker,
  checkPreconditions,
  decodeEvent,
  encodeEvent,
  eventKey,
  keyOfEvent,
  listRevision,
  matchesFilter,
  readOccurrencePage,
  RemainingCounts,
  namespaceRange,
  selectsAll,
  resolveCommonOptions,
  sameContent,
  withRevision,
} from '../shared/index.js';
import type { ResolvedCommonOptions } from '../shared/index.js';
import { ArchiveQueries, LagBounds, cursorOf, decodeOccurrence, observedStamp, occurrenceRow } from './archive-tables.js';
import type { OccurrenceRow, StoredOccurrence } from './archive-tables.js';
import { ChangeFeed } from './change-feed.js';
import { createPool, pgFailure } from './driver.js';
import { ListQueries } from './list-query.js';
import type { ListRow, ListScope } from './list-query.js';
import { Maintenance } from './maintenance.js';
import { DEFAULT_MAX_BATCH, DEFAULT_POOL_SIZE, DEFAULT_SCHEMA, DEFAULT_WATCH_CACHE_SIZE } from './options.js';
import { splitSchema } from './options.js';
import type { PgPool, PostgresEventStoreOptions } from './options.js';
import { CURRENT, applySchema, checkSchemaName } from './schema.js';
import { WriteBatch, fieldsOf, writeFunctionSql } from './write-batch.js';
import type { Outcome, WriteOp } from './write-batch.js';

interface Pending {
  op: WriteOp;
  resolve: (o: Outcome) => void;
  reject: (e: Error) => void;
}

interface Started {
  pool: PgPool;
  feed: ChangeFeed;
  maintenance: Maintenance;
}

/** MAX_LIST_BATCH caps the rows a filtered list reads per query, as upstream caps its etcd pages. */
const MAX_LIST_BATCH = 10_000;
/** MAX_IN_FLIGHT: a second batch works while the first flushes its WAL (see WriteBatch), and waits at the revision lock while the first works. */
const MAX_IN_FLIGHT = 2;
/** MAX_OCCURRENCE_BATCH caps the rows one occurrence page reads per query when a filter drops rows. */
const MAX_OCCURRENCE_BATCH = 5_000;
/** RETENTION_STEP bounds the objects one retention step removes. */
const RETENTION_STEP = 5_000;
/** MARK_INTERVAL_MS is the resolution of the time-to-revision marks retention reads. */
const MARK_INTERVAL_MS = 1_000;

/**
 * PostgresEventStore keeps events in PostgreSQL, for archives and for several
 * `kevents serve` replicas over one database. Writes from concurrent callers
 * are grouped into one transaction per round of the write pipeline; every
 * replica's watchers see every change in revision order through LISTEN/NOTIFY
 * and the versions table (see ChangeFeed). Versions are kept MVCC style, so
 * exact lists and watches resume from any revision inside the history window.
 * It is an archive too (`ArchiveStore`): occurrences, source checkpoints and
 * archive batches are written by the same write function, in the transaction of
 * the writes they go with.
 */
export class PostgresEventStore implements ArchiveStore {
  private readonly o: ResolvedCommonOptions;
  private readonly s: string;
  private readonly lists: ListQueries;
  private readonly archive: ArchiveQueries;
  private readonly lags = new LagBounds();
  private readonly remaining = new RemainingCounts();
  private lastMark = 0;
  private readonly writer: WriteBatch;
  private readonly maxBatch: number;
  private readonly started: Promise<Started>;
  private state: Started | undefined;
  private ownsPool = false;
  private queue: Pending[] = [];
  private flushScheduled = false;
  private inFlight = 0;
  private readonly commits = new Set<Promise<void>>();
  private readonly tickers: Ticker[] = [];
  private closed = false;
  private readonly origin = randomUUID();
  private readonly connectionString: string | undefined;

  constructor(private readonly options: PostgresEventStoreOptions) {
    this.o = resolveCommonOptions(options);
    this.maxBatch = options.maxBatch !== undefined && options.maxBatch > 0 ? options.maxBatch : DEFAULT_MAX_BATCH;
    const fromUrl = splitSchema(options.connectionString);
    this.s = options.schema ?? fromUrl.schema ?? DEFAULT_SCHEMA;
    this.connectionString = fromUrl.connectionString;
    this.lists = new ListQueries(this.s);
    this.archive = new ArchiveQueries(this.s);
    this.writer = new WriteBatch(this.s, `${this.s}_changes`, this.origin, options.synchronousCommit === false ? 'async' : 'sync');
    this.started = this.start();
    // Every method awaits `started` and reports its failure; this keeps an unused store from an unhandled rejection.
    this.started.catch(() => undefined);
  }

  async create(event: CoreEvent, options: WriteOptions = {}): Promise<CoreEvent> {
    const key = keyOfEvent(event);
    const json = encodeEvent(event);
    const occurrence = options.occurrence === undefined ? undefined : this.occurrence(event, occurrenceChange(undefined, event), options.occurrence);
    const out = await this.write({ kind: 'create', key, json, fields: fieldsOf(event), expiresAt: this.expiry(options.ttlSeconds), occurrence });
    return withRevision(event, rvOf(out));
  }

  async get(namespace: string, name: string): Promise<CoreEvent> {
    const key = eventKey(namespace, name);
    const cur = await this.current(key);
    if (cur === undefined) throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: this.state?.feed.delivered });
    return decodeEvent(cur.object, cur.rv);
  }

  async list(options: ListOptions): Promise<ListResult> {
    const { pool } = await this.open();
    const { low, high } = options.namespace === undefined ? { low: '', high: undefined } : namespaceRange(options.namespace);
    const limit = options.limit !== undefined && options.limit > 0 ? options.limit : Infinity;
    let start = options.startKey !== undefined && options.startKey > low ? options.startKey : low;
    const from = start;
    const exact = options.match === 'Exact' && options.resourceVersion !== undefined && options.resourceVersion > 0;
    // The first page read fixes the revision; further reads (a filter dropped rows) read a snapshot at it.
    let scope: ListScope = { at: exact ? options.resourceVersion : undefined, high, fieldEquals: options.fieldEquals };
    let at: number | undefined;
    let batch = Math.min(limit + 1, MAX_LIST_BATCH);
    const items: CoreEvent[] = [];
    let more = false;
    for (;;) {
      const rows = await this.query<ListRow>(pool, this.lists.page(scope, start, batch));
      const head = rows[0]!;
      const revision = Number(head.revision);
      const compacted = Number(head.compacted);
      if (at === undefined) {
        at = listRevision(options, revision, compacted);
        scope = { ...scope, at };
      } else if (at < compacted) {
        throw new StorageError('ResourceVersionExpired', `resourceVersion ${at} was compacted while it was read`, { resourceVersion: at, currentResourceVersion: revision });
      }
      let read = 0;
      for (const row of rows) {
        if (row.rv === null || row.key === null || row.object === null) continue;
        read++;
        if (items.length >= limit) {
          more = true;
          break;
        }
        start = row.key;
        const event = decodeEvent(row.object, Number(row.rv));
        if (matchesFilter(event, options)) items.push(event);
      }
      if (more) break;
      if (items.length >= limit) {
        // As against etcd, any key past the last item means more, whether or not the selector would keep it
        // (the field selector's rows were filtered in SQL: the keys it left out count too).
        const probe = await this.query<ListRow>(pool, this.lists.page({ ...scope, fieldEquals: undefined }, start, 1));
        more = probe.some((r) => r.rv !== null);
        break;
      }
      if (read < batch) break;
      // A filter dropped rows: read further in larger steps, as upstream does against etcd.
      batch = Math.min(batch * 2, MAX_LIST_BATCH);
    }
    const result: ListResult = { items, resourceVersion: at };
    if (more) {
      result.lastKey = start;
      if (options.countRemaining === true) {
        let remaining = this.remaining.carried(at, high, from, selectsAll(options) ? items.length : undefined);
        if (remaining === undefined) {
          const [row] = await this.query<{ n: string }>(pool, this.lists.count(at, high, start));
          remaining = Number(row?.n ?? 0);
        }
        this.remaining.remember(at, high, start, remaining);
        result.remainingItemCount = remaining;
      }
    }
    return result;
  }

  async guaranteedUpdate(namespace: string, name: string, tryUpdate: TryUpdate, options: UpdateOptions = {}): Promise<UpdateResult> {
    const key = eventKey(namespace, name);
    for (;;) {
      const cur = await this.current(key);
      const revision = this.state?.feed.delivered ?? 0;
      if (cur === undefined && options.allowCreate !== true) throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: revision });
      const current = cur === undefined ? undefined : decodeEvent(cur.object, cur.rv);
      checkPreconditions(key, current, options.preconditions, revision);
      const next = await tryUpdate(current);
      if (keyOfEvent(next) !== key) throw new StorageError('InvalidObject', `the updated object is not ${key}`, { key });
      const json = encodeEvent(next);
      if (cur !== undefined && sameContent(json, cur.object)) {
        if ((await this.current(key))?.rv === cur.rv) return { object: decodeEvent(cur.object, cur.rv), created: false };
        continue;
      }
      // Compare-and-swap on the revision read before tryUpdate, as etcd does; a lost race reads again and retries.
      const occurrence = options.occurrence === undefined ? undefined : this.occurrence(next, occurrenceChange(current, next), options.occurrence);
      const out = await this.write({ kind: 'put', key, expect: cur?.rv ?? 0, json, fields: fieldsOf(next), expiresAt: this.expiry(options.ttlSeconds), occurrence });
      if ('conflict' in out) continue;
      return { object: decodeEvent(json, rvOf(out)), created: cur === undefined };
    }
  }

  async delete(namespace: string, name: string, options: { preconditions?: Preconditions } = {}): Promise<CoreEvent> {
    const out = await this.write({ kind: 'delete', key: eventKey(namespace, name), preconditions: options.preconditions });
    if (!('rv' in out)) throw new StorageError('Internal', 'a delete was neither written nor refused');
    return decodeEvent(out.json, out.rv);
  }

  watch(options: WatchOptions): EventWatch {
    if (this.state !== undefined && !this.closed) return this.state.feed.watch(options);
    return deferredWatch(this.open().then((s) => s.feed.watch(options)));
  }

  async applyArchiveBatch(batch: ArchiveBatch): Promise<ArchiveBatchResult> {
    const stamp = observedStamp(batch.stamp, () => nowMicroTime(this.o.clock));
    const out = await this.write({ kind: 'archive', writes: batch.writes, stamp, checkpoint: batch.checkpoint });
    if (!('archived' in out)) throw new StorageError('Internal', 'an archive batch was neither written nor refused');
    return out.archived;
  }

  async bindCluster(identity: ClusterIdentity): Promise<ClusterBinding> {
    const { pool } = await this.open();
    // A name taken by a replica at the same instant is read back by a second statement, which sees its commit.
    const inserted = await this.query<{ uid: string }>(pool, this.archive.bindCluster(identity, this.o.clock.now()));
    const boundUID = inserted.length > 0 ? undefined : (await this.query<{ uid: string }>(pool, this.archive.clusterUID(identity.name)))[0]?.uid;
    const names = await this.query<{ name: string }>(pool, this.archive.clusterNames(identity.uid));
    return { ...(boundUID !== undefined ? { boundUID } : {}), otherNames: names.map((r) => r.name).filter((n) => n !== identity.name) };
  }

  async getCheckpoint(source: string): Promise<SourceCheckpoint | undefined> {
    const { pool } = await this.open();
    const [row] = await this.query<{ resource_version: string; updated_at: string }>(pool, this.archive.checkpoint(source));
    if (row === undefined) return undefined;
    return { source, resourceVersion: row.resource_version, updatedAt: new Date(Number(row.updated_at)).toISOString().replace(/\.\d{3}Z$/, 'Z') };
  }

  async listOccurrences(q: OccurrenceQuery): Promise<OccurrencePage> {
    const { pool } = await this.open();
    return readOccurrencePage(q, MAX_OCCURRENCE_BATCH, async (after, batch) =>
      (await this.query<StoredOccurrence>(pool, this.archive.page(q, after, batch))).map((row) => ({ occurrence: decodeOccurrence(row), at: cursorOf(row) })),
    );
  }

  async countByReason(q: ReasonCountQuery): Promise<ReasonCount[]> {
    const range = await this.observedRange(q);
    if (range === null) return [];
    const { pool } = await this.open();
    const rows = await this.query<{ type: string; reason: string; count: string; first_ms: string }>(pool, this.archive.countByReason(q, range));
    return rows.map((r) => ({ type: r.type, reason: r.reason, count: Number(r.count), firstMs: Number(r.first_ms) }));
  }

  async observedRange(window: { sinceMs: number; untilMs: number }): Promise<ObservedRange | null> {
    const { pool } = await this.open();
    if (!(window.untilMs > window.sinceMs)) return null;
    const [lag] = await this.query<{ lo: string | null; hi: string | null }>(pool, this.archive.lagOver(window.sinceMs, window.untilMs));
    if (lag === undefined || lag.lo === null || lag.hi === null) return null;
    return { sinceMicros: window.sinceMs * 1000 + Number(lag.lo), untilMicros: window.untilMs * 1000 + Number(lag.hi) };
  }

  /**
   * enforceRetention removes one bounded step: occurrences by observed time, and
   * events last written before the cutoff (found through the write marks and the
   * primary key of `versions`), each deleted through the write path only if it
   * is still the version retention saw. For the size cap it removes the oldest
   * share of the excess of the `bytes` counter, which a removal lowers at once.
   */
  async enforceRetention(policy: RetentionPolicy): Promise<RetentionResult> {
    const { pool } = await this.open();
    let events = 0;
    let occurrences = 0;
    let more = false;
    const dropOccurrences = async (rule: RetentionRule | undefined, limit: number): Promise<number> => {
      const [row] = await this.query<{ n: string }>(pool, this.archive.dropOccurrences(rule, limit));
      return Number(row?.n ?? 0);
    };
    const dropEvents = async (rows: { rv: string; key: string }[]): Promise<void> => {
      const outs = await Promise.all(rows.map((r) => this.write({ kind: 'retire', key: r.key, expect: Number(r.rv) })));
      events += outs.filter((o) => 'rv' in o).length;
    };
    const rules = retentionRules(policy);
    for (const rule of rules) {
      const dropped = await dropOccurrences(rule, RETENTION_STEP);
      occurrences += dropped;
      const [mark] = await this.query<{ at: string; rv: string }>(pool, this.archive.markBefore(rule.cutoffMs));
      let rows: { rv: string; key: string }[] = [];
      if (mark !== undefined) {
        rows = await this.query<{ rv: string; key: string }>(pool, this.archive.oldestEvents({ rv: Number(mark.rv), rule }, RETENTION_STEP));
        await dropEvents(rows);
      }
      more ||= dropped >= RETENTION_STEP || rows.length >= RETENTION_STEP;
    }
    const keptFrom = marksKeptFrom(policy);
    if (keptFrom !== undefined) {
      const [oldest] = await this.query<{ at: string; rv: string }>(pool, this.archive.markBefore(keptFrom));
      if (oldest !== undefined) await this.query(pool, this.archive.dropMarks(Number(oldest.at)));
    }
    if (policy.maxBytes !== undefined && policy.maxBytes > 0) {
      const [c] = await this.query<{ occurrences: string; events: string; bytes: string }>(pool, this.archive.counts());
      const used = Number(c?.bytes ?? 0);
      if (used > policy.maxBytes) {
        const share = (used - policy.maxBytes) / used;
        const nOcc = Math.min(Math.ceil(share * Number(c?.occurrences ?? 0)), RETENTION_STEP);
        const nEv = Math.min(Math.ceil(share * Number(c?.events ?? 0)), RETENTION_STEP);
        if (nOcc > 0) occurrences += await dropOccurrences(undefined, nOcc);
        if (nEv > 0) await dropEvents(await this.query<{ rv: string; key: string }>(pool, this.archive.oldestEvents(undefined, nEv)));
        more ||= nOcc >= RETENTION_STEP || nEv >= RETENTION_STEP;
      }
    }
    return { events, occurrences, more };
  }

  /** archiveBytes is the `bytes` counter: the stored text of live events and of occurrences (the tables on disk are larger by their indexes and history). */
  async archiveBytes(): Promise<number> {
    const { pool } = await this.open();
    const [row] = await this.query<{ value: string }>(pool, this.archive.bytes());
    return Number(row?.value ?? 0);
  }

  async currentResourceVersion(): Promise<number> {
    const { pool } = await this.open();
    const [row] = await this.query<{ value: string }>(pool, { text: `SELECT value FROM ${this.s}.meta WHERE name = 'revision'`, values: [] });
    return Number(row?.value ?? 0);
  }

  async oldestResourceVersion(): Promise<number> {
    const { pool, maintenance } = await this.open();
    // A compaction this replica has started answers first, so the answer reflects the time the caller sees.
    await maintenance.compactor.idle();
    const [row] = await this.query<{ value: string }>(pool, { text: `SELECT value FROM ${this.s}.meta WHERE name = 'compacted'`, values: [] });
    return Number(row?.value ?? 0);
  }

  async ready(): Promise<void> {
    await this.open();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.tickers) t.stop();
    let state: Started;
    try {
      state = await this.started;
    } catch {
      return;
    }
    await state.maintenance.idle();
    while (this.queue.length > 0 || this.commits.size > 0) {
      this.flush();
      await Promise.allSettled([...this.commits]);
    }
    state.feed.close();
    if (this.ownsPool) await state.pool.end().catch((e: unknown) => this.o.logger.warn('postgres pool did not close cleanly', { error: String(e) }));
  }

  private async start(): Promise<Started> {
    try {
      checkSchemaName(this.s);
      let pool = this.options.pool;
      if (pool === undefined) {
        if (this.connectionString === undefined) throw new Error('a postgres store needs a connectionString or a pool');
        pool = await createPool(this.connectionString, this.options.poolSize ?? DEFAULT_POOL_SIZE, (e) =>
          this.o.logger.warn('postgres idle connection failed', { error: e.message }),
        );
        this.ownsPool = true;
      }
      const client = await pool.connect();
      let meta: Map<string, number>;
      try {
        await applySchema(client, this.s, writeFunctionSql(this.s));
        const { rows } = await client.query<{ name: string; value: string }>(`SELECT name, value FROM ${this.s}.meta`);
        meta = new Map(rows.map((r) => [r.name, Number(r.value)]));
        this.lags.load((await client.query<{ hour: string; min_us: string; max_us: string }>(this.archive.lags().text)).rows);
        client.release();
      } catch (e) {
        client.release(e instanceof Error ? e : true);
        throw e;
      }
      const feed = new ChangeFeed({
        pool,
        schema: this.s,
        channel: `${this.s}_changes`,
        origin: this.origin,
        start: meta.get('revision') ?? 0,
        compacted: meta.get('compacted') ?? 0,
        cacheSize: this.options.watchCacheSize !== undefined && this.options.watchCacheSize > 0 ? this.options.watchCacheSize : DEFAULT_WATCH_CACHE_SIZE,
        bufferSize: this.o.watchBufferSize,
        clock: this.o.clock,
        logger: this.o.logger,
      });
      await feed.listen();
      const maintenance = new Maintenance({
        pool,
        schema: this.s,
        clock: this.o.clock,
        logger: this.o.logger,
        historyWindowSeconds: this.o.historyWindowSeconds,
        expire: (key, rv, now) => this.enqueue({ kind: 'expire', key, expect: rv, now }),
        compacted: (rv) => {
          if (rv > feed.compacted) feed.compacted = rv;
        },
      });
      const state = { pool, feed, maintenance };
      if (this.closed) {
        feed.close();
        if (this.ownsPool) await pool.end();
        throw new StorageError('Unreachable', 'the store is closed');
      }
      this.tickers.push(
        new Ticker(this.o.clock, this.o.expiryIntervalMs, () => maintenance.sweeper.kick()),
        new Ticker(this.o.clock, this.o.compactIntervalMs, () => maintenance.compactor.kick()),
      );
      this.state = state;
      return state;
    } catch (e) {
      const failure = pgFailure(e);
      this.o.logger.error('postgres store failed to open', { schema: this.s, error: failure.message });
      throw new StorageError('Unreachable', `cannot open postgres store: ${failure.message}`, { cause: e });
    }
  }

  /** open waits for the store to start and fails once it is closed. */
  private async open(): Promise<Started> {
    const state = await this.started;
    if (this.closed) throw new StorageError('Unreachable', 'the store is closed');
    return state;
  }

  private async query<R>(pool: PgPool, q: { text: string; values: unknown[] }): Promise<R[]> {
    try {
      return (await pool.query<R>(q.text, q.values)).rows;
    } catch (e) {
      throw pgFailure(e);
    }
  }

  private async current(key: string): Promise<{ rv: number; object: string } | undefined> {
    const { pool } = await this.open();
    const [row] = await this.query<{ rv: string; object: string }>(pool, {
      text: `SELECT rv, object FROM ${this.s}.versions WHERE key = $1 AND ${CURRENT}`,
      values: [key],
    });
    return row === undefined ? undefined : { rv: Number(row.rv), object: row.object };
  }

  /** occurrence is the stored form of a local write's occurrence, when the write is an observed change. */
  private occurrence(event: CoreEvent, change: { countBefore: number; countAfter: number } | undefined, stamp: OccurrenceStamp): OccurrenceRow | undefined {
    if (change === undefined) return undefined;
    return occurrenceRow(event, change, observedStamp(stamp, () => nowMicroTime(this.o.clock)));
  }

  private expiry(ttlSeconds: number | undefined): number | null {
    return ttlSeconds !== undefined && ttlSeconds > 0 ? this.o.clock.now() + ttlSeconds * 1000 : null;
  }

  /** write queues a caller's write; it fails with Unreachable once the store is closed. */
  private async write(op: WriteOp): Promise<Outcome> {
    await this.open();
    return this.enqueue(op);
  }

  /** enqueue adds a write to the next batch; it settles once the batch is committed and delivered to this replica's watchers. */
  private enqueue(op: WriteOp): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      this.queue.push({ op, resolve, reject });
      this.scheduleFlush();
    });
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.queue.length === 0) return;
    this.flushScheduled = true;
    // setImmediate runs after the I/O of this loop turn, so requests read together commit together.
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    const state = this.state;
    while (state !== undefined && this.inFlight < MAX_IN_FLIGHT && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight++;
      const commit = this.commit(state, batch).finally(() => {
        this.inFlight--;
        this.commits.delete(commit);
        // The writers this batch answered write again in the next turns: wait for them, as enqueue does.
        this.scheduleFlush();
      });
      this.commits.add(commit);
    }
  }

  /** commit runs one batch; its promise settles when the transaction has ended, and the writers are answered once their changes are delivered here. */
  private async commit(state: Started, batch: Pending[]): Promise<void> {
    let result;
    const now = this.o.clock.now();
    const markAt = now - this.lastMark >= MARK_INTERVAL_MS ? now : null;
    try {
      result = await this.writer.run(
        state.pool,
        batch.map((p) => p.op),
        { lags: this.lags, now, markAt },
      );
      if (markAt !== null && result.last > 0) this.lastMark = Math.max(this.lastMark, markAt);
    } catch (e) {
      const failure = pgFailure(e);
      this.o.logger.error('postgres write batch failed', { writes: batch.length, error: failure.message });
      for (const p of batch) p.reject(failure);
      // The batch may have committed before its answer was lost: a read of the log delivers it if so.
      state.feed.pump();
      return;
    }
    const { base, last, changes, outcomes } = result;
    const delivered = changes.length === 0 ? Promise.resolve() : state.feed.committed(base, last, changes);
    void delivered.then(() => {
      batch.forEach((p, i) => {
        const o = outcomes[i]!;
        if ('error' in o) p.reject(o.error);
        else p.resolve(o);
      });
    });
  }
}

function rvOf(out: Outcome): number {
  if (!('rv' in out)) throw new StorageError('Internal', 'a write was neither written nor refused');
  return out.rv;
}

/** deferredWatch is a watch whose start waits for the store to open. */
function deferredWatch(started: Promise<EventWatch>): EventWatch {
  let inner: EventWatch | undefined;
  let stopped = false;
  const ready = started.then((w) => {
    inner = w;
    if (stopped) w.stop();
    return w;
  });
  ready.catch(() => undefined);
  const it: AsyncIterator<StoreWatchEvent> = {
    async next() {
      const w = await ready;
      if (stopped) return { done: true, value: undefined };
      return w[Symbol.asyncIterator]().next();
    },
    return() {
      stopped = true;
      inner?.stop();
      return Promise.resolve({ done: true, value: undefined });
    },
  };
  return {
    [Symbol.asyncIterator]: () => it,
    stop() {
      stopped = true;
      inner?.stop();
    },
  };
}
