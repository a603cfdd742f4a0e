import type Database from 'better-sqlite3';
import type { IndexedField } from '../event-store.js';
import { eventCluster, eventFirstMs, eventLastMs } from '../../api/index.js';
import type { CoreEvent } from '../../api/index.js';
import { storedLabels } from '../shared/index.js';
import type { Logger } from '../../internal/index.js';
import { migrationLog } from './migration-progress.js';
import type { MigrationProgress } from './migration-progress.js';
import { decodeObject, encodeObject } from '../shared/object-codec.js';
import { TEXTS_SCHEMA } from './texts.js';
import { INTERNED_SCHEMA, idOf, internAll, internColumns } from './interned.js';

/** SCHEMA_VERSION is stored in `meta` so that a later layout can migrate files written by this one. */
export const SCHEMA_VERSION = 12;

/** Op is how a row changed its key; the values are stored. */
export const Op = { ADDED: 1, MODIFIED: 2, DELETED: 3 } as const;

/**
 * nameHash is the 32-bit FNV-1a hash of a name's UTF-16 code units: what the
 * name indexes (`cur_involved_hash`, `occ_regarding`) hold instead of the name, a
 * quarter of its size. Two names may share a hash, so a read through one checks
 * the name itself on the rows it decodes. Stored: it must never change.
 */
export function nameHash(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h | 0;
}

/**
 * FIELD_COLUMNS maps the indexed fields a version row holds to the SQL that reads
 * them: a column, or for metadata.name the part of the key after the namespace.
 * involvedObject.name is held as its `nameHash` (see HASHED_FIELDS).
 * involvedObject.namespace and involvedObject.uid have no column (each would
 * add ~40 bytes to every row): a list checks them on the decoded events, as it
 * checks every field, and they are only ever asked for with involvedObject.name,
 * whose index narrows the rows first.
 */
export const FIELD_COLUMNS: Partial<Record<IndexedField, string>> = {
  'metadata.name': "substr(key, instr(key, '/') + 1)",
  'involvedObject.kind': 'involved_kind',
  'involvedObject.name': 'involved_hash',
  reason: 'reason',
  type: 'type',
};

/** INTERNED_FIELDS are the fields whose column holds the id of the value in `interned` (`interned.ts`): a condition on one compares ids. */
export const INTERNED_FIELDS: ReadonlySet<IndexedField> = new Set(['involvedObject.kind', 'reason', 'type']);

/** INDEX_COLUMNS names the index suffix of each field in INDEX_PRIORITY. */
export const INDEX_COLUMNS: Partial<Record<IndexedField, string>> = { 'involvedObject.name': 'involved_hash' };

/** HASHED_FIELDS are the fields whose column holds `nameHash` of the value: a condition on one compares hashes, and the rows are checked after decoding. */
export const HASHED_FIELDS: ReadonlySet<IndexedField> = new Set(['involvedObject.name']);

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

/**
 * spanSeconds is when an event first happened and how long it went on, in whole
 * seconds (the first time rounded down, the last up, so a window test on them
 * never leaves out an event the exact times would keep): the `first_s` and
 * `span_s` columns. The length rather than the last time, as most events happen
 * once: SQLite stores a 0 in no bytes at all. Both null when the event has no time.
 */
export function spanSeconds(e: CoreEvent): { first_s: number | null; span_s: number | null } {
  const first = eventFirstMs(e);
  const last = eventLastMs(e);
  if (first === undefined || last === undefined) return { first_s: null, span_s: null };
  const first_s = Math.floor(first / 1000);
  return { first_s, span_s: Math.ceil(last / 1000) - first_s };
}

/**
 * labelsColumn is the `labels` column of an event's version row: the JSON of its
 * `metadata.labels` (what `storedLabels` reads from the object), null when it has
 * none, as most events do (a null costs no bytes in the row).
 */
export function labelsColumn(labels: Readonly<Record<string, string>> | undefined): string | null {
  if (labels === undefined || labels === null) return null;
  for (const _ in labels) return JSON.stringify(labels);
  return null;
}

/** CURRENT selects the live version of each key; queries repeat it word for word so the planner can use the `cur_*` partial indexes. */
export const CURRENT = 'superseded_rv IS NULL AND op <> 3';
/** HISTORY selects replaced versions (tombstones excepted), the rows of the `hist_*` partial indexes. */
export const HISTORY = 'superseded_rv IS NOT NULL AND op <> 3';

const indexed = INDEX_PRIORITY.map((f) => INDEX_COLUMNS[f]!);

