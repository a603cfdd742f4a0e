import type { Occurrence } from '../../api/occurrence.js';
import type { TimelineRow } from '../../api/timeline.js';
import type { EventRow, Matchable } from './model.js';
import { objectKeyOf } from './model.js';

/**
 * Mark is one occurrence (or a run of them) of an event at a time: exact when
 * it comes from the archive API or is an event's first or last sighting,
 * estimated when it spreads an event's count between those two.
 */
export interface Mark extends Matchable {
  t: number;
  /** n is how many repeats the mark stands for. */
  n: number;
  objectKey: string;
  message: string;
  estimated: boolean;
  /** earliest and latest bound an estimated mark (Unix ms; undefined where nothing bounds it). */
  earliest?: number | undefined;
  latest?: number | undefined;
}

function boundMs(t: string | null | undefined): number | undefined {
  return t === null || t === undefined ? undefined : Date.parse(t);
}

/**
 * marksFromTimeline turns the server's timeline rows (src/timeline, the rows
 * `kevents timeline` prints) into marks: one per row, estimated where the row
 * is, with the bounds it was spread between. The UI computes no times of its own.
 */
export function marksFromTimeline(rows: readonly TimelineRow[]): Mark[] {
  return rows.map((r) => {
    const cut = r.object.indexOf('/');
    const kind = cut < 0 ? r.object : r.object.slice(0, cut);
    const name = cut < 0 ? '' : r.object.slice(cut + 1);
    return {
      t: Date.parse(r.time),
      n: r.count,
      namespace: r.namespace,
      kind,
      type: r.type,
      reason: r.reason,
      message: r.message,
      objectKey: `${kind}/${r.namespace}/${name}`,
      estimated: r.estimated,
      earliest: boundMs(r.earliest),
      latest: boundMs(r.latest),
      haystack: `${r.namespace}\n${kind}\n${name}\n${r.reason}\n${r.type}\n${r.message}`.toLowerCase(),
    };
  });
}

/** MAX_MARKS_PER_EVENT bounds how finely one event's count is spread, so a count of 50,000 stays cheap. */
export const MAX_MARKS_PER_EVENT = 48;

/**
 * marksFromRows spreads each event's repeats over [first, last] within
 * [from, to): one at first, one at last, the rest evenly between (estimated),
 * which is all an Event says about when its repeats happened.
 */
export function marksFromRows(rows: readonly EventRow[], from: number, to: number, keep: (r: EventRow) => boolean): Mark[] {
  const out: Mark[] = [];
  for (const r of rows) {
    if (!(r.last >= from) || r.first >= to || !keep(r)) continue;
    const base = { namespace: r.namespace, kind: r.kind, type: r.type, reason: r.reason, haystack: r.haystack, objectKey: r.objectKey, message: r.message };
    if (r.count <= 1 || r.last <= r.first) {
      const t = r.count <= 1 ? r.first : r.last;
      if (t >= from && t < to) out.push({ ...base, t, n: r.count, estimated: false });
      continue;
    }
    if (r.first >= from) out.push({ ...base, t: r.first, n: 1, estimated: false });
    const between = r.count - 2;
    const steps = Math.min(between, MAX_MARKS_PER_EVENT);
    for (let i = 1; i <= steps; i++) {
      const t = r.first + ((r.last - r.first) * i) / (steps + 1);
      const n = Math.round((between * i) / steps) - Math.round((between * (i - 1)) / steps);
      if (t >= from && t < to && n > 0) out.push({ ...base, t, n, estimated: true });
    }
    if (r.last < to) out.push({ ...base, t: r.last, n: 1, estimated: false });
  }
  return out;
}

/**
 * ServedOccurrence is an occurrence as a server may serve it: with an
 * `estimated` flag where the server itself knows the time is not observed.
 */
export type ServedOccurrence = Occurrence & { estimated?: boolean };

/** marksFromOccurrences turns archived occurrences into marks at the event's own last-seen time, estimated only where the server says so. */
export function marksFromOccurrences(items: readonly ServedOccurrence[]): Mark[] {
  return items.map((o) => {
    const namespace = o.event.namespace ?? o.metadata.namespace ?? '';
    const m: Mark = {
      t: Date.parse(o.lastSeen ?? o.observedTime ?? ''),
      n: Math.max(1, o.countAfter - o.countBefore),
      namespace,
      kind: o.regarding.kind ?? '',
      type: o.type ?? '',
      reason: o.reason ?? '',
      message: o.message ?? '',
      objectKey: objectKeyOf(o.regarding, namespace),
      estimated: o.estimated === true,
      haystack: '',
    };
    m.haystack = `${namespace}\n${m.kind}\n${o.regarding.name ?? ''}\n${m.reason}\n${m.type}\n${m.message}\n${o.reportingController ?? ''}`.toLowerCase();
    return m;
  });
}

