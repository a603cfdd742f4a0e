import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CoreEvent } from '../api/index.js';
import { FakeClock } from '../internal/index.js';
import { aggregateByReason } from './aggregator.js';
import { Correlator } from './correlator.js';
import { getEventKey, getSpamKey } from './event-keys.js';

const base: CoreEvent = {
  metadata: { name: 'web-0.1', namespace: 'shop' },
  involvedObject: { kind: 'Pod', namespace: 'shop', name: 'web-0', uid: 'u', apiVersion: 'v1', fieldPath: 'spec.containers{app}' },
  source: { component: 'kubelet', host: 'n1' },
  type: 'Warning',
  reason: 'BackOff',
  message: 'm',
  reportingComponent: 'kubelet',
  reportingInstance: 'n1',
  firstTimestamp: '2025-01-01T00:00:00Z',
  lastTimestamp: '2025-01-01T00:00:00Z',
  count: 1,
};

void test('which fields each key includes', () => {
  const variants: [string, CoreEvent, { event: boolean; spam: boolean; aggregate: boolean }][] = [
    ['message', { ...base, message: 'other' }, { event: true, spam: false, aggregate: false }],
    ['reason', { ...base, reason: 'Other' }, { event: true, spam: false, aggregate: true }],
    ['type', { ...base, type: 'Normal' }, { event: true, spam: true, aggregate: true }],
    ['fieldPath', { ...base, involvedObject: { ...base.involvedObject, fieldPath: 'x' } }, { event: true, spam: false, aggregate: false }],
    ['uid', { ...base, involvedObject: { ...base.involvedObject, uid: 'v' } }, { event: true, spam: true, aggregate: true }],
    ['source.host', { ...base, source: { component: 'kubelet', host: 'n2' } }, { event: true, spam: true, aggregate: true }],
    ['reportingInstance', { ...base, reportingInstance: 'x' }, { event: false, spam: false, aggregate: true }],
    ['resourceVersion', { ...base, involvedObject: { ...base.involvedObject, resourceVersion: '9' } }, { event: false, spam: false, aggregate: false }],
  ];
  for (const [field, v, want] of variants) {
    assert.equal(getEventKey(v) !== getEventKey(base), want.event, `event key and ${field}`);
    assert.equal(getSpamKey(v) !== getSpamKey(base), want.spam, `spam key and ${field}`);
    assert.equal(aggregateByReason(v)[0] !== aggregateByReason(base)[0], want.aggregate, `aggregate key and ${field}`);
  }
});

void test('correlator: repeats count up, skipped events still count, options override defaults', async () => {
  const clock = new FakeClock();
  const c = new Correlator({ clock, burst: 2, qps: 1 });
  const r1 = c.correlate({ ...base });
  assert.deepEqual([r1.skip, r1.repeat, r1.patch], [false, false, undefined]);
  const r2 = c.correlate({ ...base, lastTimestamp: '2025-01-01T00:00:01Z' });
  assert.deepEqual([r2.skip, r2.repeat, r2.event.count, r2.event.metadata.name], [false, true, 2, 'web-0.1']);
  assert.deepEqual(r2.patch, { count: 2, lastTimestamp: '2025-01-01T00:00:01Z', message: 'm' });
  const r3 = c.correlate({ ...base, metadata: { name: 'web-0.2', namespace: 'shop' } });
  assert.equal(r3.skip, true);
  await clock.advance(1000);
  const r4 = c.correlate({ ...base, metadata: { name: 'web-0.3', namespace: 'shop' } });
  assert.deepEqual([r4.skip, r4.event.count, r4.event.metadata.name], [false, 4, 'web-0.1']);
});

void test('an empty message leaves message out of the patch', () => {
  const c = new Correlator({ clock: new FakeClock() });
  c.correlate({ ...base, message: '' });
  assert.deepEqual(c.correlate({ ...base, message: '' }).patch, { count: 2, lastTimestamp: '2025-01-01T00:00:00Z' });
});

void test('updateState takes the server name and resourceVersion without setting the count back', () => {
  const c = new Correlator({ clock: new FakeClock() });
  c.correlate({ ...base });
  c.correlate({ ...base });
  c.correlate({ ...base });
  c.updateState({ ...base, metadata: { name: 'web-0.1', namespace: 'shop', resourceVersion: '41' }, count: 1 });
  const r = c.correlate({ ...base });
  assert.equal(r.event.count, 4);
  assert.equal(r.event.metadata.resourceVersion, '41');
});

void test('custom aggregation: key and message functions and maxEvents', () => {
  const c = new Correlator({
    clock: new FakeClock(),
    maxEvents: 2,
    keyFunc: (e) => [e.reason ?? '', e.message ?? ''],
    messageFunc: (e) => `many: ${e.message}`,
  });
  assert.equal(c.correlate({ ...base, message: 'a' }).combined, false);
  const r = c.correlate({ ...base, message: 'b', involvedObject: { ...base.involvedObject, name: 'other' } });
  assert.equal(r.combined, true);
  assert.equal(r.event.message, 'many: b');
});