/**
 * KEY_INDEX_COLUMNS follow `key` in the key-order indexes, so that a page filtered
 * by these low-cardinality fields tests them on the index and reads the table row
 * (a random page) only of the events it returns, not of every event it steps over.
 */
const KEY_INDEX_COLUMNS = ['reason', 'type', 'involved_kind'].join(', ');

/**
 * SPAN_INDEX_COLUMNS follow `key` in the current-row field indexes, so that a read
 * of one object's events within a time window (`activeIn`) tests them on the
 * index and reads the table row only of the events it keeps: one pod's week of
 * events is a few thousand rows, of which a day is a seventh.
 */
const SPAN_INDEX_COLUMNS = ['reason', 'first_s', 'span_s'].join(', ');

/**
 * LAST_S is when a row last happened, in whole seconds (`first_s + span_s`), or for a row with no time, which
 * may have happened at any time, the end of time: what `cur_since` orders current rows by, so that a read of the
 * rows that may have happened since a time is a range of it. Queries repeat it word for word, as SQLite matches
 * an index's expression by its text.
 */
export const LAST_S = `ifnull(first_s + span_s, ${Number.MAX_SAFE_INTEGER})`;

/**
 * SINCE_INDEX_COLUMNS follow LAST_S in `cur_since`: the type, reason and kind an `anyOf` tests and the first time
 * a window's end tests, so a read of a window's failures reads from the table only the rows it keeps. Not the key:
 * the rows kept are few, and their keys are read with them.
 */
const SINCE_INDEX_COLUMNS = ['reason', 'type', 'involved_kind', 'first_s'].join(', ');

/** VERSIONS_TABLE is the table of versions (see SCHEMA); `involved_kind`, `reason` and `type` hold ids of `interned`. */
const VERSIONS_TABLE = `CREATE TABLE IF NOT EXISTS versions (
  rv INTEGER PRIMARY KEY,
  key TEXT NOT NULL,
  op INTEGER NOT NULL,
  object BLOB NOT NULL,
  prev_rv INTEGER,
  superseded_rv INTEGER,
  expires_at INTEGER,
  involved_kind INTEGER NOT NULL,
  involved_hash INTEGER NOT NULL,
  reason INTEGER NOT NULL,
  type INTEGER NOT NULL,
  first_s INTEGER,
  span_s INTEGER,
  cluster TEXT,
  labels TEXT,
  text_rv INTEGER
);`;

/**
 * OCCURRENCES_TABLE is the table of occurrences (see `ARCHIVE_SCHEMA` in archive-tables.ts), here so that the
 * migration to schema 12 creates it in the same transaction as the versions'; `namespace`, `type` and `reason`
 * hold ids of `interned`.
 */
export const OCCURRENCES_TABLE = `CREATE TABLE IF NOT EXISTS occurrences (
  id INTEGER PRIMARY KEY,
  observed_us INTEGER NOT NULL,
  namespace INTEGER NOT NULL,
  regarding_hash INTEGER NOT NULL,
  type INTEGER NOT NULL,
  reason INTEGER NOT NULL,
  count_before INTEGER NOT NULL,
  count_after INTEGER NOT NULL,
  seen_ms INTEGER,
  cluster TEXT,
  observed_time TEXT,
  body TEXT,
  cluster_uid TEXT
);`;

/**
 * SCHEMA is one table of versions, MVCC style: every write adds a row at its
 * revision (`rv`), and the row it replaces gets `superseded_rv`. A key's current
 * state is its row with no `superseded_rv` (a DELETED row is a tombstone that only
 * the watch history reads). The state at revision R is the row with
 * `rv <= R < superseded_rv`. Two families of partial indexes serve lists: `cur_*`
 * over current rows (latest reads, no history to step over), `hist_*` over
 * superseded rows (snapshot reads). Every index but one ends in `key`, so a page is a
 * keyset range scan in key order whatever its filter. That one, `cur_since`, holds
 * current rows in the order they last happened (LAST_S): a read of a window's
 * failures (`activeIn` with `anyOf`) takes from it only the rows since the window's
 * start, and sorts them by key (`ListQueries.pageSince`), as a window is a small part
 * of an archive. Its entries go in at its end, in the order events happen, so it adds
 * no random page write to a create.
 *
 * `object` is the event's JSON compressed by `encodeObject` (a quarter of its
 * size). The row holds no column the key already gives (namespace, name), and
 * the involved object's name as its hash; `first_s` and `span_s` are its span
 * (`spanSeconds`), for reads of a time window.
 * `labels` is the JSON of the event's labels (`labelsColumn`), so that a list selected by
 * labels reads them, not the object, of the rows it steps over.
 * `past_versions` keeps the object of a version compaction removes while an
 * occurrence still describes it (an occurrence's id is the revision of the
 * version it describes, see `ARCHIVE_SCHEMA`): the archive's history, outside
 * the tables and indexes lists and watches read. Its `prev_rv` is the version's
 * own (0 for the first version of its key; null in rows kept before the column
 * existed, where it is unknown), so an event's versions stay a chain from its
 * current one (`eventChains`) after compaction.
 * `text_rv` (in both) names the row of `texts` whose message the object refers
 * to instead of holding it (`texts.ts`), null in nearly every row.
 */
