import type { CoreEvent, MicroTime, ObjectMeta, ObjectReference } from './types.js';

/**
 * The archive API: kevents' own API group on `kevents serve`, for what the
 * Kubernetes Event API throws away. An Event folds its repeats into a count; an
 * Occurrence is one observed change of an event (a creation, a count or series
 * bump, a new message), kept with the time it was seen.
 *
 *   GET /apis/archive.kevents.io/v1alpha1/occurrences
 *   GET /apis/archive.kevents.io/v1alpha1/namespaces/{namespace}/occurrences
 *     ?since=RFC3339&until=RFC3339      observed time window (since inclusive, until exclusive)
 *     &fieldSelector=regarding.kind=Pod,regarding.name=web-1,regarding.uid=…,reason=…,type=…,event.name=…
 *     &limit=N&continue=TOKEN           paging in (observedTime, id) order
 */

/** ARCHIVE_GROUP is the API group of kevents' archive extension. */
export const ARCHIVE_GROUP = 'archive.kevents.io';
/** ARCHIVE_VERSION is the version of the archive API group. */
export const ARCHIVE_VERSION = 'v1alpha1';
/** ARCHIVE_API is the apiVersion of archive objects. */
export const ARCHIVE_API = `${ARCHIVE_GROUP}/${ARCHIVE_VERSION}`;

/** Occurrence is one observed change of one event. */
export interface Occurrence {
  kind?: 'Occurrence';
  apiVersion?: typeof ARCHIVE_API;
  /** metadata.name is `<event name>.<sequence>`; namespace is the event's. */
  metadata: ObjectMeta;
  /** event identifies the Event this is an occurrence of. */
  event: { name: string; namespace: string; uid?: string; resourceVersion?: string };
  /** observedTime is when kevents saw the change (a write, or a change from a mirrored source). */
  observedTime: MicroTime;
  /** lastSeen is the event's own last-seen time after the change (series, lastTimestamp, eventTime). */
  lastSeen: MicroTime;
  /** countBefore and countAfter are the event's count (or series count) around the change. */
  countBefore: number;
  countAfter: number;
  type?: string;
  reason?: string;
  message?: string;
  regarding: ObjectReference;
  related?: ObjectReference | null;
  reportingController?: string;
  reportingInstance?: string;
  /** cluster names where the event came from (`kevents mirror --cluster`); empty for local writes. */
  cluster?: string;
}

/** OccurrenceList is a page of occurrences. */
export interface OccurrenceList {
  kind: 'OccurrenceList';
  apiVersion: typeof ARCHIVE_API;
  metadata: { resourceVersion?: string; continue?: string };
  items: Occurrence[];
}

/** eventCount is an event's repeat count as printers see it: series count, else count, else 1. */
export function eventCount(e: CoreEvent): number {
  if (e.series !== undefined && e.series !== null) return e.series.count;
  return e.count !== undefined && e.count > 0 ? e.count : 1;
}

/** eventLastSeen is an event's last-seen time: series.lastObservedTime, else lastTimestamp, else eventTime, else firstTimestamp. */
export function eventLastSeen(e: CoreEvent): string | null {
  return e.series?.lastObservedTime ?? e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? null;
}

/**
 * occurrenceChange tells whether a write from `prev` to `next` is an observed
 * change worth an occurrence: a new event, a higher count, a later last-seen
 * time, or a new message. Metadata-only writes (labels, TTL refresh) are not.
 */
export function occurrenceChange(prev: CoreEvent | undefined, next: CoreEvent): { countBefore: number; countAfter: number } | undefined {
  const countAfter = eventCount(next);
  if (prev === undefined) return { countBefore: 0, countAfter };
  const countBefore = eventCount(prev);
  const changed =
    countAfter !== countBefore || eventLastSeen(prev) !== eventLastSeen(next) || (prev.message ?? '') !== (next.message ?? '');
  return changed ? { countBefore, countAfter } : undefined;
}
