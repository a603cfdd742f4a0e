/**
 * Human-readable ages, as kubectl and the API server's Table printer show them
 * (apimachinery `pkg/util/duration`).
 */

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
  const ms = Date.parse(t);
  if (Number.isNaN(ms) || ms === GO_ZERO_TIME_MS) return undefined;
  return ms;
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
