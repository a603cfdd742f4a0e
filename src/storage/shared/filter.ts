import { eventFirstMs, eventLastMs } from '../../api/index.js';
import type { CoreEvent } from '../../api/index.js';
import type { ActiveWindow, EventFilter, IndexedField } from '../event-store.js';
import { matchesAnyOf } from '../any-of.js';
import { fieldValue } from './event-json.js';

/** activeIn tells whether an event happened within a window (see ActiveWindow). */
export function activeIn(event: CoreEvent, w: ActiveWindow): boolean {
  if (w.alwaysReasons !== undefined && w.alwaysReasons.includes(event.reason ?? '')) return true;
  if (w.sinceMs !== undefined) {
    const last = eventLastMs(event);
    if (last !== undefined && last < w.sinceMs) return false;
  }
  if (w.untilMs !== undefined) {
    const first = eventFirstMs(event);
    if (first !== undefined && first >= w.untilMs) return false;
  }
  return true;
}

/** matchesFilter applies a whole EventFilter (namespace, fieldEquals, activeIn, anyOf, predicate) to one event. */
export function matchesFilter(event: CoreEvent, filter: EventFilter): boolean {
  if (filter.namespace !== undefined && event.metadata.namespace !== filter.namespace) return false;
  if (filter.fieldEquals !== undefined) {
    for (const [field, want] of Object.entries(filter.fieldEquals)) {
      if (want !== undefined && fieldValue(event, field as IndexedField) !== want) return false;
    }
  }
  if (filter.activeIn !== undefined && !activeIn(event, filter.activeIn)) return false;
  if (filter.anyOf !== undefined && !matchesAnyOf(filter.anyOf, event.type ?? '', event.reason ?? '', event.involvedObject?.kind ?? '')) return false;
  return filter.predicate === undefined || filter.predicate(event);
}

/** selectsAll tells whether a filter lets every event of its namespace through. */
export function selectsAll(filter: EventFilter): boolean {
  const fields = filter.fieldEquals === undefined ? [] : Object.values(filter.fieldEquals).filter((v) => v !== undefined);
  return fields.length === 0 && filter.predicate === undefined && filter.activeIn === undefined && filter.anyOf === undefined;
}
