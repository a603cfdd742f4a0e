import type { FieldTerm } from '../../api/index.js';

const ASCII = /^[\x20-\x7e]*$/;

/** COLUMN_OF is the SQL value of each field a version row holds, as the query language reads it. */
const COLUMN_OF: Partial<Record<FieldTerm['field'], string>> = {
  reason: 'v.reason',
  type: 'v.type',
  kind: 'v.involved_kind',
  ns: "substr(v.key, 1, instr(v.key, '/') - 1)",
  cluster: "coalesce(v.cluster, '')",
};

/** decidedByColumns tells whether a field term is compared on a version row's columns (columnFilter and columnConditions). */
export function decidedByColumns(t: FieldTerm): boolean {
  return COLUMN_OF[t.field] !== undefined && ASCII.test(t.value);
}

/** columnTest is the SQL that compares one field term with its column (value bound as `@name`), or undefined when no column holds it or the value is outside printable ASCII. */
function columnTest(t: FieldTerm, name: string, params: Record<string, string | number>): { column: string; test: string } | undefined {
  const column = COLUMN_OF[t.field];
  if (column === undefined || !decidedByColumns(t)) return undefined;
  params[name] = t.value;
  const test = t.prefix ? `substr(lower(${column}), 1, ${t.value.length}) = @${name}` : `lower(${column}) = @${name}`;
  return { column, test: t.negated ? `NOT (${test})` : test };
}

/**
 * columnConditions turns a query's field terms into SQL on the version row's
 * columns (ASCII letters compared in any case, as SQLite's lower() folds them),
 * or undefined when one of them has no column or a value outside printable ASCII.
 */
export function columnConditions(terms: readonly FieldTerm[], params: Record<string, string | number>): string[] | undefined {
  const where: string[] = [];
  for (const [i, t] of terms.entries()) {
    const c = columnTest(t, `f${i}`, params);
    if (c === undefined) return undefined;
    where.push(c.test);
  }
  return where;
}

/**
 * columnFilter is SQL on the version row's columns that keeps every row the
 * query's field terms may match, for a page's read, so that the rows they
 * leave out are never decoded: each term a column holds as columnConditions
 * compares it, or a column value outside printable ASCII, which JavaScript may
 * lowercase other than SQLite does, and which the check of each candidate decides.
 */
export function columnFilter(terms: readonly FieldTerm[], params: Record<string, string | number>): string[] {
  const where: string[] = [];
  for (const [i, t] of terms.entries()) {
    const c = columnTest(t, `c${i}`, params);
    if (c !== undefined) where.push(`(${c.test} OR ${c.column} GLOB '*[^ -~]*')`);
  }
  return where;
}
