import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GO_ZERO_TIME_MS, humanDuration, translateTimestampSince, wireTimeMs } from './duration.js';

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
