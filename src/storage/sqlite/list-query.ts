import type Database from 'better-sqlite3';
import type { ActiveWindow, AnyOf, IndexedField } from '../event-store.js';
import { pageOfHeld } from '../shared/index.js';
import { CURRENT, FIELD_COLUMNS, HASHED_FIELDS, HISTORY, INDEX_COLUMNS, INDEX_PRIORITY, INTERNED_FIELDS, LAST_S, nameHash } from './schema.js';
import { NO_ID, internedValues } from './interned.js';
import type { InternedValues } from './interned.js';
import { storedTexts } from './texts.js';
import type { StoredTexts } from './texts.js';

/** ListRow is one version row a list reads. */
export interface ListRow {
  rv: number;
  key: string;
  /** object is the encoded event (`decodeObject`). */
  object: Buffer;
}

/** ListScope is what one list query selects, apart from where it starts. */
export interface ListScope {
  /** at is the revision to read at; `latest` says it is the newest, so history can be skipped. */
  at: number;
  latest: boolean;
  /** high bounds keys from above (exclusive); undefined for all namespaces. */
  high: string | undefined;
  fieldEquals: Partial<Record<IndexedField, string>> | undefined;
  /** activeIn is tested on the span columns (whole seconds, so it keeps a superset); rows are checked exactly after decoding. */
  activeIn?: ActiveWindow | undefined;
  /** anyOf is tested on the type, reason and kind columns, which the key-order indexes hold: rows it leaves out are never read. */
  anyOf?: AnyOf | undefined;
}

/** Params are a statement's named parameters. */
export type Params = Record<string, string | number>;

/**
 * ListQueries builds and caches the keyset queries of lists. A page is always
 * `key > @start ORDER BY key LIMIT @limit` on an index that ends in `key`, so the
 * cost of a page does not depend on how far into the list it is.
 */
/** MAX_OBJECTS_AT_ONCE bounds the revisions of one `objects` read (and so the statements prepared for it). */
export const MAX_OBJECTS_AT_ONCE = 128;

/**
 * SINCE_CANDIDATES bounds the rows `pageSince` takes from a window and holds, sorted by key, for the pages of
 * its read: a window with more rows than this that its anyOf keeps (a broad anyOf, a long window) is read in key
 * order instead, on `cur_key`, a page at a time.
 */
export const SINCE_CANDIDATES = 50_000;

export class ListQueries {
  private readonly cache = new Map<string, Database.Statement<Params, ListRow>>();
  private readonly countCache = new Map<string, Database.Statement<Params, { n: number }>>();
  private objectStmt: Database.Statement<[number], { object: Buffer }> | undefined;
  private newestStmt: Database.Statement<[number, number], { rv: number; object: Buffer }> | undefined;
  private readonly objectsStmts = new Map<number, Database.Statement<number[], { rv: number; object: Buffer }>>();
  private readonly sinceStmts = new Map<string, Database.Statement<Params, { rv: number; key: string }>>();
  /** sinceRead is the last read of `pageSince`: its statement and values, revision, first key and the rows it chose, in key order. */
  private sinceRead: { query: string; at: number; start: string; keys: { rv: number; key: string }[] } | undefined;

  /** texts puts back the messages the objects this connection reads refer to (`texts.ts`). */
  readonly texts: StoredTexts;
  /** interned maps the values a list selects by to the ids the rows hold (`interned.ts`). */
  private readonly interned: InternedValues;

  constructor(private readonly db: Database.Database) {
    this.texts = storedTexts(db);
    this.interned = internedValues(db);
  }

  /** page reads up to `limit` rows after `start` in key order. */
  page(scope: ListScope, start: string, limit: number): ListRow[] {
    return this.run(scope, start, limit, 'rv, key, object') as ListRow[];
  }

