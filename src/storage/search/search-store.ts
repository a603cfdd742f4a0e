import type { CoreEvent } from '../../api/index.js';
import type { SearchField, SearchQuery } from '../../api/index.js';
import { searchTimeMs } from '../../api/index.js';

/**
 * SearchCursor is the position of a hit in a search's order: newest first by
 * the event's last time (`searchTimeMs`), then by key (`<namespace>/<name>`)
 * ascending, a total order a page resumes after.
 */
export interface SearchCursor {
  timeMs: number;
  key: string;
}

/** SearchHistogramRequest asks for the hits per bucket of `bucketMs` over [sinceMs, untilMs), the first bucket starting at sinceMs. */
export interface SearchHistogramRequest {
  sinceMs: number;
  untilMs: number;
  bucketMs: number;
}

/** MAX_HISTOGRAM_BUCKETS bounds a histogram, so that a one-second bucket over a year is refused rather than counted. */
export const MAX_HISTOGRAM_BUCKETS = 1000;

/** SEARCH_PAGE_MAX bounds a page of hits whatever limit is asked for: each hit is a decoded event. */
export const SEARCH_PAGE_MAX = 1000;

/** SearchRequest is one page of a search. */
export interface SearchRequest {
  query: SearchQuery;
  /** namespace limits the search to one namespace; undefined means all. */
  namespace?: string;
  /** limit caps the hits of the page, 1 to SEARCH_PAGE_MAX. */
  limit: number;
  /** after starts strictly after this position (the `next` of the previous page). */
  after?: SearchCursor;
  /**
   * resourceVersion reads the archive as of that revision (the `resourceVersion`
   * of the first page, so that every page reads one snapshot); undefined reads
   * the latest. A revision older than the store's history is ResourceVersionExpired,
   * as an exact list is.
   */
  resourceVersion?: number;
  /** histogram, when set, asks for the hits of the whole search (not only the page) per time bucket. */
  histogram?: SearchHistogramRequest;
  /**
   * maxExamined lets a page stop once it has examined about this many candidates
   * (the events its index found, which the query then keeps or drops): the page
   * ends short with `next` at a position past every candidate examined, so that a
   * caller can yield between reads and bound a request's work. A backend may
   * examine the rest of one instant's candidates past it, or ignore it.
   */
  maxExamined?: number;
}

/** SearchHit is one event a search found and the fields its terms matched. */
export interface SearchHit {
  event: CoreEvent;
  matched: SearchField[];
}

/** SearchBucket is one bucket of a histogram: its start (Unix ms) and the hits whose last time falls in it. */
export interface SearchBucket {
  startMs: number;
  hits: number;
}

/** SearchPage is one page of a search's hits. */
export interface SearchPage {
  items: SearchHit[];
  /** resourceVersion is the revision the page was read at. */
  resourceVersion: number;
  /** next is set when more hits may follow: the position of the last hit returned. */
  next?: SearchCursor;
  /** histogram is set when asked for: every bucket of the window, oldest first. */
  histogram?: SearchBucket[];
}

/** SearchCapable is the capability of a store that answers the archive's search (`hasSearch` checks it). */
export interface SearchCapable {
  /**
   * search reads one page of the archive's search (docs/search.md): the events
   * a parsed query matches, newest first by their last time, each with the
   * fields its terms matched, at one revision so that the pages of a search read
   * one snapshot. Every backend answers with the semantics of
   * `createSearchMatcher`, through its own index (or a scan); retention and
   * compaction remove hits with the events.
   */
  search(request: SearchRequest): Promise<SearchPage>;
}

/** hasSearch tells whether a store answers the archive's search. */
export function hasSearch<S extends object>(store: S): store is S & SearchCapable {
  return typeof (store as Partial<SearchCapable>).search === 'function';
}

/** searchCursorOf is the position of a hit's event. */
export function searchCursorOf(e: CoreEvent): SearchCursor {
  return { timeMs: searchTimeMs(e), key: `${e.metadata.namespace ?? ''}/${e.metadata.name ?? ''}` };
}

/** compareSearchOrder orders two positions as a search returns them: newest first, then by key. */
export function compareSearchOrder(a: SearchCursor, b: SearchCursor): number {
  if (a.timeMs !== b.timeMs) return b.timeMs - a.timeMs;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** histogramBuckets is the zero-filled buckets of a histogram request; it throws a RangeError past MAX_HISTOGRAM_BUCKETS. */
export function histogramBuckets(h: SearchHistogramRequest): SearchBucket[] {
  if (!(h.bucketMs > 0) || !(h.untilMs > h.sinceMs)) throw new RangeError('a histogram needs a positive bucket and a window that ends after it starts');
  const n = Math.ceil((h.untilMs - h.sinceMs) / h.bucketMs);
  if (n > MAX_HISTOGRAM_BUCKETS) throw new RangeError(`a histogram of ${n} buckets is more than ${MAX_HISTOGRAM_BUCKETS}`);
  return Array.from({ length: n }, (_, i) => ({ startMs: h.sinceMs + i * h.bucketMs, hits: 0 }));
}

/** countInHistogram adds a hit at `timeMs` to its bucket, if the window holds it. */
export function countInHistogram(buckets: SearchBucket[], h: SearchHistogramRequest, timeMs: number): void {
  if (timeMs < h.sinceMs || timeMs >= h.untilMs) return;
  const b = buckets[Math.floor((timeMs - h.sinceMs) / h.bucketMs)];
  if (b !== undefined) b.hits++;
}
