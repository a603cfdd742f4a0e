import type { EventRef } from '../archive-store.js';
import { eventKey } from '../shared/index.js';
import { CURRENT, nameHash } from './schema.js';

/**
 * firstOfEvents is the statement that reads the first `@batch` occurrences of
 * each event of `@events` (a JSON array of [index, regarding name hash,
 * namespace id, event key]) at once: for each, a seek of `occ_regarding_ns` to its
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

/** firstOfEventsParam is the `@events` of FIRST_OF_EVENTS, each namespace as its id (`namespaceId`, `interned.ts`). */
export function firstOfEventsParam(events: readonly { index: number; event: EventRef }[], namespaceId: (namespace: string) => number): string {
  return JSON.stringify(events.map(({ index, event }) => [index, nameHash(event.regardingName ?? ''), namespaceId(event.namespace), eventKey(event.namespace, event.name)]));
}

/** CHAIN_CAP bounds the versions `eventChains` walks per event: an event with more is read by the seek of `firstOfEvents`. */
export const CHAIN_CAP = 1_024;

/**
 * EVENT_CHAINS walks, for each event of `@events` (a JSON array of [index,
 * event key]), its versions from the current one back along `prev_rv`: in
 * `versions`, then in `past_versions` once compacted. Each row is a version's
 * revision and the one before it: 0 when the walk reached the first version of
 * the key, -1 when it cannot go on (a version dropped, or kept before
 * `past_versions` had the column). A walk stops at `@cap` versions.
 *
 * An occurrence's id is the revision of the version it describes, so the
 * revisions of a complete chain are every occurrence the event's key can have
 * since it was last created: read by the primary key, whatever else happened
 * to the same object. `firstOfEvents` instead steps over the object's other
 * events, which in a long archive are hundreds a hit (a StatefulSet's pod).
 */
export const EVENT_CHAINS = `WITH RECURSIVE chain(i, rv, prev, n) AS (
    SELECT k.value ->> 0, c.rv, coalesce(c.prev_rv, 0), 1
    FROM json_each(@events) k JOIN versions c INDEXED BY cur_key ON c.key = k.value ->> 1 WHERE ${CURRENT}
    UNION ALL
    SELECT ch.i, ch.prev,
      CASE WHEN v.rv IS NOT NULL THEN coalesce(v.prev_rv, 0) WHEN p.rv IS NOT NULL THEN coalesce(p.prev_rv, -1) ELSE -1 END, ch.n + 1
    FROM chain ch LEFT JOIN versions v ON v.rv = ch.prev LEFT JOIN past_versions p ON v.rv IS NULL AND p.rv = ch.prev
    WHERE ch.prev > 0 AND ch.n < @cap)
  SELECT i, rv, prev FROM chain ORDER BY i, n`;

/** OCCURRENCES_BY_ID reads the occurrences of `@ids` (a JSON array of [index, id]) by their primary key, each with the object of its version. */
export const OCCURRENCES_BY_ID = `SELECT k.value ->> 0 AS i, o.id, o.observed_us, o.count_before, o.count_after, o.cluster, o.cluster_uid, o.observed_time, o.body,
    coalesce(v.object, p.object) AS object
  FROM json_each(@ids) k
  JOIN occurrences o ON o.id = k.value ->> 1
  LEFT JOIN versions v ON o.body IS NULL AND v.rv = o.id
  LEFT JOIN past_versions p ON o.body IS NULL AND v.rv IS NULL AND p.rv = o.id`;

/**
 * completeChains keeps, of the rows `EVENT_CHAINS` read, the revisions of each
 * event whose walk reached its key's first version and passed through
 * `through` (the revision the caller read, where it has one): the other events
 * are read by the seek. An event read by the chain is one whose version the
 * caller read is in its key's current life; earlier lives of the key (deleted
 * and created again) are other events, with other uids, which the caller's
 * uid refuses anyway.
 */
export function completeChains(rows: readonly { i: number; rv: number; prev: number }[], through: ReadonlyMap<number, number>): Map<number, number[]> {
  const walks = new Map<number, { rvs: number[]; last: number }>();
  for (const r of rows) {
    const w = walks.get(r.i);
    if (w === undefined) walks.set(r.i, { rvs: [r.rv], last: r.prev });
    else {
      w.rvs.push(r.rv);
      w.last = r.prev;
    }
  }
  const out = new Map<number, number[]>();
  for (const [i, w] of walks) {
    const rv = through.get(i);
    if (w.last === 0 && rv !== undefined && w.rvs.includes(rv)) out.set(i, w.rvs);
  }
  return out;
}
