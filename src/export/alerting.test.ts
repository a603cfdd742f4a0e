import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createAlertPolicy, DEFAULT_ALERT } from './alerting.js';
import type { AlertOptions } from './types.js';
import type { ExportFields } from './fields.js';
import { checkSlackMessage } from '../../test/support/sink-receivers.js';
import { slackMessage } from './sinks/slack-sink.js';

const T0 = Date.UTC(2025, 0, 1);
let nextId = 1;

function fields(o: { uid?: string; count: number; type?: string; reason?: string; name?: string; message?: string }): ExportFields {
  return {
    changeId: nextId++,
    cluster: 'lab',
    namespace: 'prod',
    name: `${o.name ?? 'web'}.1`,
    uid: o.uid ?? 'u-1',
    type: o.type ?? 'Warning',
    reason: o.reason ?? 'BackOff',
    message: o.message ?? 'Back-off restarting failed container',
    action: '',
    regarding: { kind: 'Pod', namespace: 'prod', name: o.name ?? 'web', uid: '', apiVersion: 'v1', fieldPath: '' },
    related: null,
    reportingController: 'kubelet',
    reportingInstance: 'node-1',
    count: o.count,
    countBefore: o.count - 1,
    isNew: o.count === 1,
    firstSeen: new Date(T0).toISOString(),
    lastSeen: new Date(T0).toISOString(),
    observedTime: new Date(T0).toISOString(),
    labels: {},
    annotations: {},
  };
}

const options = (o: Partial<AlertOptions> = {}): AlertOptions => ({ ...DEFAULT_ALERT, groupWaitMs: 1_000, resolveAfterMs: 60_000, ...o });

void describe('alert policy', () => {
  void it('sends one message for a burst, with its count, and a follow-up when a Warning stops repeating', () => {
    const p = createAlertPolicy(options(), undefined, undefined);
    const out = [];
    for (let i = 1; i <= 10; i++) out.push(...p.observe(fields({ count: i }), T0 + i * 50));
    out.push(...p.tick(T0 + 2_000));
    for (let i = 11; i <= 12; i++) out.push(...p.observe(fields({ count: i }), T0 + 2_000 + i * 100));
    out.push(...p.tick(T0 + 30_000));
    assert.deepEqual(out.map((r) => [r.alert?.state, r.alert?.repeats]), [['firing', 10]]);
    const done = p.tick(T0 + 120_000);
    assert.deepEqual(done.map((r) => [r.alert?.state, r.alert?.repeats]), [['resolved', 12]]);
    assert.deepEqual(p.tick(T0 + 500_000), []);
  });

  void it('waits for minCount and for, and sends no follow-up for a Normal event', () => {
    const p = createAlertPolicy(options({ minCount: 3, forMs: 10_000 }), undefined, undefined);
    assert.deepEqual([...p.observe(fields({ count: 1, type: 'Normal' }), T0), ...p.observe(fields({ count: 2, type: 'Normal' }), T0 + 5_000)], []);
    assert.deepEqual(p.tick(T0 + 6_000), [], 'below minCount');
    assert.deepEqual(p.observe(fields({ count: 3, type: 'Normal' }), T0 + 8_000), []);
    assert.deepEqual(p.tick(T0 + 9_000), [], 'not repeating for 10s yet');
    assert.deepEqual(p.observe(fields({ count: 4, type: 'Normal' }), T0 + 11_000), []);
    assert.equal(p.tick(T0 + 12_000).length, 1);
    assert.deepEqual(p.tick(T0 + 200_000), [], 'no follow-up for Normal');
  });

  void it('limits messages per reason, and groups by the fields asked', () => {
    const limited = createAlertPolicy(options({ perReason: { limit: 1, windowMs: 3_600_000 } }), undefined, undefined);
    limited.observe(fields({ uid: 'a', name: 'a', count: 1 }), T0);
    limited.observe(fields({ uid: 'b', name: 'b', count: 1 }), T0);
    assert.equal(limited.tick(T0 + 2_000).length, 1);
    assert.equal(limited.takeSuppressed(), 1);
    const grouped = createAlertPolicy(options({ groupBy: ['namespace', 'reason'] }), undefined, undefined);
    for (const n of ['a', 'b', 'c']) grouped.observe(fields({ uid: n, name: n, count: 1 }), T0);
    const [m] = grouped.tick(T0 + 2_000);
    assert.equal(m?.alert?.events, 3);
    assert.deepEqual(m?.alert?.objects, ['pod/a', 'pod/b', 'pod/c']);
  });

  void it('sends a firing burst again every resend interval while it lasts, then resolves it, a Normal one too when asked', () => {
    const p = createAlertPolicy(options({ groupWaitMs: 0, resendIntervalMs: 10_000, resolveAll: true }), undefined, undefined);
    const out = [...p.observe(fields({ count: 1, type: 'Normal' }), T0), ...p.tick(T0 + 1)];
    for (let t = 5_000; t <= 50_000; t += 5_000) {
      out.push(...p.observe(fields({ count: t / 5_000 + 1, type: 'Normal' }), T0 + t));
      out.push(...p.tick(T0 + t + 1));
    }
    out.push(...p.tick(T0 + 200_000));
    const states = out.map((r) => r.alert?.state);
    assert.deepEqual(states, ['firing', 'firing', 'firing', 'firing', 'firing', 'firing', 'resolved']);
    assert.equal(new Set(out.map((r) => r.id)).size, out.length, 'each resend is a record of its own');
    assert.deepEqual(new Set(out.map((r) => r.alert?.since)), new Set([new Date(T0).toISOString()]), 'every message names the same start');
  });

  void it('resumes from its state without sending a message again', () => {
    const p = createAlertPolicy(options(), undefined, undefined);
    p.observe(fields({ count: 1 }), T0);
    assert.equal(p.tick(T0 + 2_000).length, 1);
    const resumed = createAlertPolicy(options(), undefined, p.state());
    resumed.observe(fields({ count: 2 }), T0 + 3_000);
    assert.deepEqual(resumed.tick(T0 + 4_000), []);
    assert.equal(resumed.tick(T0 + 100_000)[0]?.alert?.state, 'resolved');
  });
});

void describe('slackMessage', () => {
  void it('stays within Block Kit limits however long the fields are', () => {
    const p = createAlertPolicy(options(), undefined, undefined);
    p.observe(fields({ count: 1, message: `<b>${'x'.repeat(10_000)}</b> & more`, reason: 'R'.repeat(400) }), T0);
    const [r] = p.tick(T0 + 2_000);
    const m = slackMessage(r!);
    assert.equal(checkSlackMessage(m), undefined);
    assert.match(JSON.stringify(m.blocks[1]), /&lt;b&gt;x+…/);
  });
});