export const SCHEMA = `
${INTERNED_SCHEMA}
${VERSIONS_TABLE}
CREATE INDEX IF NOT EXISTS cur_key ON versions(key, ${KEY_INDEX_COLUMNS}) WHERE ${CURRENT};
${indexed.map((c) => `CREATE INDEX IF NOT EXISTS cur_${c} ON versions(${c}, key, ${SPAN_INDEX_COLUMNS}) WHERE ${CURRENT};`).join('\n')}
CREATE INDEX IF NOT EXISTS cur_since ON versions(${LAST_S}, ${SINCE_INDEX_COLUMNS}) WHERE ${CURRENT};
CREATE INDEX IF NOT EXISTS cur_expiry ON versions(expires_at) WHERE ${CURRENT} AND expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS hist_key ON versions(key, rv, superseded_rv, ${KEY_INDEX_COLUMNS}) WHERE ${HISTORY};
${indexed.map((c) => `CREATE INDEX IF NOT EXISTS hist_${c} ON versions(${c}, key, rv, superseded_rv) WHERE ${HISTORY};`).join('\n')}
CREATE INDEX IF NOT EXISTS superseded ON versions(superseded_rv) WHERE superseded_rv IS NOT NULL;
CREATE INDEX IF NOT EXISTS tombstones ON versions(rv) WHERE op = 3;
CREATE TABLE IF NOT EXISTS past_versions (rv INTEGER PRIMARY KEY, object BLOB NOT NULL, prev_rv INTEGER, text_rv INTEGER);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS checkpoints (at INTEGER PRIMARY KEY, rv INTEGER NOT NULL);
`;

/** VERSIONS_INDEXES are the indexes of `versions` in every layout so far, dropped before a migration rebuilds them. */
const VERSIONS_INDEXES = ['cur_key', 'cur_involved_name', 'cur_expiry', 'hist_key', 'hist_involved_name', 'superseded', 'tombstones'];

/** spanOfJson is one column of an event's span; the migration asks for both of each row, so the last is kept. */
let lastSpan: { json: string; span: ReturnType<typeof spanSeconds> } | undefined;
function spanOfJson(json: unknown, which: 'first_s' | 'span_s'): number | null {
  const text = String(json);
  if (lastSpan?.json !== text) {
    let span: ReturnType<typeof spanSeconds>;
    try {
      span = spanSeconds(JSON.parse(text) as CoreEvent);
    } catch {
      span = { first_s: null, span_s: null };
    }
    lastSpan = { json: text, span };
  }
  return lastSpan.span[which];
}

/** addMigrationFunctions registers the SQL functions a migration of an older layout uses. */
export function addMigrationFunctions(db: Database.Database): void {
  db.function('kevents_encode_object', { deterministic: true }, (json: unknown) => encodeObject(String(json)));
  db.function('kevents_name_hash', { deterministic: true }, (name: unknown) => nameHash(String(name)));
  db.function('kevents_first_s', { deterministic: true }, (json: unknown) => spanOfJson(json, 'first_s'));
  db.function('kevents_span_s', { deterministic: true }, (json: unknown) => spanOfJson(json, 'span_s'));
  db.function('kevents_decode_object', { deterministic: true }, (object: unknown) => decodeObject(object as Buffer));
  db.function('kevents_labels', { deterministic: true }, (json: unknown) => labelsColumn(storedLabels(String(json))));
  db.function('kevents_cluster', { deterministic: true }, (json: unknown) => {
    try {
      return eventCluster(JSON.parse(String(json)) as CoreEvent) || null;
    } catch {
      return null;
    }
  });
}

