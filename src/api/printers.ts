/**
 * How events are printed: the API server's Table (`kubectl get events`), the
 * Events section of `kubectl describe`, and `kubectl events`. Every string here
 * is meant to match its upstream counterpart byte for byte.
 */
import { GO_ZERO_TIME_MS, translateMsSince, translateTimestampSince, wireTimeMs } from './duration.js';
import { escapeTerminal } from './escape.js';
import { eventCluster } from './cluster.js';
import { createTabWriter, DESCRIBE_TABWRITER, formatTabbed, KUBECTL_MINOR, KUBECTL_TABWRITER } from './tabwriter.js';
import type { CoreEvent, ListMeta, Table, TableColumnDefinition, TableRow } from './types.js';

const OBJECT_META_NAME_DOC =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';

const FIELD_PATH_DOC =
  'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.';

function column(name: string, description: string, priority = 0, format = ''): TableColumnDefinition {
  return { name, type: 'string', format, description, priority };
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
    const row: TableRow = { cells: eventTableCells(e, options.now) };
    if (include === 'Object') row.object = options.encodeObject ? options.encodeObject(e) : e;
    else if (include === 'None') row.object = null;
    else row.object = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { ...e.metadata } };
    return row;
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

/**
 * wireTimeMicros is a wire time in Unix microseconds, keeping MicroTime's full
 * precision for ordering; Go's zero time sorts before every other time.
 */
function wireTimeMicros(t: string | null | undefined): number {
  const ms = wireTimeMs(t);
  if (ms === undefined || t === null || t === undefined) return -Infinity;
  const m = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(.*)$/.exec(t);
  if (!m?.[2]) return ms * 1000;
  const seconds = Date.parse(`${m[1]}${m[3]}`);
  return seconds * 1000 + Number(m[2].slice(0, 6).padEnd(6, '0'));
}

/**
 * eventsLastSeen is the time `kubectl events` sorts by, in Unix ms:
 * series.lastObservedTime if there is a series, else lastTimestamp if set, else
 * eventTime; Go's zero time (GO_ZERO_TIME_MS) when that is unset.
 */
export function eventsLastSeen(e: CoreEvent): number {
  return wireTimeMs(eventsLastSeenWire(e)) ?? GO_ZERO_TIME_MS;
}

function eventsLastSeenWire(e: CoreEvent): string | null | undefined {
  if (e.series) return e.series.lastObservedTime;
  if (wireTimeMs(e.lastTimestamp) !== undefined) return e.lastTimestamp;
  return e.eventTime;
}

/** sortKubectlEvents orders events as `kubectl events` does (Go's unstable sort.Sort on eventsLastSeen). */
export function sortKubectlEvents(items: readonly CoreEvent[]): CoreEvent[] {
  const keyed = items.map((e) => ({ e, t: wireTimeMicros(eventsLastSeenWire(e)) }));
  goSort(keyed, (a, b) => a.t < b.t);
  return keyed.map((k) => k.e);
}

/** kubectlEventsHeader is the header row of `kubectl events`. */
export function kubectlEventsHeader(allNamespaces = false, withCluster = false): string[] {
  const h = ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'];
  return [...(allNamespaces ? ['NAMESPACE'] : []), ...(withCluster ? ['CLUSTER'] : []), ...h];
}

function kubectlEventsRow(e: CoreEvent, now: number, allNamespaces: boolean, withCluster: boolean): string[] {
  const row = [
    eventInterval(e, now),
    escapeTerminal(e.type ?? ''),
    escapeTerminal(e.reason ?? ''),
    // The Kind keeps its case here, unlike the server table's `pod/x`.
    `${escapeTerminal(e.involvedObject.kind ?? '')}/${escapeTerminal(e.involvedObject.name ?? '')}`,
    escapeTerminal(goTrimSpace(e.message ?? '')),
  ];
  return [...(allNamespaces ? [escapeTerminal(e.metadata.namespace ?? '')] : []), ...(withCluster ? [escapeTerminal(eventCluster(e))] : []), ...row];
}

