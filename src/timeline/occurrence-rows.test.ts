import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventEntries, spreadEntries } from './occurrence-rows.js';
import { T0, testEvent, testOccurrence } from './test-events.js';

const secs = (xs: { ms: number }[]): number[] => xs.map((x) => (x.ms - T0) / 1000);

describe('eventEntries without history', () => {
  it('gives a single event one row that is not estimated', () => {
    const rows = eventEntries(testEvent({ name: 'a', object: 'p', reason: 'Started', first: 10 }), undefined);
    assert.deepEqual(rows.map((r) => [secs([r])[0], r.count, r.estimated]), [[10, 1, false]]);
  });
  it('keeps the first and last occurrence and spreads the rest between them, estimated', () => {
    const rows = eventEntries(testEvent({ name: 'a', object: 'p', reason: 'BackOff', first: 0, last: 100, count: 5 }), undefined);
    assert.deepEqual(secs(rows), [0, 25, 50, 75, 100]);
    assert.deepEqual(rows.map((r) => r.estimated), [false, true, true, true, false]);
    assert.equal(rows.reduce((n, r) => n + r.count, 0), 5);
  });
  it('bounds the rows of a large count, the counts still adding up', () => {
    const rows = eventEntries(testEvent({ name: 'a', object: 'p', reason: 'BackOff', first: 0, last: 3600, count: 4000 }), undefined, 12);
    assert.equal(rows.length, 12);
    assert.equal(rows.reduce((n, r) => n + r.count, 0), 4000);
  });
  it('lumps repeats with no time span into one estimated row', () => {
    const rows = eventEntries(testEvent({ name: 'a', object: 'p', reason: 'BackOff', first: 5, last: 5, count: 3 }), undefined);
    assert.deepEqual(rows.map((r) => [r.count, r.estimated]), [[3, true]]);
  });
});

describe('eventEntries with archive history', () => {
  it('gives each recorded change its own row at the time the event says, none estimated', () => {
    const e = testEvent({ name: 'a', object: 'p', reason: 'BackOff', first: 0, last: 90, count: 3, message: 'latest' });
    const rows = eventEntries(e, [testOccurrence(e, { at: 90, before: 2, after: 3 }), testOccurrence(e, { at: 0, before: 0, after: 1, message: 'first' }), testOccurrence(e, { at: 40, before: 1, after: 2 })]);
    assert.deepEqual(secs(rows), [0, 40, 90]);
    assert.deepEqual(rows.map((r) => [r.count, r.estimated, r.message]), [[1, false, 'first'], [1, false, 'latest'], [1, false, 'latest']]);
  });
  it('spreads what happened before the archive started watching', () => {
    const e = testEvent({ name: 'a', object: 'p', reason: 'BackOff', first: 0, last: 100, count: 5 });
    const rows = eventEntries(e, [testOccurrence(e, { at: 100, before: 4, after: 5 })]);
    assert.deepEqual(secs(rows), [0, 25, 50, 75, 100]);
    assert.deepEqual(rows.map((r) => r.estimated), [true, true, true, true, false]);
  });
  it('counts a change that jumped several repeats as one row standing for all of them', () => {
    const e = testEvent({ name: 'a', object: 'p', reason: 'BackOff', first: 0, last: 60, count: 7 });
    const rows = eventEntries(e, [testOccurrence(e, { at: 0, before: 0, after: 1 }), testOccurrence(e, { at: 60, before: 1, after: 7 })]);
    assert.deepEqual(rows.map((r) => r.count), [1, 6]);
  });
});

describe('spreadEntries', () => {
  it('places rows strictly between the ends, on whole seconds', () => {
    const e = testEvent({ name: 'a', object: 'p', reason: 'X', first: 0 });
    assert.deepEqual(secs(spreadEntries(e, T0, T0 + 10_000, 2, 12)), [3, 7]);
    assert.deepEqual(spreadEntries(e, T0, T0 + 10_000, 0, 12), []);
  });
});
