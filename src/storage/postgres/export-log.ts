import type { DeadLetter, ExportChange, ExportLog, SinkPosition } from '../export-log.js';
import { StorageError } from '../errors.js';
import { decodeEvent } from '../shared/index.js';
import { decodeOccurrence } from './archive-tables.js';
import type { StoredOccurrence } from './archive-tables.js';
import { openArchiveTables } from './archive-open.js';
import { pgFailure } from './driver.js';
import type { PgPool } from './options.js';
import { exportSql } from './schema.js';
import { objectColumns, objectOf, packedRowsSql } from './packed-rows.js';
import type { PackedObject } from './packed-rows.js';
import { readTexts, textsSql } from './texts.js';

/** EXPORT_POOL_SIZE: the sink loops of one exporter take turns on a few connections; each statement is short. */
const EXPORT_POOL_SIZE = 3;

/** PostgresExportLogOptions configure a PostgresExportLog: a `connectionString` (the log owns its pool) or a `pool` the caller owns. */
export interface PostgresExportLogOptions {
  /** connectionString is the URL the archive's stores write; a `schema` query parameter stands for the `schema` option. */
  connectionString?: string;
  /** pool is used instead of a pool of the log's own; the log never ends it. */
  pool?: PgPool;
  /** schema is the PostgreSQL schema of the archive (the stores' `schema`). */
  schema?: string;
  now?: () => number;
}

interface ChangeRow extends StoredOccurrence, PackedObject {}

/**
 * PostgresExportLog reads the export log of a PostgreSQL archive, which any
 * number of `kevents serve` or `kevents mirror` replicas may be writing. It
 * writes only its own tables (`exportSql`), in short transactions.
 *
 * Reading `id > position` in id order never passes a change that commits later
 * with a smaller id, because an occurrence's id is the revision of its write and
 * revisions become visible in order: every write batch, of every replica, takes
 * the row lock of the revision counter before it picks its revisions and holds
 * it until it has committed (see `writeFunctionSql`), so a batch's rows are
 * visible before the next batch can even number its own. A statement that sees
 * an id therefore sees every smaller one that will ever exist.
 *
 * The event version of a change is read from `versions`, where it stays while
 * it is live or inside the history window; a change older than that is read
 * without it (`ExportChange.event` absent) and its fields come from the
 * occurrence, which carries the event's identity, regarding object, reason,
 * message and counts.
 */
export class PostgresExportLog implements ExportLog {
  private closed = false;
  private readonly sql;

  private constructor(
    private readonly pool: PgPool,
    private readonly ownsPool: boolean,
    private readonly s: string,
    private readonly now: () => number,
  ) {
    this.sql = {
      read:
        `SELECT o.id, o.observed_us, o.namespace, o.event_name, o.body, o.body_z, o.text_rv, ${objectColumns(s, 'v')} FROM ${s}.occurrences o ` +
        `LEFT JOIN ${s}.versions v ON v.rv = o.id WHERE o.id > $1 ORDER BY o.id LIMIT $2`,
      head: `SELECT max(id) AS id FROM ${s}.occurrences`,
      pending: `SELECT count(*) AS n FROM (SELECT id FROM ${s}.occurrences WHERE id > $1 ORDER BY id LIMIT $2) w`,
      getPosition: `SELECT position, state, updated_at FROM ${s}.export_positions WHERE sink = $1`,
      setPosition:
        `INSERT INTO ${s}.export_positions (sink, position, state, updated_at) VALUES ($1, $2, $3, $4) ` +
        'ON CONFLICT (sink) DO UPDATE SET position = excluded.position, state = excluded.state, updated_at = excluded.updated_at',
      addDeadLetters:
        `INSERT INTO ${s}.export_dead_letters (sink, change_id, record, error, attempts, at) ` +
        'SELECT $1, u.c, u.r, u.e, u.a, u.t FROM unnest($2::bigint[], $3::text[], $4::text[], $5::int[], $6::bigint[]) AS u(c, r, e, a, t)',
      deadLetters: `SELECT change_id, record, error, attempts, at FROM ${s}.export_dead_letters WHERE sink = $1 ORDER BY id LIMIT $2`,
    };
  }