/** KubectlEventsOptions shape the `kubectl events` output. */
export interface KubectlEventsOptions {
  /** now is the reader's clock, Unix ms. */
  now: number;
  /** allNamespaces is `-A`: a NAMESPACE column first. */
  allNamespaces?: boolean;
  /** noHeaders is `--no-headers`. */
  noHeaders?: boolean;
  /** withCluster adds a CLUSTER column (after NAMESPACE): kevents' own, for answers that span several clusters of an archive. */
  withCluster?: boolean;
}

/**
 * kubectlEventsRows are the data rows of `kubectl events` (no header), sorted
 * as kubectl sorts them, with user-supplied text terminal-escaped.
 */
export function kubectlEventsRows(items: readonly CoreEvent[], options: KubectlEventsOptions): string[][] {
  return sortKubectlEvents(items).map((e) => kubectlEventsRow(e, options.now, options.allNamespaces === true, options.withCluster === true));
}

/** KubectlEventsPrinter prints events incrementally, as `kubectl events --watch` does. */
export interface KubectlEventsPrinter {
  /** print writes the header on first use, then one row per event, and flushes; it does not sort. */
  print(items: readonly CoreEvent[], now: number): void;
}

/**
 * createKubectlEventsPrinter returns kubectl's event printer over its tabwriter,
 * which remembers column widths across flushes, so later rows never narrow a column.
 */
export function createKubectlEventsPrinter(options: {
  allNamespaces?: boolean;
  noHeaders?: boolean;
  withCluster?: boolean;
  output: (chunk: string) => void;
}): KubectlEventsPrinter {
  const w = createTabWriter(KUBECTL_TABWRITER, options.output);
  const allNamespaces = options.allNamespaces === true;
  const withCluster = options.withCluster === true;
  let headerPrinted = false;
  return {
    print(items, now): void {
      if (!options.noHeaders && !headerPrinted) {
        w.write(`${kubectlEventsHeader(allNamespaces, withCluster).join('\t')}\n`);
        headerPrinted = true;
      }
      for (const e of items) w.write(`${kubectlEventsRow(e, now, allNamespaces, withCluster).join('\t')}\n`);
      w.flush();
    },
  };
}

/**
 * formatKubectlEvents is the standard output of `kubectl events` in list mode:
 * sorted rows under a header, aligned by kubectl's tabwriter. An empty list
 * prints nothing (see noEventsMessage for what goes to standard error).
 */
export function formatKubectlEvents(items: readonly CoreEvent[], options: KubectlEventsOptions): string {
  if (items.length === 0) return '';
  let out = '';
  const p = createKubectlEventsPrinter({ ...options, output: (s) => (out += s) });
  p.print(sortKubectlEvents(items), options.now);
  return out;
}

/** noEventsMessage is the line `kubectl events` writes to standard error when nothing matched. */
export function noEventsMessage(namespace: string, allNamespaces = false): string {
  return allNamespaces ? 'No events found.\n' : `No events found in ${namespace} namespace.\n`;
}

/** DescribeEventsOptions configure describeEventsSection. */
export interface DescribeEventsOptions {
  /** now is the reader's clock, Unix ms. */
  now: number;
  /** kubectlMinor selects the release: from 1.35 a message carries its involvedObject.fieldPath. */
  kubectlMinor?: number;
}

/**
 * describeEventsTabbed is the Events section of `kubectl describe` before
 * alignment: the text kubectl hands to the describe tabwriter, already
 * terminal-escaped. kubectl flushes that writer before a non-empty section, but
 * not before `Events:\t<none>`, which therefore aligns with the lines above it.
 */
export function describeEventsTabbed(items: readonly CoreEvent[], options: DescribeEventsOptions): string {
  if (items.length === 0) return 'Events:\t<none>\n';
  const withFieldPath = (options.kubectlMinor ?? KUBECTL_MINOR) >= 35;
  const keyed = items.map((e) => ({ e, t: wireTimeMicros(e.lastTimestamp) }));
  goSort(keyed, (a, b) => a.t < b.t);
  let text = 'Events:\n  Type\tReason\tAge\tFrom\tMessage\n  ----\t------\t----\t----\t-------\n';
  for (const { e } of keyed) {
    let message = goTrimSpace(e.message ?? '');
    const fieldPath = e.involvedObject.fieldPath ?? '';
    if (withFieldPath && fieldPath !== '') message = `${fieldPath}: ${message}`;
    const from = e.source?.component || e.reportingComponent || '';
    text += `  ${e.type ?? ''}\t${e.reason ?? ''}\t${eventInterval(e, options.now)}\t${from}\t${message}\n`;
  }
  return escapeTerminal(text);
}

