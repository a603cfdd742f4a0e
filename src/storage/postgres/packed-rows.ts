/**
 * Packed rows (schema 6, issue "a third of the disk"): a version's object and an occurrence's body are stored as
 * `bytea`, their JSON text compressed against a dictionary of event JSON (`shared/object-codec.ts`, SQLite's object
 * encoding), in `object_z` and `body_z`. An ordinary event's 650 bytes of JSON take about 170, its occurrence's 450
 * about 225: PostgreSQL compresses only a row past 2 kB (TOAST), which an ordinary event never is, and without a
 * dictionary. Rows written before keep their text in `object` and `body` (the other column null) and read as before:
 * the migration adds the columns and lifts the text columns' NOT NULL, and rewrites no row.
 *
 * Packing happens in the writer's process, which already holds the text; the write function receives each packed
 * value as base64 text (one joined parameter, as the texts travel) and decodes it in SQL. Reads select both columns
 * (`objectColumns`) and unpack in the reader (`objectOf`, `bodyOf`), where a long message cut out into `texts` is
 * put back: on a packed row that cannot happen in SQL.
 */
import { decodeObject, encodeObjectBase64 } from '../shared/object-codec.js';
import { objectSql, withText } from './texts.js';

/** packedRowsSql is schema 6's step: the packed columns beside the text ones, which rows written from now on leave null. */
export function packedRowsSql(s: string): string {
  return `
ALTER TABLE ${s}.versions ADD COLUMN IF NOT EXISTS object_z bytea;
ALTER TABLE ${s}.versions ALTER COLUMN object DROP NOT NULL;
ALTER TABLE ${s}.occurrences ADD COLUMN IF NOT EXISTS body_z bytea;
ALTER TABLE ${s}.occurrences ALTER COLUMN body DROP NOT NULL;
`;
}

/** packText is a stored text packed for the write function: the codec's bytes in base64, which SQL's `decode(…, 'base64')` turns back into them. */
export function packText(json: string): string {
  return encodeObjectBase64(json);
}

/**
 * objectColumns is the SQL of a version's object as three columns named after `as`: `<as>`, a text row's whole text
 * (objectSql), `<as>_z`, a packed row's bytes, and `<as>_text`, the message of a packed row that refers to `texts`.
 * `objectOf` makes one text of them. `v` qualifies the columns (the versions table's alias).
 */
export function objectColumns(s: string, v: string, as = 'object'): string {
  return (
    `${objectSql(s, v)} AS ${as}, ${v}.object_z AS ${as}_z, ` +
    `CASE WHEN ${v}.object_z IS NOT NULL AND ${v}.text_rv IS NOT NULL THEN (SELECT t.json FROM ${s}.texts t WHERE t.rv = ${v}.text_rv) END AS ${as}_text`
  );
}

/** objectColumnNames are objectColumns' names, qualified by `p`, for a query that selects them from a subquery. */
export function objectColumnNames(p: string, as = 'object'): string {
  return `${p}.${as}, ${p}.${as}_z, ${p}.${as}_text`;
}

/** PackedObject is a row's objectColumns as the driver returns them (bytea as a Buffer). */
export interface PackedObject {
  object: string | null;
  object_z?: Uint8Array | null;
  object_text?: string | null;
}

/** objectOf is the whole text of a row's objectColumns, null when the row has no version (a left join's miss). */
export function objectOf(row: PackedObject): string | null {
  if (row.object_z === null || row.object_z === undefined) return row.object;
  const stored = decodeObject(row.object_z);
  return row.object_text === null || row.object_text === undefined ? stored : withText(stored, row.object_text);
}

/** storedOf is a row's stored text (with TEXT_MARK in the place of a message it refers to): `object`, or `object_z` unpacked. */
export function storedOf(row: { object: string | null; object_z?: Uint8Array | null }): string | null {
  return row.object_z === null || row.object_z === undefined ? row.object : decodeObject(row.object_z);
}

/** bodyOf is an occurrence row's stored body: `body`, or `body_z` unpacked. */
export function bodyOf(row: { body: string | null; body_z?: Uint8Array | null }): string {
  return row.body_z === null || row.body_z === undefined ? (row.body ?? '') : decodeObject(row.body_z);
}
