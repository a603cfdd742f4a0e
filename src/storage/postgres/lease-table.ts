import type { LeaseTable, StoredLease } from '../lease-table.js';
import { StorageError } from '../errors.js';
import { openArchiveTables } from './archive-open.js';
import type { ArchiveTablesOptions } from './archive-open.js';
import { pgFailure } from './driver.js';
import type { PgPool } from './options.js';
import { leaseSql } from './schema.js';

/** LEASE_POOL_SIZE: an elector makes one short statement at a time. */
const LEASE_POOL_SIZE = 1;

/** PostgresLeaseTableOptions configure a PostgresLeaseTable: a `connectionString` (the table owns its pool) or a `pool` the caller owns. */
export type PostgresLeaseTableOptions = ArchiveTablesOptions;

interface LeaseRow {
  namespace: string;
  name: string;
  spec: string;
  version: string;
}

/**
 * PostgresLeaseTable keeps leases in the archive's schema (`leases`): the lock
 * replicas of one archive elect a leader on when they share no cluster. A
 * create is an insert that fails on the key, an update a compare-and-swap on
 * `version`, so two candidates can never both win one round.
 */
export class PostgresLeaseTable implements LeaseTable {
  private closed = false;
  private readonly sql;

  private constructor(
    private readonly pool: PgPool,
    private readonly ownsPool: boolean,
    s: string,
  ) {
    this.sql = {
      get: `SELECT namespace, name, spec, version FROM ${s}.leases WHERE namespace = $1 AND name = $2`,
      create: `INSERT INTO ${s}.leases (namespace, name, spec, version) VALUES ($1, $2, $3, 1) ON CONFLICT DO NOTHING RETURNING namespace, name, spec, version`,
      update: `UPDATE ${s}.leases SET spec = $3, version = version + 1 WHERE namespace = $1 AND name = $2 AND version = $4 RETURNING namespace, name, spec, version`,
    };
  }

  /** open connects to the archive, checks that the schema holds one, and creates the lease table if it is missing. */
  static async open(options: PostgresLeaseTableOptions): Promise<PostgresLeaseTable> {
    const { pool, ownsPool, schema } = await openArchiveTables(options, { what: 'lease table', failure: 'cannot open the leases of the archive', poolSize: LEASE_POOL_SIZE, ddl: leaseSql });
    return new PostgresLeaseTable(pool, ownsPool, schema);
  }

  async get(namespace: string, name: string): Promise<StoredLease | undefined> {
    const [row] = await this.query(this.sql.get, [namespace, name]);
    return row === undefined ? undefined : leaseOf(row);
  }

  async create(lease: Omit<StoredLease, 'version'>): Promise<StoredLease> {
    const [row] = await this.query(this.sql.create, [lease.namespace, lease.name, JSON.stringify(lease.spec)]);
    if (row === undefined) throw new StorageError('KeyExists', `lease ${lease.namespace}/${lease.name} already exists`, { key: `${lease.namespace}/${lease.name}` });
    return leaseOf(row);
  }

  async update(lease: StoredLease): Promise<StoredLease> {
    const [row] = await this.query(this.sql.update, [lease.namespace, lease.name, JSON.stringify(lease.spec), lease.version]);
    if (row === undefined) {
      throw new StorageError('ResourceVersionConflicts', `lease ${lease.namespace}/${lease.name} was written since version ${lease.version} (or is gone)`, {
        key: `${lease.namespace}/${lease.name}`,
      });
    }
    return leaseOf(row);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsPool) await this.pool.end().catch(() => undefined);
  }

  private async query(text: string, values: unknown[]): Promise<LeaseRow[]> {
    if (this.closed) throw new StorageError('Unreachable', 'the lease table is closed');
    try {
      return (await this.pool.query<LeaseRow>(text, values)).rows;
    } catch (e) {
      throw pgFailure(e);
    }
  }
}

function leaseOf(row: LeaseRow): StoredLease {
  return { namespace: row.namespace, name: row.name, spec: JSON.parse(row.spec) as Record<string, unknown>, version: String(row.version) };
}
