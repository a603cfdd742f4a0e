import { canonicalMicroTime, canonicalTime } from './time.js';
import type {
  CoreEvent,
  CoreEventList,
  EventApi,
  EventSeries,
  EventSource,
  EventsV1Event,
  EventsV1EventList,
  ListMeta,
  ManagedFieldsEntry,
  ObjectMeta,
  ObjectReference,
  OwnerReference,
} from './types.js';

/**
 * The two Event APIs are two views of one stored object (the core/v1 form). Every field of either
 * version has exactly one counterpart in the other, so conversion is lossless both ways; note that
 * `source.component` and `reportingComponent`/`reportingController` are separate fields.
 *
 * The `encode*` functions produce the JSON object the apiserver would write: keys in Go struct order,
 * `omitempty` as Go applies it (never to struct-valued fields, so empty `source` is `{}` and zero
 * times are `null`), times in canonical UTC form, map keys sorted.
 */

type Loose<T> = { [K in keyof T]?: T[K] | null | undefined };

const str = (v: string | null | undefined): string => v ?? '';

function putString(out: Record<string, unknown>, key: string, v: string | null | undefined): void {
  if (v !== undefined && v !== null && v !== '') out[key] = v;
}

function putNumber(out: Record<string, unknown>, key: string, v: number | null | undefined): void {
  if (v !== undefined && v !== null && v !== 0) out[key] = v;
}

function sortedMap(m: Record<string, string> | null | undefined): Record<string, string> | undefined {
  if (m === undefined || m === null) return undefined;
  // Go's encoder writes map keys in byte order of their UTF-8 encoding; code-unit order agrees
  // except for astral characters, which label and annotation keys cannot contain.
  const keys = Object.keys(m).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (keys.length === 0) return undefined;
  const out: Record<string, string> = {};
  // defineProperty keeps a key such as `__proto__` an ordinary own key.
  for (const k of keys) Object.defineProperty(out, k, { value: m[k], enumerable: true, writable: true, configurable: true });
  return out;
}

function encodeOwnerReference(r: Loose<OwnerReference>): OwnerReference {
  const out: OwnerReference = { apiVersion: str(r.apiVersion), kind: str(r.kind), name: str(r.name), uid: str(r.uid) };
  if (r.controller !== undefined && r.controller !== null) out.controller = r.controller;
  if (r.blockOwnerDeletion !== undefined && r.blockOwnerDeletion !== null) out.blockOwnerDeletion = r.blockOwnerDeletion;
  return out;
}

function encodeManagedFieldsEntry(e: Loose<ManagedFieldsEntry>): ManagedFieldsEntry {
  const out: Record<string, unknown> = {};
  putString(out, 'manager', e.manager);
  putString(out, 'operation', e.operation);
  putString(out, 'apiVersion', e.apiVersion);
  if (e.time !== undefined && e.time !== null) out.time = canonicalTime(e.time);
  putString(out, 'fieldsType', e.fieldsType);
  if (e.fieldsV1 !== undefined && e.fieldsV1 !== null) out.fieldsV1 = e.fieldsV1;
  putString(out, 'subresource', e.subresource);
  return out;
}

/** encodeObjectMeta writes metav1.ObjectMeta as the apiserver does (selfLink is never set; a zero creationTimestamp is omitted, as since Kubernetes 1.34). */
export function encodeObjectMeta(m: Loose<ObjectMeta> | null | undefined): ObjectMeta {
  const out: Record<string, unknown> = {};
  if (m === null || m === undefined) return out;
  putString(out, 'name', m.name);
  putString(out, 'generateName', m.generateName);
  putString(out, 'namespace', m.namespace);
  putString(out, 'uid', m.uid);
  putString(out, 'resourceVersion', m.resourceVersion);
  putNumber(out, 'generation', m.generation);
  const created = canonicalTime(m.creationTimestamp);
  if (created !== null) out.creationTimestamp = created;
  if (m.deletionTimestamp !== undefined && m.deletionTimestamp !== null) out.deletionTimestamp = canonicalTime(m.deletionTimestamp);
  if (m.deletionGracePeriodSeconds !== undefined && m.deletionGracePeriodSeconds !== null) {
    out.deletionGracePeriodSeconds = m.deletionGracePeriodSeconds;
  }
  const labels = sortedMap(m.labels);
  if (labels !== undefined) out.labels = labels;
  const annotations = sortedMap(m.annotations);
  if (annotations !== undefined) out.annotations = annotations;
  if (m.ownerReferences && m.ownerReferences.length > 0) out.ownerReferences = m.ownerReferences.map(encodeOwnerReference);
  if (m.finalizers && m.finalizers.length > 0) out.finalizers = [...m.finalizers];
  if (m.managedFields && m.managedFields.length > 0) out.managedFields = m.managedFields.map(encodeManagedFieldsEntry);
  return out;
}

