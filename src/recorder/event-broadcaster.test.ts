import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EventsV1Event } from '../api/index.js';
import { failureStatus, newAlreadyExists, newInternalError, newTooManyRequests, StatusError } from '../api/index.js';
import { CollectingLogger, FakeClock, FAKE_CLOCK_START } from '../internal/index.js';
import { createEventBroadcaster, type EventBroadcasterOptions } from './event-broadcaster.js';
import { MemoryEventSink } from './memory-sink.js';
import type { EventType } from './types.js';

const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', namespace: 'shop', uid: 'u-1', resourceVersion: '7' } };

function setup(extra: Partial<EventBroadcasterOptions> = {}) {
  const clock = new FakeClock();
  const sink = new MemoryEventSink();
  const logger = new CollectingLogger();
  const broadcaster = createEventBroadcaster({ sink, clock, logger, hostname: 'node-1', random: () => 0, ...extra });
  const recorder = broadcaster.newRecorder({ reportingController: 'example.com/op' });
  const emit = (note = 'tag v2 not found', type: EventType = 'Warning'): void =>
    recorder.event({ regarding: pod, type, reason: 'ImageNotFound', action: 'Reconcile', note });
  const stored = (): EventsV1Event[] => [...sink.eventsV1.objects.values()];
  return { clock, sink, logger, broadcaster, recorder, emit, stored };
}

void test('first occurrence is created with the events.k8s.io/v1 shape', async () => {
  const { clock, sink, broadcaster, emit } = setup();
  emit();
  await broadcaster.idle();
  assert.equal(sink.calls.length, 1);
  const call = sink.calls[0]!;
  assert.equal(call.verb, 'create');
  assert.equal(call.namespace, 'shop');
  const nanos = BigInt(FAKE_CLOCK_START) * 1_000_000n;
  assert.deepEqual(call.body, {
    kind: 'Event',
    apiVersion: 'events.k8s.io/v1',
    metadata: { name: `web-0.${nanos.toString(16)}`, namespace: 'shop' },
    eventTime: '2025-01-01T00:00:00.000000Z',
    reportingController: 'example.com/op',
    reportingInstance: 'example.com/op-node-1',
    action: 'Reconcile',
    reason: 'ImageNotFound',
    regarding: { kind: 'Pod', namespace: 'shop', name: 'web-0', uid: 'u-1', apiVersion: 'v1', resourceVersion: '7' },
    note: 'tag v2 not found',
    type: 'Warning',
  });
  assert.equal(broadcaster.counters.written, 1);
  assert.equal(clock.now(), FAKE_CLOCK_START);
});

void test('series: create, PATCH with series.count 2, memory only, then final count 6 minutes after the last repeat', async () => {
  const { clock, sink, broadcaster, emit, stored } = setup();
  emit();
  for (let i = 1; i <= 9; i++) {
    await clock.advance(1000);
    emit(`note ${i}`); // the note is not part of the identity
  }
  await broadcaster.idle();
  assert.deepEqual(
    sink.calls.map((c) => c.verb),
    ['create', 'patch'],
  );
  assert.deepEqual(sink.calls[1]!.body, { series: { count: 2, lastObservedTime: '2025-01-01T00:00:01.000000Z' } });
  assert.equal(stored()[0]!.series?.count, 2);
  assert.equal(stored()[0]!.note, 'tag v2 not found', 'a series keeps its first note');
  // The finish check runs every 6 minutes from the start; the one at 6 min is too early (last repeat at 9 s).
  await clock.advance(6 * 60_000 - 9_000);
  assert.equal(sink.calls.length, 2);
  await clock.advance(6 * 60_000);
  assert.equal(sink.calls.length, 3);
  assert.deepEqual(sink.calls[2]!.body, { series: { count: 10, lastObservedTime: '2025-01-01T00:00:09.000000Z' } });
  assert.equal(stored()[0]!.series?.count, 10);
  // The series left the cache: the next occurrence starts a new event.
  emit();
  await broadcaster.idle();
  assert.equal(sink.calls[3]!.verb, 'create');
  assert.equal(stored().length, 2);
  const c = broadcaster.counters;
  assert.deepEqual([c.recorded, c.aggregated, c.written], [11, 9, 4]);
});

void test('an ongoing series is refreshed every 30 minutes', async () => {
  const { clock, sink, emit, stored } = setup();
  emit();
  for (let minute = 1; minute <= 40; minute++) {
    await clock.advance(60_000);
    emit();
  }
  const patches = sink.calls.filter((c) => c.verb === 'patch').map((c) => (c.body as EventsV1Event).series?.count);
  // second occurrence, then the 30-minute refresh, which runs before the occurrence of minute 30.
  assert.deepEqual(patches, [2, 30]);
  await clock.advance(8 * 60_000);
  assert.equal(stored()[0]!.series?.count, 41);
  assert.equal(sink.calls.length, 4);
});

