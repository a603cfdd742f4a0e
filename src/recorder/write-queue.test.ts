import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WriteQueue } from './write-queue.js';

void test('WriteQueue runs at most `workers` items at once and reports idle', async () => {
  let running = 0;
  let peak = 0;
  const done: number[] = [];
  const q = new WriteQueue<number>({
    capacity: 10,
    workers: 3,
    process: async (n) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setImmediate(r));
      running--;
      done.push(n);
    },
  });
  for (let i = 0; i < 8; i++) assert.equal(q.offer(i), true);
  assert.equal(q.pending, 8);
  await q.idle();
  assert.equal(peak, 3);
  assert.equal(done.length, 8);
  await q.close();
  assert.equal(q.offer(9), false);
});

void test('WriteQueue.abort returns the never-started items and signals in-flight ones', async () => {
  let seen: AbortSignal | undefined;
  const q = new WriteQueue<number>({
    capacity: 10,
    workers: 1,
    process: (_n, signal) => {
      seen = signal;
      return new Promise((resolve) => signal.addEventListener('abort', () => resolve()));
    },
  });
  q.offer(1);
  q.offer(2);
  q.offer(3);
  await new Promise((r) => setImmediate(r));
  assert.equal(q.abort(), 2);
  assert.equal(seen?.aborted, true);
  await q.idle();
  assert.equal(q.pending, 0);
});

void test('WriteQueue: every worker waiting on the signal at once is no leak warning', async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error): void => void warnings.push(w.name);
  process.on('warning', onWarning);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const q = new WriteQueue<number>({
    capacity: 100,
    workers: 12,
    process: async (_n, signal) => {
      // A request and a retry sleep each listen on the signal.
      const listeners = [(): void => undefined, (): void => undefined];
      for (const l of listeners) signal.addEventListener('abort', l);
      await gate;
      for (const l of listeners) signal.removeEventListener('abort', l);
    },
  });
  for (let i = 0; i < 12; i++) q.offer(i);
  await new Promise((r) => setImmediate(r));
  release();
  await q.idle();
  await new Promise((r) => setImmediate(r));
  process.off('warning', onWarning);
  assert.deepEqual(warnings, []);
});
