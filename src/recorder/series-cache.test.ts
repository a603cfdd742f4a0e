import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EventsV1Event } from '../api/index.js';
import { MISS, SeriesCache } from './series-cache.js';

const base: EventsV1Event = { metadata: { name: 'web.1', namespace: 'default' }, eventTime: '2025-01-01T00:00:00.000000Z', reason: 'R' };

void test('first occurrence creates, second starts a series, later ones only count', () => {
  const c = new SeriesCache({ maxEntries: 10, onEvictUnwritten: () => assert.fail('nothing is evicted') });
  assert.equal(c.observe('k', 1000), MISS);
  assert.deepEqual(c.insert('k', 1000, { ...base }), base);
  const second = c.observe('k', 2000);
  assert.ok(second !== MISS);
  assert.deepEqual(second?.series, { count: 2, lastObservedTime: '1970-01-01T00:00:02.000000Z' });
  assert.equal(c.observe('k', 3000), undefined);
  assert.equal(c.observe('k', 4000), undefined);
  const entry = c.peek('k')!;
  assert.equal(entry.count, 4);
  assert.equal(entry.lastObservedMs, 4000);
  assert.equal(entry.event.series, undefined, 'the cached first occurrence is not changed by snapshots');
});

void test('deleteIfUnchanged keeps an entry that moved meanwhile', () => {
  const c = new SeriesCache({ maxEntries: 10, onEvictUnwritten: () => {} });
  c.insert('k', 0, { ...base });
  const v = c.peek('k')!.version;
  c.observe('k', 1);
  assert.equal(c.deleteIfUnchanged('k', v), false);
  assert.equal(c.deleteIfUnchanged('k', c.peek('k')!.version), true);
  assert.equal(c.size, 0);
});

void test('evicting a series with an unwritten count hands it back', () => {
  const evicted: number[] = [];
  const c = new SeriesCache({ maxEntries: 2, onEvictUnwritten: (e) => evicted.push(e.count) });
  c.insert('a', 0, { ...base });
  c.observe('a', 1);
  c.observe('a', 2);
  c.insert('b', 10, { ...base });
  c.insert('c', 11, { ...base }); // evicts a (count 3, written 2)
  c.insert('d', 12, { ...base }); // evicts b (singleton: nothing to write)
  assert.deepEqual(evicted, [3]);
});