  /**
   * pageSince reads what `page` would, for a latest read of the rows that may have happened since a time with
   * anyOf (a window's failures, what incidents read), through `cur_since`: the rows since that time that the
   * index's columns keep, sorted here by key, and the objects of the first `limit`. Undefined when the scope is
   * no such read (another filter has a better index, or a reason is kept whenever it happened), or when more
   * than SINCE_CANDIDATES rows are candidates; then `page` reads it.
   */
  pageSince(scope: ListScope, start: string, limit: number): ListRow[] | undefined {
    const since = scope.activeIn?.sinceMs;
    if (!scope.latest || since === undefined || scope.anyOf === undefined || (scope.activeIn?.alwaysReasons?.length ?? 0) > 0) return undefined;
    if (scope.fieldEquals !== undefined && INDEX_PRIORITY.some((f) => scope.fieldEquals![f] !== undefined)) return undefined;
    const { sql, params } = this.buildSince(scope, since);
    const query = `${sql}\u0000${JSON.stringify(params)}`;
    let read = this.sinceRead;
    // The next page of the same read at the same revision takes its rows from those the first page read: a window's
    // rows are read once, not once a page.
    if (read === undefined || read.query !== query || read.at !== scope.at || start < read.start) {
      let stmt = this.sinceStmts.get(sql);
      if (stmt === undefined) {
        stmt = this.db.prepare<Params, { rv: number; key: string }>(sql);
        this.sinceStmts.set(sql, stmt);
      }
      const keys = stmt.all({ ...params, start, cap: SINCE_CANDIDATES + 1 });
      if (keys.length > SINCE_CANDIDATES) return undefined;
      keys.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      read = this.sinceRead = { query, at: scope.at, start, keys };
    }
    const { page, last } = pageOfHeld(read.keys, start, limit);
    // Its last page ends the read: another read of the same rows reads them again.
    if (last) this.sinceRead = undefined;
    const rows: ListRow[] = [];
    for (let i = 0; i < page.length; i += MAX_OBJECTS_AT_ONCE) {
      const chunk = page.slice(i, i + MAX_OBJECTS_AT_ONCE);
      const objects = new Map(this.objects(chunk.map((k) => k.rv)).map((o) => [o.rv, o.object]));
      for (const k of chunk) {
        const object = objects.get(k.rv);
        // Read at the revision the keys were chosen at, which no write has passed since: a row chosen is there.
        if (object !== undefined) rows.push({ rv: k.rv, key: k.key, object });
      }
    }
    return rows;
  }

  /** pageKeys reads what `page` would without the objects: the index alone answers it, with no read of the table's rows. */
  pageKeys(scope: ListScope, start: string, limit: number): Omit<ListRow, 'object'>[] {
    return this.run(scope, start, limit, 'rv, key');
  }

  /** pageLabels reads what `pageKeys` would with each row's `labels` column (`labelsColumn`), not its object. */
  pageLabels(scope: ListScope, start: string, limit: number): (Omit<ListRow, 'object'> & { labels: string | null })[] {
    return this.run(scope, start, limit, 'rv, key, labels') as (Omit<ListRow, 'object'> & { labels: string | null })[];
  }

  /** newest reads the current versions below revision `before`, newest first, down the table itself (its rows are in revision order). */
  newest(before: number, limit: number): { rv: number; object: Buffer }[] {
    this.newestStmt ??= this.db.prepare<[number, number], { rv: number; object: Buffer }>(
      `SELECT rv, object FROM versions NOT INDEXED WHERE ${CURRENT} AND rv < ? ORDER BY rv DESC LIMIT ?`,
    );
    return this.newestStmt.all(before, limit);
  }

  /** object reads one version's encoded object by its revision. */
  object(rv: number): Buffer | undefined {
    this.objectStmt ??= this.db.prepare<[number], { object: Buffer }>('SELECT object FROM versions WHERE rv = ?');
    return this.objectStmt.get(rv)?.object;
  }

  /** objects reads the encoded objects of several versions by revision, in one statement (at most MAX_OBJECTS_AT_ONCE). */
  objects(rvs: readonly number[]): { rv: number; object: Buffer }[] {
    const n = rvs.length;
    if (n === 0) return [];
    if (n > MAX_OBJECTS_AT_ONCE) throw new RangeError(`objects: ${n} revisions, at most ${MAX_OBJECTS_AT_ONCE} at once`);
    let stmt = this.objectsStmts.get(n);
    if (stmt === undefined) {
      stmt = this.db.prepare<number[], { rv: number; object: Buffer }>(`SELECT rv, object FROM versions WHERE rv IN (${Array(n).fill('?').join(',')})`);
      this.objectsStmts.set(n, stmt);
    }
    return stmt.all(...rvs);
  }

