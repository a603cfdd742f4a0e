import type { MicroTime, Time } from './types.js';

/**
 * The two wire time formats of Kubernetes objects:
 *
 * - metav1.Time: RFC 3339 in UTC to the second (`2025-06-23T02:57:05Z`), `null` when zero.
 * - metav1.MicroTime: RFC 3339 in UTC with exactly six fractional digits, `null` when zero.
 *
 * Input is parsed exactly as Go's `time.Parse` does with the layouts the apiserver uses, including
 * its laxness (a one-digit hour, a comma before the fraction, offsets up to 24:60) and its error
 * texts, because clients see those texts verbatim inside 400 answers. MicroTime values stay strings:
 * a JS Date holds milliseconds only.
 */

/** RFC3339_LAYOUT is Go's `time.RFC3339`, the layout of metav1.Time. */
export const RFC3339_LAYOUT = '2006-01-02T15:04:05Z07:00';
/** RFC3339_MICRO_LAYOUT is apimachinery's `RFC3339Micro`, the layout of metav1.MicroTime. */
export const RFC3339_MICRO_LAYOUT = '2006-01-02T15:04:05.000000Z07:00';

/** TimeParseError is a time that Go's parser rejects; its message is Go's `*time.ParseError` text. */
export class TimeParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TimeParseError';
  }
}

/** Instant is a point in time as Go holds it: whole Unix seconds plus nanoseconds in [0, 1e9). */
interface Instant {
  sec: number;
  nsec: number;
}

/** Unix seconds of Go's zero time.Time (January 1, year 1, 00:00:00 UTC), which encodes as null. */
const ZERO_UNIX_SEC = -62135596800;

type Std = 'longYear' | 'zeroMonth' | 'zeroDay' | 'hour' | 'zeroMinute' | 'zeroSecond' | 'frac6' | 'isoColonTZ';

interface Chunk {
  prefix: string;
  std: Std;
  stdstr: string;
}

const dateChunks: Chunk[] = [
  { prefix: '', std: 'longYear', stdstr: '2006' },
  { prefix: '-', std: 'zeroMonth', stdstr: '01' },
  { prefix: '-', std: 'zeroDay', stdstr: '02' },
  { prefix: 'T', std: 'hour', stdstr: '15' },
  { prefix: ':', std: 'zeroMinute', stdstr: '04' },
  { prefix: ':', std: 'zeroSecond', stdstr: '05' },
];
const timeChunks: Chunk[] = [...dateChunks, { prefix: '', std: 'isoColonTZ', stdstr: 'Z07:00' }];
const microChunks: Chunk[] = [
  ...dateChunks,
  { prefix: '', std: 'frac6', stdstr: '.000000' },
  { prefix: '', std: 'isoColonTZ', stdstr: 'Z07:00' },
];

const utf8 = new TextEncoder();
const hex = '0123456789abcdef';

/** goTimeQuote is the time package's `quote`: bytes outside printable ASCII become `\xNN`. */
function goTimeQuote(b: Uint8Array): string {
  let s = '"';
  for (const c of b) {
    if (c >= 0x80 || c < 0x20) s += `\\x${hex[c >> 4]}${hex[c & 15]}`;
    else if (c === 0x22 || c === 0x5c) s += `\\${String.fromCharCode(c)}`;
    else s += String.fromCharCode(c);
  }
  return `${s}"`;
}

const BAD = Symbol('bad');

const isDigit = (v: Uint8Array, i: number): boolean => i < v.length && v[i]! >= 0x30 && v[i]! <= 0x39;
const commaOrPeriod = (c: number | undefined): boolean => c === 0x2e || c === 0x2c;

/** getnum reads one or two digits (exactly two when fixed), as Go's getnum does. */
function getnum(v: Uint8Array, i: number, fixed: boolean): [number, number] | typeof BAD {
  if (!isDigit(v, i)) return BAD;
  if (!isDigit(v, i + 1)) {
    if (fixed) return BAD;
    return [v[i]! - 0x30, i + 1];
  }
  return [(v[i]! - 0x30) * 10 + (v[i + 1]! - 0x30), i + 2];
}

