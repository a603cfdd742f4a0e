import type { CoreEvent } from '../../api/index.js';
import type { EventStore } from '../event-store.js';
import type { SearchField } from '../../api/index.js';
import { compareSearchOrder, countInHistogram, histogramBuckets, searchCursorOf } from './search-store.js';
import type { SearchCursor, SearchPage, SearchRequest } from './search-store.js';
import { createSearchMatcher } from '../../api/index.js';

/** SCAN_CHUNK is how many events one list call of a scan reads: a page of the store's own, not the whole archive at once. */
const SCAN_CHUNK = 1000;

/**
 * scanSearch answers a search by reading every event of the scope through
 * `list` at one revision and testing each: what the memory store answers with
 * (tests and demos), and the reference an indexed backend is compared with.
 * Its cost grows with the archive, not with the hits.
 */
export async function scanSearch(store: EventStore, request: SearchRequest): Promise<SearchPage> {
  const matcher = createSearchMatcher(request.query);
  const hits: { event: CoreEvent; matched: SearchField[]; at: SearchCursor }[] = [];
  const histogram = request.histogram === undefined ? undefined : histogramBuckets(request.histogram);
  let rv = request.resourceVersion;
  let startKey: string | undefined;
  for (;;) {
    const page = await store.list({
      ...(request.namespace !== undefined ? { namespace: request.namespace } : {}),
      ...(rv !== undefined ? { resourceVersion: rv, match: 'Exact' as const } : {}),
      ...(startKey !== undefined ? { startKey } : {}),
      limit: SCAN_CHUNK,
    });
    rv = page.resourceVersion;
    for (const event of page.items) {
      const matched = matcher.matches(event);
      if (matched === undefined) continue;
      const at = searchCursorOf(event);
      if (histogram !== undefined) countInHistogram(histogram, request.histogram!, at.timeMs);
      if (request.after !== undefined && compareSearchOrder(at, request.after) <= 0) continue;
      hits.push({ event, matched, at });
    }
    if (page.lastKey === undefined) break;
    startKey = page.lastKey;
  }
  hits.sort((a, b) => compareSearchOrder(a.at, b.at));
  const items = hits.slice(0, request.limit);
  const result: SearchPage = { items: items.map(({ event, matched }) => ({ event, matched })), resourceVersion: rv };
  if (hits.length > request.limit) result.next = items[items.length - 1]!.at;
  if (histogram !== undefined) result.histogram = histogram;
  return result;
}