/** encodeObjectReference writes core/v1 ObjectReference (every field omitempty). */
export function encodeObjectReference(r: Loose<ObjectReference> | null | undefined): ObjectReference {
  const out: Record<string, unknown> = {};
  if (r === null || r === undefined) return out;
  putString(out, 'kind', r.kind);
  putString(out, 'namespace', r.namespace);
  putString(out, 'name', r.name);
  putString(out, 'uid', r.uid);
  putString(out, 'apiVersion', r.apiVersion);
  putString(out, 'resourceVersion', r.resourceVersion);
  putString(out, 'fieldPath', r.fieldPath);
  return out;
}

function encodeSource(s: Loose<EventSource> | null | undefined): EventSource {
  const out: Record<string, unknown> = {};
  if (s === null || s === undefined) return out;
  putString(out, 'component', s.component);
  putString(out, 'host', s.host);
  return out;
}

/** encodeCoreEvent writes a core/v1 Event exactly as the apiserver's JSON encoder does. */
export function encodeCoreEvent(e: Loose<CoreEvent>): CoreEvent {
  const out: Record<string, unknown> = { kind: 'Event', apiVersion: 'v1' };
  out.metadata = encodeObjectMeta(e.metadata);
  out.involvedObject = encodeObjectReference(e.involvedObject);
  putString(out, 'reason', e.reason);
  putString(out, 'message', e.message);
  out.source = encodeSource(e.source);
  out.firstTimestamp = canonicalTime(e.firstTimestamp);
  out.lastTimestamp = canonicalTime(e.lastTimestamp);
  putNumber(out, 'count', e.count);
  putString(out, 'type', e.type);
  out.eventTime = canonicalMicroTime(e.eventTime);
  if (e.series !== undefined && e.series !== null) {
    // core/v1 EventSeries.count is omitempty; lastObservedTime is a struct and always written.
    const series: Record<string, unknown> = {};
    putNumber(series, 'count', e.series.count);
    series.lastObservedTime = canonicalMicroTime(e.series.lastObservedTime);
    out.series = series;
  }
  putString(out, 'action', e.action);
  if (e.related !== undefined && e.related !== null) out.related = encodeObjectReference(e.related);
  out.reportingComponent = str(e.reportingComponent);
  out.reportingInstance = str(e.reportingInstance);
  return out as unknown as CoreEvent;
}

/** encodeEventsV1Event writes an events.k8s.io/v1 Event exactly as the apiserver's JSON encoder does. */
export function encodeEventsV1Event(e: Loose<EventsV1Event>): EventsV1Event {
  const out: Record<string, unknown> = { kind: 'Event', apiVersion: 'events.k8s.io/v1' };
  out.metadata = encodeObjectMeta(e.metadata);
  out.eventTime = canonicalMicroTime(e.eventTime);
  if (e.series !== undefined && e.series !== null) {
    const series: EventSeries = { count: e.series.count ?? 0, lastObservedTime: canonicalMicroTime(e.series.lastObservedTime) };
    out.series = series;
  }
  putString(out, 'reportingController', e.reportingController);
  putString(out, 'reportingInstance', e.reportingInstance);
  putString(out, 'action', e.action);
  putString(out, 'reason', e.reason);
  out.regarding = encodeObjectReference(e.regarding);
  if (e.related !== undefined && e.related !== null) out.related = encodeObjectReference(e.related);
  putString(out, 'note', e.note);
  putString(out, 'type', e.type);
  out.deprecatedSource = encodeSource(e.deprecatedSource);
  out.deprecatedFirstTimestamp = canonicalTime(e.deprecatedFirstTimestamp);
  out.deprecatedLastTimestamp = canonicalTime(e.deprecatedLastTimestamp);
  putNumber(out, 'deprecatedCount', e.deprecatedCount);
  return out as unknown as EventsV1Event;
}

