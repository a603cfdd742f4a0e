/**
 * Interned values (schema 12): the low-cardinality text columns of version rows
 * (`reason`, `type`, `involved_kind`) and of occurrences (`type`, `reason`,
 * `namespace`) hold the id of their value in `interned` instead of the text.
 * An archive holds a few dozen reasons, two types, a few kinds and some
 * namespaces, each repeated in every row and again in the current-row indexes
 * that end in them: an id below 128 is one byte where the text averaged 4-9.
 *
 * Each connection keeps the table in memory (`internedValues`), loaded when
 * first used. A writer adds a value inside the write's transaction, so a value
 * and the rows that hold its id commit together; a rolled back transaction
 * leaves the copy ahead of the file, and the writer reads it again (`forget`).
 * Another connection (the list connection, a follower, the writer thread's
 * readers) sees ids it has not loaded: a value it does not know, or a set of
 * values it matches against, reads the table again when it has grown.
 */
import type Database from 'better-sqlite3';
import type { Logger } from '../../internal/index.js';
import { migrationLog } from './migration-progress.js';
import { perConnection } from './per-connection.js';

/**
 * INTERNED_SCHEMA is the table of interned values. Ids are given in the order values are first written, the
 * migration's by how often each occurs, so the values most rows hold take the one-byte ids (1-127).
 */
export const INTERNED_SCHEMA = 'CREATE TABLE IF NOT EXISTS interned (id INTEGER PRIMARY KEY, value TEXT NOT NULL UNIQUE);';

/** NO_ID is bound for a value no row holds: it matches no id, so an equality on it keeps nothing. */
export const NO_ID = 0;