/** atoi is Go's time-package atoi: an optional sign, then digits only (an empty rest reads as 0). */
function atoi(b: Uint8Array): number | typeof BAD {
  let i = 0;
  let neg = false;
  if (b.length > 0 && (b[0] === 0x2d || b[0] === 0x2b)) {
    neg = b[0] === 0x2d;
    i = 1;
  }
  let x = 0;
  for (; i < b.length; i++) {
    const c = b[i]!;
    if (c < 0x30 || c > 0x39) return BAD;
    x = x * 10 + (c - 0x30);
  }
  return neg ? -x : x;
}

/** parseNanoseconds reads `.ddd` (or `,ddd`) of nbytes bytes, scaled to nanoseconds, truncating past nine digits. */
function parseNanoseconds(v: Uint8Array, i: number, nbytes: number): { ns: number; range: string; bad: boolean } {
  if (!commaOrPeriod(v[i])) return { ns: 0, range: '', bad: true };
  const n = Math.min(nbytes, 10);
  const ns = atoi(v.subarray(i + 1, i + n));
  if (ns === BAD) return { ns: 0, range: '', bad: true };
  if (ns < 0) return { ns: 0, range: 'fractional second', bad: false };
  return { ns: ns * 10 ** (10 - n), range: '', bad: false };
}

const isLeap = (y: number): boolean => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const monthDays = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const daysIn = (m: number, y: number): number => (m === 2 && isLeap(y) ? 29 : monthDays[m - 1]!);