/** toEventsV1 views a stored (core/v1) event through events.k8s.io/v1, encoded as the apiserver writes it. */
export function toEventsV1(core: Loose<CoreEvent>): EventsV1Event {
  return encodeEventsV1Event({
    metadata: core.metadata,
    eventTime: core.eventTime,
    series: core.series,
    reportingController: core.reportingComponent,
    reportingInstance: core.reportingInstance,
    action: core.action,
    reason: core.reason,
    regarding: core.involvedObject,
    related: core.related,
    note: core.message,
    type: core.type,
    deprecatedSource: core.source,
    deprecatedFirstTimestamp: core.firstTimestamp,
    deprecatedLastTimestamp: core.lastTimestamp,
    deprecatedCount: core.count,
  });
}

/** toCoreV1 turns an events.k8s.io/v1 event into the stored (core/v1) form, encoded as the apiserver writes it. */
export function toCoreV1(ev: Loose<EventsV1Event>): CoreEvent {
  return encodeCoreEvent({
    metadata: ev.metadata,
    involvedObject: ev.regarding,
    reason: ev.reason,
    message: ev.note,
    source: ev.deprecatedSource,
    firstTimestamp: ev.deprecatedFirstTimestamp,
    lastTimestamp: ev.deprecatedLastTimestamp,
    count: ev.deprecatedCount,
    type: ev.type,
    eventTime: ev.eventTime,
    series: ev.series,
    action: ev.action,
    related: ev.related,
    reportingComponent: ev.reportingController,
    reportingInstance: ev.reportingInstance,
  });
}

/** encodeEvent writes a stored (core/v1) event as the given API shows it. */
export function encodeEvent(core: Loose<CoreEvent>, api: EventApi): CoreEvent | EventsV1Event {
  return api === 'v1' ? encodeCoreEvent(core) : toEventsV1(core);
}

/** encodeListMeta writes metav1.ListMeta (every field omitempty; remainingItemCount is a pointer, so 0 is written). */
export function encodeListMeta(m: Loose<ListMeta> | null | undefined): ListMeta {
  const out: Record<string, unknown> = {};
  if (m === null || m === undefined) return out;
  putString(out, 'selfLink', m.selfLink);
  putString(out, 'resourceVersion', m.resourceVersion);
  putString(out, 'continue', m.continue);
  if (m.remainingItemCount !== undefined && m.remainingItemCount !== null) out.remainingItemCount = m.remainingItemCount;
  return out;
}

/** encodeEventList writes an EventList of stored (core/v1) events as the given API shows it; `items` is `[]` when empty, never null. */
export function encodeEventList(items: Loose<CoreEvent>[], api: 'v1', listMeta?: Loose<ListMeta>): CoreEventList;
export function encodeEventList(items: Loose<CoreEvent>[], api: 'events.k8s.io/v1', listMeta?: Loose<ListMeta>): EventsV1EventList;
export function encodeEventList(
  items: Loose<CoreEvent>[],
  api: EventApi,
  listMeta?: Loose<ListMeta>,
): CoreEventList | EventsV1EventList;
export function encodeEventList(
  items: Loose<CoreEvent>[],
  api: EventApi,
  listMeta?: Loose<ListMeta>,
): CoreEventList | EventsV1EventList {
  const metadata = encodeListMeta(listMeta);
  if (api === 'v1') return { kind: 'EventList', apiVersion: 'v1', metadata, items: items.map(encodeCoreEvent) };
  return { kind: 'EventList', apiVersion: 'events.k8s.io/v1', metadata, items: items.map(toEventsV1) };
}

const goEscapes: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

/**
 * marshalJson serialises a wire object byte-for-byte as Go's `json.Encoder` does (without the
 * trailing newline Encode adds): compact, with `<`, `>`, `&`, U+2028 and U+2029 escaped.
 */
export function marshalJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => goEscapes[c]!);
}
