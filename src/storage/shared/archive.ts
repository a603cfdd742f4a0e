import { eventKey } from './event-json.js';
import { occurrenceFieldValue, parseMicroTime } from '../../api/index.js';
import type { CoreEvent, Occurrence, OccurrenceField } from '../../api/index.js';
import type { ArchiveDecision, ArchiveWrite, OccurrenceCursor, OccurrenceQuery } from '../archive-store.js';
import { MAX_REDIRECTS } from '../archive-store.js';
import { StorageError } from '../errors.js';

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

/** compareCursor orders occurrence positions by observed time, then id. */
export function compareCursor(a: OccurrenceCursor, b: OccurrenceCursor): number {
  return a.observedMicros - b.observedMicros || a.id - b.id;
}

/** matchesOccurrence applies a whole OccurrenceQuery except paging to one occurrence at its position. */
export function matchesOccurrence(o: Occurrence, at: OccurrenceCursor, q: OccurrenceQuery): boolean {
  if (q.namespace !== undefined && o.metadata.namespace !== q.namespace) return false;
  if (q.sinceMicros !== undefined && at.observedMicros < q.sinceMicros) return false;
  if (q.untilMicros !== undefined && at.observedMicros >= q.untilMicros) return false;
  if (q.fieldEquals !== undefined) {
    for (const [field, want] of Object.entries(q.fieldEquals)) {
      if (want !== undefined && occurrenceFieldValue(o, field as OccurrenceField) !== want) return false;
    }
  }
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
