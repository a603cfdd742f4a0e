import { NO_TIME_MS } from '../../api/index.js';
import { asciiLower } from '../any-of.js';
import type { ActiveWindow, AnyOf, IndexedField } from '../event-store.js';
import { CURRENT, CURRENT_INDEXED, FIELD_COLUMNS, FIELD_INDEX_FIRST, HISTORY, LAST_MS_OR_END } from './schema.js';
import { hashOf } from './occurrence-indexes.js';
import { objectColumnNames, objectColumns } from './packed-rows.js';
import type { PackedObject } from './packed-rows.js';

/** ListScope is what one list query selects, apart from where it starts. */
export interface ListScope {
  /** at is the revision to read at; undefined reads the latest state (current rows only, no history to step over). */
  at: number | undefined;
  /** high bounds keys from above (exclusive); undefined for all namespaces. */
  high: string | undefined;
  fieldEquals: Partial<Record<IndexedField, string>> | undefined;
  /** anyOf is tested on the type, reason and kind columns, so the rows it leaves out are never sent nor decoded. */
  anyOf?: AnyOf | undefined;
  /** activeIn's start bounds, with anyOf, the rows read by their last time (`last_ms`); the window is checked exactly on the decoded rows. */
  activeIn?: ActiveWindow | undefined;
}

/**
 * SINCE_CANDIDATES bounds the rows `pageSince` takes from a window before sorting them by key: each page of a read
 * through `cur_since` reads the window's rows again, so a window with more rows than this that its anyOf keeps (a
 * broad anyOf, a long window) is read in key order instead, on `cur_key`, once over all its pages.
 */
export const SINCE_CANDIDATES = 50_000;

/** ListRow is one row of a page query: the store's revision and compaction point at the statement's snapshot, and one version row (absent on an empty page). */
export interface ListRow extends PackedObject {
  revision: string;
  compacted: string;
  /** candidates, in a `pageSince` page, is how many rows of the window it chose from (at most SINCE_CANDIDATES + 1). */
  candidates?: string;
  rv: string | null;
  key: string | null;
}

/** Query is SQL text with its positional parameters. */
export interface Query {
  text: string;
  values: unknown[];
}

/**
 * ListQueries builds the keyset queries of lists. A page is always
 * `key > $start ORDER BY key LIMIT $limit` on an index that ends in `key`, so the
 * cost of a page does not depend on how far into the list it is. Every page
 * statement also reads the revision counter and compaction point, so a latest
 * page and the revision it reports come from one snapshot.
 */
export class ListQueries {
  constructor(private readonly s: string) {}

  /** page selects up to `limit` rows after `start` in key order, with the store's revision and compaction point. */
  page(scope: ListScope, start: string, limit: number): Query {
    const inner = this.rows(scope, start, limit);
    return {
      text:
        `SELECT m.revision, m.compacted, p.rv, p.key, ${objectColumnNames('p')} FROM ` +
        `(${this.meta()}) m ` +
        `LEFT JOIN LATERAL (${inner.text}) p ON true ORDER BY p.key`,
      values: inner.values,
    };
  }

  /**
   * pageSince is `page` for a latest read of the rows that may have happened since a time with anyOf (a window's
   * failures, what incidents read), through `cur_since`: the rows since that time that its columns keep, at most
   * SINCE_CANDIDATES + 1 of them (each row says how many: more than SINCE_CANDIDATES, and `page` reads it), the
   * first `limit` by key read from the table. Undefined when the scope is no such read (one object's events have
   * their name's index, a reason kept whenever it happened is no range of time).
   */
  pageSince(scope: ListScope, start: string, limit: number): Query | undefined {
    const chosen = this.chosenSince(scope, start, limit);
    if (chosen === undefined) return undefined;
    return {
      text:
        `WITH c AS MATERIALIZED (${chosen.text}) ` +
        `SELECT m.revision, m.compacted, (SELECT count(*) FROM c) AS candidates, p.rv, p.key, ${objectColumnNames('p')} FROM (${this.meta()}) m ` +
        `LEFT JOIN LATERAL (SELECT v.rv, v.key, ${objectColumns(this.s, 'v')} FROM (SELECT rv, key FROM c ORDER BY key LIMIT $2) k JOIN ${this.s}.versions v ON v.rv = k.rv) p ON true ORDER BY p.key`,
      values: chosen.values,
    };
  }

