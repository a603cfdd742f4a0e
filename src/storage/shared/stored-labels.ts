/**
 * Reading one member of a stored event's JSON text without parsing the rest:
 * a list selected by labels tests each event's `metadata.labels`, which is a
 * small part of the text, and most of the events it steps over are never
 * answered (and so never need decoding at all).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** NotJson is thrown where the text is not what JSON.stringify writes; the caller parses the whole text instead. */
class NotJson extends Error {}

function skipSpace(s: string, i: number): number {
  for (;;) {
    const c = s.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}

/** stringEnd is the index past the closing quote of the string whose opening quote is at `i`. */
function stringEnd(s: string, i: number): number {
  let j = i + 1;
  for (;;) {
    const q = s.indexOf('"', j);
    if (q < 0) throw new NotJson();
    let slashes = 0;
    while (s.charCodeAt(q - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q + 1;
    j = q + 1;
  }
}

/** valueEnd is the index past the JSON value that starts at `i`. */
function valueEnd(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === QUOTE) return stringEnd(s, i);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0;
    let j = i;
    while (j < s.length) {
      const d = s.charCodeAt(j);
      if (d === QUOTE) {
        j = stringEnd(s, j);
        continue;
      }
      if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
      else if (d === CLOSE_BRACE || d === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) return j + 1;
      }
      j++;
    }
    throw new NotJson();
  }
  // A number, true, false or null: up to the next separator.
  let j = i;
  while (j < s.length) {
    const d = s.charCodeAt(j);
    if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) break;
    j++;
  }
  if (j === i) throw new NotJson();
  return j;
}

/** memberAt is where the value of `key` starts in the object that starts at `at`, or -1 when the object has no such member. */
function memberAt(s: string, at: number, key: string): number {
  let i = skipSpace(s, at);
  if (s.charCodeAt(i) !== OPEN_BRACE) return -1;
  i = skipSpace(s, i + 1);
  if (s.charCodeAt(i) === CLOSE_BRACE) return -1;
  for (;;) {
    if (s.charCodeAt(i) !== QUOTE) throw new NotJson();
    const end = stringEnd(s, i);
    const raw = s.slice(i + 1, end - 1);
    // JSON.stringify escapes no letter: a key with an escape is read as JSON to compare it.
    const name = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
    i = skipSpace(s, end);
    if (s.charCodeAt(i) !== COLON) throw new NotJson();
    i = skipSpace(s, i + 1);
    // JSON.stringify writes each key once, so the first is the one JSON.parse would keep.
    if (name === key) return i;
    i = skipSpace(s, valueEnd(s, i));
    const c = s.charCodeAt(i);
    if (c === CLOSE_BRACE) return -1;
    if (c !== COMMA) throw new NotJson();
    i = skipSpace(s, i + 1);
  }
}

/**
 * storedLabels is `metadata.labels` of a stored event's JSON text (as `encodeEvent` writes it),
 * what `decodeEvent(json, rv).metadata.labels` is, read by stepping over the members before it
 * and parsing the labels alone. Text that is not JSON.stringify's is parsed whole.
 */
export function storedLabels(json: string): Record<string, string> | undefined {
  try {
    const meta = memberAt(json, 0, 'metadata');
    if (meta < 0) return undefined;
    const labels = memberAt(json, meta, 'labels');
    if (labels < 0) return undefined;
    return JSON.parse(json.slice(labels, valueEnd(json, labels))) as Record<string, string> | undefined;
  } catch (e) {
    if (!(e instanceof NotJson)) throw e;
    return (JSON.parse(json) as { metadata?: { labels?: Record<string, string> } }).metadata?.labels;
  }
}

/**
 * storedInvolvedName is `involvedObject.name` of a stored event's JSON text, what
 * `decodeEvent(json, rv).involvedObject.name` is, read as `storedLabels` reads the labels
 * (undefined where it has none). Text that is not JSON.stringify's is parsed whole.
 */
export function storedInvolvedName(json: string): string | undefined {
  try {
    const involved = memberAt(json, 0, 'involvedObject');
    if (involved < 0) return undefined;
    const name = memberAt(json, involved, 'name');
    if (name < 0) return undefined;
    return JSON.parse(json.slice(name, valueEnd(json, name))) as string | undefined;
  } catch (e) {
    if (!(e instanceof NotJson)) throw e;
    return (JSON.parse(json) as { involvedObject?: { name?: string } }).involvedObject?.name;
  }
}
