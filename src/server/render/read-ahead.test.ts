import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import type { ListedVersion } from '../../storage/index.js';
import { ReadAhead } from './read-ahead.js';

const versions = (n: number): ListedVersion[] =>
  Array.from({ length: n }, (_, i) => ({
    resourceVersion: i + 1,
    object: () => {
      throw new Error('not read');
    },
  }));

async function settled(ahead: ReadAhead): Promise<void> {
  for (let i = 0; i < 1000 && ahead.inFlight > 0; i++) await tick();
  assert.equal(ahead.inFlight, 0);
}

void test('a read-ahead renders the whole page in slices, after the current request', async () => {
  const ahead = new ReadAhead();
  const slices: number[] = [];
  ahead.start('t1', () => Promise.resolve(versions(120)), (s) => slices.push(s.length));
  assert.deepEqual(slices, [], 'nothing is rendered before the answer in hand is sent');
  await settled(ahead);
  assert.deepEqual(slices, [50, 50, 20]);
  // The page's request then knows it was read ahead, once.
  assert.equal(ahead.claim('t1'), true);
  assert.equal(ahead.claim('t1'), false);
  assert.equal(ahead.claim('other'), false);
  assert.equal(ahead.claim(undefined), false);
});

void test('the request for the page stops its read-ahead', async () => {
  const ahead = new ReadAhead();
  const slices: number[] = [];
  ahead.start('t1', () => Promise.resolve(versions(500)), (s) => {
    slices.push(s.length);
    if (slices.length === 2) assert.equal(ahead.claim('t1'), true);
  });
  await settled(ahead);
  assert.deepEqual(slices, [50, 50]);
});

void test('at most two pages are read ahead at once, and a page once', async () => {
  const ahead = new ReadAhead();
  const reads: string[] = [];
  for (const t of ['a', 'a', 'b', 'c']) {
    ahead.start(t, () => {
      reads.push(t);
      return Promise.resolve(versions(10));
    }, () => {});
  }
  assert.equal(ahead.inFlight, 2);
  await settled(ahead);
  assert.deepEqual(reads, ['a', 'b']);
  assert.equal(ahead.claim('c'), false);
});

void test('a failed read or render is dropped and frees its place', async () => {
  const ahead = new ReadAhead();
  ahead.start('bad-read', () => Promise.reject(new Error('expired')), () => assert.fail('nothing to render'));
  let rendered = 0;
  ahead.start('bad-render', () => Promise.resolve(versions(200)), () => {
    rendered++;
    throw new Error('compacted');
  });
  await settled(ahead);
  assert.equal(rendered, 1);
  const slices: number[] = [];
  ahead.start('good', () => Promise.resolve(versions(60)), (s) => slices.push(s.length));
  await settled(ahead);
  assert.deepEqual(slices, [50, 10]);
});
