import type { IndexedField } from '../event-store.js';
import type { Logger } from '../../internal/index.js';
import { NO_TIME_MS } from '../../api/index.js';
import type { PgClient } from './options.js';
import { SEARCH_ORDER_INDEXES, fillSearchColumns, searchColumnsSql, searchIndexSql, searchOrderIndexSql } from './search-index-writer.js';
import { buildIndex, rebuildIndex } from './build-index.js';
import type { IndexBuild, IndexForm } from './build-index.js';
import { hashOf, indexOccurrences } from './occurrence-indexes.js';
import { packedRowsSql } from './packed-rows.js';
import { textsSql } from './texts.js';

/**
 * SCHEMA_VERSION is stored in `meta` so that a later layout can migrate databases
 * written by this one. 2 added the archive (occurrences, source checkpoints,
 * write marks, lag bounds and the `bytes` counter) and dropped the indexes of
 * low-cardinality fields; `applySchema` brings a 1 up to it. 3 added the
 * `cluster` column of versions and occurrences (per-cluster retention), filled
 * in from the stored JSON of current events and of occurrences. 4 added the
 * search index (`search.ts`): the `search` and `last_ms` columns of versions,
 * filled in for every stored version, and their indexes. 5 added `texts`, where a
 * long message is stored once for the versions and occurrences that repeat it
 * (`texts.ts`), and their `text_rv`: rows written before keep their copy, which
 * reads as before, so the migration adds the table, columns and indexes only. 6 packs the objects of versions and
 * the bodies of occurrences written from then on (`packed-rows.ts`): rows written before keep their text, which reads
 * as before, so the migration adds two columns and lifts two NOT NULLs, and rewrites no row. 7 holds the search's time
 * index in ascending order and the reason index without the key (`SEARCH_ORDER_INDEXES`) and the occurrences' name indexes on the names' hashes
 * (`occurrence-indexes.ts`), and the current and history indexes of the involved name on its hash (`FIELD_INDEX_FIRST`),
 * rebuilt in place on open.
 */
export const SCHEMA_VERSION = 7;

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
 * CURRENT_INDEXED lists the fields with an index over current rows, `(field, key)` (the name's hash for the
 * involved name, FIELD_INDEX_FIRST), so that a page filtered by one is a keyset range scan in key order:
 * involvedObject.name, which the selectors of `kubectl describe` and `kubectl
 * events --for` carry, and reason, which selects the rare events one looks for
 * in a large archive (`reason=FailedMount`). Every index adds a random page
 * write to each create (the main cost of a write batch), so the other fields
 * (type and kind, common values mostly; the uid, never asked for without the
 * name) are filtered on the rows of a key-order scan, which fills a page
 * quickly for a common value. Version 1 had indexes on those too; `archiveSql`
 * drops them.
 */
export const CURRENT_INDEXED: readonly IndexedField[] = ['involvedObject.name', 'reason'];

/**
 * CUR_KEY_INCLUDES are the columns `cur_key` holds beside each current key: its revision, the type, reason and
 * involved kind a list's `anyOf` tests, and the last time (the search's `last_ms`) that bounds its `activeIn` window
 * from below (what incidents and timelines read). A key-order read that keeps a few rows in a hundred tests them on
 * the index alone and reads from the table only the rows it keeps (`ListQueries.rows`); on the key alone, every
 * current row was read from the table to be tested.
 */
export const CUR_KEY_INCLUDES = ['rv', 'type', 'reason', 'involved_kind', 'last_ms'] as const;

/**
 * LAST_MS_OR_END is when a current row last happened (the search's `last_ms`), or for a row with no time (NO_TIME_MS,
 * or search columns never filled), which may have happened at any time, the end of time: what `cur_since` orders
 * current rows by, so that the rows that may have happened since a time are a range of it. Queries repeat it word
 * for word, as the planner matches an index's expression by its text.
 */
export const LAST_MS_OR_END = `coalesce(nullif(last_ms, ${NO_TIME_MS}), 9223372036854775807)`;

/**
 * CUR_SINCE_INCLUDES are the columns `cur_since` holds beside LAST_MS_OR_END: what a read of a window's failures
 * (`activeIn` with `anyOf`) tests and returns, so it chooses its rows on the index alone. `search_time` is in time
 * order too, but over every version, with none of these: each row of its range would be read from the table.
 */
export const CUR_SINCE_INCLUDES = ['rv', 'key', 'type', 'reason', 'involved_kind', 'last_ms'] as const;

