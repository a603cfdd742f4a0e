import type { CoreEvent, Occurrence } from '../api/index.js';
import { eventCount, eventFirstMs, eventLastMs, wireTimeMs } from '../api/index.js';

/** MAX_SPREAD_ROWS bounds the rows one event's count is spread over: a BackOff counted 4,000 times is still one story. */
export const MAX_SPREAD_ROWS = 12;

/** OccurrenceEntry is a timeline row before formatting: a time in ms and the event it came from. */
export interface OccurrenceEntry {
  ms: number;
  event: CoreEvent;
  message: string;
  count: number;
  estimated: boolean;
}

/**
 * spreadEntries spreads `count` repeats strictly between `startMs` and `endMs`
 * over at most `maxRows` estimated rows, evenly, the counts summing to `count`.
 */
export function spreadEntries(e: CoreEvent, startMs: number, endMs: number, count: number, maxRows: number): OccurrenceEntry[] {
  if (count <= 0) return [];
  const rows = Math.max(1, Math.min(count, maxRows));
  const base = Math.floor(count / rows);
  const extra = count % rows;
  const out: OccurrenceEntry[] = [];
  for (let i = 0; i < rows; i++) {
    // Whole seconds: event times carry no more, and an estimate should not look more precise than its inputs.
    const ms = Math.round((startMs + ((i + 1) * (endMs - startMs)) / (rows + 1)) / 1000) * 1000;
    out.push({ ms, event: e, message: e.message ?? '', count: base + (i < extra ? 1 : 0), estimated: true });
  }
  return out;
}

/**
 * eventEntries decompresses one event into its occurrences. With archive history
 * each recorded change is a row at the time the event says it happened; repeats
 * the history missed (before the first change it holds, after the last) are
 * spread. Without history the first and last occurrences are known and the
 * count between them is spread, marked estimated.
 */
export function eventEntries(e: CoreEvent, history: readonly Occurrence[] | undefined, maxRows = MAX_SPREAD_ROWS): OccurrenceEntry[] {
  const first = eventFirstMs(e);
  const last = eventLastMs(e);
  const total = eventCount(e);
  if (history !== undefined && history.length > 0) {
    const out: OccurrenceEntry[] = [];
    const sorted = [...history].sort((a, b) => a.countAfter - b.countAfter || (wireTimeMs(a.observedTime) ?? 0) - (wireTimeMs(b.observedTime) ?? 0));
    const head = sorted[0]!;
    const headMs = wireTimeMs(head.lastSeen) ?? wireTimeMs(head.observedTime) ?? last ?? 0;
    if (head.countBefore > 0) {
      // The archive started watching after this event had already repeated.
      const start = first ?? headMs;
      out.push({ ms: start, event: e, message: e.message ?? '', count: 1, estimated: head.countBefore > 1 || first === undefined });
      out.push(...spreadEntries(e, start, headMs, head.countBefore - 1, maxRows));
    }
    let prevAfter = head.countBefore;
    for (const o of sorted) {
      const ms = wireTimeMs(o.lastSeen) ?? wireTimeMs(o.observedTime) ?? headMs;
      out.push({ ms, event: e, message: o.message ?? e.message ?? '', count: Math.max(0, o.countAfter - prevAfter), estimated: false });
      prevAfter = Math.max(prevAfter, o.countAfter);
    }
    if (total > prevAfter && last !== undefined) {
      const tailStart = out[out.length - 1]!.ms;
      out.push(...spreadEntries(e, tailStart, last, total - prevAfter - 1, maxRows));
      out.push({ ms: last, event: e, message: e.message ?? '', count: 1, estimated: false });
    }
    return out;
  }
  const start = first ?? last;
  if (start === undefined) return [];
  const end = last ?? start;
  if (total <= 1) return [{ ms: start, event: e, message: e.message ?? '', count: 1, estimated: false }];
  if (end <= start) return [{ ms: end, event: e, message: e.message ?? '', count: total, estimated: true }];
  return [
    { ms: start, event: e, message: e.message ?? '', count: 1, estimated: false },
    ...spreadEntries(e, start, end, total - 2, maxRows - 2),
    { ms: end, event: e, message: e.message ?? '', count: 1, estimated: false },
  ];
}
