import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from './clock.js';
import { TokenBucket } from './token-bucket.js';

void test('spam-filter bucket: burst 25, then one token per 300 s', async () => {
  const clock = new FakeClock();
  const b = new TokenBucket({ qps: 1 / 300, burst: 25, clock });
  for (let i = 0; i < 25; i++) assert.equal(b.tryAccept(), true, `token ${i + 1}`);
  assert.equal(b.tryAccept(), false);
  await clock.advance(299_000);
  assert.equal(b.tryAccept(), false);
  await clock.advance(1_000);
  assert.equal(b.tryAccept(), true);
  assert.equal(b.tryAccept(), false);
});

void test('refill carries fractions and caps at burst', async () => {
  const clock = new FakeClock();
  const b = new TokenBucket({ qps: 2, burst: 3, clock });
  for (let i = 0; i < 3; i++) b.tryAccept();
  await clock.advance(250);
  assert.equal(b.tryAccept(), false); // 0.5 token
  await clock.advance(250);
  assert.equal(b.tryAccept(), true); // 1.0 token, the earlier half was kept
  await clock.advance(60_000);
  assert.equal(b.available(), 3);
});

void test('a refused tryAccept does not consume partial tokens', async () => {
  const clock = new FakeClock();
  const b = new TokenBucket({ qps: 1, burst: 1, clock });
  assert.equal(b.tryAccept(), true);
  await clock.advance(600);
  assert.equal(b.tryAccept(), false);
  await clock.advance(400);
  assert.equal(b.tryAccept(), true);
});
