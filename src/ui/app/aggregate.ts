import type { TimelineRow } from '../../api/index.js';
import type { Matchable } from './model.js';

/**
 * Mark is one row of the server's timeline: an occurrence (or a run of them)
 * of an event at a time, exact when the data gives that time, estimated when
 * the server spread a count between the known times around it.
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
      cluster: r.cluster ?? '',
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

/** Lane is one object (of one cluster) on the timeline with its marks in time order. */
export interface Lane {
  objectKey: string;
  /** cluster is the cluster the object's events were archived from ('' for local writes): two clusters' objects of one name are two lanes. */
  cluster: string;
  marks: Mark[];
  warnings: number;
  total: number;
  first: number;
}

/** lanesOf groups marks by object and cluster, ordered by each object's first mark, so the incident reads top to bottom. */
export function lanesOf(marks: readonly Mark[]): Lane[] {
  const byObject = new Map<string, Lane>();
  for (const m of marks) {
    const key = `${m.cluster}\u0000${m.objectKey}`;
    let lane = byObject.get(key);
    if (lane === undefined) {
      lane = { objectKey: m.objectKey, cluster: m.cluster, marks: [], warnings: 0, total: 0, first: m.t };
      byObject.set(key, lane);
    }
    lane.marks.push(m);
    lane.total += m.n;
    if (m.type === 'Warning') lane.warnings += m.n;
    if (m.t < lane.first) lane.first = m.t;
  }
  const lanes = [...byObject.values()];
  for (const l of lanes) l.marks.sort((a, b) => a.t - b.t);
  return lanes.sort((a, b) => a.first - b.first || (a.objectKey < b.objectKey ? -1 : a.objectKey > b.objectKey ? 1 : a.cluster < b.cluster ? -1 : 1));
}
