import { utf8ByteLength } from './utf8.js';
import type { Incident, IncidentList } from './incident.js';
import type { Occurrence } from './occurrence.js';
import type { Timeline, TimelineRow } from './timeline.js';

/**
 * What keeps an archive answer's size to what it says, not to how often a
 * stranger's text repeats (docs/serve.md, "Bounded answers"):
 *
 * - a long message is sent once an answer: a repeat of an event (an occurrence, a
 *   timeline row, an incident's evidence row) whose text an earlier item of the
 *   same answer already holds carries a reference to it (`messageOf`) instead of
 *   the text, so it costs bytes for its time and count only;
 * - a text derived from an event (a cause, a fact, an evidence row's message, a
 *   Table cell) is cut at MAX_DERIVED_TEXT characters with a visible mark saying
 *   how many were left out; the whole message stays one request away (the event).
 *
 * Clients resolve the references with `resolveOccurrenceMessages` and
 * `resolveRowMessages`, which give every item its text back (the same string,
 * shared, so a client holds each text once too).
 */

/**
 * MIN_SHARED_TEXT is the length from which a repeated text is sent once an answer: a shorter one (nearly every
 * event's) costs less than a client's look-up and is repeated, so a reader that follows no reference still sees
 * every ordinary message; a longer one, which only a stranger's or a broken component's event has, is referred to.
 */
export const MIN_SHARED_TEXT = 1_024;

/** MAX_DERIVED_TEXT is how many UTF-16 units of a text derived from an event an answer carries before it is cut. */
export const MAX_DERIVED_TEXT = 2_048;

/** cutText cuts `text` past `max` UTF-16 units (never inside a surrogate pair) and says how many characters were left out. */
export function cutText(text: string, max = MAX_DERIVED_TEXT): string {
  if (text.length <= max) return text;
  // The rows of a repeated event hold one string: cut once, not once a row.
  if (lastCut !== undefined && lastCut.text === text && lastCut.max === max) return lastCut.cut;
  const cut = cutLong(text, max);
  lastCut = { text, max, cut };
  return cut;
}

let lastCut: { text: string; max: number; cut: string } | undefined;

function cutLong(text: string, max: number): string {
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  let left = 0;
  for (let i = end; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xdc00 || c > 0xdfff) left++;
  }
  return `${text.slice(0, end)}… [${left} more character${left === 1 ? '' : 's'}]`;
}

/** isCut tells whether a text was cut by cutText. */
export function isCut(text: string): boolean {
  return /… \[\d+ more characters?\]$/.test(text);
}

/** eventIdOf names the event an occurrence is of, within one answer. */
function eventIdOf(o: Occurrence): string {
  return `${o.event.namespace}/${o.event.name}/${o.event.uid ?? ''}`;
}

/**
 * shareOccurrenceMessages writes `items` with each event's long message (MIN_SHARED_TEXT) once: an
 * occurrence whose message is the one the previous occurrence of the same event
 * in `items` has (or, for the first, the one `seed` gives for its event: a
 * search hit's event) carries `messageOf`, the resourceVersion of the version
 * that holds the text, and no `message`. The items are copied, not changed.
 */
export function shareOccurrenceMessages(items: readonly Occurrence[], seed?: { resourceVersion: string; message: string }): Occurrence[] {
  const last = new Map<string, { rv: string; message: string }>();
  return items.map((o) => {
    const id = eventIdOf(o);
    const before = last.get(id) ?? (seed !== undefined ? { rv: seed.resourceVersion, message: seed.message } : undefined);
    const rv = o.event.resourceVersion;
    if (o.message === undefined || o.message.length < MIN_SHARED_TEXT) return o;
    if (before !== undefined && before.message === o.message && before.rv !== rv) {
      const { message: _m, ...rest } = o;
      return { ...rest, messageOf: before.rv };
    }
    if (rv !== undefined) last.set(id, { rv, message: o.message });
    return o;
  });
}

/**
 * resolveOccurrenceMessages gives back, in place, the message of every
 * occurrence of `items` that refers to another version's (`messageOf`): an
 * earlier occurrence of the same event in `items`, or `seed`. A reference that
 * names no version of the answer is left as it is (the text is then the event's,
 * one request away).
 */
export function resolveOccurrenceMessages(items: Occurrence[], seed?: { resourceVersion: string; message: string }): void {
  const texts = new Map<string, string>();
  for (const o of items) {
    const id = eventIdOf(o);
    if (o.messageOf !== undefined) {
      const text = texts.get(`${id}@${o.messageOf}`) ?? (seed !== undefined && seed.resourceVersion === o.messageOf ? seed.message : undefined);
      if (text !== undefined) {
        o.message = text;
        delete o.messageOf;
      }
    }
    if (o.message !== undefined && o.event.resourceVersion !== undefined) texts.set(`${id}@${o.event.resourceVersion}`, o.message);
  }
}

/** rowIdOf names what a timeline row repeats the text of: its object and reason (with its namespace and cluster). */
function rowIdOf(r: TimelineRow): string {
  return `${r.cluster ?? ''}/${r.namespace}/${r.object}/${r.reason}`;
}

