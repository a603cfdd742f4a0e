import { humanDuration } from '../../api/index.js';
import type { EventRow } from './model.js';

/** age is humanDuration since a Unix ms time, `<unknown>` when there is none. */
export function age(t: number, now: number): string {
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}

/** interval is the Age column of `kubectl describe`: `3m11s (x12 over 10m)` for repeats. */
export function interval(r: EventRow, now: number): string {
  return r.count > 1 ? `${age(r.last, now)} (x${r.count} over ${age(r.first, now)})` : age(r.first, now);
}

/** clockTime is a local wall-clock time, with the date when it is not today. */
export function clockTime(t: number, now = Date.now()): string {
  if (Number.isNaN(t)) return '';
  const d = new Date(t);
  const time = d.toLocaleTimeString(undefined, { hour12: false });
  return new Date(now).toDateString() === d.toDateString() ? time : `${d.toLocaleDateString()} ${time}`;
}

/** compact formats a count for narrow cells: 950, 12.3k, 4.1M. */
export function compact(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/**
 * estimateSpan says where an estimated time lies, in clockTime's format, from
 * the bounds the data gives (null or undefined: no bound on that side); it
 * never names a time the data does not give.
 */
export function estimateSpan(earliest: string | null | undefined, latest: string | null | undefined, now = Date.now()): string {
  const at = (t: string | null | undefined): string => (t === null || t === undefined || Number.isNaN(Date.parse(t)) ? '' : clockTime(Date.parse(t), now));
  const [a, b] = [at(earliest), at(latest)];
  if (a !== '' && b !== '') return a === b ? `at ${a}` : `between ${a} and ${b}`;
  if (a !== '') return `after ${a}`;
  if (b !== '') return `before ${b}`;
  return 'at a time the events do not give';
}
