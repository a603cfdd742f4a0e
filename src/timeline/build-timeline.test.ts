import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildTimeline } from './build-timeline.js';
import { T0, iso, testEvent, testOccurrence } from '../../test/support/timeline-events.js';

const podName = 'web-5d8f7c9b4-x2x7k';
const events = [
  testEvent({ name: 'crash', namespace: 'prod', object: podName, reason: 'BackOff', type: 'Warning', message: `Back-off restarting failed container app in pod ${podName}_prod(1)`, first: 60, last: 300, count: 5, fieldPath: 'spec.containers{app}' }),
  testEvent({ name: 'sched', namespace: 'prod', object: podName, reason: 'Scheduled', component: 'default-scheduler', message: `Successfully assigned prod/${podName} to node-2`, first: 0 }),
  testEvent({ name: 'pressure', kind: 'Node', object: 'node-2', reason: 'NodeHasDiskPressure', message: 'Node node-2 status is now: NodeHasDiskPressure', first: 30 }),
  testEvent({ name: 'other-node', kind: 'Node', object: 'node-3', reason: 'NodeHasDiskPressure', first: 30 }),
  testEvent({ name: 'other-pod', namespace: 'prod', object: 'db-0', reason: 'Started', first: 10 }),
];

describe('buildTimeline', () => {
  it('orders one row per occurrence, scoped to the pod and its node, with a summary and next steps', () => {
    const t = buildTimeline({ events, for: { kind: 'Pod', name: podName, namespace: 'prod' } });
    assert.deepEqual(
      t.rows.map((r) => [r.time, r.object, r.reason, r.estimated]),
      [
        [iso(0), `Pod/${podName}`, 'Scheduled', false],
        [iso(30), 'Node/node-2', 'NodeHasDiskPressure', false],
        [iso(60), `Pod/${podName}`, 'BackOff', false],
        [iso(120), `Pod/${podName}`, 'BackOff', true],
        [iso(180), `Pod/${podName}`, 'BackOff', true],
        [iso(240), `Pod/${podName}`, 'BackOff', true],
        [iso(300), `Pod/${podName}`, 'BackOff', false],
      ],
    );
    assert.deepEqual(t.summary.window, { since: iso(0), until: iso(300) });
    assert.equal(t.summary.firstWarning?.reason, 'BackOff');
    assert.deepEqual(t.summary.reasons, [
      { reason: 'BackOff', type: 'Warning', count: 5 },
      { reason: 'Scheduled', type: 'Normal', count: 1 },
      { reason: 'NodeHasDiskPressure', type: 'Normal', count: 1 },
    ]);
    assert.deepEqual(t.summary.objects.map((o) => o.object), [`Pod/${podName}`, 'Node/node-2']);
    assert.equal(t.summary.history, 'events');
    assert.equal(t.summary.estimatedRows, 3);
    // Next steps are the failure catalogue's (src/diagnosis), which the caller composes in: none without it.
    assert.deepEqual(t.hints, []);
  });

  it('cuts rows to the window and the types asked for', () => {
    const t = buildTimeline({ events, since: T0 + 100_000, until: T0 + 300_000, types: ['warning'] });
    assert.deepEqual(t.rows.map((r) => r.time), [iso(120), iso(180), iso(240)]);
    assert.deepEqual(t.summary.window, { since: iso(100), until: iso(300) });
  });

  it('uses archive occurrences when there are some, and says so', () => {
    const crash = events[0]!;
    const occurrences = [0, 1, 2, 3, 4].map((i) => testOccurrence(crash, { at: 60 + i * i * 10, before: i, after: i + 1 }));
    const t = buildTimeline({ events: [crash], occurrences });
    assert.deepEqual(t.rows.map((r) => r.time), [iso(60), iso(70), iso(100), iso(150), iso(220)]);
    assert.equal(t.summary.history, 'occurrences');
    assert.equal(t.summary.estimatedRows, 0);
  });

  it('says so when nothing matched', () => {
    const t = buildTimeline({ events: [], for: { kind: 'Pod', name: 'gone', namespace: 'prod' } });
    assert.deepEqual(t.summary.window, { since: null, until: null });
    assert.equal(t.summary.firstWarning, null);
  });
});
