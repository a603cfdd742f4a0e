/**
 * Wire types of the two Kubernetes Event APIs (core/v1 and events.k8s.io/v1) and
 * the meta.k8s.io/v1 objects that travel with them. Field names are exactly the
 * JSON names of the API server; optional fields may be absent or `null` on input.
 */

/** Time is a metav1.Time on the wire: RFC 3339 UTC to the second, or null when zero. */
export type Time = string | null;
/** MicroTime is a metav1.MicroTime on the wire: RFC 3339 UTC with six fractional digits, or null. */
export type MicroTime = string | null;

/** OwnerReference is metav1.OwnerReference. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** ManagedFieldsEntry is metav1.ManagedFieldsEntry (kept opaque). */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: Time;
  fieldsType?: string;
  fieldsV1?: unknown;
  subresource?: string;
}

/** ObjectMeta is the subset of metav1.ObjectMeta that events carry. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: Time;
  deletionTimestamp?: Time;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: ManagedFieldsEntry[];
}

/** ObjectReference is core/v1 ObjectReference: what an event is about. */
export interface ObjectReference {
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiVersion?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

/** EventSource is core/v1 EventSource. */
export interface EventSource {
  component?: string;
  host?: string;
}

/** EventSeries is the series of an isomorphic event (both APIs share its shape). */
export interface EventSeries {
  count: number;
  lastObservedTime: MicroTime;
}

/** CoreEvent is a core/v1 Event. It is also kevents' stored form of an event. */
export interface CoreEvent {
  kind?: 'Event';
  apiVersion?: 'v1';
  metadata: ObjectMeta;
  involvedObject: ObjectReference;
  reason?: string;
  message?: string;
  source?: EventSource;
  firstTimestamp?: Time;
  lastTimestamp?: Time;
  count?: number;
  type?: string;
  eventTime?: MicroTime;
  series?: EventSeries | null;
  action?: string;
  related?: ObjectReference | null;
  reportingComponent?: string;
  reportingInstance?: string;
}

/** EventsV1Event is an events.k8s.io/v1 Event. */
export interface EventsV1Event {
  kind?: 'Event';
  apiVersion?: 'events.k8s.io/v1';
  metadata: ObjectMeta;
  eventTime: MicroTime;
  series?: EventSeries | null;
  reportingController?: string;
  reportingInstance?: string;
  action?: string;
  reason?: string;
  regarding?: ObjectReference;
  related?: ObjectReference | null;
  note?: string;
  type?: string;
  deprecatedSource?: EventSource;
  deprecatedFirstTimestamp?: Time;
  deprecatedLastTimestamp?: Time;
  deprecatedCount?: number;
}

/** ListMeta is metav1.ListMeta. */
export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
  selfLink?: string;
}

/** CoreEventList is a core/v1 EventList. */
export interface CoreEventList {
  kind: 'EventList';
  apiVersion: 'v1';
  metadata: ListMeta;
  items: CoreEvent[];
}

/** EventsV1EventList is an events.k8s.io/v1 EventList. */
export interface EventsV1EventList {
  kind: 'EventList';
  apiVersion: 'events.k8s.io/v1';
  metadata: ListMeta;
  items: EventsV1Event[];
}

/** StatusCause is metav1.StatusCause. */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** StatusDetails is metav1.StatusDetails. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** Status is metav1.Status: every error answer of the API, and some successes (delete). */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: ListMeta;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  /** code is omitted (Go omitempty) in the Success of a delete. */
  code?: number;
}

/** TableColumnDefinition is meta.k8s.io/v1 TableColumnDefinition. */
export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** TableRow is meta.k8s.io/v1 TableRow. */
export interface TableRow {
  cells: unknown[];
  object?: unknown;
}

/** Table is meta.k8s.io/v1 Table, the server-side printing format kubectl asks for. */
export interface Table {
  kind: 'Table';
  apiVersion: 'meta.k8s.io/v1';
  metadata: ListMeta;
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
}

/** WatchEventType is the type of one frame of a watch stream. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** WatchEvent is one frame of a watch stream. */
export interface WatchEvent<T = unknown> {
  type: WatchEventType;
  object: T;
}

/** EventApi names one of the two Event APIs by its group/version. */
export type EventApi = 'v1' | 'events.k8s.io/v1';

/** CORE_API is the group/version of core/v1. */
export const CORE_API = 'v1' satisfies EventApi;
/** EVENTS_API is the group/version of events.k8s.io/v1. */
export const EVENTS_API = 'events.k8s.io/v1' satisfies EventApi;
