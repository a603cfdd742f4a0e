import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CoreEvent } from '../api/index.js';
import { decompressEvent, eventEntries, spreadEntries } from './occurrence-rows.js';
import type { OccurrenceEntry } from './occurrence-rows.js';
import { T0, iso, testEvent, testOccurrence } from '../../test/support/timeline-events.js';

const secs = (xs: { ms: number }[]): number[] => xs.map((x) => (x.ms - T0) / 1000);
/** shape is each row as [second, count, estimated]. */
const shape = (xs: OccurrenceEntry[]): [number, number, boolean][] => xs.map((x) => [(x.ms - T0) / 1000, x.count, x.estimated]);
const total = (xs: OccurrenceEntry[]): number => xs.reduce((n, x) => n + x.count, 0);
const micro = (s: number): string => new Date(T0 + s * 1000).toISOString().replace('Z', '000Z');

/** seriesEvent is an events.k8s.io/v1 event as core/v1 reads it: eventTime and series, no first/last timestamps. */
function seriesEvent(o: { first: number; last?: number; count?: number }): CoreEvent {
  return {
    metadata: { name: 'sched', namespace: 'default', uid: 'uid-sched', creationTimestamp: iso(o.first) },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' },
    reason: 'FailedScheduling',
    message: '0/3 nodes are available: 3 Insufficient cpu.',
    type: 'Warning',
    source: {},
    firstTimestamp: null,
    lastTimestamp: null,
    eventTime: micro(o.first),
    ...(o.count !== undefined ? { series: { count: o.count, lastObservedTime: micro(o.last ?? o.first) } } : {}),
  };
}

describe('decompressing an event without history', () => {
  it('gives a single event one row that is not estimated', () => {
    const rows = eventEntries(testEvent({ name: 'a', object: 'p', reason: 'Started', first: 10 }), undefined);
    assert.deepEqual(shape(rows), [[10, 1, false]]);
  });
  it('keeps the first and last occurrence and spreads the rest between them, estimated and bounded by them', () => {
    const rows = eventEntries(testEvent({ name: 'a', object: 'p', reason: 'BackOff', first: 0, last: 100, count: 5 }), undefined);
    assert.deepEqual(shape(rows), [[0, 1, false], [25, 1, true], [50, 1, true], [75, 1, true], [100, 1, false]]);
    assert.ok(rows.filter((r) => r.estimated).every((r) => r.earliestMs === T0 && r.latestMs === T0 + 100_000));
  });
  it('bounds the rows a gap is spread over, the counts still adding up', () => {
    const rows = eventEntries(testEvent({ name: 'a', object: 'p', reason: 'BackOff', first: 0, last: 3600, count: 4000 }), undefined, 12);
    assert.equal(rows.filter((r) => r.estimated).length, 12);
    assert.equal(rows.length, 14);
    assert.equal(total(rows), 4000);
  });
  it('gives the repeats of one instant one estimated row at that instant', () => {
    const rows = eventEntries(testEvent({ name: 'a', object: 'p', reason: 'BackOff', first: 5, last: 5, count: 3 }), undefined);
    assert.deepEqual(shape(rows), [[5, 1, false], [5, 1, true], [5, 1, false]]);
  });
  it('decompresses an events.k8s.io series from eventTime to series.lastObservedTime', () => {
    const rows = eventEntries(seriesEvent({ first: 0, last: 90, count: 4 }), undefined);
    assert.deepEqual(shape(rows), [[0, 1, false], [30, 1, true], [60, 1, true], [90, 1, false]]);
  });
  it('starts an event without a first time at its creation, estimated: the first occurrence was no later', () => {
    const e = { ...testEvent({ name: 'a', object: 'p', reason: 'BackOff', first: 0, last: 100, count: 3 }), firstTimestamp: '0001-01-01T00:00:00Z' };
    e.metadata.creationTimestamp = iso(40);
    const rows = eventEntries(e, undefined);
    assert.deepEqual(shape(rows), [[40, 1, true], [70, 1, true], [100, 1, false]]);
    assert.deepEqual([rows[0]!.earliestMs, rows[0]!.latestMs], [undefined, T0 + 40_000]);
  });
  it('lumps repeats with no earlier time into one estimated row at the first time after them', () => {
    const e = { ...testEvent({ name: 'a', object: 'p', reason: 'BackOff', first: 0, last: 100, count: 3 }), firstTimestamp: null };
    const rows = eventEntries(e, undefined);
    assert.deepEqual(shape(rows), [[100, 2, true], [100, 1, false]]);
    assert.deepEqual([rows[0]!.earliestMs, rows[0]!.latestMs], [undefined, T0 + 100_000]);
  });
  it('places nothing of an event with no time at all, and says how many occurrences that leaves undated', () => {
    const e = { ...testEvent({ name: 'a', object: 'p', reason: 'BackOff', first: 0, count: 3 }), firstTimestamp: null, lastTimestamp: null };
    assert.deepEqual(decompressEvent(e, undefined), { entries: [], undated: 3 });
  });
});

