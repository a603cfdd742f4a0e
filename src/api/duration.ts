/**
 * Human-readable ages, as kubectl and the API server's Table printer show them
 * (apimachinery `pkg/util/duration`).
 */
import { digitsAt, wireDateTime } from './time.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** GO_ZERO_TIME_MS is Go's zero time.Time (0001-01-01T00:00:00Z) in Unix milliseconds. */
export const GO_ZERO_TIME_MS = -62135596800000;

/**
 * humanDuration renders a duration in milliseconds exactly as apimachinery's
 * HumanDuration: two or three significant figures, `<invalid>` below -1 s.
 * Each unit is truncated toward zero, as Go's integer conversions are.
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / SECOND);
  // A clock up to (but excluding) 2 s ahead still counts as "now".
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(ms / MINUTE);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(ms / HOUR);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) {
    const d = days % 365;
    return d === 0 ? `${years}y` : `${years}y${d}d`;
  }
  return `${years}y`;
}

/**
 * wireTimeMs parses a metav1.Time or MicroTime as sent on the wire, giving
 * undefined for what Go would call the zero time: absent, null, empty,
 * unparsable, or 0001-01-01T00:00:00Z itself.
 */
export function wireTimeMs(t: string | null | undefined): number | undefined {
  if (t === null || t === undefined || t === '') return undefined;
  const ms = utcMs(t);
  if (Number.isNaN(ms) || ms === GO_ZERO_TIME_MS) return undefined;
  return ms;
}

/**
 * utcMs is Date.parse of a time. The forms Kubernetes writes (`2006-01-02T15:04:05Z`,
 * with or without a fraction) are read digit by digit, several times faster than
 * Date.parse, which a Table of thousands of rows calls twice a row; any other form,
 * and any date past the 28th or before the year 1000, is left to Date.parse.
 */
export function utcMs(t: string): number {
  const n = t.length;
  const dt = n < 20 || t.charCodeAt(n - 1) !== 90 /* Z */ ? undefined : wireDateTime(t);
  if (dt === undefined) return Date.parse(t);
  const { year, month, day, hour, minute, second } = dt;
  let millis = 0;
  if (n > 20) {
    // A fraction: a dot and one to nine digits, of which Date.parse keeps the milliseconds.
    if (t.charCodeAt(19) !== 46 || n > 30 || n < 22) return Date.parse(t);
    const fraction = digitsAt(t, 20, n - 21);
    if (fraction < 0) return Date.parse(t);
    const places = n - 21;
    millis = places >= 3 ? Math.trunc(fraction / 10 ** (places - 3)) : fraction * 10 ** (3 - places);
  }
  if (year < 1000 || month < 1 || month > 12 || day < 1 || day > 28 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) {
    return Date.parse(t);
  }
  return Date.UTC(year, month - 1, day, hour, minute, second, millis);
}

/**
 * translateTimestampSince is kubectl's age of a timestamp at `now` (Unix ms):
 * `<unknown>` for the zero time, otherwise humanDuration(now - t).
 */
export function translateTimestampSince(t: string | null | undefined, now: number): string {
  return translateMsSince(wireTimeMs(t), now);
}

/** translateMsSince is translateTimestampSince of a time already read with wireTimeMs. */
export function translateMsSince(ms: number | undefined, now: number): string {
  return ms === undefined ? '<unknown>' : humanDuration(now - ms);
}

/**
 * wireTimeMicros is a wire time in Unix microseconds, keeping MicroTime's full
 * precision for ordering; Go's zero time sorts before every other time.
 */
export function wireTimeMicros(t: string | null | undefined): number {
  const ms = wireTimeMs(t);
  if (ms === undefined || t === null || t === undefined) return -Infinity;
  const m = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(.*)$/.exec(t);
  if (!m?.[2]) return ms * 1000;
  const seconds = Date.parse(`${m[1]}${m[3]}`);
  return seconds * 1000 + Number(m[2].slice(0, 6).padEnd(6, '0'));
}
