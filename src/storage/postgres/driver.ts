import { StorageError, isStorageError } from '../errors.js';
import type { PgPool } from './options.js';

/** PgConnectable is the part of `pg`'s Client a pool connects: what closeOnFailedLogin wraps. */
interface PgConnectable {
  connect(callback: (err: Error | undefined) => void): void;
  end(): Promise<void>;
}

type PgClientClass = new (...args: never[]) => PgConnectable;

interface PgModule {
  Client: PgClientClass;
  Pool: new (config: { connectionString: string; max: number; Client?: PgClientClass }) => PgPool & {
    on(event: 'error', listener: (e: Error) => void): unknown;
    on(event: 'connect', listener: (client: { on(event: 'error', listener: (e: Error) => void): unknown }) => void): unknown;
  };
}

/** DRIVER is the optional peer dependency; its name sits in a variable so that nothing resolves it before a postgres store is opened. */
const DRIVER = 'pg';

/**
 * createPool loads `pg` on first use and opens a pool. Without the package the
 * store fails with Unreachable and says how to install it.
 */
export async function createPool(connectionString: string, max: number, onIdleError: (e: Error) => void): Promise<PgPool> {
  let mod: { default?: PgModule } & Partial<PgModule>;
  try {
    mod = (await import(DRIVER)) as { default?: PgModule } & Partial<PgModule>;
  } catch (e) {
    throw new StorageError('Unreachable', 'the postgres storage backend needs the optional package "pg": npm install pg', { cause: e });
  }
  const Pool = mod.default?.Pool ?? mod.Pool;
  const Client = mod.default?.Client ?? mod.Client;
  if (Pool === undefined || Client === undefined) throw new StorageError('Unreachable', 'the installed "pg" package has no Pool');
  const pool = new Pool({ connectionString, max, Client: closeOnFailedLogin(Client) });
  // An idle connection that drops (server restart) is reported here; without a listener it would crash the process.
  pool.on('error', onIdleError);
  // The pool listens to a connection only while it is idle: one that drops while checked out, between
  // two queries (a transaction waiting on other work, a held advisory lock), emits an error nobody
  // hears, which crashes the process. Its holder learns of the loss from its next query (Unreachable)
  // and releases it as broken, so the event itself needs no more than a listener.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * closeOnFailedLogin is `pg`'s Client, closing its socket when a login fails on
 * this side (the server asks for a password and none was given): `pg` leaves
 * that socket open until the server's authentication_timeout, a minute, and a
 * process that has reported its failure would wait that long to exit.
 */
function closeOnFailedLogin(Base: PgClientClass): PgClientClass {
  return class extends Base {
    override connect(callback: (err: Error | undefined) => void): void {
      super.connect((err) => {
        if (err !== undefined && err !== null) void this.end().catch(() => undefined);
        callback(err);
      });
    }
  };
}

/** CONNECTION_CODES are the driver's socket errors and PostgreSQL's connection-exception and shutdown SQLSTATEs. */
const CONNECTION_CODES = /^(08\w{3}|57P0[1-3]|53300|ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EPIPE|EHOSTUNREACH)$/;

/** pgFailure wraps a driver error in the storage vocabulary: a lost or refused connection is Unreachable, a cancelled statement Timeout, anything else Internal. */
export function pgFailure(e: unknown): StorageError {
  if (isStorageError(e)) return e;
  const code = (e as { code?: unknown } | null)?.code;
  const message = e instanceof Error ? e.message : String(e);
  // 53100 is disk_full: the database's own disk, as SQLITE_FULL is the file's.
  if (code === '53100') return new StorageError('NoSpace', `postgres: ${message}`, { cause: e });
  // 57014 is query_canceled: a statement past its statement_timeout (or cancelled by an administrator) did nothing.
  if (code === '57014') return new StorageError('Timeout', `postgres: ${message}`, { cause: e });
  const unreachable = (typeof code === 'string' && CONNECTION_CODES.test(code)) || /Connection terminated|not queryable|pool after calling end/i.test(message);
  return new StorageError(unreachable ? 'Unreachable' : 'Internal', `postgres: ${message}`, { cause: e });
}
