import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import type { Metric } from 'prom-client';
import { FakeClock } from '../internal/index.js';
import type { ExportChange } from '../storage/index.js';
import { createEventMetrics } from './event-metrics.js';
import type { EventMetrics, EventMetricsOptions } from './event-metrics.js';
import { occurrencesOf } from './event-labels.js';

let nextId = 1;
function change(o: { name?: string; pod?: string; reason?: string; before?: number; after?: number; namespace?: string; message?: string; type?: string }): ExportChange {
  const namespace = o.namespace ?? 'prod';
  return {
    id: nextId++,
    observedMicros: 0,
    occurrence: {
      metadata: { name: `${o.name ?? 'e'}.1`, namespace },
      event: { name: o.name ?? 'e', namespace, uid: `uid-${o.name ?? 'e'}` },
      observedTime: '2025-01-01T00:00:00.000000Z',
      lastSeen: '2025-01-01T00:00:00.000000Z',
      countBefore: o.before ?? 0,
      countAfter: o.after ?? 1,
      type: o.type ?? 'Warning',
      reason: o.reason ?? 'BackOff',
      message: o.message ?? 'Back-off restarting failed container',
      regarding: { kind: 'Pod', namespace, name: o.pod ?? 'web-1' },
      reportingController: 'kubelet',
      cluster: 'east',
    },
    event: {
      metadata: { name: o.name ?? 'e', namespace, uid: `uid-${o.name ?? 'e'}` },
      involvedObject: { kind: 'Pod', namespace, name: o.pod ?? 'web-1' },
      source: { component: 'kubelet', host: 'node-1' },
    },
  };
}

async function scrape(m: EventMetrics): Promise<string> {
  const registry = new Registry();
  for (const c of m.collectables) registry.registerMetric(c as unknown as Metric);
  return registry.metrics();
}

function lines(text: string, family: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(family) && !l.startsWith('#'));
}

function make(o: EventMetricsOptions = {}): { m: EventMetrics; clock: FakeClock } {
  const clock = new FakeClock();
  return { m: createEventMetrics({ clock, ...o }), clock };
}

describe('event metrics', () => {
  it('counts every repeat: a new event its count, a count jump its rise, a change without a rise nothing', () => {
    const cases: [number, number, number][] = [
      [0, 1, 1],
      [0, 7, 7],
      [3, 8, 5],
      [8, 8, 0],
      [8, 2, 0],
      [0, 0, 1],
    ];
    for (const [before, after, want] of cases) assert.equal(occurrencesOf(change({ before, after })), want, `${before} -> ${after}`);
  });

  it('renders kevents_events_total with the default labels, summing the changes of one label set', async () => {
    const { m } = make();
    m.observe(change({ after: 1 }));
    m.observe(change({ before: 1, after: 6 }));
    m.observe(change({ pod: 'web-2', after: 2 }));
    m.observe(change({ reason: 'Pulled', type: 'Normal', after: 1 }));
    const text = await scrape(m);
    assert.deepEqual(lines(text, 'kevents_events_total'), [
      'kevents_events_total{cluster="east",namespace="prod",kind="Pod",reason="BackOff",type="Warning",reporting_controller="kubelet"} 8',
      'kevents_events_total{cluster="east",namespace="prod",kind="Pod",reason="Pulled",type="Normal",reporting_controller="kubelet"} 1',
    ]);
    assert.match(text, /# TYPE kevents_events_total counter/);
    assert.deepEqual(lines(text, 'kevents_event_series '), ['kevents_event_series 2']);
  });

  it('labels the object name only when asked, and escapes label values', async () => {
    const { m } = make({ labels: ['namespace', 'name', 'reason'] });
    m.observe(change({ pod: 'a"b\\c\nd' }));
    assert.deepEqual(lines(await scrape(m), 'kevents_events_total'), ['kevents_events_total{namespace="prod",name="a\\"b\\\\c\\nd",reason="BackOff"} 1']);
  });

  it('counts only what the filter lets through', async () => {
    const { m } = make({ filter: (c) => c.occurrence.reason !== 'BackOff' });
    m.observe(change({ after: 4 }));
    m.observe(change({ reason: 'Unhealthy', after: 2 }));
    assert.deepEqual(lines(await scrape(m), 'kevents_events_total'), [
      'kevents_events_total{cluster="east",namespace="prod",kind="Pod",reason="Unhealthy",type="Warning",reporting_controller="kubelet"} 2',
    ]);
  });

  it('keeps the series at the cap: the rest goes to one overflow series, and each refused change is counted', async () => {
    const { m } = make({ labels: ['name'], maxSeries: 3 });
    for (let i = 0; i < 10; i++) m.observe(change({ pod: `p${i}`, after: 2 }));
    m.observe(change({ pod: 'p0', before: 2, after: 5 }));
    const text = await scrape(m);
    const series = lines(text, 'kevents_events_total');
    assert.equal(series.length, 4);
    assert.ok(series.includes('kevents_events_total{name="p0"} 5'));
    assert.ok(series.includes('kevents_events_total{overflow="true"} 14'));
    assert.deepEqual(lines(text, 'kevents_event_series_dropped_total'), ['kevents_event_series_dropped_total{metric="kevents_events_total"} 7']);
    assert.equal(m.seriesCount, 3);
  });

  it('removes series idle past the idle time, which frees their place under the cap', async () => {
    const { m, clock } = make({ labels: ['name'], maxSeries: 2, idleAfterMs: 60_000 });
    m.observe(change({ pod: 'a' }));
    await clock.advance(30_000);
    m.observe(change({ pod: 'b' }));
    await clock.advance(40_000);
    m.removeIdle();
    assert.deepEqual(lines(await scrape(m), 'kevents_events_total'), ['kevents_events_total{name="b"} 1']);
    m.observe(change({ pod: 'c' }));
    assert.equal(m.seriesCount, 2);
    assert.deepEqual(lines(await scrape(m), 'kevents_event_series_dropped_total'), []);
  });

  it('keeps the caicloud families when asked: the count as a gauge, one per change as a counter', async () => {
    const { m } = make({ caicloud: true });
    m.observe(change({ name: 'web-1.17', after: 1 }));
    m.observe(change({ name: 'web-1.17', before: 1, after: 6 }));
    const text = await scrape(m);
    const labels = 'name="web-1.17",involved_object_namespace="prod",namespace="prod",involved_object_name="web-1",involved_object_kind="Pod",reason="BackOff",type="Warning",message="Back-off restarting failed container",source="node-1/kubelet"';
    assert.deepEqual(lines(text, 'kube_event_count'), [`kube_event_count{${labels}} 6`]);
    assert.deepEqual(lines(text, 'kube_event_unique_events_total'), [`kube_event_unique_events_total{${labels}} 2`]);
    assert.doesNotMatch(await scrape(make().m), /kube_event/);
  });
});
