import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CoreEvent } from '../api/index.js';
import { newAlreadyExists } from '../api/index.js';
import { CollectingLogger, FakeClock, FAKE_CLOCK_START } from '../internal/index.js';
import { createLegacyEventBroadcaster, type LegacyEventBroadcasterOptions } from './legacy-broadcaster.js';
import { MemoryEventSink } from './memory-sink.js';

const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', namespace: 'shop', uid: 'u-1' } };

function setup(extra: Partial<LegacyEventBroadcasterOptions> = {}) {
  const clock = new FakeClock();
  const sink = new MemoryEventSink();
  const logger = new CollectingLogger();
  const broadcaster = createLegacyEventBroadcaster({ sink, clock, logger, random: () => 0.5, ...extra });
  const recorder = broadcaster.newRecorder({ source: { component: 'my-operator', host: 'node-1' } });
  const emit = (message = 'Back-off pulling image', reason = 'BackOff'): void =>
    recorder.event({ involvedObject: pod, type: 'Warning', reason, message });
  const stored = (): CoreEvent[] => [...sink.coreV1.objects.values()];
  return { clock, sink, logger, broadcaster, recorder, emit, stored };
}

void test('12 identical events: one create, then PATCHes of count, lastTimestamp and message; count 12 stored', async () => {
  const { clock, sink, broadcaster, emit, stored } = setup();
  emit();
  for (let i = 1; i < 12; i++) {
    await clock.advance(1000);
    emit();
  }
  await broadcaster.idle();
  const nanos = (BigInt(FAKE_CLOCK_START) * 1_000_000n).toString(16);
  assert.deepEqual(sink.calls[0]!.body, {
    kind: 'Event',
    apiVersion: 'v1',
    metadata: { name: `web-0.${nanos}`, namespace: 'shop' },
    involvedObject: { kind: 'Pod', namespace: 'shop', name: 'web-0', uid: 'u-1', apiVersion: 'v1' },
    reason: 'BackOff',
    message: 'Back-off pulling image',
    source: { component: 'my-operator', host: 'node-1' },
    firstTimestamp: '2025-01-01T00:00:00Z',
    lastTimestamp: '2025-01-01T00:00:00Z',
    count: 1,
    type: 'Warning',
    eventTime: null,
    reportingComponent: 'my-operator',
    reportingInstance: 'node-1',
  });
  assert.deepEqual(
    sink.calls.map((c) => c.verb),
    ['create', ...Array.from({ length: 11 }, () => 'patch')],
  );
  assert.ok(sink.calls.every((c) => c.name === `web-0.${nanos}`));
  assert.deepEqual(sink.calls[11]!.body, { count: 12, lastTimestamp: '2025-01-01T00:00:11Z', message: 'Back-off pulling image' });
  assert.equal(stored().length, 1);
  assert.equal(stored()[0]!.count, 12);
  assert.equal(stored()[0]!.firstTimestamp, '2025-01-01T00:00:00Z');
  const k = broadcaster.counters;
  assert.deepEqual([k.recorded, k.aggregated, k.written], [12, 11, 12]);
});

void test('a burst written before the first create returns still ends at the right count', async () => {
  const { broadcaster, emit, stored } = setup();
  for (let i = 0; i < 12; i++) emit();
  await broadcaster.idle();
  assert.equal(stored().length, 1);
  assert.equal(stored()[0]!.count, 12);
});

void test('aggregation: the 10th distinct message in 600 s becomes a combined event, later ones patch it', async () => {
  const { clock, sink, broadcaster, emit, stored } = setup();
  for (let i = 1; i <= 11; i++) {
    emit(`pull failed: attempt ${i}`);
    await clock.advance(10_000);
  }
  await broadcaster.idle();
  assert.deepEqual(
    sink.calls.map((c) => c.verb),
    [...Array.from({ length: 10 }, () => 'create'), 'patch'],
  );
  const combined = sink.calls[9]!.body as CoreEvent;
  assert.equal(combined.message, '(combined from similar events): pull failed: attempt 10');
  assert.equal(combined.reportingComponent, '', 'the combined event does not copy the reporting fields');
  assert.deepEqual(sink.calls[10]!.body, {
    count: 2,
    lastTimestamp: '2025-01-01T00:01:40Z',
    message: '(combined from similar events): pull failed: attempt 11',
  });
  assert.equal(stored().length, 10);
});

