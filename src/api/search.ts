import type { ARCHIVE_API, Occurrence } from './occurrence.js';
import type { CoreEvent } from './types.js';

/** SearchResultItem is one hit of an archive search. */
export interface SearchResultItem {
  /** event is the core/v1 event as the events API serves it. */
  event: CoreEvent;
  /** occurrences are the event's archived occurrences whose change happened in the search's window (all of them without one), oldest first. */
  occurrences: Occurrence[];
  /**
   * occurrencesLeftOut counts the occurrences in the window an answer's byte bound left out of `occurrences` (the
   * latest): read them with the occurrences API (`fieldSelector=event.name=NAME`). Absent when none were.
   */
  occurrencesLeftOut?: number;
  /** matched names the fields the query's terms matched (`message`, `reason`, `type`, `kind`, `name`, `ns`, `controller`, `node`, `cluster`). */
  matched: string[];
  /**
   * messageMarks are the spans of `event.message` the query's words and phrases matched, as [start, end) UTF-16
   * indexes, sorted and apart: what a client marks, so that it need not parse the query language itself.
   */
  messageMarks: [number, number][];
}

/** SearchHistogramBucket is the hits of a whole search whose event last happened in [time, time + bucket). */
export interface SearchHistogramBucket {
  time: string;
  hits: number;
}

/** SearchResult is one page of an archive search (GET …/archive.kevents.io/v1alpha1/search). */
export interface SearchResult {
  kind: 'SearchResult';
  apiVersion: typeof ARCHIVE_API;
  metadata: { resourceVersion?: string; continue?: string };
  items: SearchResultItem[];
  /** histogram is there when asked for (`histogram=BUCKET`): every bucket of the window, oldest first. */
  histogram?: SearchHistogramBucket[];
}
