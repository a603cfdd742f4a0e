import type { CoreEvent, Occurrence } from '../api/index.js';
import { eventCount, wireTimeMs } from '../api/index.js';

/** MAX_SPREAD_ROWS bounds the rows one gap's repeats are spread over: a BackOff counted 4,000 times is still one story. */
export const MAX_SPREAD_ROWS = 12;

/** OccurrenceEntry is a timeline row before formatting: a time in ms and the event it came from. */
export interface OccurrenceEntry {
  ms: number;
  event: CoreEvent;
  message: string;
  count: number;
  /** estimated entries have no time of their own: `ms` lies in [earliestMs, latestMs], the known times around them. */
  estimated: boolean;
  /** earliestMs and latestMs bound an estimated entry; undefined where the data gives no bound. */
  earliestMs?: number | undefined;
  latestMs?: number | undefined;
}

/** EventEntries are an event's rows, and the repeats it counts that no time places (an event with no time at all). */
export interface EventEntries {
  entries: OccurrenceEntry[];
  undated: number;
}

/**
 * Decompression: an event folds its repeats into a count, and each recorded
 * change (an occurrence of the archive, then the event as read) says how far
 * the count rose and when the last repeat it folds happened (its last-seen
 * time). The rules, the same for core/v1 (count, firstTimestamp, lastTimestamp)
 * and events.k8s.io/v1 (series.count, series.lastObservedTime, eventTime):
 *
 * - the first occurrence stands at the event's first time (firstTimestamp,
 *   else eventTime, the start of a series), observed when the event gives it;
 * - each change that adds repeats is a row at its last-seen time, observed;
 * - the repeats a change folds beyond that one are spread, estimated, between
 *   the previous known time and the change's last-seen time;
 * - a time the data does not give is never used as if known: a change with no
 *   last-seen time stands at the time kevents observed it (an upper bound),
 *   estimated, and an event with no first time starts at its creation, estimated;
 *   repeats with no lower bound lie at the first time after them, estimated.
 */

/** Checkpoint is one recorded state of an event: its count, and when its last repeat happened. */
interface Checkpoint {
  count: number;
  /** ms is the stated last-seen time; upperMs the time the change was observed, when the state does not say. */
  ms: number | undefined;
  upperMs: number | undefined;
  message: string;
}

/** firstStatedMs is the first time an event states: firstTimestamp, else eventTime (a series starts there). */
function firstStatedMs(e: CoreEvent): number | undefined {
  return wireTimeMs(e.firstTimestamp) ?? wireTimeMs(e.eventTime);
}

/**
 * lastStatedMs is the last time an event states: series.lastObservedTime, else
 * lastTimestamp. Never its first time: a count above one with no last time
 * says the repeats came later, not when.
 */
function lastStatedMs(e: CoreEvent): number | undefined {
  return wireTimeMs(e.series?.lastObservedTime) ?? wireTimeMs(e.lastTimestamp);
}

function microsOf(t: string | null | undefined): number {
  const ms = wireTimeMs(t);
  if (ms === undefined) return -Infinity;
  return ms * 1000 + Number((/\.\d{3}(\d{1,3})/.exec(t ?? '')?.[1] ?? '0').padEnd(3, '0'));
}

/**
 * historyOrder sorts an event's recorded changes by the count they reached,
 * then by when they were observed: a total order of the changes whatever order
 * they were read in (names break the last ties, and duplicates drop out).
 */