  /**
   * sinceKeys is the choice `pageSince` makes, alone: the keys and revisions of the rows since the window's start that
   * its columns keep, all of them (at most SINCE_CANDIDATES + 1) in key order, on `cur_since` alone, with the store's
   * revision and compaction point. A reader holds them for the pages of its read and reads each page's rows by
   * revision (`objects`), so the window is read once, not once a page. Undefined where `pageSince` is.
   */
  sinceKeys(scope: ListScope, start: string): Query | undefined {
    const chosen = this.chosenSince(scope, start, SINCE_CANDIDATES + 1);
    if (chosen === undefined) return undefined;
    return {
      text:
        `SELECT m.revision, m.compacted, c.rv, c.key FROM (${this.meta()}) m ` +
        `LEFT JOIN LATERAL (${chosen.text}) c ON true ORDER BY c.key LIMIT $2`,
      values: chosen.values,
    };
  }

  /** objects reads the rows of the given revisions in key order, with the store's revision and compaction point (a page of `sinceKeys`'s keys). */
  objects(rvs: readonly number[]): Query {
    return {
      text:
        `SELECT m.revision, m.compacted, p.rv, p.key, ${objectColumnNames('p')} FROM (${this.meta()}) m ` +
        `LEFT JOIN LATERAL (SELECT v.rv, v.key, ${objectColumns(this.s, 'v')} FROM ${this.s}.versions v WHERE v.rv = ANY($1::bigint[])) p ON true ORDER BY p.key`,
      values: [rvs],
    };
  }

  /**
   * chosenSince is the statement of `pageSince`'s candidates, `$1` the start, `$2` the `limit` of the statement
   * around it, the cap of candidates last; undefined where `pageSince` is.
   */
  private chosenSince(scope: ListScope, start: string, limit: number): Query | undefined {
    const since = scope.activeIn?.sinceMs;
    if (scope.at !== undefined || since === undefined || scope.anyOf === undefined || (scope.activeIn?.alwaysReasons?.length ?? 0) > 0) return undefined;
    if (scope.fieldEquals?.['involvedObject.name'] !== undefined) return undefined;
    const values: unknown[] = [start, limit];
    const conds = this.keyAndFields(scope, values);
    conds.push(anyOfSql(scope.anyOf, { type: 'type', reason: 'reason', kind: 'involved_kind' }, values));
    values.push(since, SINCE_CANDIDATES + 1);
    return {
      text: `SELECT rv, key FROM ${this.s}.versions WHERE ${CURRENT} AND ${LAST_MS_OR_END} >= $${values.length - 1} AND ${conds.join(' AND ')} LIMIT $${values.length}`,
      values,
    };
  }

  /** meta reads the store's revision and compaction point, which every page reads in its own snapshot. */
  private meta(): string {
    return `SELECT max(value) FILTER (WHERE name = 'revision') AS revision, max(value) FILTER (WHERE name = 'compacted') AS compacted FROM ${this.s}.meta`;
  }

  /** keyAndFields are the conditions of a page on its key range (`$1` its start) and field columns, their values appended to `values`. */
  private keyAndFields(scope: ListScope, values: unknown[]): string[] {
    const conds = ['key > $1'];
    if (scope.high !== undefined) {
      values.push(scope.high);
      conds.push(`key < $${values.length}`);
    }
    if (scope.fieldEquals !== undefined) {
      // The most selective indexed field goes first, which is the order the planner's statistics favour anyway.
      const fields = Object.entries(scope.fieldEquals)
        .filter((e): e is [IndexedField, string] => e[1] !== undefined && FIELD_COLUMNS[e[0] as IndexedField] !== undefined)
        .sort((a, b) => rank(a[0]) - rank(b[0]));
      for (const [field, value] of fields) {
        values.push(value);
        const column = FIELD_COLUMNS[field];
        const hashed = FIELD_INDEX_FIRST[column];
        // An index that holds the value's hash (the involved name's) is sought by the hash; the column, compared too, drops a collision.
        if (hashed !== undefined) conds.push(`${hashed} = ${hashOf(`$${values.length}::text`)}`);
        conds.push(`${column} = $${values.length}`);
      }
    }
    return conds;
  }