/** curSinceSql is `cur_since`'s definition, built once `last_ms` is filled (`applySchema`). */
export function curSinceSql(s: string): string {
  return `CREATE INDEX IF NOT EXISTS cur_since ON ${s}.versions ((${LAST_MS_OR_END})) INCLUDE (${CUR_SINCE_INCLUDES.join(', ')}) WHERE ${CURRENT}`;
}

/**
 * VERSIONS_INSERT_VACUUM_SCALE is the share of `versions` inserted since its last vacuum that starts the next
 * (autovacuum_vacuum_insert_scale_factor; PostgreSQL's default, 0.2, leaves the newest fifth of an archive alone): a
 * vacuum marks pages all-visible, and only there does an index-only read of the newest rows (`cur_since`, a window's
 * failures) skip the table. Such a vacuum reads only the pages written since the last.
 */
export const VERSIONS_INSERT_VACUUM_SCALE = 0.01;

/** HISTORY_INDEXED lists the fields with an index over superseded rows too; snapshot reads by other fields walk `hist_key`. */
export const HISTORY_INDEXED: readonly IndexedField[] = ['involvedObject.name'];

/** INVOLVED_NAME_HASH is what `cur_involved_name` and `hist_involved_name` hold in place of the involved object's name (schema 7). */
export const INVOLVED_NAME_HASH = hashOf('involved_name');

/**
 * FIELD_INDEX_FIRST is what a field column's index holds first where that is not the column itself: the involved
 * name's hash, 8 bytes where the names are 20-60. Every read through one compares the column too (`ListQueries`), so
 * two names of one hash only cost a row read; no read needs names in order (a list asks for one name).
 */
export const FIELD_INDEX_FIRST: Readonly<Record<string, string>> = { involved_name: INVOLVED_NAME_HASH };

/**
 * fieldIndexes are the indexes of CURRENT_INDEXED, `cur_<column>` (the first, then the key), and of HISTORY_INDEXED,
 * `hist_<column>` (the first, the key, the revision), each with its form, so an open rebuilds one an earlier schema
 * built on the name itself (`rebuildIndex`).
 */
export function fieldIndexes(s: string): (IndexBuild & IndexForm)[] {
  const build = (column: string, prefix: 'cur' | 'hist'): IndexBuild & IndexForm => {
    const hashed = FIELD_INDEX_FIRST[column];
    const first = hashed === undefined ? column : `(${hashed})`;
    const rest = prefix === 'cur' ? ['key'] : ['key', 'rv'];
    const keys = 1 + rest.length;
    return {
      name: `${prefix}_${column}`,
      keys,
      expression: hashed !== undefined,
      order: Array<'asc'>(keys).fill('asc'),
      table: 'versions',
      what: 'versions',
      by: `${column} (${prefix === 'cur' ? 'current' : 'replaced'})`,
      sql: `CREATE INDEX IF NOT EXISTS ${prefix}_${column} ON ${s}.versions (${[first, ...rest].join(', ')}) WHERE ${prefix === 'cur' ? CURRENT : HISTORY}`,
    };
  };
  return [...CURRENT_INDEXED.map((f) => build(FIELD_COLUMNS[f], 'cur')), ...HISTORY_INDEXED.map((f) => build(FIELD_COLUMNS[f], 'hist'))];
}

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
  type ${text},
  cluster ${text} DEFAULT ''
);
ALTER TABLE ${s}.versions ADD COLUMN IF NOT EXISTS cluster ${text} DEFAULT '';
ALTER TABLE ${s}.versions SET (autovacuum_vacuum_insert_scale_factor = ${VERSIONS_INSERT_VACUUM_SCALE});
CREATE UNIQUE INDEX IF NOT EXISTS cur_key ON ${s}.versions (key) WHERE ${CURRENT};
CREATE INDEX IF NOT EXISTS cur_expiry ON ${s}.versions (expires_at) WHERE ${CURRENT} AND expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS hist_key ON ${s}.versions (key, rv) WHERE ${HISTORY};
${fieldIndexes(s).map((index) => `${index.sql};`).join('\n')}
CREATE INDEX IF NOT EXISTS superseded ON ${s}.versions (superseded_rv) WHERE superseded_rv IS NOT NULL;
CREATE INDEX IF NOT EXISTS tombstones ON ${s}.versions (rv) WHERE op = 3;
CREATE TABLE IF NOT EXISTS ${s}.checkpoints (at bigint PRIMARY KEY, rv bigint NOT NULL);
`;
}

/**
 * archiveSql is the archive's part of the layout.
 *
 * `occurrences` is append-only and read in (observed_us, id) order, its primary
 * key: a keyset scan of it, or of `occ_regarding` for one regarding name (the
 * object a timeline asks for), of `occ_regarding_ns` for one regarding name
 * in one namespace, or of `occ_event` for one event (`occurrence-indexes.ts`). A namespace is otherwise a
 * condition on the rows of the time scan and the other selectable fields are
 * checked on decoded rows, as in the SQLite backend: each index costs every append. An occurrence's id is the
 * revision of the write it records (a write records at most one), so ids grow in
 * commit order and the body need not carry the event's resourceVersion. `type`,
 * `reason`, `repeats` and `seen_ms` (when the change happened) let counts by
 * reason sum columns; `occurrence_lag` keeps, per hour of happening, the least
 * and greatest lag from happening to observing, so a window of happening maps
 * to a range of observed time. `size` is what the row adds to the `bytes`
 * counter in `meta`, which sums the stored text of live events and of
 * occurrences: what `--max-size` bounds. It also drops the field indexes of
 * version 1 that CURRENT_INDEXED no longer lists.
 *
 * `clusters` binds each mirrored cluster's name to its `kube-system` UID
 * (`bindCluster`). `source_checkpoints` holds each mirrored source's checkpoint; `write_marks`
 * maps time to revision (one row per second of writing at most per replica), so
 * retention finds the events last written before a time through the primary key
 * of `versions`.
 */
export function archiveSql(s: string): string {
  const text = 'text COLLATE "C" NOT NULL';
  return `
