import type { CoreEvent, MicroTime, ObjectMeta, ObjectReference } from './types.js';
import { wireTimeMs } from './duration.js';

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
  /** message is the event's message after the change; absent where `messageOf` refers to it. */
  message?: string;
  /**
   * messageOf, in an answer of several occurrences, is the resourceVersion of an earlier version of the same event
   * in that answer (an earlier occurrence's `event.resourceVersion`, or a search hit's own event) whose message this
   * one repeats: the text is sent once an answer (`resolveOccurrenceMessages` gives it back).
   */
  messageOf?: string;
  regarding: ObjectReference;
  related?: ObjectReference | null;
  reportingController?: string;
  reportingInstance?: string;
  /** cluster names where the event came from (`kevents mirror --cluster`); empty for local writes. */
  cluster?: string;
  /** clusterUID is the UID of that cluster's `kube-system` namespace (`k8s.cluster.uid`); absent when unknown. */
  clusterUID?: string;
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

/** OccurrenceStamp is what a writer knows about an occurrence beyond the event itself. */
export interface OccurrenceStamp {
  /** observedTime is when the change was seen (MicroTime); a store fills in its own clock when absent. */
  observedTime?: string;
  /** cluster names the mirrored source; absent for local writes. */
  cluster?: string;
  /** clusterUID is the mirrored source's `kube-system` namespace UID, when the mirror learned it. */
  clusterUID?: string;
}

/**
 * occurrenceOf builds the Occurrence of a change that produced `event` (as
 * stored, with its resourceVersion). `sequence` makes the name unique; the
 * regarding, reason and message are those of the event after the change.
 */
export function occurrenceOf(
  event: CoreEvent,
  change: { countBefore: number; countAfter: number },
  stamp: { observedTime: string; cluster?: string | undefined; clusterUID?: string | undefined },
  sequence: number,
): Occurrence {
  const meta = event.metadata;
  const name = meta.name ?? '';
  const namespace = meta.namespace ?? '';
  const o: Occurrence = {
    kind: 'Occurrence',
    apiVersion: ARCHIVE_API,
    metadata: { name: `${name}.${sequence}`, namespace, creationTimestamp: stamp.observedTime.replace(/\.\d+Z$/, 'Z') },
    event: { name, namespace },
    observedTime: stamp.observedTime,
    lastSeen: eventLastSeen(event),
    countBefore: change.countBefore,
    countAfter: change.countAfter,
    regarding: event.involvedObject,
  };
  if (meta.uid !== undefined) o.event.uid = meta.uid;
  if (meta.resourceVersion !== undefined) o.event.resourceVersion = meta.resourceVersion;
  if (event.type !== undefined) o.type = event.type;
  if (event.reason !== undefined) o.reason = event.reason;
  if (event.message !== undefined) o.message = event.message;
  if (event.related !== undefined && event.related !== null) o.related = event.related;
  const controller = event.reportingComponent !== undefined && event.reportingComponent !== '' ? event.reportingComponent : event.source?.component;
  if (controller !== undefined && controller !== '') o.reportingController = controller;
  const instance = event.reportingInstance !== undefined && event.reportingInstance !== '' ? event.reportingInstance : event.source?.host;
  if (instance !== undefined && instance !== '') o.reportingInstance = instance;
  if (stamp.cluster !== undefined && stamp.cluster !== '') o.cluster = stamp.cluster;
  if (stamp.clusterUID !== undefined && stamp.clusterUID !== '') o.clusterUID = stamp.clusterUID;
  return o;
}

/** OccurrenceField names the fields an occurrence list may select on with `=` (and `!=`). */
export type OccurrenceField =
  | 'metadata.namespace'
  | 'event.name'
  | 'event.uid'
  | 'regarding.kind'
  | 'regarding.namespace'
  | 'regarding.name'
  | 'regarding.uid'
  | 'reason'
  | 'type'
  | 'cluster';

/** OCCURRENCE_FIELDS is every field label the archive API accepts in a fieldSelector; anything else is a 400. */
export const OCCURRENCE_FIELDS: readonly OccurrenceField[] = [
  'metadata.namespace',
  'event.name',
  'event.uid',
  'regarding.kind',
  'regarding.namespace',
  'regarding.name',
  'regarding.uid',
  'reason',
  'type',
  'cluster',
];

/** occurrenceFieldValue reads one selectable field of an occurrence; a missing field reads as "". */
export function occurrenceFieldValue(o: Occurrence, field: OccurrenceField): string {
  switch (field) {
    case 'metadata.namespace':
      return o.metadata.namespace ?? '';
    case 'event.name':
      return o.event.name;
    case 'event.uid':
      return o.event.uid ?? '';
    case 'regarding.kind':
      return o.regarding.kind ?? '';
    case 'regarding.namespace':
      return o.regarding.namespace ?? '';
    case 'regarding.name':
      return o.regarding.name ?? '';
    case 'regarding.uid':
      return o.regarding.uid ?? '';
    case 'reason':
      return o.reason ?? '';
    case 'type':
      return o.type ?? '';
    case 'cluster':
      return o.cluster ?? '';
  }
}

/** eventFirstMs is when an event first happened: firstTimestamp, else eventTime, else its creation. */
export function eventFirstMs(e: CoreEvent): number | undefined {
  return wireTimeMs(e.firstTimestamp) ?? wireTimeMs(e.eventTime) ?? wireTimeMs(e.metadata.creationTimestamp);
}

/** eventLastMs is when an event last happened (series, lastTimestamp, eventTime, firstTimestamp). */
export function eventLastMs(e: CoreEvent): number | undefined {
  return wireTimeMs(eventLastSeen(e)) ?? eventFirstMs(e);
}
