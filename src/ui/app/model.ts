import type { CLUSTER_LABEL, CoreEvent, ObjectReference } from '../../api/index.js';

/**
 * LABEL_OF_CLUSTER is the label that names the cluster an archived event came
 * from. The UI imports api types only: typed as the api's constant, it cannot
 * drift from it.
 */
const LABEL_OF_CLUSTER: typeof CLUSTER_LABEL = 'archive.kevents.io/cluster';

/**
 * EventRow is the slim, display-ready form of one Event that the UI keeps in
 * memory: a few hundred bytes instead of the whole object, so that 100,000
 * events fit comfortably in a browser tab.
 */
export interface EventRow {
  uid: string;
  namespace: string;
  /** cluster names the cluster the event was archived from, '' for a local write. */
  cluster: string;
  name: string;
  rv: number;
  type: string;
  reason: string;
  message: string;
  kind: string;
  objectName: string;
  objectNamespace: string;
  fieldPath: string;
  from: string;
  count: number;
  /** first and last are Unix ms; NaN when the event carries no time at all. */
  first: number;
  last: number;
  /** objectKey is `Kind/namespace/name` of the regarding object, the timeline's lane. */
  objectKey: string;
  /** haystack is the lower-cased text the free-text filter searches. */
  haystack: string;
  /** bumpedAt is when this tab saw the count go up (Unix ms), 0 if never. */
  bumpedAt: number;
}

/** Filters narrow every view; empty strings match everything. */
export interface Filters {
  /** cluster keeps one cluster of an archive of several (the cluster picker). */
  cluster: string;
  namespace: string;
  kind: string;
  type: string;
  reason: string;
  q: string;
}

/** EMPTY_FILTERS match every event. */
export const EMPTY_FILTERS: Filters = { cluster: '', namespace: '', kind: '', type: '', reason: '', q: '' };

/** isFiltered tells whether any filter narrows the views. */
export function isFiltered(f: Filters): boolean {
  return f.cluster !== '' || f.namespace !== '' || f.kind !== '' || f.type !== '' || f.reason !== '' || f.q.trim() !== '';
}

function timeMs(t: string | null | undefined): number {
  if (t === null || t === undefined || t === '') return NaN;
  const ms = Date.parse(t);
  // Go's zero time is what an unset metav1.Time decodes to.
  return ms === -62135596800000 ? NaN : ms;
}

/** objectKeyOf is the lane key of a regarding object: `Kind/namespace/name`. */
export function objectKeyOf(ref: ObjectReference, eventNamespace = ''): string {
  return `${ref.kind ?? ''}/${ref.namespace ?? eventNamespace}/${ref.name ?? ''}`;
}

/** parseObjectKey splits an objectKey back into kind, namespace and name. */
export function parseObjectKey(key: string): { kind: string; namespace: string; name: string } | undefined {
  const parts = key.split('/');
  if (parts.length !== 3 || parts[0] === '' || parts[2] === '') return undefined;
  return { kind: parts[0]!, namespace: parts[1]!, name: parts[2]! };
}

/** toRow reduces a core/v1 Event to an EventRow (times as `kubectl describe` reads them). */
export function toRow(e: CoreEvent): EventRow {
  const ref = e.involvedObject ?? {};
  const namespace = e.metadata.namespace ?? '';
  const first = Number.isNaN(timeMs(e.eventTime)) ? timeMs(e.firstTimestamp) : timeMs(e.eventTime);
  let last = e.series ? timeMs(e.series.lastObservedTime) : timeMs(e.lastTimestamp);
  if (Number.isNaN(last)) last = first;
  const count = e.series ? e.series.count : e.count !== undefined && e.count > 0 ? e.count : 1;
  const row: EventRow = {
    uid: e.metadata.uid ?? `${namespace}/${e.metadata.name ?? ''}`,
    namespace,
    cluster: e.metadata.labels?.[LABEL_OF_CLUSTER] ?? '',
    name: e.metadata.name ?? '',
    rv: Number(e.metadata.resourceVersion ?? 0),
    type: e.type ?? '',
    reason: e.reason ?? '',
    message: (e.message ?? '').trim(),
    kind: ref.kind ?? '',
    objectName: ref.name ?? '',
    objectNamespace: ref.namespace ?? namespace,
    fieldPath: ref.fieldPath ?? '',
    from: e.source?.component || e.reportingComponent || '',
    count,
    first: Number.isNaN(first) ? last : first,
    last,
    objectKey: objectKeyOf(ref, namespace),
    haystack: '',
    bumpedAt: 0,
  };
  row.haystack = `${row.namespace}\n${row.kind}\n${row.objectName}\n${row.reason}\n${row.type}\n${row.message}\n${row.from}`.toLowerCase();
  return row;
}

/** Matchable is what filters look at: an EventRow or a timeline Mark. */
export interface Matchable {
  cluster: string;
  namespace: string;
  kind: string;
  type: string;
  reason: string;
  haystack: string;
}

/** rowMatcher compiles filters into a predicate; kind, type and reason compare case-insensitively. */
export function rowMatcher(f: Filters): (r: Matchable) => boolean {
  const cluster = f.cluster.trim();
  const ns = f.namespace.trim();
  const kind = f.kind.trim().toLowerCase();
  const type = f.type.trim().toLowerCase();
  const reason = f.reason.trim().toLowerCase();
  const words = f.q.trim().toLowerCase().split(/\s+/).filter((w) => w !== '');
  return (r) =>
    (cluster === '' || r.cluster === cluster) &&
    (ns === '' || r.namespace === ns) &&
    (kind === '' || r.kind.toLowerCase() === kind) &&
    (type === '' || r.type.toLowerCase() === type) &&
    (reason === '' || r.reason.toLowerCase() === reason) &&
    words.every((w) => r.haystack.includes(w));
}

/** newerFirst orders rows by last-seen time, newest first, then by resourceVersion. */
export function newerFirst(a: EventRow, b: EventRow): number {
  const at = Number.isNaN(a.last) ? -Infinity : a.last;
  const bt = Number.isNaN(b.last) ? -Infinity : b.last;
  return bt - at || b.rv - a.rv;
}
