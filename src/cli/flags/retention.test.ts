import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRetention } from './retention.js';

const DAY = 86_400_000;

void describe('parseRetention', () => {
  const cases: [string, string[], ReturnType<typeof parseRetention>][] = [
    ['nothing', [], {}],
    ['a default', ['30d'], { maxAgeMs: 30 * DAY }],
    ['a default and one cluster', ['30d', 'prod=90d'], { maxAgeMs: 30 * DAY, clusterMaxAgeMs: { prod: 90 * DAY } }],
    ['clusters only', ['prod=90d', 'dev=12h'], { clusterMaxAgeMs: { prod: 90 * DAY, dev: 12 * 3_600_000 } }],
    ['an empty value is none', [''], {}],
  ];
  for (const [name, retention, want] of cases) void it(name, () => assert.deepEqual(parseRetention({ retention }), want));

  const refused: [string[], RegExp][] = [
    [['30d', '7d'], /--retention 7d: a default retention is given twice/],
    [['prod=1d', 'prod=2d'], /--retention prod=2d: cluster prod is given twice/],
    [['prod=soon'], /--retention prod=soon: /],
    [['=1d'], /invalid cluster name in --retention ""/],
    [['a b=1d'], /invalid cluster name in --retention "a b"/],
  ];
  for (const [retention, message] of refused) void it(`refuses ${retention.join(' ')}`, () => assert.throws(() => parseRetention({ retention }), message));
});