/**
 * shareRowMessages writes timeline rows (a timeline's, or an incident's
 * evidence) with each long text (MIN_SHARED_TEXT) once: a row whose message is the one the previous
 * row of the same object and reason has carries `messageOf`, that row's index in
 * `rows`, and an empty `message`. The rows are copied, not changed.
 */
export function shareRowMessages(rows: readonly TimelineRow[]): TimelineRow[] {
  const last = new Map<string, { at: number; message: string }>();
  return rows.map((r, i) => {
    const id = rowIdOf(r);
    const before = last.get(id);
    if (r.message.length < MIN_SHARED_TEXT) return r;
    if (before !== undefined && before.message === r.message) return { ...r, message: '', messageOf: before.at };
    last.set(id, { at: i, message: r.message });
    return r;
  });
}

/** resolveRowMessages gives back, in place, the message of every row that refers to an earlier row's (`messageOf`). */
export function resolveRowMessages(rows: TimelineRow[]): void {
  rows.forEach((r, i) => {
    if (r.messageOf === undefined || r.messageOf >= i) return;
    const source = rows[r.messageOf];
    if (source === undefined) return;
    r.message = source.message;
    delete r.messageOf;
  });
}

/** DEFAULT_MAX_ANSWER_BYTES is how many bytes of JSON an archive answer or a list holds by default before it ends short (`--max-answer-bytes`). */
export const DEFAULT_MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/** jsonBytes is the size of `value` written as JSON. */
export function jsonBytes(value: unknown): number {
  const text = JSON.stringify(value) ?? '';
  return utf8ByteLength(text);
}


/**
 * keepWithin is how many of `items` (each `sizes[i]` bytes, plus a comma) fit in
 * `budget` bytes: always at least one, so an answer never stops before its first item.
 */
export function keepWithin(sizes: readonly number[], budget: number): number {
  let used = 0;
  for (let i = 0; i < sizes.length; i++) {
    used += sizes[i]! + 1;
    if (used > budget && i > 0) return i;
  }
  return sizes.length;
}

/**
 * timelineAnswer is a timeline as an answer carries it: each row's text once
 * (`shareRowMessages`), and, past `maxBytes`, the later rows left out and
 * counted in `rowsLeftOut` (the summary still speaks of every row).
 */
export function timelineAnswer(t: Timeline, maxBytes = DEFAULT_MAX_ANSWER_BYTES): Timeline {
  const rows = shareRowMessages(t.rows);
  const first = t.summary.firstWarning;
  // The summary's first Warning repeats a row's text: a derived text, cut.
  const summary = first === null ? t.summary : { ...t.summary, firstWarning: { ...first, message: cutText(first.message) } };
  const fixed = jsonBytes({ ...t, summary, rows: [] });
  const kept = keepWithin(rows.map(jsonBytes), maxBytes - fixed);
  const out: Timeline = { ...t, summary, rows: kept === rows.length ? rows : rows.slice(0, kept) };
  if (kept < rows.length) out.rowsLeftOut = rows.length - kept;
  return out;
}

/** resolveTimeline gives back, in place, the text of every row of a timeline answer. */
export function resolveTimeline(t: Timeline): Timeline {
  resolveRowMessages(t.rows);
  return t;
}

/**
 * incidentsAnswer is an incident list as an answer carries it: each evidence
 * row's text once; past `maxBytes`, the evidence of the oldest incidents left
 * out (each counts what it left out in `evidenceLeftOut`), and past that the
 * oldest incidents themselves (counted in `incidentsLeftOut`).
 */
export function incidentsAnswer(list: IncidentList, maxBytes = DEFAULT_MAX_ANSWER_BYTES): IncidentList {
  const incidents = list.incidents.map((i): Incident => ({ ...i, evidence: shareRowMessages(i.evidence) }));
  const sizes = incidents.map(jsonBytes);
  const fixed = jsonBytes({ ...list, incidents: [] });
  let total = fixed + sizes.reduce((n, s) => n + s + 1, 0);
  // Most recent first: the oldest give their evidence up first.
  for (let i = incidents.length - 1; i >= 0 && total > maxBytes; i--) {
    const inc = incidents[i]!;
    if (inc.evidence.length === 0) continue;
    const bare: Incident = { ...inc, evidence: [], evidenceLeftOut: (inc.evidenceLeftOut ?? 0) + inc.evidence.length };
    const size = jsonBytes(bare);
    total -= sizes[i]! - size;
    sizes[i] = size;
    incidents[i] = bare;
  }
  const kept = keepWithin(sizes, maxBytes - fixed);
  const out: IncidentList = { ...list, incidents: kept === incidents.length ? incidents : incidents.slice(0, kept) };
  if (kept < incidents.length) out.incidentsLeftOut = incidents.length - kept;
  return out;
}

/** resolveIncidents gives back, in place, the text of every evidence row of an incidents answer. */
export function resolveIncidents(list: IncidentList): IncidentList {
  for (const i of list.incidents) resolveRowMessages(i.evidence);
  return list;
}
