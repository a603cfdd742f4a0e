/**
 * The Events section of `kubectl describe`, as kubectl writes it before and after its tabwriter.
 */
import { escapeTerminal, eventInterval, goSort, goTrimSpace, wireTimeMicros } from '../api/index.js';
import type { CoreEvent } from '../api/index.js';
import { DESCRIBE_TABWRITER, formatTabbed, KUBECTL_MINOR } from './tabwriter.js';

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
