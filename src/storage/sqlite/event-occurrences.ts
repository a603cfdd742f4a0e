import type { EventRef } from '../archive-store.js';
import { eventKey } from '../shared/index.js';
import { nameHash } from './schema.js';

/**
 * FIRST_OF_EVENTS reads the first `@batch` occurrences of each event of `@events`
 * (a JSON array of [index, regarding name hash, namespace, event key]) in one
 * statement: for each, a seek of `occ_regarding_ns` to its object in its
 * namespace, the rows of other events about the same object left out by their
 * version's key as `ArchiveTables.list` leaves them out, then the objects of
 * the rows kept. A row whose version is past (compacted) or stored whole has no
 * key there and is checked decoded, as in `list`.
 */
export const FIRST_OF_EVENTS = `SELECT k.value ->> 0 AS i, o.id, o.observed_us, o.count_before, o.count_after, o.cluster, o.cluster_uid, o.observed_time, o.body,
    coalesce(v.object, p.object) AS object
  FROM json_each(@events) k
  JOIN occurrences o ON o.id IN (
    SELECT c.id FROM occurrences c INDEXED BY occ_regarding_ns
    LEFT JOIN versions cv ON c.body IS NULL AND cv.rv = c.id
    WHERE c.regarding_hash = k.value ->> 1 AND c.namespace = k.value ->> 2 AND (cv.rv IS NULL OR cv.key = k.value ->> 3)
    ORDER BY c.observed_us, c.id LIMIT @batch)
  LEFT JOIN versions v ON o.body IS NULL AND v.rv = o.id
  LEFT JOIN past_versions p ON o.body IS NULL AND v.rv IS NULL AND p.rv = o.id`;

/** firstOfEventsParam is the `@events` of FIRST_OF_EVENTS. */
export function firstOfEventsParam(events: readonly { index: number; event: EventRef }[]): string {
  return JSON.stringify(events.map(({ index, event }) => [index, nameHash(event.regardingName ?? ''), event.namespace, eventKey(event.namespace, event.name)]));
}
