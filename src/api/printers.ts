/**
 * How events are printed: the API server's Table (`kubectl get events`), the
 * Events section of `kubectl describe`, and `kubectl events`. Every string here
 * is meant to match its upstream counterpart byte for byte.
 *
 * This file holds the Table and the cell texts all three share; `kubectl events`
 * (`kubectl-events.ts`), `kubectl describe` (`describe-events.ts`) and Go's sort
 * order that both of those reproduce (`go-sort.ts`) have files of their own.
 */
import { translateMsSince, translateTimestampSince, wireTimeMs } from './duration.js';
import type { CoreEvent, ListMeta, Table, TableColumnDefinition, TableRow } from './types.js';

const OBJECT_META_NAME_DOC =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';

const FIELD_PATH_DOC =
  'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.';

/** tableColumn is one string column of a Table (kube-apiserver types every printed column `string`). */
export function tableColumn(name: string, description: string, priority = 0, format = ''): TableColumnDefinition {
  return { name, type: 'string', format, description, priority };
}

const column = tableColumn;

/**
 * tableRowObject is a Table row's `object` for the request's `includeObject`: the object itself,
 * null for None, or (kubectl's default, Metadata) its PartialObjectMetadata, whose namespace
 * `kubectl get -A` prints.
 */
export function tableRowObject(includeObject: string | null | undefined, object: unknown, metadata: object): unknown {
  if (includeObject === 'Object') return object;
  if (includeObject === 'None') return null;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { ...metadata } };
}

/**
 * EVENT_TABLE_COLUMNS are the column definitions kube-apiserver returns for
 * events in a Table; descriptions are the core/v1 swagger docs. Every column is
 * typed `string`, Count included, although Count cells are integers.
 */
export const EVENT_TABLE_COLUMNS: readonly TableColumnDefinition[] = Object.freeze([
  column('Last Seen', 'The time at which the most recent occurrence of this event was recorded.'),
  column('Type', 'Type of this event (Normal, Warning), new types could be added in the future'),
  column(
    'Reason',
    "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
  ),
  column('Object', 'The object that this event is about.'),
  column('Subobject', FIELD_PATH_DOC, 1),
  column('Source', 'The component reporting this event. Should be a short machine understandable string.', 1),
  column('Message', 'A human-readable description of the status of this operation.'),
  column('First Seen', 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)', 1),
  column('Count', 'The number of times this event has occurred.', 1),
  column('Name', OBJECT_META_NAME_DOC, 1, 'name'),
]);

const GO_SPACE = '[\\t\\n\\v\\f\\r \\u0085\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000]';
const GO_TRIM = new RegExp(`^${GO_SPACE}+|${GO_SPACE}+$`, 'g');

/** goTrimSpace is Go's strings.TrimSpace: it trims U+0085 but, unlike String.trim, not U+FEFF. */
export function goTrimSpace(s: string): string {
  // Most messages neither start nor end with a space: they are returned without a regular expression.
  if (s === '' || (!mayBeGoSpace(s.charCodeAt(0)) && !mayBeGoSpace(s.charCodeAt(s.length - 1)))) return s;
  return s.replace(GO_TRIM, '');
}

/** mayBeGoSpace is false for a UTF-16 code unit that no character of GO_SPACE begins with. */
function mayBeGoSpace(c: number): boolean {
  return c <= 0x20 || c === 0x85 || c === 0xa0 || c >= 0x1680;
}

/** ASCII_ONLY matches text whose lower case is the same in Go and in JavaScript. */
const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** goToLower is Go's strings.ToLower: rune by rune, with no final-sigma or dotted-I expansion. */
function goToLower(s: string): string {
  if (ASCII_ONLY.test(s)) return s.toLowerCase();
  let out = '';
  for (const c of s) out += c === '\u0130' ? 'i' : c.toLowerCase();
  return out;
}

/**
 * formatEventSource is the Source cell: `component, host`, each falling back to
 * reportingComponent and reportingInstance; `, host` is left out when empty.
 */
export function formatEventSource(e: CoreEvent): string {
  const component = e.source?.component || e.reportingComponent || '';
  const host = e.source?.host || e.reportingInstance || '';
  return host === '' ? component : `${component}, ${host}`;
}

/** SeenTimes are the times (Unix ms, undefined for Go's zero time) the Table's First Seen and Last Seen ages count from; `lastIsFirst`: Last Seen shows First Seen's age. */
export interface SeenTimes {
  firstMs: number | undefined;
  lastMs: number | undefined;
  lastIsFirst: boolean;
}