/** daysFromCivil counts days from 1970-01-01 to a proleptic Gregorian date. */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** civilFromDays is the inverse of daysFromCivil. */
function civilFromDays(z: number): [number, number, number] {
  const zz = z + 719468;
  const era = Math.floor(zz / 146097);
  const doe = zz - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

/** goParse is Go's `time.parse` specialised to the two layouts the apiserver uses. */
function goParse(layout: string, chunks: Chunk[], text: string): Instant {
  const v = utf8.encode(text);
  const quotedValue = goTimeQuote(v);
  const fail = (valueElem: Uint8Array, layoutElem: string): TimeParseError =>
    new TimeParseError(
      `parsing time ${quotedValue} as ${goTimeQuote(utf8.encode(layout))}: cannot parse ${goTimeQuote(valueElem)} as ${goTimeQuote(utf8.encode(layoutElem))}`,
    );
  const failMsg = (message: string): TimeParseError => new TimeParseError(`parsing time ${quotedValue}${message}`);

  let i = 0;
  let year = 0;
  let month = -1;
  let day = -1;
  let hour = 0;
  let min = 0;
  let sec = 0;
  let nsec = 0;
  let zoneOffset = 0;
  for (let c = 0; c <= chunks.length; c++) {
    const chunk = chunks[c];
    const prefix = chunk?.prefix ?? '';
    for (let p = 0; p < prefix.length; p++) {
      if (i >= v.length || v[i] !== prefix.charCodeAt(p)) throw fail(v.subarray(i), prefix);
      i++;
    }
    if (chunk === undefined) {
      if (i < v.length) throw failMsg(`: extra text: ${goTimeQuote(v.subarray(i))}`);
      break;
    }
    const hold = i;
    let bad = false;
    let range = '';
    switch (chunk.std) {
      case 'longYear': {
        if (v.length - i < 4 || !isDigit(v, i)) {
          bad = true;
          break;
        }
        const y = atoi(v.subarray(i, i + 4));
        i += 4;
        if (y === BAD) bad = true;
        else year = y;
        break;
      }
      case 'zeroMonth': {
        const r = getnum(v, i, true);
        if (r === BAD) {
          bad = true;
          break;
        }
        [month, i] = r;
        if (month <= 0 || month > 12) range = 'month';
        break;
      }
      case 'zeroDay': {
        const r = getnum(v, i, true);
        if (r === BAD) bad = true;
        else [day, i] = r;
        break;
      }
      case 'hour': {
        const r = getnum(v, i, false);
        if (r === BAD) bad = true;
        else [hour, i] = r;
        if (hour >= 24) range = 'hour';
        break;
      }
      case 'zeroMinute': {
        const r = getnum(v, i, true);
        if (r === BAD) bad = true;
        else [min, i] = r;
        if (min >= 60) range = 'minute';
        break;
      }
      case 'zeroSecond': {
        const r = getnum(v, i, true);
        if (r === BAD) {
          bad = true;
          break;
        }
        [sec, i] = r;
        if (sec >= 60) {
          range = 'second';
          break;
        }
        // A fraction the layout does not mention is still accepted, digits of any length.
        if (v.length - i >= 2 && commaOrPeriod(v[i]) && isDigit(v, i + 1)) {
          if (chunks[c + 1]?.std === 'frac6') break;
          let n = 2;
          while (isDigit(v, i + n)) n++;
          const r2 = parseNanoseconds(v, i, n);
          nsec = r2.ns;
          range = r2.range;
          bad = r2.bad;
          i += n;
        }
        break;
      }
      case 'frac6': {
        if (v.length - i < 7) {
          bad = true;
          break;
        }
        const r = parseNanoseconds(v, i, 7);
        nsec = r.ns;
        range = r.range;
        bad = r.bad;
        i += 7;
        break;
      }
      case 'isoColonTZ': {
        if (v.length - i >= 1 && v[i] === 0x5a) {
          i += 1;
          zoneOffset = 0;
          break;
        }
        if (v.length - i < 6 || v[i + 3] !== 0x3a) {
          bad = true;
          break;
        }
        const sign = v[i];
        const hr = getnum(v.subarray(i + 1, i + 3), 0, true);
        const mm = hr === BAD ? BAD : getnum(v.subarray(i + 4, i + 6), 0, true);
        i += 6;
        const h = hr === BAD ? 0 : hr[0];
        const m = mm === BAD ? 0 : mm[0];
        bad = hr === BAD || mm === BAD;
        if (h > 24) range = 'time zone offset hour';
        if (m > 60) range = 'time zone offset minute';
        zoneOffset = (h * 60 + m) * 60;
        if (sign === 0x2d) zoneOffset = -zoneOffset;
        else if (sign !== 0x2b) bad = true;
        break;
      }
    }
    if (range !== '') throw failMsg(`: ${range} out of range`);
    if (bad) throw fail(v.subarray(hold), chunk.stdstr);
  }
  if (month < 0) month = 1;
  if (day < 0) day = 1;
  if (day < 1 || day > daysIn(month, year)) throw failMsg(': day out of range');
  const s = daysFromCivil(year, month, day) * 86400 + hour * 3600 + min * 60 + sec - zoneOffset;
  return { sec: s, nsec };
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** formatInstant is Go's `Format` with RFC3339 (fracDigits 0) or RFC3339Micro (6), always in UTC. */
function formatInstant(t: Instant, fracDigits: 0 | 6): string {
  const days = Math.floor(t.sec / 86400);
  const rem = t.sec - days * 86400;
  const [y, mo, d] = civilFromDays(days);
  const year = y < 0 ? `-${pad(-y, 4)}` : pad(y, 4);
  const h = Math.floor(rem / 3600);
  const mi = Math.floor((rem % 3600) / 60);
  const s = rem % 60;
  const frac = fracDigits === 6 ? `.${pad(Math.floor(t.nsec / 1000), 6)}` : '';
  return `${year}-${pad(mo, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}${frac}Z`;
}

const isZero = (t: Instant): boolean => t.sec === ZERO_UNIX_SEC && t.nsec === 0;

function instantFromMs(ms: number): Instant {
  if (!Number.isFinite(ms)) throw new RangeError(`invalid time value: ${ms}`);
  const whole = Math.floor(ms);
  const sec = Math.floor(whole / 1000);
  const subMs = ms - whole;
  return { sec, nsec: (whole - sec * 1000) * 1_000_000 + Math.floor(subMs * 1000) * 1000 };
}

function instantFromInput(t: Date | number | { epochMicros: bigint }): Instant {
  if (t instanceof Date) return instantFromMs(t.getTime());
  if (typeof t === 'number') return instantFromMs(t);
  const sec = t.epochMicros >= 0n ? t.epochMicros / 1_000_000n : -((-t.epochMicros + 999_999n) / 1_000_000n);
  return { sec: Number(sec), nsec: Number(t.epochMicros - sec * 1_000_000n) * 1000 };
}

/** formatTime encodes an instant (a Date or epoch milliseconds) as metav1.Time: truncated to the second, UTC, null for Go's zero time. */
export function formatTime(t: Date | number | null | undefined): Time {
  if (t === null || t === undefined) return null;
  const i = instantFromInput(t);
  const truncated = { sec: i.sec, nsec: 0 };
  return isZero(truncated) ? null : formatInstant(truncated, 0);
}

/** formatMicroTime encodes an instant (a Date, epoch milliseconds, or epoch microseconds) as metav1.MicroTime. */
export function formatMicroTime(t: Date | number | { epochMicros: bigint } | null | undefined): MicroTime {
  if (t === null || t === undefined) return null;
  const i = instantFromInput(t);
  return isZero(i) ? null : formatInstant(i, 6);
}

/** MicroClock is what nowMicroTime reads: milliseconds since the epoch, fractions allowed. */
export interface MicroClock {
  now(): number;
}

/** nowMicroTime is the current time as a metav1.MicroTime string. */
export function nowMicroTime(clock: MicroClock = Date): string {
  return formatInstant(instantFromMs(clock.now()), 6);
}

/** parseTime reads a metav1.Time as Go does (RFC 3339, any fraction, any offset) and returns epoch milliseconds; throws TimeParseError. */
export function parseTime(s: string): number {
  const i = goParse(RFC3339_LAYOUT, timeChunks, s);
  return i.sec * 1000 + Math.floor(i.nsec / 1_000_000);
}

/** ParsedMicroTime is a MicroTime read from the wire. */
export interface ParsedMicroTime {
  /** epochMicros is exact; the layout admits microseconds and nothing finer. */
  epochMicros: bigint;
  /** epochMs is epochMicros truncated to milliseconds, for Date arithmetic. */
  epochMs: number;
}

/** parseMicroTime reads a metav1.MicroTime; only the exact six-digit layout is accepted (kubernetes#94748); throws TimeParseError. */
export function parseMicroTime(s: string): ParsedMicroTime {
  const i = goParse(RFC3339_MICRO_LAYOUT, microChunks, s);
  return microsOf(i);
}

function microsOf(i: Instant): ParsedMicroTime {
  const epochMicros = BigInt(i.sec) * 1_000_000n + BigInt(Math.floor(i.nsec / 1000));
  return { epochMicros, epochMs: i.sec * 1000 + Math.floor(i.nsec / 1_000_000) };
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** digitsAt reads the n ASCII digits of s at `from` as a number, or -1 if one is not a digit. */
export function digitsAt(s: string, from: number, n: number): number {
  let v = 0;
  for (let k = from; k < from + n; k++) {
    const c = s.charCodeAt(k) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/**
 * isCanonical tells whether s is already the encoder's own output (UTC, `Z`, seconds or six
 * fraction digits by length: `YYYY-MM-DDTHH:MM:SS[.ffffff]Z`), a valid date in years 1000-9999:
 * stored times are read back on every list item, and parsing them again through the layout parser
 * is most of that cost. It reads the characters where they must be, with no pattern.
 */
export function isCanonicalWireTime(s: string, length: 20 | 27): boolean {
  // The times of one write, and of the writes of one second, are mostly one text: the last one found canonical is
  // compared before it is read again.
  if (s === lastCanonical) return s.length === length;
  if (s.length !== length || s.charCodeAt(length - 1) !== 90) return false;
  if (length === 27 && (s.charCodeAt(19) !== 46 || digitsAt(s, 20, 6) < 0)) return false;
  const t = wireDateTime(s);
  if (t === undefined) return false;
  const { year: y, month: mo, day: d } = t;
  if (y < 1000 || mo < 1 || mo > 12 || d < 1 || t.hour < 0 || t.hour > 23 || t.minute < 0 || t.minute > 59 || t.second < 0 || t.second > 59) return false;
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  if (d > (mo === 2 && leap ? 29 : DAYS_IN_MONTH[mo - 1]!)) return false;
  lastCanonical = s;
  return true;
}

/** lastCanonical is the text isCanonicalWireTime last found canonical (its length says for which form). */
let lastCanonical = '';

/** WireDateTime is the date and time of `YYYY-MM-DDTHH:MM:SS…`, each -1 where its characters are not digits. */
export interface WireDateTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** wireDateTime reads the first 19 characters of s as `YYYY-MM-DDTHH:MM:SS`; undefined if a separator is not in its place. */
export function wireDateTime(s: string): WireDateTime | undefined {
  // - - T : :
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(10) !== 84 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return undefined;
  return { year: digitsAt(s, 0, 4), month: digitsAt(s, 5, 2), day: digitsAt(s, 8, 2), hour: digitsAt(s, 11, 2), minute: digitsAt(s, 14, 2), second: digitsAt(s, 17, 2) };
}

/**
 * canonicalTime normalises an accepted metav1.Time input to what the apiserver answers after storing
 * it: UTC, truncated to the second (storage keeps seconds only), null for the zero time.
 */
export function canonicalTime(s: string | null | undefined): Time {
  if (s === null || s === undefined) return null;
  if (isCanonicalWireTime(s, 20)) return s;
  const i = goParse(RFC3339_LAYOUT, timeChunks, s);
  const truncated = { sec: i.sec, nsec: 0 };
  return isZero(truncated) ? null : formatInstant(truncated, 0);
}

/** canonicalMicroTime normalises an accepted metav1.MicroTime input to the encoder's output: UTC, six digits, null for the zero time. */
export function canonicalMicroTime(s: string | null | undefined): MicroTime {
  if (s === null || s === undefined) return null;
  if (isCanonicalWireTime(s, 27)) return s;
  const i = goParse(RFC3339_MICRO_LAYOUT, microChunks, s);
  return isZero(i) ? null : formatInstant(i, 6);
}

/** instantOfAny reads either wire format (a Time string parses as RFC 3339 with any fraction); null is the zero time. */
function instantOfAny(s: MicroTime | Time | undefined): Instant {
  if (s === null || s === undefined) return { sec: ZERO_UNIX_SEC, nsec: 0 };
  return goParse(RFC3339_LAYOUT, timeChunks, s);
}

/** compareMicroTime orders two MicroTime (or Time) values by instant; null is Go's zero time, before any real time. */
export function compareMicroTime(a: MicroTime | undefined, b: MicroTime | undefined): number {
  const x = instantOfAny(a);
  const y = instantOfAny(b);
  if (x.sec !== y.sec) return x.sec < y.sec ? -1 : 1;
  if (x.nsec !== y.nsec) return x.nsec < y.nsec ? -1 : 1;
  return 0;
}

/**
 * equalMicroTimeTruncated tells whether two times are the same instant once both are truncated to
 * microseconds, as the events.k8s.io/v1 update check on eventTime compares them (kubernetes#111928).
 */
export function equalMicroTimeTruncated(a: MicroTime | undefined, b: MicroTime | undefined): boolean {
  const x = instantOfAny(a);
  const y = instantOfAny(b);
  return x.sec === y.sec && Math.floor(x.nsec / 1000) === Math.floor(y.nsec / 1000);
}
