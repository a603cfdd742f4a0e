import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatMicroTime, formatTime } from './time-format.js';

void test('Time has seconds only, MicroTime exactly six fractional digits', () => {
  const cases: [number, string, string][] = [
    [Date.UTC(2025, 5, 23, 2, 57, 5, 0), '2025-06-23T02:57:05Z', '2025-06-23T02:57:05.000000Z'],
    [Date.UTC(2025, 5, 23, 2, 57, 5, 999), '2025-06-23T02:57:05Z', '2025-06-23T02:57:05.999000Z'],
    [Date.UTC(2025, 5, 23, 2, 57, 5, 12) + 0.345, '2025-06-23T02:57:05Z', '2025-06-23T02:57:05.012345Z'],
    [0, '1970-01-01T00:00:00Z', '1970-01-01T00:00:00.000000Z'],
  ];
  for (const [ms, time, micro] of cases) {
    assert.equal(formatTime(ms), time);
    assert.equal(formatMicroTime(ms), micro);
  }
});