/** Tally is a group's total, largest first in the lists below. */
export interface Tally {
  key: string;
  n: number;
}

/** topTallies sums marks by a key and keeps the `limit` largest. */
export function topTallies(marks: readonly Mark[], key: (m: Mark) => string, limit: number): Tally[] {
  const sums = new Map<string, number>();
  for (const m of marks) {
    const k = key(m);
    sums.set(k, (sums.get(k) ?? 0) + m.n);
  }
  return [...sums].map(([k, n]) => ({ key: k, n })).sort((a, b) => b.n - a.n || (a.key < b.key ? -1 : 1)).slice(0, limit);
}

/** Lane is one object on the timeline with its marks in time order. */
export interface Lane {
  objectKey: string;
  marks: Mark[];
  warnings: number;
  total: number;
  first: number;
}

/** lanesOf groups marks by object, ordered by each object's first mark, so the incident reads top to bottom. */
export function lanesOf(marks: readonly Mark[]): Lane[] {
  const byObject = new Map<string, Lane>();
  for (const m of marks) {
    let lane = byObject.get(m.objectKey);
    if (lane === undefined) {
      lane = { objectKey: m.objectKey, marks: [], warnings: 0, total: 0, first: m.t };
      byObject.set(m.objectKey, lane);
    }
    lane.marks.push(m);
    lane.total += m.n;
    if (m.type === 'Warning') lane.warnings += m.n;
    if (m.t < lane.first) lane.first = m.t;
  }
  const lanes = [...byObject.values()];
  for (const l of lanes) l.marks.sort((a, b) => a.t - b.t);
  return lanes.sort((a, b) => a.first - b.first || (a.objectKey < b.objectKey ? -1 : 1));
}

/**
 * combinedMarks merges the archive with the events in the tab: an event the
 * archive has occurrences for is drawn from them (a first occurrence that
 * already carries repeats, as when an event was written with a count, is
 * spread back to the event's first sighting), every other event is estimated
 * from its count. The archive may lack events (written before it, or stored
 * around it), and the tab lacks events the server has since deleted.
 */
export function combinedMarks(
  rows: readonly EventRow[],
  occurrences: readonly ServedOccurrence[],
  from: number,
  to: number,
  keep: (m: Matchable) => boolean,
): Mark[] {
  const byEvent = new Map<string, ServedOccurrence[]>();
  for (const o of occurrences) {
    const key = `${o.event.namespace ?? o.metadata.namespace ?? ''}/${o.event.name}`;
    const list = byEvent.get(key);
    if (list === undefined) byEvent.set(key, [o]);
    else list.push(o);
  }
  const out: Mark[] = [];
  const known = new Map<string, EventRow>();
  for (const r of rows) {
    const key = `${r.namespace}/${r.name}`;
    if (byEvent.has(key)) known.set(key, r);
    else if (r.last >= from && r.first < to && keep(r)) out.push(...marksFromRows([r], from, to, () => true));
  }
  for (const [key, list] of byEvent) {
    const row = known.get(key);
    list.sort((a, b) => Date.parse(a.observedTime ?? '') - Date.parse(b.observedTime ?? ''));
    const marks = marksFromOccurrences(list);
    let previous: number | undefined;
    list.forEach((o, i) => {
      const m = marks[i]!;
      const before = previous;
      if (!Number.isNaN(m.t)) previous = m.t;
      if (!keep(m)) return;
      const inWindow = (x: Mark): boolean => x.t >= from && x.t < to;
      if (o.countBefore === 0 && o.countAfter > 1 && row !== undefined && row.first < m.t) {
        out.push(...marksFromRows([{ ...row, count: o.countAfter, last: m.t }], from, to, () => true).map((x) => (m.estimated ? { ...x, estimated: true } : x)));
      } else if (m.n > 1 && before !== undefined && before < m.t) {
        // A change that folds several repeats: the last happened at its last-seen time, the
        // others at times the data does not give, somewhere since the previous change.
        out.push(...spread(m, before, m.t, m.n - 1).filter(inWindow));
        if (inWindow(m)) out.push({ ...m, n: 1 });
      } else if (inWindow(m)) out.push(m);
    });
  }
  return out;
}

/** spread places `count` estimated repeats evenly inside (lo, hi), in at most MAX_MARKS_PER_EVENT marks. */
function spread(base: Mark, lo: number, hi: number, count: number): Mark[] {
  const steps = Math.min(count, MAX_MARKS_PER_EVENT);
  const out: Mark[] = [];
  for (let i = 1; i <= steps; i++) {
    const n = Math.round((count * i) / steps) - Math.round((count * (i - 1)) / steps);
    if (n > 0) out.push({ ...base, t: lo + ((hi - lo) * i) / (steps + 1), n, estimated: true });
  }
  return out;
}