CREATE TABLE IF NOT EXISTS ${s}.occurrences (
  observed_us bigint NOT NULL,
  id bigint NOT NULL,
  namespace ${text},
  event_name ${text},
  regarding_name ${text},
  body text NOT NULL,
  type text NOT NULL,
  reason text NOT NULL,
  repeats integer NOT NULL,
  seen_ms bigint,
  size integer NOT NULL,
  cluster ${text} DEFAULT '',
  PRIMARY KEY (observed_us, id)
);
ALTER TABLE ${s}.occurrences ADD COLUMN IF NOT EXISTS cluster ${text} DEFAULT '';
CREATE TABLE IF NOT EXISTS ${s}.source_checkpoints (source text PRIMARY KEY, resource_version text NOT NULL, updated_at bigint NOT NULL);
CREATE TABLE IF NOT EXISTS ${s}.write_marks (at bigint PRIMARY KEY, rv bigint NOT NULL);
CREATE TABLE IF NOT EXISTS ${s}.occurrence_lag (hour bigint PRIMARY KEY, min_us bigint NOT NULL, max_us bigint NOT NULL);
CREATE TABLE IF NOT EXISTS ${s}.clusters (name text PRIMARY KEY, uid text NOT NULL, bound_at bigint NOT NULL);
DROP INDEX IF EXISTS ${s}.cur_involved_uid, ${s}.cur_involved_kind, ${s}.cur_type;
INSERT INTO ${s}.meta (name, value) SELECT 'bytes', coalesce(sum(char_length(object)), 0) FROM ${s}.versions WHERE ${CURRENT}
  ON CONFLICT (name) DO NOTHING;
`;
}

/**
 * widenCurKey makes `cur_key` hold CUR_KEY_INCLUDES beside the key, after the search columns exist and are filled
 * (`last_ms` is one): a new schema's key-only index is replaced at once, and one built by an earlier release (the
 * key alone, or fewer columns) is rebuilt in place, beside the old one, which is then dropped and the new one takes
 * its name. It is decided from the index itself, not the schema version: an older build reads a database with either.
 */
async function widenCurKey(client: PgClient, s: string, logger: Pick<Logger, 'info'>): Promise<void> {
  const { rows } = await client.query<{ columns: string[] }>(
    `SELECT array(SELECT a.attname::text FROM unnest(i.indkey) WITH ORDINALITY k(attnum, n) JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum ORDER BY k.n) AS columns
     FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = 'cur_key'`,
    [s],
  );
  const want = ['key', ...CUR_KEY_INCLUDES];
  const have = rows[0]?.columns ?? [];
  if (have.join(',') === want.join(',')) return;
  const { rows: filled } = await client.query(`SELECT 1 FROM ${s}.versions LIMIT 1`);
  if (filled.length > 0) logger.info('building the current-key index with the columns lists test (once, in place)', { schema: s, columns: want.join(', ') });
  await client.query(`DROP INDEX IF EXISTS ${s}.cur_key_wide`);
  await client.query(`CREATE UNIQUE INDEX cur_key_wide ON ${s}.versions (key) INCLUDE (${CUR_KEY_INCLUDES.join(', ')}) WHERE ${CURRENT}`);
  await client.query(`DROP INDEX ${s}.cur_key`);
  await client.query(`ALTER INDEX ${s}.cur_key_wide RENAME TO cur_key`);
}

/**
 * clusterBackfillSql fills in the `cluster` column of a database written before
 * it existed: from the label of current archived events, and from the body of
 * occurrences (the rows of local writes name none, and keep "").
 */
function clusterBackfillSql(s: string): string {
  return `
