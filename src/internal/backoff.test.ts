import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ExponentialBackoff, jitter } from './backoff.js';

void test('jitter spans [base, base·(1+factor)) and treats factor ≤ 0 as 1', () => {
  const cases: [number, number, number, number][] = [
    [10_000, 0.25, 0, 10_000],
    [10_000, 0.25, 0.5, 11_250],
    [10_000, 0.25, 0.999, 12_497.5],
    [10_000, 0, 0.5, 15_000],
    [10_000, -1, 0.5, 15_000],
  ];
  for (const [base, factor, r, want] of cases) {
    assert.equal(jitter(base, factor, () => r), want, `jitter(${base}, ${factor}) with random ${r}`);
  }
});

void test('ExponentialBackoff grows to its cap and resets', () => {
  const b = new ExponentialBackoff({ initialMs: 100, factor: 3, maxMs: 1000 });
  assert.deepEqual([b.next(), b.next(), b.next(), b.next()], [100, 300, 900, 1000]);
  b.reset();
  assert.equal(b.next(), 100);
});

void test('ExponentialBackoff zero options mean defaults; jitter is applied when asked', () => {
  const d = new ExponentialBackoff({ initialMs: 0, factor: 0, maxMs: 0 });
  assert.deepEqual([d.next(), d.next()], [1000, 2000]);
  const j = new ExponentialBackoff({ initialMs: 100, jitterFactor: 0.5, random: () => 1 });
  assert.equal(j.next(), 150);
});