void test('identity: regarding resourceVersion, action and type split series; note does not', async () => {
  const { sink, broadcaster, recorder } = setup();
  const base = { regarding: pod, type: 'Normal' as const, reason: 'Synced', action: 'Reconcile' };
  recorder.event({ ...base, note: 'a' });
  recorder.event({ ...base, note: 'b' });
  recorder.event({ ...base, regarding: { ...pod, metadata: { ...pod.metadata, resourceVersion: '8' } } });
  recorder.event({ ...base, action: 'Delete' });
  recorder.event({ ...base, type: 'Warning' });
  recorder.event({ ...base, related: { kind: 'Node', name: 'n1', apiVersion: 'v1' } });
  await broadcaster.idle();
  assert.deepEqual(
    sink.calls.map((c) => c.verb),
    ['create', 'patch', 'create', 'create', 'create', 'create'],
  );
});

void test('a type other than Normal/Warning is dropped with a logged error; so is an unreferenceable object', async () => {
  const { sink, logger, broadcaster, recorder } = setup();
  recorder.event({ regarding: pod, type: 'Critical' as EventType, reason: 'Boom', action: 'Reconcile' });
  recorder.event({ regarding: { metadata: { name: 'x' } }, type: 'Normal', reason: 'Boom', action: 'Reconcile' });
  recorder.event(null as never);
  await broadcaster.idle();
  assert.equal(sink.calls.length, 0);
  assert.ok(logger.messages('error').includes('Unsupported event type'));
  assert.ok(logger.messages('error').includes('Could not construct reference, will not report event'));
  assert.equal(broadcaster.counters.rejected, 2);
  assert.equal(broadcaster.counters.recorded, 0);
});

void test('field problems are warned about once per call site, and the event is still sent', async () => {
  const { sink, logger, broadcaster, recorder } = setup();
  for (let i = 0; i < 3; i++) recorder.event({ regarding: pod, type: 'Normal', reason: 'not camel', action: 'Reconcile', note: 'x'.repeat(1025) });
  await broadcaster.idle();
  assert.deepEqual(logger.messages('warn'), ['Event reason is not UpperCamelCase', 'Event note is 1025 bytes, the limit is 1024']);
  assert.equal(sink.calls.length, 2);
});