/**
 * describeEventsSection is the Events section of `kubectl describe` rendered on
 * its own: sorted by lastTimestamp (unset first), headed `Type Reason Age From
 * Message`, or the single line `Events:  <none>`.
 */
export function describeEventsSection(items: readonly CoreEvent[], options: DescribeEventsOptions): string {
  return formatTabbed(describeEventsTabbed(items, options), DESCRIBE_TABWRITER);
}

/*
 * Go's sort.Sort (pattern-defeating quicksort), reproduced step for step so that
 * events with equal times come out in the same order as in kubectl. It is not
 * stable: for more than 12 elements equal keys may be reordered.
 */

/**
 * goSort sorts `data` in place exactly as Go's sort.Sort would with the given
 * Less, including the final order of elements that compare equal.
 */
export function goSort<T>(data: T[], less: (a: T, b: T) => boolean): void {
  const n = data.length;
  if (n <= 1) return;
  const s = new GoSorter(data, less);
  s.pdqsort(0, n, bitsLen(n));
}

function bitsLen(x: number): number {
  return x === 0 ? 0 : 32 - Math.clz32(x);
}

const MASK64 = (1n << 64n) - 1n;

class GoSorter<T> {
  constructor(
    private readonly data: T[],
    private readonly lessFn: (a: T, b: T) => boolean,
  ) {}

  less(i: number, j: number): boolean {
    return this.lessFn(this.data[i]!, this.data[j]!);
  }

  swap(i: number, j: number): void {
    const t = this.data[i]!;
    this.data[i] = this.data[j]!;
    this.data[j] = t;
  }

  insertionSort(a: number, b: number): void {
    for (let i = a + 1; i < b; i++) {
      for (let j = i; j > a && this.less(j, j - 1); j--) this.swap(j, j - 1);
    }
  }

  siftDown(lo: number, hi: number, first: number): void {
    let root = lo;
    for (;;) {
      let child = 2 * root + 1;
      if (child >= hi) return;
      if (child + 1 < hi && this.less(first + child, first + child + 1)) child++;
      if (!this.less(first + root, first + child)) return;
      this.swap(first + root, first + child);
      root = child;
    }
  }

  heapSort(a: number, b: number): void {
    const first = a;
    const hi = b - a;
    for (let i = Math.trunc((hi - 1) / 2); i >= 0; i--) this.siftDown(i, hi, first);
    for (let i = hi - 1; i >= 0; i--) {
      this.swap(first, first + i);
      this.siftDown(0, i, first);
    }
  }

  pdqsort(a: number, b: number, limit: number): void {
    const maxInsertion = 12;
    let wasBalanced = true;
    let wasPartitioned = true;
    for (;;) {
      const length = b - a;
      if (length <= maxInsertion) {
        this.insertionSort(a, b);
        return;
      }
      if (limit === 0) {
        this.heapSort(a, b);
        return;
      }
      if (!wasBalanced) {
        this.breakPatterns(a, b);
        limit--;
      }
      let [pivot, hint] = this.choosePivot(a, b);
      if (hint === 'decreasing') {
        this.reverseRange(a, b);
        pivot = b - 1 - (pivot - a);
        hint = 'increasing';
      }
      if (wasBalanced && wasPartitioned && hint === 'increasing' && this.partialInsertionSort(a, b)) return;
      if (a > 0 && !this.less(a - 1, pivot)) {
        a = this.partitionEqual(a, b, pivot);
        continue;
      }
      const [mid, alreadyPartitioned] = this.partition(a, b, pivot);
      wasPartitioned = alreadyPartitioned;
      const leftLen = mid - a;
      const rightLen = b - mid;
      const balanceThreshold = Math.trunc(length / 8);
      if (leftLen < rightLen) {
        wasBalanced = leftLen >= balanceThreshold;
        this.pdqsort(a, mid, limit);
        a = mid + 1;
      } else {
        wasBalanced = rightLen >= balanceThreshold;
        this.pdqsort(mid + 1, b, limit);
        b = mid;
      }
    }
  }

