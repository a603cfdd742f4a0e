import type { EventRef } from '../archive-store.js';
import { eventKey } from '../shared/index.js';
import { nameHash } from './schema.js';

/**
 * firstOfEvents is the statement that reads the first `@batch` occurrences of
 * each event of `@events` (a JSON array of [index, regarding name hash,
 * namespace, event key]) at once: for each, a seek of `occ_regarding_ns` to its
 * object in its namespace, the rows of other events about the same object left
 * out by their version's key as `ArchiveTables.list` leaves them out, then the
 * objects of the rows kept. A row whose version is past (compacted) or stored
 * whole has no key there and is checked decoded, as in `list`.
 *
 * `bodies` says whether occurrences stored whole may be left (files written
 * before schema 3). Without them the seek reads the index and the versions'
 * keys only, not each row of the table: a page of 100 hits steps over some
 * 2,000 rows of other events about the same objects (a Pod's Scheduled, Pulled,
 * Started…), and the table's row of each doubled the time.
 */
export function firstOfEvents(bodies: boolean): string {
  // Without bodies, a row has a version (live, or past) at its id, so a row whose id is a live version of
  // another key is another event's: the same rows the condition on the body keeps.
  const join = bodies ? 'LEFT JOIN versions cv ON c.body IS NULL AND cv.rv = c.id' : 'LEFT JOIN versions cv ON cv.rv = c.id';
  return `SELECT k.value ->> 0 AS i, o.id, o.observed_us, o.count_before, o.count_after, o.cluster, o.cluster_uid, o.observed_time, o.body,
    coalesce(v.object, p.object) AS object
  FROM json_each(@events) k
  JOIN occurrences o ON o.id IN (
    SELECT c.id FROM occurrences c INDEXED BY occ_regarding_ns
    ${join}
    WHERE c.regarding_hash = k.value ->> 1 AND c.namespace = k.value ->> 2 AND (cv.rv IS NULL OR cv.key = k.value ->> 3)
    ORDER BY c.observed_us, c.id LIMIT @batch)
  LEFT JOIN versions v ON o.body IS NULL AND v.rv = o.id
  LEFT JOIN past_versions p ON o.body IS NULL AND v.rv IS NULL AND p.rv = o.id`;
}

/**
 * LOWEST_IS_BODY finds whether the occurrence of the lowest id is stored whole. Those rows
 * (schema 2 and before) took ids from the table's own sequence, at most one per write, so
 * below the revision the file had reached when they were migrated; every row since takes
 * the revision of its version as its id, above it. So they hold the lowest ids, and when the
 * lowest is not one, none is left; none is ever written again.
 */
export const LOWEST_IS_BODY = 'SELECT 1 AS body FROM occurrences WHERE id = (SELECT min(id) FROM occurrences) AND body IS NOT NULL';

/** firstOfEventsParam is the `@events` of FIRST_OF_EVENTS. */
export function firstOfEventsParam(events: readonly { index: number; event: EventRef }[]): string {
  return JSON.stringify(events.map(({ index, event }) => [index, nameHash(event.regardingName ?? ''), event.namespace, eventKey(event.namespace, event.name)]));
}