void test('a cluster-scoped object records into default; a bad name falls back to a UUID', async () => {
  const { sink, broadcaster, recorder } = setup();
  recorder.event({ regarding: { kind: 'Node', name: 'Node_A', apiVersion: 'v1' }, type: 'Normal', reason: 'Up', action: 'Check' });
  await broadcaster.idle();
  assert.equal(sink.calls[0]!.namespace, 'default');
  assert.match(sink.calls[0]!.name, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

void test('series PATCH on a vanished event falls back to create with the series; AlreadyExists on it is retried', async () => {
  const { clock, sink, broadcaster, emit, stored } = setup();
  emit();
  await broadcaster.idle();
  sink.eventsV1.objects.clear(); // the server's TTL removed it
  let conflicts = 1;
  sink.fault = (call) => {
    if (call.verb === 'create' && conflicts > 0) {
      conflicts--;
      // Someone created it meanwhile.
      return newAlreadyExists({ group: 'events.k8s.io', resource: 'events' }, call.name);
    }
    return undefined;
  };
  emit();
  await clock.advance(0);
  assert.deepEqual(
    sink.calls.map((c) => c.verb),
    ['create', 'patch', 'create'],
  );
  await clock.advance(10_000); // jittered 10 s with random() = 0
  await broadcaster.idle();
  assert.deepEqual(
    sink.calls.map((c) => c.verb),
    ['create', 'patch', 'create', 'patch', 'create'],
  );
  assert.equal(stored()[0]!.series?.count, 2);
  assert.equal(broadcaster.counters.retried, 1);
});

void test('retries: transport errors and 5xx are retried with jitter, 429 waits its Retry-After, a final Status is not retried', async (t) => {
  const cases: { name: string; faults: Error[]; attempts: number; waitedMs: number; written: number; failed: number }[] = [
    { name: 'connection reset twice', faults: [new Error('ECONNRESET'), new Error('ECONNRESET')], attempts: 3, waitedMs: 2 * 12_500, written: 1, failed: 0 },
    { name: '500 then ok', faults: [newInternalError('etcd')], attempts: 2, waitedMs: 12_500, written: 1, failed: 0 },
    { name: '429 with Retry-After 3', faults: [newTooManyRequests('slow down', 3)], attempts: 2, waitedMs: 3_000, written: 1, failed: 0 },
    { name: '403 is final', faults: [new StatusError(failureStatus(403, 'Forbidden', 'events is forbidden'))], attempts: 1, waitedMs: 0, written: 0, failed: 1 },
    { name: '12 tries then give up', faults: Array.from({ length: 20 }, () => new Error('EPIPE')), attempts: 12, waitedMs: 11 * 12_500, written: 0, failed: 1 },
    // A server shedding load for 30 s: each try waits out 10 answers with Retry-After (as client-go's REST client does), then the try's own sleep.
    {
      name: '30 answers 429 with Retry-After 1 in a row',
      faults: Array.from({ length: 30 }, () => newTooManyRequests('Too many requests, please try again later.', 1)),
      attempts: 31,
      waitedMs: 30 * 1_000 - 2 * 1_000 + 2 * 12_500,
      written: 1,
      failed: 0,
    },
    {
      name: '429 without end: 12 tries of 11 answers each, then give up',
      faults: Array.from({ length: 200 }, () => newTooManyRequests('slow down', 1)),
      attempts: 12 * 11,
      waitedMs: 12 * 10 * 1_000 + 11 * 12_500,
      written: 0,
      failed: 1,
    },
  ];
  for (const c of cases) {
    await t.test(c.name, async () => {
      const { clock, sink, broadcaster, emit } = setup({ random: () => 1 });
      const faults = [...c.faults];
      sink.fault = () => faults.shift();
      emit();
      await clock.advance(0);
      // One ms before the expected total wait the last attempt has not happened yet.
      if (c.waitedMs > 0) {
        await clock.advance(c.waitedMs - 1);
        assert.equal(sink.calls.length, c.attempts - 1);
        await clock.advance(1);
      }
      await broadcaster.idle();
      assert.equal(sink.calls.length, c.attempts);
      const k = broadcaster.counters;
      assert.deepEqual([k.written, k.failed, k.retried], [c.written, c.failed, c.attempts - 1]);
    });
  }
});

void test('a full queue drops and counts, and event() returns at once', async () => {
  const { sink, broadcaster, recorder, logger } = setup({ queueSize: 3, workers: 1 });
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  sink.fault = () => gate;
  for (let i = 0; i < 10; i++) {
    recorder.event({ regarding: { ...pod, metadata: { ...pod.metadata, name: `p${i}` } }, type: 'Normal', reason: 'Started', action: 'Run' });
  }
  // One write is in flight, three are queued; six were dropped.
  assert.equal(broadcaster.counters.dropped, 6);
  assert.equal(broadcaster.counters.recorded, 10);
  assert.ok(logger.messages('error').includes('Unable to record event: too many queued events, dropped event'));
  release();
  await broadcaster.idle();
  assert.equal(sink.eventsV1.objects.size, 4);
});

void test('shutdown writes queued events and the latest series counts, then refuses events', async () => {
  const { sink, broadcaster, emit, stored, recorder } = setup();
  for (let i = 0; i < 5; i++) emit();
  await broadcaster.shutdown();
  assert.equal(stored()[0]!.series?.count, 5);
  recorder.event({ regarding: pod, type: 'Normal', reason: 'Late', action: 'Run' });
  assert.equal(broadcaster.counters.dropped, 1);
  assert.deepEqual(
    sink.calls.map((c) => c.verb),
    ['create', 'patch', 'patch'],
  );
});

void test('shutdown gives up at its deadline and aborts in-flight writes', async () => {
  const { clock, sink, broadcaster, recorder } = setup({ workers: 1 });
  sink.fault = () => new Promise(() => {}); // a server that never answers
  for (let i = 0; i < 3; i++) {
    recorder.event({ regarding: { ...pod, metadata: { ...pod.metadata, name: `p${i}` } }, type: 'Normal', reason: 'Started', action: 'Run' });
  }
  let done = false;
  const p = broadcaster.shutdown({ timeoutMs: 5_000 }).then(() => (done = true));
  await clock.advance(4_999);
  assert.equal(done, false);
  await clock.advance(1);
  await p;
  const k = broadcaster.counters;
  assert.equal(k.dropped, 2, 'two writes never started');
  assert.equal(k.failed, 1, 'the in-flight write was aborted');
});

void test('memory stays bounded: an evicted series writes its unwritten count', async () => {
  const { sink, broadcaster, recorder } = setup({ cacheSize: 2 });
  const ev = (name: string): void =>
    recorder.event({ regarding: { ...pod, metadata: { ...pod.metadata, name } }, type: 'Normal', reason: 'Tick', action: 'Run' });
  for (let i = 0; i < 4; i++) ev('a');
  ev('b');
  ev('c'); // evicts a, whose count 4 was not written yet
  await broadcaster.idle();
  const aPatches = sink.calls.filter((c) => c.verb === 'patch' && c.name.startsWith('a.'));
  assert.deepEqual(
    aPatches.map((c) => (c.body as EventsV1Event).series?.count),
    [2, 4],
  );
});