/**
 * applySchema creates the tables and indexes of a new file, checks the version of
 * an existing one and migrates an older layout, once, in one transaction:
 * versions 1 and 2 stored the object as JSON text beside eight derived columns
 * (version 1 also had `cur_key` and `hist_key` on the key alone), so their rows
 * are copied into the current table with the object encoded. The space the old
 * rows took is left free in the file for new rows (`VACUUM` returns it). Version
 * 3 gains the span columns (`spanSeconds`, filled in for current rows by decoding
 * each) and `cur_involved_hash` is built again with them. Version 4 gains
 * `cluster`, the cluster an archived event came from (its
 * `archive.kevents.io/cluster` label), read from current rows, which per-cluster
 * retention selects by. Version 6 adds the search index (`search-index.ts`),
 * built by `openSearchIndex` after this, kept by triggers on `versions`.
 * Version 7 keeps the same index from the write path instead
 * (`search-index-writer.ts`): the triggers go, and an older build must refuse
 * the file, as its writes would leave the index behind.
 * Version 8 gains `labels` (`labelsColumn`), read from every row but tombstones:
 * lists at a past revision select history rows by it too; `fillLabels` logs its
 * progress on `logger`, as the search index's build does.
 * Version 9 has the same tables; its search index holds keyword values whole
 * (`valueToken` in `search-index.ts`), which `openSearchIndex` writes after
 * this: an older build must refuse the file, as its writes would leave them out.
 * Version 10 has the same tables; a repeat of a long text shares its
 * predecessor's search entry (`search_docs.text`, added by `openSearchIndex`):
 * an older build must refuse the file, as its search would not find the
 * sharers and its purge would drop an entry they share.
 * Version 11 adds `texts` and the `text_rv` columns (`texts.ts`): a repeated
 * long message is stored once, and the objects that repeat it refer to it. Rows
 * written before keep their whole copy and read as before; nothing is
 * rewritten, and the columns are added without touching a row (SQLite's ADD
 * COLUMN), so the migration takes no time. An older build must refuse the file,
 * as it would read the references as the objects' text.
 * Version 12 interns the low-cardinality columns (`interned.ts`): versions'
 * `involved_kind`, `reason` and `type`, occurrences' `namespace`, `type` and
 * `reason` hold ids of `interned`. Both tables are copied into their new
 * layout and their indexes built again, in this one transaction, so a process
 * killed on the way leaves schema 11 whole. An older build must refuse the
 * file, as it would compare the ids with its values.
 */
