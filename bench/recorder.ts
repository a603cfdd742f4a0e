/**
 * Recorder benchmark: what event() costs its caller, and how many API writes
 * 10,000 identical events over 10 simulated minutes turn into. Costs are shown
 * next to a baseline measured in the same run (a call that pushes into an
 * array), so the numbers travel between machines.
 *
 *   node --import tsx bench/recorder.ts
 */
import type { CoreEvent, EventsV1Event } from '../src/api/index.js';
import { FakeClock, noopLogger } from '../src/internal/index.js';
import type { EventSink } from '../src/recorder/index.js';
import { createEventBroadcaster, createLegacyEventBroadcaster } from '../src/recorder/index.js';

const EVENTS = 10_000;
const WINDOW_MS = 10 * 60_000;

/** CountingSink answers every write at once and only counts them, so the bench measures the recorder. */
class CountingSink implements EventSink {
  writes = 0;
  coreV1 = {
    create: (_ns: string, e: CoreEvent) => (this.writes++, Promise.resolve(e)),
    update: (_ns: string, e: CoreEvent) => (this.writes++, Promise.resolve(e)),
    patch: (_ns: string, name: string) => (this.writes++, Promise.resolve({ metadata: { name }, involvedObject: {} } as CoreEvent)),
  };
  eventsV1 = {
    create: (_ns: string, e: EventsV1Event) => (this.writes++, Promise.resolve(e)),
    update: (_ns: string, e: EventsV1Event) => (this.writes++, Promise.resolve(e)),
    patch: (_ns: string, name: string) => (this.writes++, Promise.resolve({ metadata: { name }, eventTime: null } as EventsV1Event)),
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

interface Timing {
  p50: number;
  p99: number;
}

/** timeCalls times each call of fn (in µs) with the same clock reads around each. */
async function timeCalls(n: number, fn: (i: number) => void, between: (i: number) => Promise<void>): Promise<Timing> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    fn(i);
    const t1 = process.hrtime.bigint();
    samples.push(Number(t1 - t0) / 1000);
    await between(i);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

const fmt = (us: number): string => `${us.toFixed(2)} µs`;

async function baseline(): Promise<Timing> {
  const out: unknown[] = [];
  return timeCalls(EVENTS, (i) => void out.push({ i }), () => Promise.resolve());
}

async function eventsApi(): Promise<{ timing: Timing; writesAt10m: number; writesAfterFinish: number }> {
  const clock = new FakeClock();
  const sink = new CountingSink();
  const b = createEventBroadcaster({ sink, clock, logger: noopLogger, hostname: 'bench' });
  const r = b.newRecorder({ reportingController: 'example.com/bench' });
  const regarding = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', namespace: 'default', uid: 'u' } };
  const step = WINDOW_MS / EVENTS;
  const timing = await timeCalls(
    EVENTS,
    () => r.event({ regarding, type: 'Warning', reason: 'BackOff', action: 'Restart', note: 'Back-off restarting failed container' }),
    () => clock.advance(step),
  );
  await b.idle();
  const writesAt10m = sink.writes;
  await clock.advance(12 * 60_000); // finish checks run every 6 minutes: the one at 18 minutes ends the series
  await b.idle();
  const writesAfterFinish = sink.writes;
  await b.shutdown();
  return { timing, writesAt10m, writesAfterFinish };
}

async function legacyApi(): Promise<{ timing: Timing; writes: number }> {
  const clock = new FakeClock();
  const sink = new CountingSink();
  const b = createLegacyEventBroadcaster({ sink, clock, logger: noopLogger });
  const r = b.newRecorder({ source: { component: 'bench', host: 'node-1' } });
  const involvedObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', namespace: 'default', uid: 'u' } };
  const step = WINDOW_MS / EVENTS;
  const timing = await timeCalls(
    EVENTS,
    () => r.event({ involvedObject, type: 'Warning', reason: 'BackOff', message: 'Back-off restarting failed container' }),
    () => clock.advance(step),
  );
  await b.shutdown();
  return { timing, writes: sink.writes };
}

/** distinctObjects records one event each for many objects and returns heap growth at two points of the run. */
async function distinctObjects(checkpoints: [number, number]): Promise<[number, number]> {
  const clock = new FakeClock();
  const sink = new CountingSink();
  const b = createEventBroadcaster({ sink, clock, logger: noopLogger, hostname: 'bench' });
  const r = b.newRecorder({ reportingController: 'example.com/bench' });
  globalThis.gc?.();
  const before = process.memoryUsage().heapUsed;
  const grown: number[] = [];
  for (let i = 0; i < checkpoints[1]; i++) {
    r.event({ regarding: { kind: 'Pod', apiVersion: 'v1', name: `p-${i}`, namespace: 'default' }, type: 'Normal', reason: 'Created', action: 'Create' });
    if (i % 500 === 499) await b.idle();
    if (i + 1 === checkpoints[0] || i + 1 === checkpoints[1]) {
      await b.idle();
      globalThis.gc?.();
      grown.push(process.memoryUsage().heapUsed - before);
    }
  }
  await b.shutdown();
  return [grown[0]!, grown[1]!];
}

/** mixed records events that rotate over many objects and reasons, so no two calls in a row are the same. */
async function mixed(): Promise<Timing> {
  const clock = new FakeClock();
  const sink = new CountingSink();
  const b = createEventBroadcaster({ sink, clock, logger: noopLogger, hostname: 'bench' });
  const r = b.newRecorder({ reportingController: 'example.com/bench' });
  const pods = Array.from({ length: 50 }, (_, i) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `web-${i}`, namespace: 'default', uid: `u-${i}` } }));
  const reasons = ['BackOff', 'Unhealthy', 'Pulled'];
  const timing = await timeCalls(
    EVENTS,
    (i) => r.event({ regarding: pods[i % pods.length]!, type: 'Warning', reason: reasons[i % reasons.length]!, action: 'Reconcile', note: `attempt ${i}` }),
    () => clock.advance(WINDOW_MS / EVENTS),
  );
  await b.shutdown();
  return timing;
}

