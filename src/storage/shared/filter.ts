import type { CoreEvent } from '../../api/index.js';
import type { EventFilter, IndexedField } from '../event-store.js';
import { fieldValue } from './event-json.js';

/** matchesFilter applies a whole EventFilter (namespace, fieldEquals, predicate) to one event. */
export function matchesFilter(event: CoreEvent, filter: EventFilter): boolean {
  if (filter.namespace !== undefined && event.metadata.namespace !== filter.namespace) return false;
  if (filter.fieldEquals !== undefined) {
    for (const [field, want] of Object.entries(filter.fieldEquals)) {
      if (want !== undefined && fieldValue(event, field as IndexedField) !== want) return false;
    }
  }
  return filter.predicate === undefined || filter.predicate(event);
}

/** selectsAll tells whether a filter lets every event of its namespace through. */
export function selectsAll(filter: EventFilter): boolean {
  const fields = filter.fieldEquals === undefined ? [] : Object.values(filter.fieldEquals).filter((v) => v !== undefined);
  return fields.length === 0 && filter.predicate === undefined;
}