export function applySchema(db: Database.Database, logger?: Pick<Logger, 'info'>): void {
  const hasMeta = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get() !== undefined;
  const version = hasMeta ? db.prepare<[], { value: number }>("SELECT value FROM meta WHERE name = 'schema'").get()?.value : undefined;
  if (version !== undefined && !(Number.isInteger(version) && version >= 1 && version <= SCHEMA_VERSION)) {
    throw new Error(`unsupported schema version ${version} (this build reads ${SCHEMA_VERSION})`);
  }
  db.transaction(() => {
    const legacy = version === 1 || version === 2;
    if (legacy) {
      for (const index of VERSIONS_INDEXES) db.exec(`DROP INDEX IF EXISTS ${index}`);
      db.exec('ALTER TABLE versions RENAME TO versions_v2');
    }
    if (version === 3) {
      // Version 3 had no span columns, and cur_involved_hash on (involved_hash, key) alone: the
      // spans of current rows are filled in before SCHEMA builds the index again.
      db.exec('DROP INDEX IF EXISTS cur_involved_hash');
      db.exec('ALTER TABLE versions ADD COLUMN first_s INTEGER');
      db.exec('ALTER TABLE versions ADD COLUMN span_s INTEGER');
      addMigrationFunctions(db);
      db.exec(`UPDATE versions SET (first_s, span_s) = (SELECT kevents_first_s(j), kevents_span_s(j) FROM (SELECT kevents_decode_object(object) AS j)) WHERE ${CURRENT}`);
    }
    // Version 4 had no cluster column: it is read from the label of current rows (retention asks for no other).
    if (version === 3 || version === 4) db.exec('ALTER TABLE versions ADD COLUMN cluster TEXT');
    if (version !== undefined && !legacy && version < 8) db.exec('ALTER TABLE versions ADD COLUMN labels TEXT');
    // A file written before cur_since gains it here, in the same layout (a build without it keeps it up to date, as
    // SQLite does every index): a few seconds for a million events, said on the log.
    const bySince =
      version !== undefined && !legacy && db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'cur_since'").get() === undefined
        ? db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM versions WHERE ${CURRENT}`).get()!.n
        : 0;
    const started = performance.now();
    if (bySince > 0) logger?.info('indexing current events by when they last happened', { events: bySince });
    db.exec(SCHEMA);
    if (bySince > 0) logger?.info('current events are indexed by when they last happened', { events: bySince, seconds: Math.round(performance.now() - started) / 1000 });
    // A column any build's writes leave null (unknown), so no new schema version: a file written before it gains it here.
    if (!db.prepare<[], { name: string }>('PRAGMA table_info(past_versions)').all().some((c) => c.name === 'prev_rv')) {
      db.exec('ALTER TABLE past_versions ADD COLUMN prev_rv INTEGER');
    }
    // Schema 11's references: null in every row written before (which holds its whole object), added in place.
    for (const table of ['versions', 'past_versions']) {
      if (!db.prepare<[], { name: string }>(`PRAGMA table_info(${table})`).all().some((c) => c.name === 'text_rv')) db.exec(`ALTER TABLE ${table} ADD COLUMN text_rv INTEGER`);
    }
    db.exec(TEXTS_SCHEMA);
    if (legacy) {
      addMigrationFunctions(db);
      internAll(db, ['involved_kind', 'reason', 'type'].map((c) => `SELECT ${c} AS value FROM versions_v2`));
      db.exec(`INSERT INTO versions (rv, key, op, object, prev_rv, superseded_rv, expires_at, involved_kind, involved_hash, reason, type, first_s, span_s)
        SELECT rv, key, op, kevents_encode_object(object), prev_rv, superseded_rv, expires_at, ${idOf('involved_kind')}, kevents_name_hash(involved_name), ${idOf('reason')}, ${idOf('type')},
          CASE WHEN ${CURRENT} THEN kevents_first_s(object) END, CASE WHEN ${CURRENT} THEN kevents_span_s(object) END
        FROM versions_v2 ORDER BY rv`);
      db.exec('DROP TABLE versions_v2');
    }
    if (version !== undefined && version < 5) {
      addMigrationFunctions(db);
      db.exec(`UPDATE versions SET cluster = kevents_cluster(kevents_decode_object(object)) WHERE ${CURRENT}`);
    }
    // Version 6 kept the search index by triggers, whose functions this build does not register.
    if (version === 6) db.exec('DROP TRIGGER IF EXISTS search_add; DROP TRIGGER IF EXISTS search_drop');
    if (version !== undefined && version < 8) {
      addMigrationFunctions(db);
      const log = logger === undefined ? undefined : migrationLog(logger, { progress: 'reading the labels of stored events', finished: 'the labels of stored events are read' });
      const total = fillLabels(db, log?.progress);
      log?.finished(total);
    }
    // Schema 12 interns the low-cardinality columns: every table holding them is copied into its new layout. Rows of
    // layouts before schema 3 were copied with their values interned above (versions) or are when the occurrences'
    // own migration moves them (`migrateOccurrences`).
    if (version !== undefined && !legacy && version < 12) {
      const occurrences = db.prepare<[], { name: string }>('PRAGMA table_info(occurrences)').all();
      const tables = [{ table: 'versions', columns: ['involved_kind', 'reason', 'type'], what: 'kinds, reasons and types of stored events', create: VERSIONS_TABLE, order: 'rv' }];
      if (occurrences.length > 0 && !occurrences.some((c) => c.name === 'event_name')) {
        tables.push({ table: 'occurrences', columns: ['namespace', 'type', 'reason'], what: 'namespaces, types and reasons of stored occurrences', create: OCCURRENCES_TABLE, order: 'id' });
      }
      internColumns(db, tables, logger);
      db.exec(SCHEMA);
    }
    if (version !== SCHEMA_VERSION) {
      db.prepare("INSERT INTO meta(name, value) VALUES ('schema', ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value").run(SCHEMA_VERSION);
    }
  })();
}

/**
 * fillLabels fills in the `labels` column of every version but tombstones from
 * its object (schema 8's migration), in chunks of revisions, inside the
 * caller's transaction, telling `progress` after each chunk. It returns the
 * number of versions read.
 */
export function fillLabels(db: Database.Database, progress?: MigrationProgress, chunk = 50_000): number {
  const total = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM versions WHERE op <> 3').get()!.n;
  const last = db.prepare<[number, number], { rv: number }>('SELECT rv FROM versions WHERE op <> 3 AND rv > ? ORDER BY rv LIMIT 1 OFFSET ?');
  const fill = db.prepare<[number, number]>('UPDATE versions SET labels = kevents_labels(kevents_decode_object(object)) WHERE op <> 3 AND rv > ? AND rv <= ?');
  let after = 0;
  let done = 0;
  while (done < total) {
    // The last chunk may hold fewer rows than `chunk`: it runs to the end.
    const upto = last.get(after, chunk - 1)?.rv ?? Number.MAX_SAFE_INTEGER;
    done += fill.run(after, upto).changes;
    after = upto;
    progress?.(done, total);
    if (upto === Number.MAX_SAFE_INTEGER) break;
  }
  return done;
}