async function main(): Promise<void> {
  // Warm up the JIT on every path before measuring.
  await eventsApi();
  await legacyApi();
  await mixed();
  const base = await baseline();
  const ev = await eventsApi();
  const legacy = await legacyApi();
  const mix = await mixed();
  const [mem20k, mem100k] = await distinctObjects([20_000, 100_000]);
  const rows = [
    ['baseline (array push)', fmt(base.p50), fmt(base.p99), '1.0×', ''],
    [
      'events.k8s.io/v1 event()',
      fmt(ev.timing.p50),
      fmt(ev.timing.p99),
      `${(ev.timing.p50 / base.p50).toFixed(1)}×`,
      `writes: ${ev.writesAt10m} in 10 min, ${ev.writesAfterFinish} after the series finished (target ≤ 3)`,
    ],
    ['events.k8s.io/v1 event(), 150 keys in rotation', fmt(mix.p50), fmt(mix.p99), `${(mix.p50 / base.p50).toFixed(1)}×`, ''],
    ['core/v1 event()', fmt(legacy.timing.p50), fmt(legacy.timing.p99), `${(legacy.timing.p50 / base.p50).toFixed(1)}×`, `writes: ${legacy.writes} (spam filter: burst 25, 1 per 5 min)`],
  ];
  console.log(`recorder: ${EVENTS} identical events over ${WINDOW_MS / 60_000} simulated minutes (targets: p50 ≤ 2 µs, p99 ≤ 20 µs)`);
  console.log(['case', 'p50', 'p99', 'p50 vs baseline', 'API writes'].join(' | '));
  for (const r of rows) console.log(r.join(' | '));
  console.log(
    `memory: heap grew ${(mem20k / 1e6).toFixed(1)} MB after events about 20k distinct objects and ${(mem100k / 1e6).toFixed(1)} MB after 100k (bounded by the 4096-entry series cache)`,
  );
}

await main();