  private run(scope: ListScope, start: string, limit: number, columns: string): Omit<ListRow, 'object'>[] {
    const { sql, params } = this.build(scope, columns);
    let stmt = this.cache.get(sql);
    if (stmt === undefined) {
      stmt = this.db.prepare<Params, ListRow>(sql);
      this.cache.set(sql, stmt);
    }
    return stmt.all({ ...params, start, limit });
  }

  /**
   * count is the number of objects after `start` within the scope's key range, at
   * its revision, or undefined when there are more than `cap`: counting is a scan
   * of the rest of the index, so it is bounded to keep a page cheap.
   */
  count(scope: Omit<ListScope, 'fieldEquals' | 'activeIn' | 'anyOf'>, start: string, cap: number): number | undefined {
    const range = scope.high === undefined ? 'key > @start' : 'key > @start AND key < @high';
    const sql = scope.latest
      ? `SELECT count(*) AS n FROM (SELECT 1 FROM versions INDEXED BY cur_key WHERE ${CURRENT} AND ${range} LIMIT @cap)`
      : `SELECT (SELECT count(*) FROM (SELECT 1 FROM versions INDEXED BY cur_key WHERE ${CURRENT} AND rv <= @at AND ${range} LIMIT @cap))
              + (SELECT count(*) FROM (SELECT 1 FROM versions INDEXED BY hist_key WHERE ${HISTORY} AND rv <= @at AND superseded_rv > @at AND ${range} LIMIT @cap)) AS n`;
    let stmt = this.countCache.get(sql);
    if (stmt === undefined) {
      stmt = this.db.prepare<Params, { n: number }>(sql);
      this.countCache.set(sql, stmt);
    }
    const params: Params = { start, cap: cap + 1 };
    if (scope.high !== undefined) params.high = scope.high;
    if (!scope.latest) params.at = scope.at;
    const n = stmt.get(params)?.n ?? 0;
    return n > cap ? undefined : n;
  }

  /** explain returns SQLite's query plan of a page query, for tests that hold the plan to keyset scans. */
  explain(scope: ListScope, columns = 'rv, key, object'): string[] {
    const { sql, params } = this.build(scope, columns);
    const rows = this.db.prepare<Params, { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`).all({ ...params, start: '', limit: 1 });
    return rows.map((r) => r.detail);
  }

  /** explainSince returns SQLite's query plan of `pageSince`'s read of a scope it serves. */
  explainSince(scope: ListScope): string[] {
    const { sql, params } = this.buildSince(scope, scope.activeIn?.sinceMs ?? 0);
    const rows = this.db.prepare<Params, { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`).all({ ...params, start: '', cap: 1 });
    return rows.map((r) => r.detail);
  }

  /**
   * buildSince is `pageSince`'s statement: the range of `cur_since` from the window's start (LAST_S, exactly the
   * span test of `build`), the window's end and the anyOf on its columns, then the key range and fields on the
   * rows they keep.
   */
  private buildSince(scope: ListScope, sinceMs: number): { sql: string; params: Params } {
    const params: Params = { since_s: Math.floor(sinceMs / 1000) };
    const conds = [`${LAST_S} >= @since_s`];
    if (scope.activeIn?.untilMs !== undefined) {
      conds.push('(first_s IS NULL OR first_s < @until_s)');
      params.until_s = Math.ceil(scope.activeIn.untilMs / 1000);
    }
    conds.push(anyOfSql(scope.anyOf ?? {}, { type: 'type', reason: 'reason', kind: 'involved_kind' }, params, 'any', this.interned));
    conds.push(...this.keyAndFields(scope, params));
    return { sql: `SELECT rv, key FROM versions INDEXED BY cur_since WHERE ${CURRENT} AND ${conds.join(' AND ')} LIMIT @cap`, params };
  }

  /** keyAndFields are the conditions of a page on its key range and the field columns, with their values added to `params`. */
  private keyAndFields(scope: ListScope, params: Params): string[] {
    const conds: string[] = ['key > @start'];
    if (scope.high !== undefined) {
      conds.push('key < @high');
      params.high = scope.high;
    }
    let i = 0;
    for (const [field, value] of Object.entries(scope.fieldEquals ?? {})) {
      const column = FIELD_COLUMNS[field as IndexedField];
      if (value === undefined || column === undefined) continue;
      conds.push(`${column} = @f${i}`);
      // A value no row holds has no id: NO_ID, which no row holds either, so the page keeps nothing, as before.
      params[`f${i++}`] = HASHED_FIELDS.has(field as IndexedField) ? nameHash(value) : INTERNED_FIELDS.has(field as IndexedField) ? this.interned.find(value) : value;
    }
    return conds;
  }