void test('aggregation window: distinct messages more than 600 s apart never combine', async () => {
  const { clock, sink, broadcaster, emit } = setup();
  for (let i = 1; i <= 12; i++) {
    emit(`message ${i}`);
    await clock.advance(601_000);
  }
  await broadcaster.idle();
  assert.ok(sink.calls.every((c) => !String((c.body as CoreEvent).message).startsWith('(combined')));
});

void test('spam filter: the 26th event of a burst is held back, and its count reaches the server later', async () => {
  const { clock, sink, broadcaster, emit, stored } = setup();
  for (let i = 0; i < 30; i++) emit();
  await broadcaster.idle();
  assert.equal(sink.calls.length, 25);
  assert.equal(stored()[0]!.count, 25);
  assert.equal(broadcaster.counters.filtered, 5);
  await clock.advance(299_000);
  emit();
  await broadcaster.idle();
  assert.equal(sink.calls.length, 25, 'no token yet');
  await clock.advance(1_000);
  emit();
  await broadcaster.idle();
  assert.equal(sink.calls.length, 26);
  assert.equal(stored()[0]!.count, 32);
});

void test('spam filter key is source, object and type: other reasons share the bucket', async () => {
  const { sink, broadcaster, emit } = setup();
  for (let i = 0; i < 30; i++) emit('m', `Reason${i}`);
  await broadcaster.idle();
  assert.equal(sink.calls.length, 25);
});

void test('a PATCH of an expired event falls back to create under the same name with the count', async () => {
  const { sink, broadcaster, emit, stored } = setup();
  emit();
  await broadcaster.idle();
  const name = sink.calls[0]!.name;
  sink.coreV1.objects.clear();
  emit();
  await broadcaster.idle();
  assert.deepEqual(sink.summary().slice(1), [`patch shop/${name}`, `create shop/${name}`]);
  assert.equal(stored()[0]!.count, 2);
});

void test('AlreadyExists is final for core events and logged quietly', async () => {
  const { sink, broadcaster, emit, logger } = setup();
  sink.fault = (c) => newAlreadyExists({ group: '', resource: 'events' }, c.name);
  emit();
  await broadcaster.idle();
  assert.equal(sink.calls.length, 1);
  assert.equal(broadcaster.counters.failed, 1);
  assert.ok(logger.messages('debug').includes('Server rejected event (will not retry!)'));
  assert.equal(logger.messages('error').length, 0);
});

void test('retries: the first sleep is a random fraction of 10 s, later ones 10 s', async () => {
  const { clock, sink, broadcaster, emit } = setup();
  let failures = 3;
  sink.fault = () => (failures-- > 0 ? new Error('ECONNREFUSED') : undefined);
  emit();
  await clock.advance(0);
  assert.equal(sink.calls.length, 1);
  await clock.advance(4_999);
  assert.equal(sink.calls.length, 1);
  await clock.advance(1); // 0.5 × 10 s
  assert.equal(sink.calls.length, 2);
  await clock.advance(10_000);
  assert.equal(sink.calls.length, 3);
  await clock.advance(10_000);
  await broadcaster.idle();
  assert.equal(sink.calls.length, 4);
  assert.equal(broadcaster.counters.retried, 3);
  assert.equal(broadcaster.counters.written, 1);
});

void test('writes go out one at a time in order; shutdown drains them', async () => {
  const { sink, broadcaster, recorder, stored } = setup();
  let inFlight = 0;
  let maxInFlight = 0;
  sink.fault = () => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    return Promise.resolve().then(() => inFlight--);
  };
  for (let i = 0; i < 5; i++) recorder.event({ involvedObject: { ...pod, metadata: { name: `p${i}` } }, type: 'Normal', reason: 'Started', message: 'ok' });
  await broadcaster.shutdown();
  assert.equal(maxInFlight, 1);
  assert.equal(stored().length, 5);
  assert.equal(stored()[0]!.metadata.namespace, 'default');
});
