import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GO_ZERO_TIME_MS, humanDuration, translateTimestampSince, utcMs, wireTimeMs } from './duration.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;
const Y = 365 * D;

void test('humanDuration: every boundary of apimachinery HumanDuration', () => {
  const cases: [number, string][] = [
    [-2 * S, '<invalid>'],
    [-2 * S - 1, '<invalid>'],
    [-2 * S + 1, '0s'],
    [-S, '0s'],
    [-1, '0s'],
    [0, '0s'],
    [S - 1, '0s'],
    [S, '1s'],
    [70 * S, '70s'],
    [2 * M - 1, '119s'],
    [2 * M, '2m'],
    [2 * M + S, '2m1s'],
    [190 * S, '3m10s'],
    [10 * M - 1, '9m59s'],
    [10 * M, '10m'],
    [10 * M + S, '10m'],
    [70 * M, '70m'],
    [3 * H - 1, '179m'],
    [3 * H, '3h'],
    [3 * H + M, '3h1m'],
    [3 * H + M + 59 * S, '3h1m'],
    [8 * H - 1, '7h59m'],
    [8 * H, '8h'],
    [8 * H + 59 * M, '8h'],
    [47 * H, '47h'],
    [2 * D - 1, '47h'],
    [2 * D, '2d'],
    [2 * D + H, '2d1h'],
    [49 * H, '2d1h'],
    [8 * D - 1, '7d23h'],
    [8 * D, '8d'],
    [8 * D + 2 * H, '8d'],
    [8 * D + 23 * H, '8d'],
    [367 * D, '367d'],
    [2 * Y - 1, '729d'],
    [2 * Y, '2y'],
    [2 * Y + 23 * H + 59 * M, '2y'],
    [2 * Y + D - 1, '2y'],
    [2 * Y + D, '2y1d'],
    [2 * Y + 25 * H, '2y1d'],
    [3 * Y, '3y'],
    [7 * Y, '7y'],
    [8 * Y - 1, '7y364d'],
    [8 * Y, '8y'],
    [8 * Y + 2 * H, '8y'],
    [8 * Y + 364 * D, '8y'],
    [9 * Y, '9y'],
    [100 * Y, '100y'],
  ];
  for (const [ms, want] of cases) assert.equal(humanDuration(ms), want, `humanDuration(${ms})`);
});

void test('translateTimestampSince: zero times are <unknown>, others are ages', () => {
  const now = Date.parse('2024-05-01T12:00:00Z');
  const cases: [string | null | undefined, string][] = [
    [undefined, '<unknown>'],
    [null, '<unknown>'],
    ['', '<unknown>'],
    ['0001-01-01T00:00:00Z', '<unknown>'],
    ['not a time', '<unknown>'],
    ['2024-05-01T11:59:30Z', '30s'],
    ['2024-05-01T11:56:49.123456Z', '3m10s'],
    ['2024-05-01T13:59:30+02:00', '30s'],
    ['2024-05-01T12:00:01Z', '0s'],
    ['2024-05-01T12:00:02Z', '<invalid>'],
  ];
  for (const [t, want] of cases) assert.equal(translateTimestampSince(t, now), want, `since(${t})`);
});

void test('wireTimeMs parses RFC 3339 and MicroTime, undefined for zero', () => {
  assert.equal(wireTimeMs('2024-05-01T12:00:00.000001Z'), Date.parse('2024-05-01T12:00:00Z'));
  assert.equal(wireTimeMs('0001-01-01T00:00:00Z'), undefined);
  assert.equal(GO_ZERO_TIME_MS, Date.parse('0001-01-01T00:00:00Z'));
});

void test('utcMs reads every time as Date.parse does', () => {
  const fixed = [
    '2024-05-01T12:00:00Z', '2024-05-01T12:00:00.5Z', '2024-05-01T12:00:00.12Z', '2024-05-01T12:00:00.123Z', '2024-05-01T12:00:00.123456Z',
    '2024-05-01T12:00:00.123456789Z', '2024-05-01T12:00:00.1234567891Z', '2024-02-29T23:59:59Z', '2023-02-29T00:00:00Z', '2024-04-31T00:00:00Z',
    '2024-13-01T00:00:00Z', '2024-00-01T00:00:00Z', '2024-05-00T00:00:00Z', '2024-05-01T24:00:00Z', '2024-05-01T23:60:00Z', '2024-05-01T23:00:60Z',
    '0001-01-01T00:00:00Z', '0099-12-31T23:59:59Z', '0999-06-01T00:00:00Z', '1000-01-01T00:00:00Z', '1969-12-31T23:59:59.999Z', '9999-12-31T23:59:59Z',
    '2024-05-01T12:00:00+02:00', '2024-05-01T12:00:00.1+02:00', '2024-05-01 12:00:00Z', '2024-05-01T12:00:00.Z', '2024-05-01T12:00:00.1a2Z',
    '2024-5-01T12:00:00Z', '2024-05-01T12:00Z', 'x024-05-01T12:00:00Z', '2024-05-01T12:00:00z', '', 'not a time', '2024-05-01T1:00:00.000Z',
  ];
  for (const t of fixed) assert.equal(utcMs(t), Date.parse(t), t);
  // Random times of every shape the fast path takes, against Date.parse.
  let seed = 7;
  const next = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const pad = (v: number, w: number): string => String(v).padStart(w, '0');
  for (let i = 0; i < 5000; i++) {
    const fraction = next(4) === 0 ? '' : `.${pad(next(10 ** 6), 6).slice(0, 1 + next(9))}`;
    const t = `${pad(next(10000), 4)}-${pad(next(14), 2)}-${pad(next(33), 2)}T${pad(next(26), 2)}:${pad(next(62), 2)}:${pad(next(62), 2)}${fraction}Z`;
    assert.equal(utcMs(t), Date.parse(t), t);
  }
});
