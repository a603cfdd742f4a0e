import type { FieldTerm } from '../../api/index.js';
import { NO_ID, asciiLower } from './interned.js';
import type { InternedValues } from './interned.js';

const ASCII = /^[\x20-\x7e]*$/;
/** OUTSIDE_ASCII finds a character outside printable ASCII, as the GLOB `*[^ -~]*` does. */
const OUTSIDE_ASCII = /[^\x20-\x7e]/;

/** COLUMN_OF is the SQL value of each field a version row holds, as the query language reads it. */
const COLUMN_OF: Partial<Record<FieldTerm['field'], string>> = {
  reason: 'v.reason',
  type: 'v.type',
  kind: 'v.involved_kind',
  ns: "substr(v.key, 1, instr(v.key, '/') - 1)",
  cluster: "coalesce(v.cluster, '')",
};

/** INTERNED_COLUMNS are the fields whose column holds ids of `interned` (`interned.ts`): a term on one is compared with the values in memory, and the row's id with theirs. */
const INTERNED_COLUMNS: ReadonlySet<FieldTerm['field']> = new Set(['reason', 'type', 'kind']);

/** decidedByColumns tells whether a field term is compared on a version row's columns (columnFilter and columnConditions). */
export function decidedByColumns(t: FieldTerm): boolean {
  return COLUMN_OF[t.field] !== undefined && ASCII.test(t.value);
}

/** matchesValue is the comparison SQL makes of a column's value with a term (lower() folding ASCII letters only), before a negation. */
function matchesValue(t: FieldTerm, value: string): boolean {
  const lowered = asciiLower(value);
  return t.prefix ? lowered.startsWith(t.value) : lowered === t.value;
}

/**
 * columnTest is the SQL that compares one field term with its column (value bound as `@name`), or undefined when
 * no column holds it or the value is outside printable ASCII. An interned column is compared by the ids of the
 * values the term keeps, those of values outside printable ASCII too when `orOutside` (see columnFilter).
 */
function columnTest(t: FieldTerm, name: string, params: Record<string, string | number>, interned: InternedValues, orOutside: boolean): string | undefined {
  const column = COLUMN_OF[t.field];
  if (column === undefined || !decidedByColumns(t)) return undefined;
  if (INTERNED_COLUMNS.has(t.field)) {
    const ids = interned.matching((v) => matchesValue(t, v) !== t.negated || (orOutside && OUTSIDE_ASCII.test(v)));
    // None kept: NO_ID, which no row holds (SQLite finds no plan for an empty list, a constant false, under INDEXED BY).
    if (ids.length === 0) ids.push(NO_ID);
    const names = ids.map((id, i) => {
      params[`${name}_${i}`] = id;
      return `@${name}_${i}`;
    });
    return `${column} IN (${names.join(', ')})`;
  }
  params[name] = t.value;
  const compare = t.prefix ? `substr(lower(${column}), 1, ${t.value.length}) = @${name}` : `lower(${column}) = @${name}`;
  const test = t.negated ? `NOT (${compare})` : compare;
  return orOutside ? `(${test} OR ${column} GLOB '*[^ -~]*')` : test;
}

/**
 * columnConditions turns a query's field terms into SQL on the version row's
 * columns (ASCII letters compared in any case, as SQLite's lower() folds them),
 * or undefined when one of them has no column or a value outside printable ASCII.
 */
export function columnConditions(terms: readonly FieldTerm[], params: Record<string, string | number>, interned: InternedValues): string[] | undefined {
  const where: string[] = [];
  for (const [i, t] of terms.entries()) {
    const c = columnTest(t, `f${i}`, params, interned, false);
    if (c === undefined) return undefined;
    where.push(c);
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
export function columnFilter(terms: readonly FieldTerm[], params: Record<string, string | number>, interned: InternedValues): string[] {
  const where: string[] = [];
  for (const [i, t] of terms.entries()) {
    const c = columnTest(t, `c${i}`, params, interned, true);
    if (c !== undefined) where.push(c);
  }
  return where;
}