  /**
   * open connects to the archive, checks that the schema holds one, and creates
   * the log's tables if they are missing (under the lock the stores' schema
   * setup takes, so a replica starting at the same time never races it).
   */
  static async open(options: PostgresExportLogOptions): Promise<PostgresExportLog> {
    const { pool, ownsPool, schema } = await openArchiveTables(options, { what: 'export log', failure: 'cannot open the archive', poolSize: EXPORT_POOL_SIZE, ddl: (s) => exportSql(s) + textsSql(s) + packedRowsSql(s) });
    return new PostgresExportLog(pool, ownsPool, schema, options.now ?? Date.now);
  }

  async read(after: number, limit: number): Promise<ExportChange[]> {
    const rows = await this.query<ChangeRow>(this.sql.read, [after, limit]);
    const texts = await readTexts(this.pool, this.s, rows.map((r) => r.text_rv));
    return rows.map((row) => {
      const id = Number(row.id);
      const change: ExportChange = { id, observedMicros: Number(row.observed_us), occurrence: decodeOccurrence(row, texts) };
      const object = objectOf(row);
      if (object !== null) change.event = decodeEvent(object, id);
      return change;
    });
  }

  async head(): Promise<number> {
    const [row] = await this.query<{ id: string | null }>(this.sql.head, []);
    return Number(row?.id ?? 0);
  }

  async pending(after: number, cap: number): Promise<number> {
    const [row] = await this.query<{ n: string }>(this.sql.pending, [after, cap]);
    return Number(row?.n ?? 0);
  }

  async getPosition(sink: string): Promise<SinkPosition | undefined> {
    const [row] = await this.query<{ position: string; state: string | null; updated_at: string }>(this.sql.getPosition, [sink]);
    if (row === undefined) return undefined;
    const p: SinkPosition = { position: Number(row.position), updatedAt: Number(row.updated_at) };
    if (row.state !== null) p.state = row.state;
    return p;
  }

  async commit(sink: string, update: { position: number; state?: string | undefined; deadLetters?: DeadLetter[] }): Promise<void> {
    this.check();
    const at = this.now();
    const dead = update.deadLetters ?? [];
    let client;
    try {
      client = await this.pool.connect();
    } catch (e) {
      throw pgFailure(e);
    }
    try {
      await client.query('BEGIN');
      if (dead.length > 0) {
        await client.query(this.sql.addDeadLetters, [
          sink,
          dead.map((d) => d.changeId),
          dead.map((d) => d.record),
          dead.map((d) => d.error),
          dead.map((d) => d.attempts),
          dead.map((d) => d.at ?? at),
        ]);
      }
      await client.query(this.sql.setPosition, [sink, update.position, update.state ?? null, at]);
      await client.query('COMMIT');
      client.release();
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release(e instanceof Error ? e : true);
      throw pgFailure(e);
    }
  }

  async deadLetters(sink: string, limit: number): Promise<DeadLetter[]> {
    const rows = await this.query<{ change_id: string; record: string; error: string; attempts: number; at: string }>(this.sql.deadLetters, [sink, limit]);
    return rows.map((r) => ({ sink, changeId: Number(r.change_id), record: r.record, error: r.error, attempts: r.attempts, at: Number(r.at) }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsPool) await this.pool.end().catch(() => undefined);
  }

  private check(): void {
    if (this.closed) throw new StorageError('Unreachable', 'the export log is closed');
  }

  private async query<R>(text: string, values: unknown[]): Promise<R[]> {
    this.check();
    try {
      return (await this.pool.query<R>(text, values)).rows;
    } catch (e) {
      throw pgFailure(e);
    }
  }
}