UPDATE ${s}.versions SET cluster = coalesce(object::json->'metadata'->'labels'->>'archive.kevents.io/cluster', '')
  WHERE ${CURRENT} AND object LIKE '%archive.kevents.io/cluster%';
UPDATE ${s}.occurrences SET cluster = coalesce(body::json->>'cluster', '') WHERE body LIKE '%"cluster"%';
`;
}

/**
 * leaseSql is the lease table (see LeaseTable): one row per lease, its spec as
 * JSON text and a version that every write bumps, which an update must name.
 */
export function leaseSql(s: string): string {
  return `CREATE TABLE IF NOT EXISTS ${s}.leases (namespace text NOT NULL, name text NOT NULL, spec text NOT NULL, version bigint NOT NULL, PRIMARY KEY (namespace, name));`;
}

/**
 * exportSql is what sinks keep in the archive (see PostgresExportLog): a
 * position, with the state of its policy, per sink, and the records sinks
 * refused for good, and `occ_id`, which the log reads occurrences by, in id
 * order from a sink's position (ids only grow, so an append adds to the
 * index's last page). The store creates it with the rest of the layout, and the
 * export log too, so an exporter also works on a database an earlier build set
 * up.
 */
export function exportSql(s: string): string {
  return `
CREATE INDEX IF NOT EXISTS occ_id ON ${s}.occurrences (id);
CREATE TABLE IF NOT EXISTS ${s}.export_positions (sink text PRIMARY KEY, position bigint NOT NULL, state text, updated_at bigint NOT NULL);
CREATE TABLE IF NOT EXISTS ${s}.export_dead_letters (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  sink text NOT NULL,
  change_id bigint NOT NULL,
  record text NOT NULL,
  error text NOT NULL,
  attempts integer NOT NULL,
  at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS export_dead_letters_sink ON ${s}.export_dead_letters (sink, id);
`;
}

/**
 * applySchema creates the schema of a new database (with `functions`, the
 * definitions of the stored functions), migrates one of an earlier version and
 * refuses one of a later version. Replicas starting together take turns on an
 * advisory lock, so the `IF NOT EXISTS` statements never race. Version 1 lacks
 * only the archive's tables and the `bytes` counter, which `archiveSql` adds
 * (counting the live events a version 1 database holds). A database older
 * than 4 gets its search columns filled in place (`fillSearchColumns`, which
 * logs its progress) before their indexes are built.
 */
export async function applySchema(client: PgClient, s: string, functions: string, logger: Pick<Logger, 'info'>): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1), $2)', [s, LockId.SETUP]);
    await client.query(schemaSql(s));
    for (const index of fieldIndexes(s)) await rebuildIndex(client, s, logger, index);
    const { rows } = await client.query<{ value: string }>(`SELECT value FROM ${s}.meta WHERE name = 'schema'`);
    const found = rows[0] === undefined ? undefined : Number(rows[0].value);
    if (found !== undefined && found > SCHEMA_VERSION) throw new Error(`unsupported schema version ${found} in ${s} (this build reads ${SCHEMA_VERSION})`);
    await client.query(archiveSql(s));
    if (found !== undefined && found < 3) await client.query(clusterBackfillSql(s));
    await client.query(exportSql(s));
    await client.query(textsSql(s));
    await client.query(packedRowsSql(s));
    await indexOccurrences(client, s, logger);
    await client.query(searchColumnsSql(s));
    if (found !== undefined && found < 4) await fillSearchColumns(client, s, logger);
    await widenCurKey(client, s, logger);
    await client.query(searchIndexSql(s));
    for (const index of SEARCH_ORDER_INDEXES) {
      await rebuildIndex(client, s, logger, { name: index.name, keys: index.keys, expression: index.expression, order: index.order, table: 'versions', what: 'versions', by: index.by, sql: searchOrderIndexSql(s, index) });
    }
    // The planner's statistics of the new index's expression come from ANALYZE: until then it would guess a third of the rows.
    if (await buildIndex(client, s, logger, { name: 'cur_since', table: 'versions', what: 'versions', by: 'when current ones last happened', sql: curSinceSql(s) })) {
      await client.query(`ANALYZE ${s}.versions`);
    }
    await client.query(functions);
    await client.query(`INSERT INTO ${s}.meta (name, value) VALUES ('schema', $1) ON CONFLICT (name) DO UPDATE SET value = excluded.value`, [SCHEMA_VERSION]);
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  }
}
