import type { Occurrence } from '../../api/index.js';
import { eventOccurrenceQuery } from '../archive-store.js';
import type { EventOccurrencesQuery, EventRef, OccurrenceCursor, OccurrencePage, OccurrenceQuery } from '../archive-store.js';
import { matchesOccurrence } from './archive.js';

/** EventOccurrenceRow is one candidate occurrence of the event at `index` of an EventOccurrencesQuery, at its position. */
export interface EventOccurrenceRow {
  index: number;
  occurrence: Occurrence;
  at: OccurrenceCursor;
}

/** EventOccurrenceReads are how a backend reads a page's occurrences for `readEventOccurrences`. */
export interface EventOccurrenceReads {
  /** batchable tells whether `readFirst` can read an event's candidates; the others are read by `list` alone. */
  batchable(event: EventRef): boolean;
  /**
   * readFirst reads, in one go, the first `batch` candidates of each event asked
   * (by its index in the query), in (observed time, id) order per event: every
   * occurrence of the event's query is a candidate, and candidates it does not
   * match are dropped here. Rows may come in any order across events.
   */
  readFirst(events: readonly { index: number; event: EventRef }[], batch: number): Promise<EventOccurrenceRow[]>;
  /** list is the backend's `listOccurrences`: it completes an event whose candidates the first read did not exhaust. */
  list(query: OccurrenceQuery): Promise<OccurrencePage>;
}

/**
 * readEventOccurrences answers an EventOccurrencesQuery with one read of the
 * first `limit + 1` candidates of every event (up to `maxBatch`), then, for the
 * rare event whose candidates filled that read while its matches did not reach
 * the limit, a `listOccurrences` from its last candidate on: the same items, in
 * the same order, as one `listOccurrences` per event.
 */
export async function readEventOccurrences(query: EventOccurrencesQuery, maxBatch: number, reads: EventOccurrenceReads): Promise<Occurrence[][]> {
  const limit = query.limit !== undefined && query.limit > 0 ? query.limit : Infinity;
  const batch = Math.min(limit + 1, maxBatch);
  const queries = query.events.map((e) => eventOccurrenceQuery(e, query));
  const out: Occurrence[][] = query.events.map(() => []);
  const read: { index: number; event: EventRef }[] = [];
  const alone: number[] = [];
  query.events.forEach((event, index) => (reads.batchable(event) ? read.push({ index, event }) : alone.push(index)));
  const rows = read.length === 0 ? [] : await reads.readFirst(read, batch);
  const seen = new Map<number, { rows: number; last: OccurrenceCursor }>();
  for (const { index, occurrence, at } of sortedRows(rows)) {
    const s = seen.get(index);
    if (s === undefined) seen.set(index, { rows: 1, last: at });
    else {
      s.rows++;
      s.last = at;
    }
    const items = out[index]!;
    if (items.length < limit && matchesOccurrence(occurrence, at, queries[index]!)) items.push(occurrence);
  }
  for (const { index } of read) {
    const s = seen.get(index);
    const items = out[index]!;
    if (s === undefined || s.rows < batch || items.length >= limit) continue;
    const rest = await reads.list({ ...queries[index]!, after: s.last, ...(limit !== Infinity ? { limit: limit - items.length } : {}) });
    items.push(...rest.items);
  }
  for (const index of alone) out[index] = (await reads.list(queries[index]!)).items;
  return out;
}

/** regardsNamedObject tells whether an event names the object it regards: the backends' first read seeks its occurrences by that name, the others are read by `list`. */
export function regardsNamedObject(event: EventRef): boolean {
  return event.regardingName !== undefined && event.regardingName !== '';
}

/** sortedRows orders candidates by event, then position, whatever order the backend returned them in. */
function sortedRows(rows: EventOccurrenceRow[]): EventOccurrenceRow[] {
  return rows.sort((a, b) => a.index - b.index || a.at.observedMicros - b.at.observedMicros || a.at.id - b.at.id);
}