/** asciiLower folds ASCII letters only, as SQLite's NOCASE and lower() do. */
export function asciiLower(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/** InternedValues is one connection's copy of `interned`. */
export class InternedValues {
  private ids = new Map<string, number>();
  private values = new Map<number, string>();
  private maxId = 0;
  private loaded = false;
  private stmt:
    | {
        all: Database.Statement<[], { id: number; value: string }>;
        after: Database.Statement<[number], { id: number; value: string }>;
        maxId: Database.Statement<[], { id: number | null }>;
        add: Database.Statement<[string], { id: number }>;
      }
    | undefined;

  constructor(private readonly db: Database.Database) {}

  /** statements are prepared when first used: a connection may be opened before the migration adds the table. */
  private statements(): NonNullable<InternedValues['stmt']> {
    this.stmt ??= {
      all: this.db.prepare('SELECT id, value FROM interned'),
      after: this.db.prepare('SELECT id, value FROM interned WHERE id > ?'),
      maxId: this.db.prepare('SELECT max(id) AS id FROM interned'),
      add: this.db.prepare('INSERT INTO interned (value) VALUES (?) RETURNING id'),
    };
    return this.stmt;
  }

  /** load reads the whole table: when first used, and after `forget`. */
  private load(): void {
    this.forget();
    for (const r of this.statements().all.all()) this.put(r.id, r.value);
    this.loaded = true;
  }

  /** forget drops the copy, read again when next used: what a writer does after a rolled back transaction, which may have left values the file does not hold. */
  forget(): void {
    this.ids = new Map();
    this.values = new Map();
    this.maxId = 0;
    this.loaded = false;
  }

  private put(id: number, value: string): void {
    this.ids.set(value, id);
    this.values.set(id, value);
    if (id > this.maxId) this.maxId = id;
  }

  /** refresh reads the values another connection added since this one last read (ids only grow); it tells whether there were any. */
  private refresh(): boolean {
    if (!this.loaded) {
      this.load();
      return true;
    }
    const max = this.statements().maxId.get()?.id ?? 0;
    if (max <= this.maxId) return false;
    for (const r of this.statements().after.all(this.maxId)) this.put(r.id, r.value);
    return true;
  }

  /** id is the id of `value`, added to the table when new: only inside a write's transaction, on the writer's connection. */
  id(value: string): number {
    if (!this.loaded) this.load();
    const known = this.ids.get(value);
    if (known !== undefined) return known;
    const id = this.statements().add.get(value)!.id;
    this.put(id, value);
    return id;
  }

  /** find is the id of `value` for a read, NO_ID when no row holds it. */
  find(value: string): number {
    const known = this.loaded ? this.ids.get(value) : undefined;
    if (known !== undefined) return known;
    return this.refresh() ? (this.ids.get(value) ?? NO_ID) : NO_ID;
  }

  /** value is the value of `id` (undefined when the table has no such id). */
  value(id: number): string | undefined {
    const known = this.loaded ? this.values.get(id) : undefined;
    if (known !== undefined) return known;
    this.refresh();
    return this.values.get(id);
  }

  /** matching is the ids of every value `test` keeps, the values another connection added included. */
  matching(test: (value: string) => boolean): number[] {
    this.refresh();
    const out: number[] = [];
    for (const [id, value] of this.values) if (test(value)) out.push(id);
    return out;
  }

  /** findNoCase is the ids of the values equal to `value` ignoring ASCII case (SQLite's NOCASE): none when no row holds one. */
  findNoCase(value: string): number[] {
    const folded = asciiLower(value);
    return this.matching((v) => v.length === value.length && asciiLower(v) === folded);
  }
}

/** internedValues is the interned values of a connection: one copy per connection, as each sees the file at its own time. */
export const internedValues = perConnection((db) => new InternedValues(db));

/**
 * internAll adds to `interned`, inside a migration's transaction, every value the `selects` (each a SELECT of a
 * `value` column) read that it does not hold, the most frequent first, so that they take the one-byte ids.
 */
export function internAll(db: Database.Database, selects: readonly string[]): void {
  db.exec(INTERNED_SCHEMA);
  if (selects.length === 0) return;
  db.exec(`INSERT OR IGNORE INTO interned (value) SELECT value FROM (${selects.join(' UNION ALL ')}) WHERE value IS NOT NULL GROUP BY value ORDER BY count(*) DESC, value`);
}

/** idOf is the SQL of the id of the value of `expr`, once `internAll` has interned it. */
export function idOf(expr: string): string {
  return `(SELECT id FROM interned WHERE value = ${expr})`;
}

/** InternedTable is a table whose text columns a migration turns into ids. */
interface InternedTable {
  table: string;
  columns: readonly string[];
  /** what names the values in the migration's log lines. */
  what: string;
  /** create is the table's schema 12 statement, with the interned columns as INTEGER. */
  create: string;
  /** order is the column the rows are copied in chunks of (the primary key). */
  order: string;
}

/** COPY_CHUNK is how many rows a migration copies per statement, telling its progress after each. */
const COPY_CHUNK = 100_000;

/**
 * internColumns rewrites the tables of a schema 11 file (every earlier one migrated to 11 first) into schema 12's,
 * inside the caller's transaction, table by table: every value of its interned columns goes into `interned`, the
 * most frequent first, then the table is copied into its new layout with ids in place of the values, in chunks of
 * its primary key (progress lines on `logger`), and its indexes are created again as they were: an index of an
 * older form is brought up to date afterwards as in a schema 11 file (`staleOccurrenceIndexes`). The copy leaves the
 * old rows' pages free in the file, for new rows (`VACUUM` returns them).
 */
export function internColumns(db: Database.Database, tables: readonly InternedTable[], logger?: Pick<Logger, 'info'>): void {
  db.exec(INTERNED_SCHEMA);
  for (const t of tables) {
    if (db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(t.table) === undefined) continue;
    const total = (db.prepare(`SELECT count(*) AS n FROM ${t.table}`).get() as { n: number }).n;
    const log = logger === undefined ? undefined : migrationLog(logger, { progress: `interning the ${t.what}`, finished: `the ${t.what} are interned` }, t.table);
    if (total > 0) logger?.info(`interning the ${t.what}`, { [t.table]: total });
    // Table by table, the first's values first: the versions' kinds, reasons and types, in more rows and indexes than the rest.
    internAll(db, t.columns.map((c) => `SELECT ${c} AS value FROM ${t.table}`));
    const indexes = db.prepare<[string], { name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL").all(t.table);
    for (const i of indexes) db.exec(`DROP INDEX ${i.name}`);
    const old = `${t.table}_v11`;
    db.exec(`ALTER TABLE ${t.table} RENAME TO ${old}`);
    db.exec(t.create);
    // The columns both layouts have (a table written before one was added lacks it: null, as ADD COLUMN gives).
    const have = new Set(db.prepare<[], { name: string }>(`PRAGMA table_info(${old})`).all().map((c) => c.name));
    const columns = db.prepare<[], { name: string }>(`PRAGMA table_info(${t.table})`).all().map((c) => c.name).filter((c) => have.has(c));
    const select = columns.map((c) => (t.columns.includes(c) ? idOf(`${old}.${c}`) : c));
    const copy = db.prepare<[number, number]>(
      `INSERT INTO ${t.table} (${columns.join(', ')}) SELECT ${select.join(', ')} FROM ${old} WHERE ${t.order} > ? AND ${t.order} <= ? ORDER BY ${t.order}`,
    );
    const next = db.prepare<[number, number], { k: number }>(`SELECT ${t.order} AS k FROM ${old} WHERE ${t.order} > ? ORDER BY ${t.order} LIMIT 1 OFFSET ?`);
    let after = Number.MIN_SAFE_INTEGER;
    let done = 0;
    while (done < total) {
      const upto = next.get(after, COPY_CHUNK - 1)?.k ?? Number.MAX_SAFE_INTEGER;
      done += copy.run(after, upto).changes;
      after = upto;
      log?.progress(done, total);
      if (upto === Number.MAX_SAFE_INTEGER) break;
    }
    db.exec(`DROP TABLE ${old}`);
    for (const i of indexes) db.exec(i.sql);
    log?.finished(done);
  }
}
