import { eventKey } from './event-json.js';
import { occurrenceFieldValue, parseMicroTime } from '../../api/index.js';
import type { CoreEvent, Occurrence, OccurrenceField } from '../../api/index.js';
import type { ArchiveDecision, ArchiveWrite, OccurrenceCursor, OccurrencePage, OccurrenceQuery } from '../archive-store.js';
import { MAX_REDIRECTS } from '../archive-store.js';
import { matchesAnyOf } from '../any-of.js';
import { StorageError, isStorageError } from '../errors.js';

/** microsOf reads a MicroTime (or Time) as epoch microseconds; an unreadable one is 0, so it sorts first instead of failing a write. */
export function microsOf(time: string | null | undefined): number {
  if (time === null || time === undefined) return 0;
  try {
    return Number(parseMicroTime(time).epochMicros);
  } catch {
    const ms = Date.parse(time);
    return Number.isNaN(ms) ? 0 : ms * 1000;
  }
}

/** occurrenceCursor is the keyset position of an occurrence as read: its observed time and the id its name ends with. */
export function occurrenceCursor(o: Occurrence): OccurrenceCursor {
  const name = o.metadata.name ?? '';
  return { observedMicros: microsOf(o.observedTime), id: Number(name.slice(name.lastIndexOf('.') + 1)) };
}

/** compareCursor orders occurrence positions by observed time, then id. */
export function compareCursor(a: OccurrenceCursor, b: OccurrenceCursor): number {
  return a.observedMicros - b.observedMicros || a.id - b.id;
}

/** eventSets holds each OccurrenceQuery's `events` as a set of `namespace/name`, built once for all the rows it tests. */
const eventSets = new WeakMap<readonly { namespace: string; name: string }[], Set<string>>();

function inEvents(o: Occurrence, events: readonly { namespace: string; name: string }[]): boolean {
  let set = eventSets.get(events);
  if (set === undefined) {
    set = new Set(events.map((e) => `${e.namespace}/${e.name}`));
    eventSets.set(events, set);
  }
  return set.has(`${o.event.namespace}/${o.event.name}`);
}

/** matchesOccurrence applies a whole OccurrenceQuery except paging to one occurrence at its position. */
export function matchesOccurrence(o: Occurrence, at: OccurrenceCursor, q: OccurrenceQuery): boolean {
  if (q.namespace !== undefined && o.metadata.namespace !== q.namespace) return false;
  if (q.events !== undefined && !inEvents(o, q.events)) return false;
  if (q.sinceMicros !== undefined && at.observedMicros < q.sinceMicros) return false;
  if (q.untilMicros !== undefined && at.observedMicros >= q.untilMicros) return false;
  if (q.fieldEquals !== undefined) {
    for (const [field, want] of Object.entries(q.fieldEquals)) {
      if (want !== undefined && occurrenceFieldValue(o, field as OccurrenceField) !== want) return false;
    }
  }
  if (q.anyOf !== undefined && !matchesAnyOf(q.anyOf, o.type ?? '', o.reason ?? '', o.regarding?.kind ?? '')) return false;
  return q.predicate === undefined || q.predicate(o);
}

/**
 * resolveArchiveWrite follows an ArchiveWrite's redirects: `current` reads the
 * live object at a key. It returns the final name and decision; too many
 * redirects is InvalidObject (a decide function that loops).
 */
export function resolveArchiveWrite(
  w: ArchiveWrite,
  current: (key: string) => CoreEvent | undefined,
): { name: string; key: string; existing: CoreEvent | undefined; decision: Exclude<ArchiveDecision, { action: 'redirect' }> } {
  let name = w.name;
  for (let i = 0; i <= MAX_REDIRECTS; i++) {
    const key = eventKey(w.namespace, name);
    const existing = current(key);
    const decision = w.decide(existing, name);
    if (decision.action !== 'redirect') {
      if (decision.action === 'write') {
        const m = decision.object.metadata;
        if (m.namespace !== w.namespace || m.name !== name) {
          throw new StorageError('InvalidObject', `an archive write for ${key} returned ${m.namespace ?? ''}/${m.name ?? ''}`, { key });
        }
      }
      return { name, key, existing, decision };
    }
    name = decision.name;
  }
  throw new StorageError('InvalidObject', `an archive write for ${w.namespace}/${w.name} redirected more than ${MAX_REDIRECTS} times`);
}

/** PlannedArchiveWrite is one write an archive batch decided to make. */
export interface PlannedArchiveWrite {
  key: string;
  object: CoreEvent;
  occurrence: { countBefore: number; countAfter: number } | undefined;
}

/**
 * planArchiveWrites decides every write of an archive batch, in order, before
 * any is made: each sees `current` overlaid with the batch's own earlier
 * writes. A decide function that throws makes the batch InvalidObject.
 */
export function planArchiveWrites(writes: readonly ArchiveWrite[], current: (key: string) => CoreEvent | undefined): { planned: PlannedArchiveWrite[]; skipped: number } {
  const overlay = new Map<string, CoreEvent>();
  const planned: PlannedArchiveWrite[] = [];
  let skipped = 0;
  try {
    for (const w of writes) {
      const r = resolveArchiveWrite(w, (key) => overlay.get(key) ?? current(key));
      if (r.decision.action === 'skip') {
        skipped++;
        continue;
      }
      overlay.set(r.key, r.decision.object);
      planned.push({ key: r.key, object: r.decision.object, occurrence: r.decision.occurrence });
    }
  } catch (e) {
    if (isStorageError(e)) throw e;
    throw new StorageError('InvalidObject', `an archive write failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  return { planned, skipped };
}

/**
 * readOccurrencePage reads one page of an OccurrenceQuery through keyset reads:
 * `read` returns up to `batch` occurrences after a position, in (observed time,
 * id) order, with their positions; reads grow while the query's filters drop
 * rows, up to `maxBatch`.
 */
export async function readOccurrencePage(
  q: OccurrenceQuery,
  maxBatch: number,
  read: (after: OccurrenceCursor, batch: number) => Promise<{ occurrence: Occurrence; at: OccurrenceCursor }[]>,
): Promise<OccurrencePage> {
  const limit = q.limit !== undefined && q.limit > 0 ? q.limit : Infinity;
  let pos: OccurrenceCursor = q.after ?? { observedMicros: q.sinceMicros ?? Number.MIN_SAFE_INTEGER, id: 0 };
  let batch = Math.min(limit + 1, maxBatch);
  const items: Occurrence[] = [];
  let last: OccurrenceCursor | undefined;
  for (;;) {
    const rows = await read(pos, batch);
    for (const { occurrence, at } of rows) {
      pos = at;
      if (!matchesOccurrence(occurrence, at, q)) continue;
      if (items.length >= limit) return { items, next: last! };
      items.push(occurrence);
      last = at;
    }
    if (rows.length < batch) return { items };
    // A full page says more may follow rather than read a batch for the one row that would tell.
    if (items.length >= limit) return { items, next: last! };
    batch = Math.min(batch * 2, maxBatch);
  }
}
