/**
 * The output of `kubectl events`: its sort order, header and rows, the incremental printer of
 * `--watch`, and its message when nothing matched, with user-supplied text terminal-escaped.
 */
import { escapeTerminal, eventCluster, eventInterval, GO_ZERO_TIME_MS, goSort, goTrimSpace, wireTimeMicros, wireTimeMs } from '../api/index.js';
import type { CoreEvent } from '../api/index.js';
import { createTabWriter, KUBECTL_TABWRITER } from './tabwriter.js';

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
