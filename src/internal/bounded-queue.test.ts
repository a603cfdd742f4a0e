import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BoundedQueue } from './bounded-queue.js';

void test('offer refuses and counts when full, never waits', () => {
  const q = new BoundedQueue<number>(2);
  assert.equal(q.offer(1), true);
  assert.equal(q.offer(2), true);
  assert.equal(q.offer(3), false);
  assert.equal(q.offer(4), false);
  assert.equal(q.dropped, 2);
  assert.equal(q.size, 2);
  assert.deepEqual(q.drain(), [1, 2]);
  assert.equal(q.offer(5), true);
});

void test('take waits for an offer and keeps FIFO order', async () => {
  const q = new BoundedQueue<string>(10);
  const first = q.take();
  const second = q.take();
  q.offer('a');
  q.offer('b');
  q.offer('c');
  assert.equal(await first, 'a');
  assert.equal(await second, 'b');
  assert.equal(await q.take(), 'c');
});

void test('close wakes waiting consumers, keeps queued items, refuses offers', async () => {
  const q = new BoundedQueue<number>(4);
  const waiting = q.take();
  q.close();
  assert.equal(await waiting, undefined);
  const q2 = new BoundedQueue<number>(4);
  q2.offer(1);
  q2.offer(2);
  q2.close();
  assert.equal(q2.offer(3), false);
  assert.equal(q2.dropped, 1);
  const got: number[] = [];
  for await (const v of q2) got.push(v);
  assert.deepEqual(got, [1, 2]);
  assert.equal(await q2.take(), undefined);
});

void test('many items pass through in order across compaction', () => {
  const q = new BoundedQueue<number>(10_000);
  const out: number[] = [];
  for (let i = 0; i < 20_000; i++) {
    q.offer(i);
    if (i % 3 !== 0) out.push(q.tryTake()!);
  }
  out.push(...q.drain());
  assert.equal(out.length, 20_000);
  assert.ok(out.every((v, i) => v === i));
});

void test('capacity below 1 is refused', () => {
  assert.throws(() => new BoundedQueue(0), RangeError);
});
