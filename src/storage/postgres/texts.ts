/**
 * A long message stored once (issue "bounded answers", item 1): the versions and
 * occurrences of an event that repeat its message refer to one row of `texts`,
 * keyed by the revision of the version that first wrote it, instead of each
 * holding a copy. A kubelet PATCHes a repeating event's count and time a hundred
 * times; each PATCH adds a version and an occurrence whose only new bytes are
 * those, while the message (up to kube-apiserver's 3 MiB body) stays the same.
 *
 * The stored text of such a row (a version's object, an occurrence's body) is its
 * JSON with the message's JSON string cut out and TEXT_MARK in its place: a raw
 * control character, which JSON text never holds, so the mark is found by a plain
 * search and putting the text back is exact (`objectSql`, `withText`).
 */
import { pgFailure } from './driver.js';
import type { PgClient } from './options.js';

/**
 * TEXT_MIN is the length (UTF-16 units of the message's JSON string) from which a message is stored in `texts`:
 * below it a copy in the row costs less than the text's row, its key and the two references (about 100 bytes).
 */
export const TEXT_MIN = 256;

/** TEXT_MARK stands in a stored row for the message's JSON string. */
export const TEXT_MARK = '\x01';

/** SplitText is a row's stored text without its message, and the message's JSON string. */
export interface SplitText {
  stored: string;
  text: string;
}

/**
 * splitText cuts `message`'s JSON string out of `json` (an encoded event or occurrence body holding `"message":`
 * and that string) when the message is long enough to be stored once; undefined when it stays in the row.
 */
export function splitText(json: string, message: string | undefined): SplitText | undefined {
  if (message === undefined || message.length + 2 < TEXT_MIN) return undefined;
  return cutText(json, JSON.stringify(message));
}

/** cutText cuts a message's JSON string `text` out of `json`, where it is the value of `"message"`; undefined when it is not there. */
export function cutText(json: string, text: string): SplitText | undefined {
  const at = json.indexOf(`"message":${text}`);
  if (at < 0) return undefined;
  const start = at + '"message":'.length;
  return { stored: json.slice(0, start) + TEXT_MARK + json.slice(start + text.length), text };
}

/** withText puts a message's JSON string back in the place of TEXT_MARK. */
export function withText(stored: string, text: string): string {
  const at = stored.indexOf(TEXT_MARK);
  return at < 0 ? stored : stored.slice(0, at) + text + stored.slice(at + 1);
}

/** textOf is the message's JSON string of a row whose stored text is `stored` and whose whole text is `whole`. */
export function textOf(stored: string, whole: string): string | undefined {
  const at = stored.indexOf(TEXT_MARK);
  return at < 0 ? undefined : whole.slice(at, at + whole.length - stored.length + 1);
}

/**
 * textsSql is the layout's part of the texts: the table (`counted`: whether the `bytes` counter holds the text's
 * length, see `dropTexts`), the `text_rv` reference of versions and occurrences, and
 * an index of each reference over the rows that have one, which the collection of unreferenced texts reads.
 */
export function textsSql(s: string): string {
  return `
CREATE TABLE IF NOT EXISTS ${s}.texts (rv bigint PRIMARY KEY, json text NOT NULL, counted boolean NOT NULL DEFAULT true);
ALTER TABLE ${s}.versions ADD COLUMN IF NOT EXISTS text_rv bigint;
ALTER TABLE ${s}.occurrences ADD COLUMN IF NOT EXISTS text_rv bigint;
CREATE INDEX IF NOT EXISTS versions_text ON ${s}.versions (text_rv) WHERE text_rv IS NOT NULL;
CREATE INDEX IF NOT EXISTS occ_text ON ${s}.occurrences (text_rv) WHERE text_rv IS NOT NULL;
`;
}

/**
 * objectSql is the SQL of a version's whole stored text, its message put back from `texts` when it refers to one:
 * reads send what they sent before texts were stored once. `v` qualifies the columns (the versions table's alias).
 */
export function objectSql(s: string, v: string): string {
  return `CASE WHEN ${v}.text_rv IS NULL THEN ${v}.object ELSE replace(${v}.object, chr(1), (SELECT t.json FROM ${s}.texts t WHERE t.rv = ${v}.text_rv)) END`;
}

/** readTexts reads the messages of the given texts, each read and decoded once however many rows refer to it. */
export async function readTexts(client: Pick<PgClient, 'query'>, s: string, rvs: Iterable<string | number | null>): Promise<Map<string, string>> {
  const wanted = [...new Set([...rvs].filter((r): r is string | number => r !== null).map(String))];
  const out = new Map<string, string>();
  if (wanted.length === 0) return out;
  let rows: { rv: string; json: string }[];
  try {
    ({ rows } = await client.query<{ rv: string; json: string }>(`SELECT rv, json FROM ${s}.texts WHERE rv = ANY(ARRAY(SELECT json_array_elements_text($1::json))::bigint[])`, [
      JSON.stringify(wanted),
    ]));
  } catch (e) {
    throw pgFailure(e);
  }
  for (const r of rows) out.set(String(r.rv), JSON.parse(r.json) as string);
  return out;
}

/**
 * uncountTextsSql takes off the `bytes` counter the length of each text of $1 (a JSON array of revisions) that no
 * live event and no occurrence refers to any more, once (`counted`): the counter sums the stored text of live events
 * and of occurrences, as it did when each row held its own copy. A writer refers to a text only while the current
 * version of its key does (or in the transaction that stores it), so a text this statement sees unreferenced stays so.
 */
function uncountTextsSql(s: string): string {
  return (
    `WITH u AS (UPDATE ${s}.texts t SET counted = false WHERE t.rv = ANY(ARRAY(SELECT json_array_elements_text($1::json))::bigint[]) AND t.counted ` +
    `AND NOT EXISTS (SELECT 1 FROM ${s}.versions v WHERE v.text_rv = t.rv AND v.superseded_rv IS NULL AND v.op <> 3) ` +
    `AND NOT EXISTS (SELECT 1 FROM ${s}.occurrences o WHERE o.text_rv = t.rv) RETURNING char_length(t.json) AS n) ` +
    `UPDATE ${s}.meta SET value = value - (SELECT coalesce(sum(n), 0) FROM u) WHERE name = 'bytes'`
  );
}

/** deleteTextsSql deletes each text of $1 that no version (history included) and no occurrence refers to any more. */
function deleteTextsSql(s: string): string {
  return (
    `DELETE FROM ${s}.texts t WHERE t.rv = ANY(ARRAY(SELECT json_array_elements_text($1::json))::bigint[]) ` +
    `AND NOT EXISTS (SELECT 1 FROM ${s}.versions v WHERE v.text_rv = t.rv) AND NOT EXISTS (SELECT 1 FROM ${s}.occurrences o WHERE o.text_rv = t.rv)`
  );
}

/**
 * dropTexts settles the texts rows removed or ended a moment ago referred to (retention's occurrences and events,
 * purged versions): a text no live event nor occurrence refers to leaves the size counter, and one nothing refers
 * to leaves the table. A text whose event was deleted or replaced stays counted until its versions are purged.
 */
export async function dropTexts(client: Pick<PgClient, 'query'>, s: string, rvs: Iterable<string | number | null>): Promise<void> {
  const wanted = [...new Set([...rvs].filter((r): r is string | number => r !== null).map(String))];
  if (wanted.length === 0) return;
  try {
    await client.query(uncountTextsSql(s), [JSON.stringify(wanted)]);
    await client.query(deleteTextsSql(s), [JSON.stringify(wanted)]);
  } catch (e) {
    throw pgFailure(e);
  }
}