function historyOrder(history: readonly Occurrence[]): Occurrence[] {
  const seen = new Set<string>();
  const unique = history.filter((o) => {
    const key = o.metadata.name ? `n:${o.metadata.name}` : `c:${o.countBefore}:${o.countAfter}:${o.observedTime}:${o.lastSeen ?? ''}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return unique.sort(
    (a, b) =>
      a.countAfter - b.countAfter ||
      microsOf(a.observedTime) - microsOf(b.observedTime) ||
      microsOf(a.lastSeen) - microsOf(b.lastSeen) ||
      a.countBefore - b.countBefore ||
      ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : (a.metadata.name ?? '') > (b.metadata.name ?? '') ? 1 : 0),
  );
}

/**
 * spreadEntries spreads `count` repeats between `startMs` and `endMs` over at
 * most `maxRows` estimated rows, evenly and strictly between the two where the
 * span allows, the counts summing to `count`.
 */
export function spreadEntries(e: CoreEvent, startMs: number, endMs: number, count: number, maxRows: number, message = e.message ?? ''): OccurrenceEntry[] {
  if (count <= 0) return [];
  const lo = Math.min(startMs, endMs);
  const hi = Math.max(startMs, endMs);
  // No more rows than whole seconds in the span: repeats of one instant are one row.
  const rows = Math.max(1, Math.min(count, maxRows, Math.floor((hi - lo) / 1000)));
  const base = Math.floor(count / rows);
  const extra = count % rows;
  const out: OccurrenceEntry[] = [];
  for (let i = 0; i < rows; i++) {
    // Whole seconds, kept within the span: an estimate should not look more precise than its inputs.
    const ms = Math.min(hi, Math.max(lo, Math.round((lo + ((i + 1) * (hi - lo)) / (rows + 1)) / 1000) * 1000));
    out.push({ ms, event: e, message, count: base + (i < extra ? 1 : 0), estimated: true, earliestMs: lo, latestMs: hi });
  }
  return out;
}

/**
 * decompressEvent turns one event and its recorded changes into rows that
 * account for every occurrence it counts, by the rules above. `history` may
 * be partial (a mirror that started late, a relist after a 410, a window):
 * whatever it lacks is spread between the times it and the event do give.
 */
export function decompressEvent(e: CoreEvent, history: readonly Occurrence[] | undefined, maxRows = MAX_SPREAD_ROWS): EventEntries {
  const message = e.message ?? '';
  const checkpoints: Checkpoint[] = historyOrder(history ?? []).map((o) => ({
    count: o.countAfter,
    ms: wireTimeMs(o.lastSeen),
    upperMs: wireTimeMs(o.observedTime),
    message: o.message ?? message,
  }));
  const recorded = checkpoints.reduce((n, c) => Math.max(n, c.count), 0);
  // The event as read is the latest state; a history ahead of it (a change recorded after the read) is kept.
  if (eventCount(e) > recorded) checkpoints.push({ count: eventCount(e), ms: lastStatedMs(e), upperMs: undefined, message });

  const out: OccurrenceEntry[] = [];
  const first = firstStatedMs(e);
  let placed = 0;
  let lower: number | undefined;
  // pending are repeats counted by changes that give no time at all: they happened before the next known time.
  let pending = 0;
  let pendingMessage = message;
  for (const c of checkpoints) {
    let added = c.count - placed;
    if (added <= 0) continue;
    if (placed === 0) {
      const created = wireTimeMs(e.metadata.creationTimestamp);
      if (first !== undefined) {
        out.push({ ms: first, event: e, message: c.message, count: 1, estimated: false });
        lower = first;
        added--;
      } else if (created !== undefined && (c.ms ?? c.upperMs ?? Infinity) >= created) {
        // No first time: the event was created when its first occurrence was reported, so no later than this.
        out.push({ ms: created, event: e, message: c.message, count: 1, estimated: true, earliestMs: undefined, latestMs: created });
        lower = created;
        added--;
      }
    }
    placed = c.count;
    if (added === 0) continue;
    const end = c.ms ?? c.upperMs;
    if (end === undefined) {
      pending += added;
      pendingMessage = c.message;
      continue;
    }
    const folded = pending + added - 1;
    if (lower === undefined) {
      if (folded > 0) out.push({ ms: end, event: e, message: c.message, count: folded, estimated: true, earliestMs: undefined, latestMs: end });
    } else {
      out.push(...spreadEntries(e, lower, end, folded, maxRows, c.message));
    }
    out.push(
      c.ms !== undefined
        ? { ms: end, event: e, message: c.message, count: 1, estimated: false }
        : { ms: end, event: e, message: c.message, count: 1, estimated: true, earliestMs: lower === undefined ? undefined : Math.min(lower, end), latestMs: end },
    );
    lower = lower === undefined ? end : Math.max(lower, end);
    pending = 0;
  }
  let undated = 0;
  if (pending > 0) {
    if (lower === undefined) undated = pending;
    else out.push({ ms: lower, event: e, message: pendingMessage, count: pending, estimated: true, earliestMs: lower, latestMs: undefined });
  }
  // A stable sort: rows of one instant keep the order of the changes they come from.
  return { entries: out.sort((a, b) => a.ms - b.ms), undated };
}

/** eventEntries is decompressEvent's rows alone (an event with no time at all has none). */
export function eventEntries(e: CoreEvent, history: readonly Occurrence[] | undefined, maxRows = MAX_SPREAD_ROWS): OccurrenceEntry[] {
  return decompressEvent(e, history, maxRows).entries;
}