  /** rows is the bare page query, for EXPLAIN in tests. */
  rows(scope: ListScope, start: string, limit: number): Query {
    const values: unknown[] = [start, limit];
    const conds = this.keyAndFields(scope, values);
    if (scope.anyOf !== undefined) {
      conds.push(anyOfSql(scope.anyOf, { type: 'type', reason: 'reason', kind: 'involved_kind' }, values));
      if (scope.activeIn?.sinceMs !== undefined) conds.push(lastAfterSql(scope.activeIn, scope.activeIn.sinceMs, values));
    }
    const where = conds.join(' AND ');
    const cols = `SELECT rv, key, ${objectColumns(this.s, 'v')} FROM ${this.s}.versions v`;
    // With anyOf, the current rows are chosen on cur_key alone, which holds the columns it tests (CUR_KEY_INCLUDES),
    // and only the rows chosen are read from the table: most rows of a key-order scan are left out.
    const current = (cond: string): string =>
      scope.anyOf === undefined
        ? `${cols} WHERE ${CURRENT}${cond} AND ${where} ORDER BY key LIMIT $2`
        : `SELECT v.rv, v.key, ${objectColumns(this.s, 'v')} FROM (SELECT rv, key FROM ${this.s}.versions WHERE ${CURRENT}${cond} AND ${where} ORDER BY key LIMIT $2) k JOIN ${this.s}.versions v ON v.rv = k.rv ORDER BY k.key`;
    if (scope.at === undefined) return { text: current(''), values };
    values.push(scope.at);
    const at = `$${values.length}`;
    return {
      text:
        `(${current(` AND rv <= ${at}`)}) UNION ALL ` +
        `(${cols} WHERE ${HISTORY} AND rv <= ${at} AND superseded_rv > ${at} AND ${where} ORDER BY key LIMIT $2) ORDER BY key LIMIT $2`,
      values,
    };
  }

  /** count is the number of objects after `start` within the key range, at revision `at`. */
  count(at: number, high: string | undefined, start: string): Query {
    const values: unknown[] = [start, at];
    let range = 'key > $1';
    if (high !== undefined) {
      values.push(high);
      range += ' AND key < $3';
    }
    return {
      text:
        `SELECT (SELECT count(*) FROM ${this.s}.versions WHERE ${CURRENT} AND rv <= $2 AND ${range}) + ` +
        `(SELECT count(*) FROM ${this.s}.versions WHERE ${HISTORY} AND rv <= $2 AND superseded_rv > $2 AND ${range}) AS n`,
      values,
    };
  }
}

function rank(field: IndexedField): number {
  const i = CURRENT_INDEXED.indexOf(field);
  return i < 0 ? CURRENT_INDEXED.length : i;
}

/**
 * lastAfterSql keeps the rows that may have happened at or after `sinceMs` in an ActiveWindow: a last time at or
 * after it, none (NO_TIME_MS, or a row the search columns were never filled for), or a reason kept whenever it
 * happened. All its columns are in cur_key.
 */
function lastAfterSql(w: ActiveWindow, sinceMs: number, values: unknown[]): string {
  values.push(sinceMs, NO_TIME_MS);
  const terms = [`last_ms IS NULL`, `last_ms >= $${values.length - 1}`, `last_ms = $${values.length}`];
  if (w.alwaysReasons !== undefined && w.alwaysReasons.length > 0) {
    values.push([...w.alwaysReasons]);
    terms.push(`reason COLLATE "C" = ANY($${values.length}::text[])`);
  }
  return `(${terms.join(' OR ')})`;
}

/**
 * anyOfSql is an AnyOf as a SQL condition on the columns that hold an event's
 * type, reason and kind (`kind` undefined where there is none: then an AnyOf
 * that lists kinds is left to the decoded rows, as an OR cannot be split), each
 * list one array parameter appended to `values`. Types compare ignoring ASCII
 * case: `lower` under the "C" collation lowers ASCII letters only.
 */
export function anyOfSql(anyOf: AnyOf, columns: { type: string; reason: string; kind?: string }, values: unknown[]): string {
  const lists: [string, readonly string[] | undefined][] = [
    [`lower(${columns.type} COLLATE "C")`, anyOf.types?.map(asciiLower)],
    [`${columns.reason} COLLATE "C"`, anyOf.reasons],
  ];
  if (columns.kind !== undefined) lists.push([`${columns.kind} COLLATE "C"`, anyOf.kinds]);
  else if ((anyOf.kinds?.length ?? 0) > 0) return 'true';
  const terms: string[] = [];
  for (const [column, list] of lists) {
    if (list === undefined || list.length === 0) continue;
    values.push([...list]);
    terms.push(`${column} = ANY($${values.length}::text[])`);
  }
  return terms.length === 0 ? 'false' : `(${terms.join(' OR ')})`;
}