/** eventSeenTimes picks the times of a Table row's ages (see eventTableCells), which alone of its cells change with the clock. */
export function eventSeenTimes(e: CoreEvent): SeenTimes {
  const firstMs = wireTimeMs(e.firstTimestamp) ?? wireTimeMs(e.eventTime);
  if (e.series) return { firstMs, lastMs: wireTimeMs(e.series.lastObservedTime), lastIsFirst: false };
  const lastMs = wireTimeMs(e.lastTimestamp);
  return { firstMs, lastMs, lastIsFirst: lastMs === undefined };
}

/**
 * eventTableCells are the ten cells of an event's Table row at `now` (Unix ms),
 * as the API server computes them (it always renders wide):
 * First Seen falls back to eventTime; Last Seen to First Seen; a series overrides
 * both Last Seen and Count; a count of 0 without a series shows as 1.
 */
export function eventTableCells(e: CoreEvent, now: number): unknown[] {
  const seen = eventSeenTimes(e);
  const first = translateMsSince(seen.firstMs, now);
  const last = seen.lastIsFirst ? first : translateMsSince(seen.lastMs, now);
  const [type, reason, object, subobject, source, message, count, name] = eventClockFreeCells(e);
  return [last, type, reason, object, subobject, source, message, first, count, name];
}

/** ClockFreeCells are a row's cells but its two ages: Type, Reason, Object, Subobject, Source, Message, Count and Name. */
export type ClockFreeCells = [string, string, string, string, string, string, number, string];

/** eventClockFreeCells are the cells of eventTableCells that do not change with the clock, in their order. */
export function eventClockFreeCells(e: CoreEvent): ClockFreeCells {
  let count = e.count ?? 0;
  if (e.series) {
    count = e.series.count;
  } else if (count === 0) {
    // Singleton events of the events.k8s.io API carry no count.
    count = 1;
  }
  const kind = goToLower(e.involvedObject.kind ?? '');
  const name = e.involvedObject.name ?? '';
  return [
    e.type ?? '',
    e.reason ?? '',
    name === '' ? kind : `${kind}/${name}`,
    e.involvedObject.fieldPath ?? '',
    formatEventSource(e),
    goTrimSpace(e.message ?? ''),
    count,
    e.metadata.name ?? '',
  ];
}

/** IncludeObject is the `includeObject` Table option; empty means Metadata. */
export type IncludeObject = 'None' | 'Metadata' | 'Object' | '';

/** EventTableOptions configure eventTable. */
export interface EventTableOptions {
  /** now is the server's clock, Unix ms, for the ages. */
  now: number;
  /** includeObject chooses what each row's `object` holds (default Metadata). */
  includeObject?: IncludeObject;
  /**
   * listMeta is the list's metadata; resourceVersion, continue and remainingItemCount
   * are carried over. For a single-object GET pass the object's resourceVersion.
   */
  listMeta?: ListMeta;
  /** encodeObject converts a row's event to the requested API version (Object); identity by default. */
  encodeObject?: (e: CoreEvent) => unknown;
}

function tableListMeta(m: ListMeta | undefined): ListMeta {
  const out: ListMeta = {};
  if (m?.resourceVersion) out.resourceVersion = m.resourceVersion;
  if (m?.continue) out.continue = m.continue;
  if (m?.remainingItemCount !== undefined && m.remainingItemCount !== null) out.remainingItemCount = m.remainingItemCount;
  return out;
}

/**
 * eventTable is the meta.k8s.io/v1 Table the API server answers for events, in
 * the given (storage) order: the server does not sort. With includeObject None
 * each row's `object` is null, as upstream serializes it.
 */
export function eventTable(items: readonly CoreEvent[], options: EventTableOptions): Table {
  const include = options.includeObject ?? '';
  const rows = items.map((e): TableRow => {
    return { cells: eventTableCells(e, options.now), object: tableRowObject(include, include === 'Object' && options.encodeObject ? options.encodeObject(e) : e, e.metadata) };
  });
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: tableListMeta(options.listMeta),
    columnDefinitions: EVENT_TABLE_COLUMNS.map((c) => ({ ...c })),
    rows,
  };
}

/**
 * eventInterval is the age string of `kubectl describe` and `kubectl events`:
 * first seen (eventTime preferred, then firstTimestamp), and for a series or a
 * count above 1, `<last> (x<count> over <first>)`, e.g. `3m11s (x12 over 10m)`.
 */
export function eventInterval(e: CoreEvent, now: number): string {
  const first =
    wireTimeMs(e.eventTime) === undefined
      ? translateTimestampSince(e.firstTimestamp, now)
      : translateTimestampSince(e.eventTime, now);
  if (e.series) {
    return `${translateTimestampSince(e.series.lastObservedTime, now)} (x${e.series.count} over ${first})`;
  }
  const count = e.count ?? 0;
  if (count > 1) return `${translateTimestampSince(e.lastTimestamp, now)} (x${count} over ${first})`;
  return first;
}
