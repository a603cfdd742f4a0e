import type Database from 'better-sqlite3';
import type { IndexedField } from '../event-store.js';

/** SCHEMA_VERSION is stored in `meta` so that a later layout can migrate files written by this one. */
export const SCHEMA_VERSION = 2;

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
 * INDEX_PRIORITY lists the fields that have their own indexes, most selective
 * first; a list with several equalities walks the index of the first one and
 * checks the others on the row. Only involvedObject.name has one: it is what
 * `kubectl describe` and `kubectl events --for` select by, and it is selective.
 * Every index adds a random page write to each create (the main cost of a
 * commit), so the low-cardinality fields (type, reason, kind) are filtered on the
 * rows of a key-order scan instead, which still fills a page quickly.
 */
export const INDEX_PRIORITY: readonly IndexedField[] = ['involvedObject.name'];

/** CURRENT selects the live version of each key; queries repeat it word for word so the planner can use the `cur_*` partial indexes. */
export const CURRENT = 'superseded_rv IS NULL AND op <> 3';
/** HISTORY selects replaced versions (tombstones excepted), the rows of the `hist_*` partial indexes. */
export const HISTORY = 'superseded_rv IS NOT NULL AND op <> 3';

const indexed = INDEX_PRIORITY.map((f) => FIELD_COLUMNS[f]);

/**
 * KEY_INDEX_COLUMNS follow `key` in the key-order indexes, so that a page filtered
 * by these low-cardinality fields tests them on the index and reads the table row
 * (a random page) only of the events it returns, not of every event it steps over.
 */
const KEY_INDEX_COLUMNS = ['reason', 'type', 'involved_kind'].join(', ');

/**
 * SCHEMA is one table of versions, MVCC style: every write adds a row at its
 * revision (`rv`), and the row it replaces gets `superseded_rv`. A key's current
 * state is its row with no `superseded_rv` (a DELETED row is a tombstone that only
 * the watch history reads). The state at revision R is the row with
 * `rv <= R < superseded_rv`. Two families of partial indexes serve lists: `cur_*`
 * over current rows (latest reads, no history to step over), `hist_*` over
 * superseded rows (snapshot reads). Every index ends in `key`, so a page is a
 * keyset range scan in key order whatever its filter.
 */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS versions (
  rv INTEGER PRIMARY KEY,
  key TEXT NOT NULL,
  op INTEGER NOT NULL,
  object TEXT NOT NULL,
  prev_rv INTEGER,
  superseded_rv INTEGER,
  expires_at INTEGER,
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  involved_kind TEXT NOT NULL,
  involved_namespace TEXT NOT NULL,
  involved_name TEXT NOT NULL,
  involved_uid TEXT NOT NULL,
  reason TEXT NOT NULL,
  type TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS cur_key ON versions(key, ${KEY_INDEX_COLUMNS}) WHERE ${CURRENT};
${indexed.map((c) => `CREATE INDEX IF NOT EXISTS cur_${c} ON versions(${c}, key) WHERE ${CURRENT};`).join('\n')}
CREATE INDEX IF NOT EXISTS cur_expiry ON versions(expires_at) WHERE ${CURRENT} AND expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS hist_key ON versions(key, rv, superseded_rv, ${KEY_INDEX_COLUMNS}) WHERE ${HISTORY};
${indexed.map((c) => `CREATE INDEX IF NOT EXISTS hist_${c} ON versions(${c}, key, rv, superseded_rv) WHERE ${HISTORY};`).join('\n')}
CREATE INDEX IF NOT EXISTS superseded ON versions(superseded_rv) WHERE superseded_rv IS NOT NULL;
CREATE INDEX IF NOT EXISTS tombstones ON versions(rv) WHERE op = 3;
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS checkpoints (at INTEGER PRIMARY KEY, rv INTEGER NOT NULL);
`;

/**
 * applySchema creates the tables and indexes of a new file, checks the version of
 * an existing one and migrates an older layout: version 1 had `cur_key` and
 * `hist_key` on the key alone (a one-off rebuild of those two indexes).
 */
export function applySchema(db: Database.Database): void {
  const hasMeta = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get() !== undefined;
  const version = hasMeta ? db.prepare<[], { value: number }>("SELECT value FROM meta WHERE name = 'schema'").get()?.value : undefined;
  if (version !== undefined && version !== 1 && version !== SCHEMA_VERSION) {
    throw new Error(`unsupported schema version ${version} (this build reads ${SCHEMA_VERSION})`);
  }
  db.transaction(() => {
    if (version === 1) db.exec('DROP INDEX IF EXISTS cur_key; DROP INDEX IF EXISTS hist_key;');
    db.exec(SCHEMA);
    if (version !== SCHEMA_VERSION) {
      db.prepare("INSERT INTO meta(name, value) VALUES ('schema', ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value").run(SCHEMA_VERSION);
    }
  })();
}
