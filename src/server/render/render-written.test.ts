import assert from 'node:assert/strict';
import { afterEach, beforeEach, mock, test } from 'node:test';
import type { CoreEvent } from '../../api/index.js';
import { RenderedVersions } from './rendered-versions.js';
import { IDLE_CHECK_MS, WrittenRows } from './render-written.js';

/** written is a stored version as a create answers it, at resourceVersion `rv`. */
const written = (rv: number | string): CoreEvent => ({
  metadata: { name: `web-1.${rv}`, namespace: 'default', uid: `u-${rv}`, creationTimestamp: '2025-06-01T11:00:00Z', resourceVersion: String(rv) },
  involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-1', apiVersion: 'v1' },
  reason: 'BackOff',
  message: 'Back-off restarting failed container',
  source: { component: 'kubelet', host: 'node-1' },
  firstTimestamp: '2025-06-01T11:00:00Z',
  lastTimestamp: '2025-06-01T11:00:00Z',
  count: 1,
  type: 'Warning',
});

/** rowCached tells whether the render cache holds the Table row of `rv` (preparing it would render nothing). */
function rowCached(cache: RenderedVersions, rv: number): boolean {
  const before = cache.misses;
  cache.prepare('v1', [{ resourceVersion: rv, object: () => written(rv) }], { table: true, includeObject: 'Metadata' });
  return cache.misses === before;
}

/** setup is a WrittenRows over a fresh cache, its loop as busy as `load.busy` says, and the rows each batch rendered. */
function setup(maxBytes = 64 * 1024 * 1024): { rows: WrittenRows; cache: RenderedVersions; batches: number[]; load: { busy: number } } {
  const cache = new RenderedVersions(maxBytes);
  const batches: number[] = [];
  const load = { busy: 0 };
  const rows = new WrittenRows(cache, (n) => batches.push(n), () => load.busy);
  return { rows, cache, batches, load };
}

beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
afterEach(() => mock.timers.reset());

test('a write renders no row: the rows wait while the loop is busy and are rendered once it was idle', () => {
  const { rows, cache, batches, load } = setup();
  load.busy = 0.9;
  for (let rv = 1; rv <= 100; rv++) rows.add(written(rv));
  assert.deepEqual(batches, []);
  assert.equal(cache.misses, 0);
  for (let i = 0; i < 5; i++) mock.timers.tick(IDLE_CHECK_MS);
  assert.deepEqual(batches, [], 'busy at each check: still waiting');
  load.busy = 0.2;
  mock.timers.tick(IDLE_CHECK_MS);
  assert.deepEqual(batches, [100]);
  for (const rv of [1, 50, 100]) assert.ok(rowCached(cache, rv), `row ${rv}`);
});

test('flush renders the waiting rows at once, for a listing about to read them', () => {
  const { rows, cache, batches, load } = setup();
  load.busy = 1;
  for (let rv = 1; rv <= 10; rv++) rows.add(written(rv));
  rows.flush();
  assert.deepEqual(batches, [10]);
  assert.ok(rowCached(cache, 10));
  // Nothing is left for the idle check, and a flush with nothing waiting renders nothing.
  load.busy = 0;
  mock.timers.tick(IDLE_CHECK_MS);
  rows.flush();
  assert.deepEqual(batches, [10]);
});

test('past 4,096 waiting rows the oldest are left to the listing that asks for them', () => {
  const { rows, cache, batches, load } = setup();
  load.busy = 1;
  for (let rv = 1; rv <= 4_096 + 10; rv++) rows.add(written(rv));
  rows.flush();
  assert.deepEqual(batches, [4_096]);
  assert.ok(rowCached(cache, 11));
  assert.ok(rowCached(cache, 4_106));
  assert.ok(!rowCached(cache, 10));
});

test('a version without a resourceVersion, or a cache that keeps nothing, queues nothing', () => {
  const { rows, batches } = setup();
  for (const rv of ['', '0', 'x']) rows.add(written(rv));
  rows.flush();
  assert.deepEqual(batches, []);
  const none = setup(0);
  none.rows.add(written(1));
  none.rows.flush();
  assert.deepEqual(none.batches, []);
});
