import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, FAKE_CLOCK_START, realClock } from './clock.js';

void test('FakeClock fires due timers in due order, ties in set order', async () => {
  const clock = new FakeClock();
  const fired: string[] = [];
  clock.setTimeout(() => fired.push('b@20'), 20);
  clock.setTimeout(() => fired.push('a@10'), 10);
  clock.setTimeout(() => fired.push('c@20'), 20);
  clock.setTimeout(() => fired.push('d@31'), 31);
  await clock.advance(30);
  assert.deepEqual(fired, ['a@10', 'b@20', 'c@20']);
  assert.equal(clock.now(), FAKE_CLOCK_START + 30);
  assert.equal(clock.pending, 1);
  await clock.advance(1);
  assert.deepEqual(fired.at(-1), 'd@31');
});

void test('FakeClock.advance runs async work started by a timer, and timers it sets inside the window', async () => {
  const clock = new FakeClock(0);
  const seen: number[] = [];
  async function loop(): Promise<void> {
    for (let i = 0; i < 3; i++) {
      await clock.sleep(100);
      await Promise.resolve();
      seen.push(clock.now());
    }
  }
  const done = loop();
  await clock.advance(250);
  assert.deepEqual(seen, [100, 200]);
  await clock.advance(50);
  await done;
  assert.deepEqual(seen, [100, 200, 300]);
});

void test('clearTimeout cancels a fake timer', async () => {
  const clock = new FakeClock(0);
  let fired = false;
  const h = clock.setTimeout(() => (fired = true), 5);
  clock.clearTimeout(h);
  await clock.advance(10);
  assert.equal(fired, false);
  assert.equal(clock.pending, 0);
});

void test('sleep rejects with the abort reason and clears its timer', async () => {
  const clock = new FakeClock(0);
  const ac = new AbortController();
  const p = clock.sleep(1000, ac.signal);
  ac.abort(new Error('stop'));
  await assert.rejects(p, /stop/);
  assert.equal(clock.pending, 0);
  await assert.rejects(clock.sleep(1, ac.signal), /stop/);
});

void test('realClock sleeps on real timers', async () => {
  const before = realClock.now();
  await realClock.sleep(1);
  assert.ok(realClock.now() >= before);
  let fired = false;
  const h = realClock.setTimeout(() => (fired = true), 1, { unref: true });
  realClock.clearTimeout(h);
  await realClock.sleep(5);
  assert.equal(fired, false);
});
