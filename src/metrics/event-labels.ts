import type { CountedChange } from './counted-change.js';

/**
 * The labels an event series may carry, each read from a change of the archive's log. The
 * object's `name` is one of them but never a default: it makes a series per object, which is
 * what cardinality limits are for.
 */
export const EVENT_LABELS = {
  cluster: (c: CountedChange) => c.occurrence.cluster ?? '',
  namespace: (c: CountedChange) => c.occurrence.event.namespace,
  kind: (c: CountedChange) => c.occurrence.regarding.kind ?? '',
  name: (c: CountedChange) => c.occurrence.regarding.name ?? '',
  reason: (c: CountedChange) => c.occurrence.reason ?? '',
  type: (c: CountedChange) => c.occurrence.type ?? '',
  reporting_controller: (c: CountedChange) => c.occurrence.reportingController ?? '',
} as const;

/** EventLabel is one label an event series may carry. */
export type EventLabel = keyof typeof EVENT_LABELS;

/** EVENT_LABEL_NAMES lists the labels `labels:` may name. */
export const EVENT_LABEL_NAMES = Object.keys(EVENT_LABELS) as EventLabel[];

/** DEFAULT_EVENT_LABELS are bounded by the cluster's vocabulary (namespaces, kinds, reasons, controllers), not by its objects. */
export const DEFAULT_EVENT_LABELS: readonly EventLabel[] = ['cluster', 'namespace', 'kind', 'reason', 'type', 'reporting_controller'];

/**
 * occurrencesOf is how many times a change says its event happened: the rise of its count (a
 * count jump of 5 is 5 occurrences), and at least once for a new event. A change that does not
 * move the count (a message update) adds nothing.
 */
export function occurrencesOf(c: CountedChange): number {
  const before = c.occurrence.countBefore;
  const after = c.occurrence.countAfter;
  if (before <= 0) return Math.max(1, after);
  return Math.max(0, after - before);
}