  private build(scope: ListScope, columns: string): { sql: string; params: Params } {
    const params: Params = {};
    const conds = this.keyAndFields(scope, params);
    const lead = scope.fieldEquals === undefined ? undefined : INDEX_PRIORITY.find((f) => scope.fieldEquals![f] !== undefined);
    if (scope.activeIn !== undefined) {
      const w = scope.activeIn;
      const span: string[] = [];
      if (w.sinceMs !== undefined) {
        span.push('(first_s IS NULL OR first_s + span_s >= @since_s)');
        params.since_s = Math.floor(w.sinceMs / 1000);
      }
      if (w.untilMs !== undefined) {
        span.push('(first_s IS NULL OR first_s < @until_s)');
        params.until_s = Math.ceil(w.untilMs / 1000);
      }
      const always = (w.alwaysReasons ?? []).map((r, i) => {
        params[`always${i}`] = this.interned.find(r);
        return `@always${i}`;
      });
      if (span.length > 0) conds.push(always.length > 0 ? `(reason IN (${always.join(', ')}) OR (${span.join(' AND ')}))` : span.join(' AND '));
    }
    if (scope.anyOf !== undefined) conds.push(anyOfSql(scope.anyOf, { type: 'type', reason: 'reason', kind: 'involved_kind' }, params, 'any', this.interned));
    const suffix = lead === undefined ? 'key' : INDEX_COLUMNS[lead]!;
    const where = conds.join(' AND ');
    if (scope.latest) {
      return { sql: `SELECT ${columns} FROM versions INDEXED BY cur_${suffix} WHERE ${CURRENT} AND ${where} ORDER BY key LIMIT @limit`, params };
    }
    params.at = scope.at;
    const sql =
      `SELECT ${columns} FROM versions INDEXED BY cur_${suffix} WHERE ${CURRENT} AND rv <= @at AND ${where} ` +
      `UNION ALL ` +
      `SELECT ${columns} FROM versions INDEXED BY hist_${suffix} WHERE ${HISTORY} AND rv <= @at AND superseded_rv > @at AND ${where} ` +
      `ORDER BY key LIMIT @limit`;
    return { sql, params };
  }
}

/**
 * anyOfSql is an AnyOf as a SQL condition on the columns that hold an event's
 * type, reason and kind as ids of `interned` (`kind` undefined where there is
 * none: then an AnyOf that lists kinds is left to the decoded rows, as an OR
 * cannot be split), with their ids added to `params` under `prefix`. Types
 * compare ignoring ASCII case, as SQLite's NOCASE did on the values: a type
 * stands for the ids of every value equal to it so. A value no row holds is
 * NO_ID, which matches no row.
 */
export function anyOfSql(anyOf: AnyOf, columns: { type: string; reason: string; kind?: string }, params: Params, prefix: string, interned: InternedValues): string {
  const exact = (v: string): number[] => [interned.find(v)];
  const noCase = (v: string): number[] => {
    const ids = interned.findNoCase(v);
    return ids.length > 0 ? ids : [NO_ID];
  };
  const lists: [string, readonly string[] | undefined, (v: string) => number[]][] = [
    [columns.type, anyOf.types, noCase],
    [columns.reason, anyOf.reasons, exact],
  ];
  if (columns.kind !== undefined) lists.push([columns.kind, anyOf.kinds, exact]);
  else if ((anyOf.kinds?.length ?? 0) > 0) return '1';
  const terms: string[] = [];
  for (const [i, [column, values, ids]] of lists.entries()) {
    if (values === undefined || values.length === 0) continue;
    const names = values.flatMap((v, j) =>
      ids(v).map((id, k) => {
        params[`${prefix}${i}_${j}_${k}`] = id;
        return `@${prefix}${i}_${j}_${k}`;
      }),
    );
    terms.push(`${column} IN (${names.join(', ')})`);
  }
  // Nothing listed keeps nothing: a false condition on a column (never null), as SQLite finds no plan for a
  // constant false one under INDEXED BY.
  return terms.length === 0 ? `${columns.reason} IS NULL` : `(${terms.join(' OR ')})`;
}
