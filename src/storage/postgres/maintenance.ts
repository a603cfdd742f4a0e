import type { Clock, Logger } from '../../internal/index.js';
import type { PgClient, PgPool } from './options.js';
import { CURRENT, LockId } from './schema.js';
import { dropTexts } from './texts.js';

/** EXPIRY_BATCH and PURGE_BATCH bound the work of one sweep or purge step, so writers are never held up for long. */
const EXPIRY_BATCH = 1_000;
const PURGE_BATCH = 5_000;

/** Coalesced runs an async task at most once at a time; a request while it runs makes it run once more afterwards. */
export class Coalesced {
  private running: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly task: () => Promise<void>,
    private readonly onError: (e: unknown) => void,
  ) {}

  kick(): void {
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    this.running = this.loop();
  }

  /** idle resolves when the task is not running (after any run already requested). */
  idle(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  private async loop(): Promise<void> {
    try {
      do {
        this.again = false;
        try {
          await this.task();
        } catch (e) {
          this.onError(e);
        }
      } while (this.again);
    } finally {
      this.running = undefined;
    }
  }
}

/** MaintenanceOptions connect Maintenance to its store. */
export interface MaintenanceOptions {
  pool: PgPool;
  schema: string;
  clock: Clock;
  logger: Logger;
  historyWindowSeconds: number;
  /** expire deletes `key` through the write path if its current version is still `rv` and expired at `now`. */
  expire(key: string, rv: number, now: number): Promise<unknown>;
  /** compacted tells the store the compaction point it read. */
  compacted(rv: number): void;
}

/**
 * Maintenance runs TTL expiry and history compaction. Every replica runs both
 * on its timers; an advisory lock lets one replica at a time do the work, and
 * the others skip that round. Expiry writes through the normal write path, so
 * each expired event is a DELETED revision that every replica's watchers see.
 */
export class Maintenance {
  readonly sweeper: Coalesced;
  readonly compactor: Coalesced;
  readonly purger: Coalesced;
  private readonly s: string;

  constructor(private readonly o: MaintenanceOptions) {
    this.s = o.schema;
    this.sweeper = new Coalesced(() => this.sweep(), (e) => this.failed('expiry sweep', e));
    this.compactor = new Coalesced(() => this.compact(), (e) => this.failed('compaction', e));
    this.purger = new Coalesced(() => this.purge(), (e) => this.failed('history purge', e));
  }

  /** idle resolves when no maintenance task is running. */
  async idle(): Promise<void> {
    await Promise.all([this.sweeper.idle(), this.compactor.idle()]);
    await this.purger.idle();
  }

  private async sweep(): Promise<void> {
    for (;;) {
      // The time is read when the sweep runs, so a sweep requested while another ran uses the latest time.
      const now = this.o.clock.now();
      let found = 0;
      await this.locked(LockId.SWEEP, async (c) => {
        const { rows } = await c.query<{ rv: string; key: string }>(
          `SELECT rv, key FROM ${this.s}.versions WHERE ${CURRENT} AND expires_at IS NOT NULL AND expires_at <= $1 ORDER BY expires_at LIMIT $2`,
          [now, EXPIRY_BATCH],
        );
        found = rows.length;
        await Promise.all(rows.map((r) => this.o.expire(r.key, Number(r.rv), now)));
      });
      if (found < EXPIRY_BATCH) return;
    }
  }

  /**
   * compact records a checkpoint (this time, the current revision) and moves the
   * compaction point to the revision of the newest checkpoint older than the
   * history window; everything up to that revision is older than the window.
   */
  private async compact(): Promise<void> {
    const now = this.o.clock.now();
    const s = this.s;
    await this.locked(LockId.COMPACT, async (c) => {
      await c.query(
        `INSERT INTO ${s}.checkpoints (at, rv) SELECT $1, value FROM ${s}.meta WHERE name = 'revision' ` +
          `ON CONFLICT (at) DO UPDATE SET rv = greatest(${s}.checkpoints.rv, excluded.rv)`,
        [now],
      );
      const { rows } = await c.query<{ at: string; rv: string }>(`SELECT at, rv FROM ${s}.checkpoints WHERE at <= $1 ORDER BY at DESC LIMIT 1`, [
        now - this.o.historyWindowSeconds * 1000,
      ]);
      const h = rows[0];
      if (h === undefined) return;
      await c.query(`UPDATE ${s}.meta SET value = greatest(value, $1) WHERE name = 'compacted'`, [h.rv]);
      await c.query(`DELETE FROM ${s}.checkpoints WHERE at < $1`, [h.at]);
    });
    const { rows } = await this.o.pool.query<{ value: string }>(`SELECT value FROM ${s}.meta WHERE name = 'compacted'`);
    this.o.compacted(Number(rows[0]?.value ?? 0));
    this.purger.kick();
  }

  /**
   * purge deletes the rows no revision after the compaction point can see: superseded versions and tombstones, then
   * the texts they referred to that nothing refers to any more.
   */
  private async purge(): Promise<void> {
    const s = this.s;
    for (;;) {
      let deleted = 0;
      await this.locked(LockId.PURGE, async (c) => {
        const point = `(SELECT value FROM ${s}.meta WHERE name = 'compacted')`;
        const a = await c.query<{ text_rv: string | null }>(
          `DELETE FROM ${s}.versions WHERE rv IN (SELECT rv FROM ${s}.versions WHERE superseded_rv IS NOT NULL AND superseded_rv <= ${point} LIMIT $1) RETURNING text_rv`,
          [PURGE_BATCH],
        );
        const b = await c.query<{ text_rv: string | null }>(
          `DELETE FROM ${s}.versions WHERE rv IN (SELECT rv FROM ${s}.versions WHERE op = 3 AND rv <= ${point} LIMIT $1) RETURNING text_rv`,
          [PURGE_BATCH],
        );
        await dropTexts(c, s, [...a.rows, ...b.rows].map((r) => r.text_rv));
        deleted = (a.rowCount ?? 0) + (b.rowCount ?? 0);
      });
      if (deleted === 0) return;
    }
  }

  /** locked runs `fn` on a connection holding advisory lock `id` of this schema; another replica holding it makes this a no-op. */
  private async locked(id: number, fn: (c: PgClient) => Promise<void>): Promise<void> {
    const c = await this.o.pool.connect();
    let broken: Error | undefined;
    try {
      const { rows } = await c.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1), $2) AS ok', [this.s, id]);
      if (rows[0]?.ok !== true) return;
      try {
        await fn(c);
      } finally {
        await c.query('SELECT pg_advisory_unlock(hashtext($1), $2)', [this.s, id]);
      }
    } catch (e) {
      // Dropping the connection ends its session, which releases the lock whatever state the session is in.
      broken = e instanceof Error ? e : new Error(String(e));
      throw e;
    } finally {
      c.release(broken);
    }
  }

  private failed(what: string, e: unknown): void {
    this.o.logger.error(`postgres ${what} failed`, { error: e instanceof Error ? e.message : String(e) });
  }
}
