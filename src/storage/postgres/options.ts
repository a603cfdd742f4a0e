import type { CommonStoreOptions } from '../shared/index.js';

/** PgQueryResult is the part of a `pg` query result the store reads. */
export interface PgQueryResult<R> {
  rows: R[];
  rowCount: number | null;
}

/** PgNotification is a NOTIFY message as `pg` hands it to a listening client. */
export interface PgNotification {
  channel: string;
  payload?: string | undefined;
}

/**
 * PgClient is the structural subset of `pg`'s PoolClient the store uses. The
 * store never imports the driver: any object of this shape works (a `pg`
 * PoolClient is one).
 */
export interface PgClient {
  query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<PgQueryResult<R>>;
  /** query with a `name` prepares the statement once per connection and reuses its plan. */
  query<R = Record<string, unknown>>(config: PgQueryConfig): Promise<PgQueryResult<R>>;
  release(err?: Error | boolean): void;
  on(event: 'notification', listener: (message: PgNotification) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

/** PgQueryConfig is a statement with its parameters, named to be prepared once per connection. */
export interface PgQueryConfig {
  name: string;
  text: string;
  values: unknown[];
}

/** PgPool is the structural subset of `pg`'s Pool the store uses. */
export interface PgPool {
  connect(): Promise<PgClient>;
  query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<PgQueryResult<R>>;
  query<R = Record<string, unknown>>(config: PgQueryConfig): Promise<PgQueryResult<R>>;
  end(): Promise<void>;
}

/**
 * PostgresEventStoreOptions configure a PostgresEventStore: a `connectionString`
 * (the store loads `pg` and owns the pool), or a `pool` the caller owns.
 */
export interface PostgresEventStoreOptions extends CommonStoreOptions {
  /** connectionString is a `postgres://user@host:port/database` URL; a `schema` query parameter stands for the `schema` option. */
  connectionString?: string;
  /** pool is used instead of a pool of the store's own; the store never ends it. One of its connections stays checked out for LISTEN. */
  pool?: PgPool;
  /** schema is the PostgreSQL schema the store's tables live in, so several stores (or tests) can share one database. */
  schema?: string;
  /** poolSize bounds the connections of the store's own pool. */
  poolSize?: number;
  /**
   * synchronousCommit (the default) acknowledges a write once PostgreSQL has
   * written it to disk, so it survives a crash of the database server too. false
   * acknowledges it once committed in the server's memory: a write still survives
   * the crash of any kevents replica, but a crash of the PostgreSQL server may
   * lose the last fraction of a second of writes (PostgreSQL's
   * `synchronous_commit = off`); each commit then costs no disk flush.
   */
  synchronousCommit?: boolean;
  /** maxBatch caps the writes committed in one transaction. */
  maxBatch?: number;
  /** watchCacheSize is how many recent changes each replica keeps in memory for watchers that resume close to now; older history is read from SQL. */
  watchCacheSize?: number;
  /**
   * searchTimeoutMs bounds each statement of a search (PostgreSQL's
   * `statement_timeout`, set for the search's transaction alone): a statement
   * past it is cancelled and the search fails with Timeout. Other statements
   * keep the server's setting.
   */
  searchTimeoutMs?: number;
}

/** DEFAULT_SCHEMA is where the tables live unless told otherwise. */
export const DEFAULT_SCHEMA = 'kevents';
/** DEFAULT_POOL_SIZE: two connections for pipelined write batches, one for LISTEN, the rest for reads and maintenance. */
export const DEFAULT_POOL_SIZE = 10;
/** DEFAULT_MAX_BATCH is large enough that 64 concurrent writers share one commit. */
export const DEFAULT_MAX_BATCH = 1_000;
/** DEFAULT_WATCH_CACHE_SIZE covers a few seconds of changes at full ingest rate, which is how far back most watch resumes reach. */
export const DEFAULT_WATCH_CACHE_SIZE = 8_192;

/** DEFAULT_SEARCH_TIMEOUT_MS lets a search's statement read an archive's worst index path cold (seconds at tens of millions of versions), and stops one that would hold a connection of the pool past that. */
export const DEFAULT_SEARCH_TIMEOUT_MS = 10_000;

/** MAX_TIMEOUT_MS is the largest statement_timeout PostgreSQL takes (an int of ms). */
const MAX_TIMEOUT_MS = 2_147_483_647;

/** searchTimeoutOf is the store's searchTimeoutMs as statement_timeout takes it: whole ms, at least 1; unset or not positive, the default. */
export function searchTimeoutOf(options: Pick<PostgresEventStoreOptions, 'searchTimeoutMs'>): number {
  const ms = options.searchTimeoutMs;
  return ms !== undefined && ms > 0 ? Math.min(Math.ceil(ms), MAX_TIMEOUT_MS) : DEFAULT_SEARCH_TIMEOUT_MS;
}

/** splitSchema takes a `schema` parameter out of a connection string (PostgreSQL itself would refuse it as an unknown setting). */
export function splitSchema(connectionString: string | undefined): { connectionString: string | undefined; schema: string | undefined } {
  if (connectionString === undefined) return { connectionString, schema: undefined };
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    return { connectionString, schema: undefined };
  }
  const schema = url.searchParams.get('schema') ?? undefined;
  if (schema === undefined) return { connectionString, schema };
  url.searchParams.delete('schema');
  return { connectionString: url.toString(), schema };
}