describe('decompressing an event with archive history', () => {
  it('gives each recorded change its own row at the time the event says, none estimated', () => {
    const e = testEvent({ name: 'a', object: 'p', reason: 'BackOff', first: 0, last: 90, count: 3, message: 'latest' });
    const rows = eventEntries(e, [testOccurrence(e, { at: 90, before: 2, after: 3 }), testOccurrence(e, { at: 0, before: 0, after: 1, message: 'first' }), testOccurrence(e, { at: 40, before: 1, after: 2 })]);
    assert.deepEqual(secs(rows), [0, 40, 90]);
    assert.deepEqual(rows.map((r) => [r.count, r.estimated, r.message]), [[1, false, 'first'], [1, false, 'latest'], [1, false, 'latest']]);
  });
  it('starts an event the archive first saw already counted at its first time (count 14, first 40 min, last 2 min ago)', () => {
    const e = testEvent({ name: 'a', object: 'p', reason: 'BackOff', type: 'Warning', first: 0, last: 38 * 60, count: 14 });
    const rows = eventEntries(e, [testOccurrence(e, { at: 38 * 60, before: 0, after: 14 })]);
    assert.deepEqual([rows[0]!.ms, rows[0]!.estimated], [T0, false]);
    assert.deepEqual([rows.at(-1)!.ms, rows.at(-1)!.estimated, rows.at(-1)!.count], [T0 + 38 * 60_000, false, 1]);
    assert.equal(rows.length, 14);
    assert.ok(rows.slice(1, -1).every((r) => r.estimated && r.count === 1 && r.ms > T0 && r.ms < T0 + 38 * 60_000));
  });
  it('spreads what happened before the archive started watching between the first time and the first change', () => {
    const e = testEvent({ name: 'a', object: 'p', reason: 'BackOff', first: 0, last: 100, count: 5 });
    const rows = eventEntries(e, [testOccurrence(e, { at: 100, before: 4, after: 5 })]);
    assert.deepEqual(shape(rows), [[0, 1, false], [25, 1, true], [50, 1, true], [75, 1, true], [100, 1, false]]);
  });
  it('spreads the repeats a change folds between the previous known time and its own last-seen time', () => {
    const e = testEvent({ name: 'a', object: 'p', reason: 'BackOff', first: 0, last: 60, count: 7 });
    const rows = eventEntries(e, [testOccurrence(e, { at: 0, before: 0, after: 1 }), testOccurrence(e, { at: 60, before: 1, after: 7 })]);
    assert.deepEqual(shape(rows), [[0, 1, false], [10, 1, true], [20, 1, true], [30, 1, true], [40, 1, true], [50, 1, true], [60, 1, false]]);
    assert.ok(rows.filter((r) => r.estimated).every((r) => r.earliestMs === T0 && r.latestMs === T0 + 60_000));
  });
  it('spreads each 30-minute refresh of a series within its own gap', () => {
    const e = seriesEvent({ first: 0, last: 3600, count: 61 });
    const at = (s: number, before: number, after: number) => ({ ...testOccurrence(e, { at: s, before, after }), lastSeen: micro(s) });
    const rows = eventEntries(e, [at(0, 0, 1), at(60, 1, 2), at(1800, 2, 31), at(3600, 31, 61)]);
    assert.equal(total(rows), 61);
    assert.deepEqual(rows.filter((r) => !r.estimated).map((r) => (r.ms - T0) / 1000), [0, 60, 1800, 3600]);
    const gap = rows.filter((r) => r.estimated && r.ms < T0 + 1800_000);
    assert.equal(total(gap), 28);
    assert.ok(gap.every((r) => r.ms > T0 + 60_000 && r.earliestMs === T0 + 60_000 && r.latestMs === T0 + 1800_000));
  });
  it('spreads the changes a 410 gap hid between the changes either side of it', () => {
    const e = testEvent({ name: 'a', object: 'p', reason: 'BackOff', first: 0, last: 300, count: 8 });
    const rows = eventEntries(e, [testOccurrence(e, { at: 0, before: 0, after: 1 }), testOccurrence(e, { at: 300, before: 5, after: 8 })]);
    assert.equal(total(rows), 8);
    assert.deepEqual(shape(rows.filter((r) => !r.estimated)), [[0, 1, false], [300, 1, false]]);
    assert.equal(total(rows.filter((r) => r.estimated)), 6);
  });
  it('stands a change with no last-seen time at the time it was observed, estimated, that being the latest it can have been', () => {
    const e = { ...testEvent({ name: 'a', object: 'p', reason: 'BackOff', first: 0, count: 2 }), lastTimestamp: null };
    const rows = eventEntries(e, [testOccurrence(e, { at: 0, before: 0, after: 1 }), { ...testOccurrence(e, { at: 50, before: 1, after: 2 }), lastSeen: null }]);
    assert.deepEqual(shape(rows), [[0, 1, false], [50.25, 1, true]]);
    assert.deepEqual([rows[1]!.earliestMs, rows[1]!.latestMs], [T0, T0 + 50_250]);
  });
  it('keeps repeats the history recorded after the event was read', () => {
    const e = testEvent({ name: 'a', object: 'p', reason: 'BackOff', first: 0, last: 10, count: 2 });
    const rows = eventEntries(e, [testOccurrence(e, { at: 0, before: 0, after: 1 }), testOccurrence(e, { at: 10, before: 1, after: 2 }), testOccurrence(e, { at: 20, before: 2, after: 3 })]);
    assert.deepEqual(shape(rows), [[0, 1, false], [10, 1, false], [20, 1, false]]);
  });
  it('reads a change listed twice once', () => {
    const e = testEvent({ name: 'a', object: 'p', reason: 'BackOff', first: 0, last: 10, count: 2 });
    const o = testOccurrence(e, { at: 10, before: 1, after: 2 });
    assert.deepEqual(shape(eventEntries(e, [testOccurrence(e, { at: 0, before: 0, after: 1 }), o, o])), [[0, 1, false], [10, 1, false]]);
  });
});

describe('spreadEntries', () => {
  it('places rows strictly between the ends, on whole seconds', () => {
    const e = testEvent({ name: 'a', object: 'p', reason: 'X', first: 0 });
    assert.deepEqual(secs(spreadEntries(e, T0, T0 + 10_000, 2, 12)), [3, 7]);
    assert.deepEqual(spreadEntries(e, T0, T0 + 10_000, 0, 12), []);
  });
  it('never rounds a row out of its span', () => {
    const e = testEvent({ name: 'a', object: 'p', reason: 'X', first: 0 });
    const rows = spreadEntries(e, T0 + 200, T0 + 900, 5, 12);
    assert.deepEqual(rows.map((r) => [r.ms - T0, r.count]), [[900, 5]]);
  });
});