  partition(a: number, b: number, pivot: number): [number, boolean] {
    this.swap(a, pivot);
    let i = a + 1;
    let j = b - 1;
    while (i <= j && this.less(i, a)) i++;
    while (i <= j && !this.less(j, a)) j--;
    if (i > j) {
      this.swap(j, a);
      return [j, true];
    }
    this.swap(i, j);
    i++;
    j--;
    for (;;) {
      while (i <= j && this.less(i, a)) i++;
      while (i <= j && !this.less(j, a)) j--;
      if (i > j) break;
      this.swap(i, j);
      i++;
      j--;
    }
    this.swap(j, a);
    return [j, false];
  }

  partitionEqual(a: number, b: number, pivot: number): number {
    this.swap(a, pivot);
    let i = a + 1;
    let j = b - 1;
    for (;;) {
      while (i <= j && !this.less(a, i)) i++;
      while (i <= j && this.less(a, j)) j--;
      if (i > j) break;
      this.swap(i, j);
      i++;
      j--;
    }
    return i;
  }

  partialInsertionSort(a: number, b: number): boolean {
    const maxSteps = 5;
    const shortestShifting = 50;
    let i = a + 1;
    for (let step = 0; step < maxSteps; step++) {
      while (i < b && !this.less(i, i - 1)) i++;
      if (i === b) return true;
      if (b - a < shortestShifting) return false;
      this.swap(i, i - 1);
      // Go shifts down to index 1, not to a+1; kept for identical results.
      if (i - a >= 2) {
        for (let j = i - 1; j >= 1; j--) {
          if (!this.less(j, j - 1)) break;
          this.swap(j, j - 1);
        }
      }
      if (b - i >= 2) {
        for (let j = i + 1; j < b; j++) {
          if (!this.less(j, j - 1)) break;
          this.swap(j, j - 1);
        }
      }
    }
    return false;
  }

  breakPatterns(a: number, b: number): void {
    const length = b - a;
    if (length < 8) return;
    let random = BigInt(length);
    const modulus = BigInt(2 ** bitsLen(length));
    const start = a + Math.trunc(length / 4) * 2 - 1;
    for (let idx = start; idx <= start + 2; idx++) {
      random ^= (random << 13n) & MASK64;
      random ^= random >> 7n;
      random ^= (random << 17n) & MASK64;
      let other = Number(random & (modulus - 1n));
      if (other >= length) other -= length;
      this.swap(idx, a + other);
    }
  }

  choosePivot(a: number, b: number): [number, 'unknown' | 'increasing' | 'decreasing'] {
    const shortestNinther = 50;
    const maxSwaps = 4 * 3;
    const l = b - a;
    const swaps = { n: 0 };
    let i = a + Math.trunc(l / 4) * 1;
    let j = a + Math.trunc(l / 4) * 2;
    let k = a + Math.trunc(l / 4) * 3;
    if (l >= 8) {
      if (l >= shortestNinther) {
        i = this.median(i - 1, i, i + 1, swaps);
        j = this.median(j - 1, j, j + 1, swaps);
        k = this.median(k - 1, k, k + 1, swaps);
      }
      j = this.median(i, j, k, swaps);
    }
    if (swaps.n === 0) return [j, 'increasing'];
    if (swaps.n === maxSwaps) return [j, 'decreasing'];
    return [j, 'unknown'];
  }

  order2(a: number, b: number, swaps: { n: number }): [number, number] {
    if (this.less(b, a)) {
      swaps.n++;
      return [b, a];
    }
    return [a, b];
  }

  median(a: number, b: number, c: number, swaps: { n: number }): number {
    [a, b] = this.order2(a, b, swaps);
    [b, c] = this.order2(b, c, swaps);
    [a, b] = this.order2(a, b, swaps);
    return b;
  }

  reverseRange(a: number, b: number): void {
    for (let i = a, j = b - 1; i < j; i++, j--) this.swap(i, j);
  }
}
