import { topTallies } from './aggregate.js';
import type { Mark } from './aggregate.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** BUCKET_SIZES are the bar widths a chart may use, each a span a person reads at a glance. */
export const BUCKET_SIZES: readonly number[] = [
  10_000, 15_000, 30_000, MINUTE, 2 * MINUTE, 5 * MINUTE, 10 * MINUTE, 15 * MINUTE, 30 * MINUTE,
  HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, 24 * HOUR,
];

/** MAX_BARS bounds the bars of a window: more are too thin to point at on a laptop, let alone a phone. */
export const MAX_BARS = 48;

/** bucketSizeFor is the smallest bucket of BUCKET_SIZES that draws `windowMs` in at most `maxBars` bars. */
export function bucketSizeFor(windowMs: number, maxBars = MAX_BARS): number {
  return BUCKET_SIZES.find((b) => windowMs / b <= maxBars) ?? BUCKET_SIZES[BUCKET_SIZES.length - 1]!;
}

/** bucketLabel names a bucket size: `30 s`, `2 min`, `1 h`. */
export function bucketLabel(ms: number): string {
  if (ms < MINUTE) return `${ms / 1000} s`;
  if (ms < HOUR) return `${ms / MINUTE} min`;
  return `${ms / HOUR} h`;
}

/**
 * StackedBuckets are counts per time bucket and group, split into observed
 * counts (the data gives their time) and estimated ones (spread between known
 * times), for a stacked bar chart. Index as `observed[group][bucket]`.
 */
export interface StackedBuckets {
  /** starts are each bucket's start, Unix ms. */
  starts: number[];
  bucketMs: number;
  groups: string[];
  observed: number[][];
  estimated: number[][];
  /** max is the largest bucket total, for the y axis. */
  max: number;
  total: number;
  estimatedTotal: number;
}

/** OTHER is the group that folds everything outside the top groups. */
export const OTHER = 'other';

/**
 * stackBuckets counts marks per bucket of [from, from + count × bucketMs) for
 * the `top` largest groups, the rest folded into "other", so a chart with many
 * reasons stays readable; the totals still add up to every mark in the window.
 */
export function stackBuckets(marks: readonly Mark[], from: number, bucketMs: number, count: number, key: (m: Mark) => string, top: number): StackedBuckets {
  const to = from + bucketMs * count;
  const inWindow = marks.filter((m) => m.t >= from && m.t < to);
  const leaders = topTallies(inWindow, key, top).map((t) => t.key);
  const groups = [...leaders];
  if (inWindow.some((m) => !leaders.includes(key(m)))) groups.push(OTHER);
  const index = new Map(groups.map((g, i) => [g, i]));
  const observed = groups.map(() => new Array<number>(count).fill(0));
  const estimated = groups.map(() => new Array<number>(count).fill(0));
  let total = 0;
  let estimatedTotal = 0;
  for (const m of inWindow) {
    const b = Math.floor((m.t - from) / bucketMs);
    const g = index.get(key(m)) ?? index.get(OTHER)!;
    (m.estimated ? estimated : observed)[g]![b]! += m.n;
    total += m.n;
    if (m.estimated) estimatedTotal += m.n;
  }
  let max = 0;
  for (let b = 0; b < count; b++) {
    let sum = 0;
    for (let g = 0; g < groups.length; g++) sum += observed[g]![b]! + estimated[g]![b]!;
    if (sum > max) max = sum;
  }
  const starts = Array.from({ length: count }, (_, i) => from + i * bucketMs);
  return { starts, bucketMs, groups, observed, estimated, max, total, estimatedTotal };
}

/**
 * countTicks are whole-number y ticks from 0 to at least `max`, at most
 * `maxTicks` + 1 of them, stepping by 1, 2, 5, 10, 20, 50, …: counts are
 * never fractional, so neither is an axis label.
 */
export function countTicks(max: number, maxTicks = 5): number[] {
  const top = Math.max(1, Math.ceil(max));
  let step = 1;
  for (let i = 0; Math.ceil(top / step) > maxTicks; i++) step = [1, 2, 5][(i + 1) % 3]! * 10 ** Math.floor((i + 1) / 3);
  const n = Math.ceil(top / step);
  return Array.from({ length: n + 1 }, (_, i) => i * step);
}
