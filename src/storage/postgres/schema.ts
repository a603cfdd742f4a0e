import type { IndexedField } from '../event-store.js';
import type { PgClient } from './options.js';

/** SCHEMA_VERSION is stored in `meta` so that a later layout can migrate databases written by this one. */
export const SCHEMA_VERSION = 1;

/** Op is how a row changed its key; the values are stored. */
export const Op = { ADDED: 1, MODIFIED: 2, DELETED: 3 } as const;

/** FIELD_COLUMNS maps each indexed field to the column that holds it on every version row. */
export const FIELD_COLUMNS: Record<IndexedField, string> = {
  'metadata.name': 'name',
  'involvedObject.kind': 'involved_kind',
  'involvedObject.namespace': 'involved_namespace',
  'involvedObject.name': 'involved_name',
  'involvedObject.uid': 'involved_uid',
  reason: 'reason',
  type: 'type',
};

/**
 * CURRENT_INDEXED lists the fields with an index over current rows, `(field, key)`,
 * so that a filtered page is a keyset range scan in key order: the selectors of
 * `kubectl describe` and `kubectl events --for` (involvedObject name, uid, kind)
 * and of the usual triage lists (reason, type).
 */
export const CURRENT_INDEXED: readonly IndexedField[] = ['involvedObject.uid', 'involvedObject.name', 'involvedObject.kind', 'reason', 'type'];

/** HISTORY_INDEXED lists the fields with an index over superseded rows too; snapshot reads by other fields walk `hist_key`. */
export const HISTORY_INDEXED: readonly IndexedField[] = ['involvedObject.name'];

/** CURRENT selects the live version of each key; queries repeat it word for word so the planner matches the `cur_*` partial indexes. */
export const CURRENT = 'superseded_rv IS NULL AND op <> 3';
/** HISTORY selects replaced versions (tombstones excepted), the rows of the `hist_*` partial indexes. */
export const HISTORY = 'superseded_rv IS NOT NULL AND op <> 3';

/** LockId names the advisory locks the replicas of one schema share. */
export const LockId = { SETUP: 0, SWEEP: 1, COMPACT: 2, PURGE: 3 } as const;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** checkSchemaName accepts a lower-case SQL identifier, so the name is safe to splice into statements. */
export function checkSchemaName(name: string): string {
  if (!SCHEMA_NAME.test(name)) throw new Error(`invalid schema name ${JSON.stringify(name)}: use lower-case letters, digits and _`);
  return name;
}

/**
 * schemaSql is the layout, in schema `s`. One table of versions, MVCC style, as
 * in the SQLite backend: every write adds a row at its revision (`rv`) and the
 * row it replaces gets `superseded_rv`; the state at revision R is the rows with
 * `rv <= R < superseded_rv`. A DELETED row is a tombstone only the watch history
 * reads. `meta` holds the revision counter, whose row lock serialises writers so
 * that commit order is revision order, and the compaction point. `checkpoints`
 * maps times to revisions for the history window. Keys and filter columns use
 * the "C" collation: key order is byte order, as in etcd.
 */
export function schemaSql(s: string): string {
  const cur = CURRENT_INDEXED.map((f) => FIELD_COLUMNS[f]);
  const hist = HISTORY_INDEXED.map((f) => FIELD_COLUMNS[f]);
  const text = 'text COLLATE "C" NOT NULL';
  return `
CREATE SCHEMA IF NOT EXISTS ${s};
CREATE TABLE IF NOT EXISTS ${s}.meta (name text PRIMARY KEY, value bigint NOT NULL);
INSERT INTO ${s}.meta (name, value) VALUES ('revision', 0), ('compacted', 0) ON CONFLICT (name) DO NOTHING;
CREATE TABLE IF NOT EXISTS ${s}.versions (
  rv bigint PRIMARY KEY,
  key ${text},
  op smallint NOT NULL,
  object text NOT NULL,
  prev_rv bigint,
  superseded_rv bigint,
  expires_at bigint,
  name ${text},
  involved_kind ${text},
  involved_namespace ${text},
  involved_name ${text},
  involved_uid ${text},
  reason ${text},
  type ${text}
);
CREATE UNIQUE INDEX IF NOT EXISTS cur_key ON ${s}.versions (key) WHERE ${CURRENT};
${cur.map((c) => `CREATE INDEX IF NOT EXISTS cur_${c} ON ${s}.versions (${c}, key) WHERE ${CURRENT};`).join('\n')}
CREATE INDEX IF NOT EXISTS cur_expiry ON ${s}.versions (expires_at) WHERE ${CURRENT} AND expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS hist_key ON ${s}.versions (key, rv) WHERE ${HISTORY};
${hist.map((c) => `CREATE INDEX IF NOT EXISTS hist_${c} ON ${s}.versions (${c}, key, rv) WHERE ${HISTORY};`).join('\n')}
CREATE INDEX IF NOT EXISTS superseded ON ${s}.versions (superseded_rv) WHERE superseded_rv IS NOT NULL;
CREATE INDEX IF NOT EXISTS tombstones ON ${s}.versions (rv) WHERE op = 3;
CREATE TABLE IF NOT EXISTS ${s}.checkpoints (at bigint PRIMARY KEY, rv bigint NOT NULL);
`;
}

/**
 * applySchema creates the schema of a new database (with `functions`, the
 * definitions of the stored functions) and checks the version of an existing one. Replicas starting together take turns on an advisory lock, so
 * the `IF NOT EXISTS` statements never race.
 */
export async function applySchema(client: PgClient, s: string, functions: string): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1), $2)', [s, LockId.SETUP]);
    await client.query(schemaSql(s));
    await client.query(functions);
    const { rows } = await client.query<{ value: string }>(`SELECT value FROM ${s}.meta WHERE name = 'schema'`);
    const found = rows[0] === undefined ? undefined : Number(rows[0].value);
    if (found === undefined) await client.query(`INSERT INTO ${s}.meta (name, value) VALUES ('schema', $1)`, [SCHEMA_VERSION]);
    else if (found !== SCHEMA_VERSION) throw new Error(`unsupported schema version ${found} in ${s} (this build reads ${SCHEMA_VERSION})`);
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  }
}
