import { StorageError } from '../errors.js';
import { createPool, pgFailure } from './driver.js';
import { DEFAULT_SCHEMA, splitSchema } from './options.js';
import type { PgPool } from './options.js';
import { LockId, checkSchemaName } from './schema.js';

/** ArchiveTablesOptions say which archive a reader of its own tables opens: a `connectionString` (the reader owns its pool) or a `pool` the caller owns. */
export interface ArchiveTablesOptions {
  /** connectionString is the archive's URL; a `schema` query parameter stands for the `schema` option. */
  connectionString?: string;
  pool?: PgPool;
  schema?: string;
}

/** OpenedArchive is a connection to an archive whose schema holds the reader's tables. */
export interface OpenedArchive {
  pool: PgPool;
  ownsPool: boolean;
  schema: string;
}

/**
 * openArchiveTables connects a reader that keeps tables of its own in an
 * archive (the export log, the lease table): it checks that the schema holds
 * an archive and creates the reader's tables (`ddl`) if they are missing, under
 * the lock the stores' schema setup takes, so a replica starting at the same
 * time never races it. A failure is Unreachable, worded `${failure} in schema S: …`.
 */
export async function openArchiveTables(
  options: ArchiveTablesOptions,
  o: { what: string; failure: string; poolSize: number; ddl: (schema: string) => string },
): Promise<OpenedArchive> {
  const fromUrl = splitSchema(options.connectionString);
  const s = options.schema ?? fromUrl.schema ?? DEFAULT_SCHEMA;
  let pool = options.pool;
  const ownsPool = pool === undefined;
  try {
    checkSchemaName(s);
    if (pool === undefined) {
      if (fromUrl.connectionString === undefined) throw new Error(`a postgres ${o.what} needs a connectionString or a pool`);
      pool = await createPool(fromUrl.connectionString, o.poolSize, () => undefined);
    }
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1), $2)', [s, LockId.SETUP]);
      const { rows } = await client.query<{ t: string | null }>('SELECT to_regclass($1) AS t', [`${s}.occurrences`]);
      if (rows[0]?.t == null) throw new Error(`schema ${s} holds no archive (start kevents serve or kevents mirror on it first)`);
      await client.query(o.ddl(s));
      await client.query('COMMIT');
      client.release();
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release(e instanceof Error ? e : true);
      throw e;
    }
  } catch (e) {
    if (ownsPool) await pool?.end().catch(() => undefined);
    const failure = pgFailure(e);
    throw new StorageError('Unreachable', `${o.failure} in schema ${s}: ${failure.message.replace(/^postgres: /, '')}`, { cause: e });
  }
  return { pool, ownsPool, schema: s };
}
