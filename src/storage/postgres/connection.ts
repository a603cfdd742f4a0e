/**
 * PostgresConnection owns a store's pool, the schema setup and change feed it
 * starts on, and the write pipeline every write goes through (batches of
 * concurrent writes, two in flight). The list, write, watch and retention parts
 * of `PostgresEventStore` each run over this one owner, so none of them opens,
 * commits or closes on its own, as in the SQLite backend.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../internal/index.js';
import { StorageError } from '../errors.js';
import { Ticker, resolveCommonOptions } from '../shared/index.js';
import type { ResolvedCommonOptions } from '../shared/index.js';
import { ArchiveQueries, LagBounds } from './archive-tables.js';
import { ChangeFeed } from './change-feed.js';
import { createPool, pgFailure } from './driver.js';
import { Maintenance } from './maintenance.js';
import { DEFAULT_MAX_BATCH, DEFAULT_POOL_SIZE, DEFAULT_SCHEMA, DEFAULT_WATCH_CACHE_SIZE, splitSchema } from './options.js';
import type { PgClient, PgPool, PostgresEventStoreOptions } from './options.js';
import { CURRENT, applySchema, checkSchemaName } from './schema.js';
import { WriteBatch, writeFunctionSql } from './write-batch.js';
import type { Outcome, WriteOp } from './write-batch.js';
import { objectColumns, objectOf } from './packed-rows.js';
import type { PackedObject } from './packed-rows.js';

interface Pending {
  op: WriteOp;
  resolve: (o: Outcome) => void;
  reject: (e: Error) => void;
}

/** Started is what a store has once its schema is set up and its change feed listens. */
export interface Started {
  pool: PgPool;
  feed: ChangeFeed;
  maintenance: Maintenance;
}

/** MAX_IN_FLIGHT: a second batch works while the first flushes its WAL (see WriteBatch), and waits at the revision lock while the first works. */
const MAX_IN_FLIGHT = 2;
/** MARK_INTERVAL_MS is the resolution of the time-to-revision marks retention reads. */
const MARK_INTERVAL_MS = 1_000;

/** PostgresConnection starts a store on its database, runs its queries and its write pipeline, and closes it in order. */
export class PostgresConnection {
  readonly o: ResolvedCommonOptions;
  /** s is the store's schema, checked before any statement names it. */
  readonly s: string;
  readonly archive: ArchiveQueries;
  private readonly lags = new LagBounds();
  private lastMark = 0;
  private readonly writer: WriteBatch;
  private readonly maxBatch: number;
  private readonly started: Promise<Started>;
  state: Started | undefined;
  private ownsPool = false;
  private queue: Pending[] = [];
  private flushScheduled = false;
  private inFlight = 0;
  private readonly commits = new Set<Promise<void>>();
  /** tickers are the store's timers (expiry, compaction), stopped first on close. */
  private readonly tickers: Ticker[] = [];
  closed = false;
  private readonly origin = randomUUID();
  private readonly connectionString: string | undefined;

  constructor(private readonly options: PostgresEventStoreOptions) {
    this.o = resolveCommonOptions(options);
    this.maxBatch = options.maxBatch !== undefined && options.maxBatch > 0 ? options.maxBatch : DEFAULT_MAX_BATCH;
    const fromUrl = splitSchema(options.connectionString);
    this.s = options.schema ?? fromUrl.schema ?? DEFAULT_SCHEMA;
    this.connectionString = fromUrl.connectionString;
    this.archive = new ArchiveQueries(this.s);
    this.writer = new WriteBatch(this.s, `${this.s}_changes`, this.origin, options.synchronousCommit === false ? 'async' : 'sync');
    this.started = this.start();
    // Every method awaits `started` and reports its failure; this keeps an unused store from an unhandled rejection.
    this.started.catch(() => undefined);
  }

  /** close stops the timers, lets maintenance and every queued write finish, then stops the feed and ends a pool it opened. */
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
        await setUpSchema(client, this.s, this.o.logger);
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
  async open(): Promise<Started> {
    const state = await this.started;
    if (this.closed) throw new StorageError('Unreachable', 'the store is closed');
    return state;
  }

  /** query runs one statement on the pool (prepared once per connection when it has a `name`), failing in the storage vocabulary. */
  async query<R>(pool: Pick<PgPool, 'query'>, q: { text: string; values: unknown[]; name?: string | undefined }): Promise<R[]> {
    try {
      return (q.name !== undefined ? await pool.query<R>({ name: q.name, text: q.text, values: q.values }) : await pool.query<R>(q.text, q.values)).rows;
    } catch (e) {
      throw pgFailure(e);
    }
  }

  /** current is the live version of `key`, read outside any batch. */
  async current(key: string): Promise<{ rv: number; object: string } | undefined> {
    const { pool } = await this.open();
    const [row] = await this.query<{ rv: string } & PackedObject>(pool, {
      text: `SELECT rv, ${objectColumns(this.s, 'v')} FROM ${this.s}.versions v WHERE key = $1 AND ${CURRENT}`,
      values: [key],
    });
    return row === undefined ? undefined : { rv: Number(row.rv), object: objectOf(row)! };
  }

  /** expiry is when a write with this TTL expires (null: never). */
  expiry(ttlSeconds: number | undefined): number | null {
    return ttlSeconds !== undefined && ttlSeconds > 0 ? this.o.clock.now() + ttlSeconds * 1000 : null;
  }

  /** write queues a caller's write; it fails with Unreachable once the store is closed. */
  async write(op: WriteOp): Promise<Outcome> {
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

/** SETUP_ATTEMPTS is how many times opening runs the schema's setup when PostgreSQL ends it as a deadlock's victim. */
const SETUP_ATTEMPTS = 5;

/**
 * setUpSchema runs `applySchema`, again when PostgreSQL chose its transaction as a deadlock's victim (40P01): the
 * setup's statements take each table's lock in turn while the replicas already open write to them, and PostgreSQL
 * breaks such a cycle by rolling one transaction back, which a client is expected to run again. The setup is
 * idempotent and rolled back whole, so running it again changes nothing but the outcome.
 */
async function setUpSchema(client: PgClient, s: string, logger: Pick<Logger, 'info'>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await applySchema(client, s, writeFunctionSql(s), logger);
      return;
    } catch (e) {
      if ((e as { code?: unknown }).code !== '40P01' || attempt >= SETUP_ATTEMPTS) throw e;
      logger.info('the schema setup was a deadlock victim; running it again', { schema: s, attempt });
      await new Promise((r) => setTimeout(r, 50 * attempt));
    }
  }
}
