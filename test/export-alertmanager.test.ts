import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exportMetric, startExport, stopExport } from './support/export-process.js';
import type { ExportProcess } from './support/export-process.js';
import { runBuiltCli } from './support/cli-process.js';
import { kubeletEvent } from './support/kubelet-events.js';
import { startAlertmanager } from './support/prometheus.js';
import type { PeerProcess } from './support/prometheus.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { startAlertmanagerReceiver } from './support/sink-receivers.js';
import type { AlertmanagerNotification, AlertmanagerReceiver } from './support/sink-receivers.js';
import { until } from './support/wait.js';

/**
 * The alertmanager sink against the real Alertmanager: `kevents export` reads a `kevents serve`
 * archive and posts the `alert` policy's bursts to Alertmanager's v2 API; Alertmanager groups them
 * by namespace and reason and notifies a local webhook, which the test reads. A burst must show in
 * /api/v2/alerts with its labels, reach the webhook and resolve; a silence must keep the webhook
 * quiet; 50 pods must fold into one notification; Alertmanager down must mean retries, not loss.
 */

const PUBLIC_URL = 'http://kevents.example.test';

interface AmAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL: string;
  status: { state: string; silencedBy: string[] };
}

void describe('the alertmanager sink', () => {
  let dir: string;
  let server: ServerProcess;
  let hook: AlertmanagerReceiver;
  let am: PeerProcess;
  /** am2 is the other member of an HA pair (its own webhook): every alert goes to both. */
  let am2: PeerProcess;
  let hook2: AlertmanagerReceiver;
  let exporter: ExportProcess;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kevents-alertmanager-'));
    const db = join(dir, 'events.db');
    server = await startServer(['--storage', `sqlite:${db}`]);
    hook = await startAlertmanagerReceiver();
    am = await startAlertmanager({ webhookUrl: hook.url, groupBy: ['namespace', 'reason'], groupWaitSeconds: 3 });
    hook2 = await startAlertmanagerReceiver();
    am2 = await startAlertmanager({ webhookUrl: hook2.url, groupBy: ['namespace', 'reason'], groupWaitSeconds: 3 });
    const config = join(dir, 'export.yaml');
    writeFileSync(
      config,
      `sinks:
  - name: am
    type: alertmanager
    urls: [${am.url}, ${am2.url}]
    staticLabels: {severity: warning}
    publicURL: ${PUBLIC_URL}
    alert: {groupWait: 0s, resolveAfter: 4s, resendInterval: 1s}
    retry: {initialBackoff: 200ms, maxBackoff: 1s}
`,
    );
    exporter = await startExport(config, `sqlite:${db}`);
  });

  after(async () => {
    if (exporter !== undefined) await stopExport(exporter, 'SIGTERM');
    await server?.stop();
    await am?.stop();
    await am2?.stop();
    await hook?.close();
    await hook2?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const write = async (method: 'POST' | 'PUT', o: Parameters<typeof kubeletEvent>[0]): Promise<void> => {
    const path = `/api/v1/namespaces/${o.namespace}/events${method === 'PUT' ? `/${o.name}` : ''}`;
    const r = await fetch(`${server.url}${path}`, { method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(kubeletEvent(o)) });
    assert.equal(r.status, method === 'POST' ? 201 : 200, await r.text());
  };
  const alerts = async (filter: string, of: PeerProcess = am): Promise<AmAlert[]> => (await (await fetch(`${of.url}/api/v2/alerts?filter=${encodeURIComponent(filter)}`)).json()) as AmAlert[];
  const notified = (namespace: string, reason: string, status?: 'firing' | 'resolved'): AlertmanagerNotification[] =>
    hook.notifications.filter((n) => n.groupLabels.namespace === namespace && n.groupLabels.reason === reason && (status === undefined || n.status === status));

  void it('shows a burst in /api/v2/alerts, notifies the webhook, keeps the alert alive while it repeats and resolves it', async () => {
    const e = { namespace: 'one', name: 'web-1.backoff', pod: 'web-1' };
    await write('POST', { ...e, count: 1 });
    await until('Alertmanager holds the alert', async () => (await alerts('namespace="one"')).length === 1, 30_000);
    const [first] = await alerts('namespace="one"');
    assert.deepEqual(first!.labels, { alertname: 'KubernetesEventBurst', severity: 'warning', namespace: 'one', kind: 'Pod', name: 'web-1', reason: 'BackOff', type: 'Warning' });
    assert.equal(first!.annotations.message, 'Back-off restarting failed container app');
    // The failure catalogue's sentence for this one event, composed in by the CLI: the alert says why, not only what.
    const cause = 'Container "app" of pod "web-1" is crash-looping; events do not record why: read its last state and logs.';
    assert.equal(first!.annotations.cause, cause);
    assert.ok(first!.generatorURL.startsWith(`${PUBLIC_URL}/#/timeline?ns=one&`), first!.generatorURL);
    for (let count = 2; count <= 6; count++) {
      await new Promise((r) => setTimeout(r, 500));
      await write('PUT', { ...e, count });
    }
    // The resends carry the burst's count as it grows, under the same labels and start.
    await until('Alertmanager has the count of the whole burst', async () => (await alerts('namespace="one"'))[0]?.annotations.count === '6', 30_000);
    const [later] = await alerts('namespace="one"');
    assert.equal(later!.startsAt, first!.startsAt);
    await until('the webhook got the firing notification', () => notified('one', 'BackOff', 'firing').length > 0, 30_000);
    assert.equal(notified('one', 'BackOff', 'firing')[0]!.alerts[0]!.annotations.cause, cause, 'the notification carries the cause');
    const [other] = await alerts('namespace="one"', am2);
    assert.deepEqual(other?.labels, later!.labels, 'the other Alertmanager of the pair holds the same alert');
    assert.equal(other?.startsAt, later!.startsAt);
    await until('the webhook got the resolution', () => notified('one', 'BackOff', 'resolved').length > 0, 60_000);
    const resolved = notified('one', 'BackOff', 'resolved')[0]!;
    assert.equal(resolved.alerts[0]!.labels.name, 'web-1');
    assert.ok(Date.parse(resolved.alerts[0]!.endsAt) > Date.parse(first!.startsAt));
  });

  void it('keeps the webhook quiet for what an Alertmanager silence matches', async () => {
    const now = Date.now();
    // Each member gets the silence: this pair gossips nothing (no cluster), so it is set on both, as their cluster would.
    for (const member of [am, am2]) {
      const silence = await fetch(`${member.url}/api/v2/silences`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ matchers: [{ name: 'reason', value: 'BackOff', isRegex: false, isEqual: true }], startsAt: new Date(now).toISOString(), endsAt: new Date(now + 3_600_000).toISOString(), createdBy: 'test', comment: 'known crash loop' }),
      });
      assert.equal(silence.status, 200, await silence.text());
    }
    await write('POST', { namespace: 'two', name: 'db-0.backoff', pod: 'db-0', count: 1 });
    await write('POST', { namespace: 'two', name: 'db-0.unhealthy', pod: 'db-0', count: 1, reason: 'Unhealthy', message: 'Readiness probe failed' });
    await until('Alertmanager holds both alerts', async () => (await alerts('namespace="two"')).length === 2, 30_000);
    await until('the webhook got the alert the silence does not match', () => notified('two', 'Unhealthy').length > 0, 30_000);
    const unhealthy = notified('two', 'Unhealthy')[0]!.alerts[0]!;
    assert.equal(unhealthy.annotations.cause, 'Pod "db-0" is not ready, so Services send it no traffic: its readiness probe fails.');
    const backOff = (await alerts('namespace="two"')).find((a) => a.labels.reason === 'BackOff')!;
    assert.equal(backOff.status.state, 'suppressed');
    assert.equal(backOff.status.silencedBy.length, 1);
    assert.deepEqual(notified('two', 'BackOff'), [], 'the silenced alert was not notified');
  });

  void it('folds 50 pods into one notification when Alertmanager groups by namespace and reason', async () => {
    await Promise.all(Array.from({ length: 50 }, (_, i) => write('POST', { namespace: 'fifty', name: `web-${i}.mount`, pod: `web-${i}`, count: 1, reason: 'FailedMount', message: 'MountVolume.SetUp failed' })));
    await until('the webhook got the group', () => notified('fifty', 'FailedMount', 'firing').length > 0, 30_000);
    const [n] = notified('fifty', 'FailedMount', 'firing');
    assert.equal(n!.alerts.length, 50);
    assert.equal(new Set(n!.alerts.map((a) => a.labels.name)).size, 50);
    // A reason the catalogue does not know is stated from the event's own reason and message, nothing more.
    for (const a of n!.alerts) assert.equal(a.annotations.cause, `Pod "${a.labels.name}" reported "FailedMount": "MountVolume.SetUp failed".`);
  });

  void it('retries while both Alertmanagers are down and drops nothing', async () => {
    await am.kill();
    await am2.kill();
    const failed = await exportMetric(exporter, 'kevents_export_failed_total', 'am');
    await write('POST', { namespace: 'down', name: 'api-0.failed', pod: 'api-0', count: 1, reason: 'FailedScheduling', message: '0/3 nodes are available' });
    // The burst goes on (a repeat a second) through the outage and while Alertmanager comes back: a burst that resolved
    // during the outage reaches Alertmanager already ended, and Alertmanager notifies no alert whose
    // first sight is its resolution (Prometheus' alerts behave the same).
    let count = 1;
    let repeating = true;
    const repeats = (async () => {
      while (repeating) {
        await new Promise((r) => setTimeout(r, 1000));
        if (repeating) await write('PUT', { namespace: 'down', name: 'api-0.failed', pod: 'api-0', count: ++count, reason: 'FailedScheduling', message: '0/3 nodes are available' });
      }
    })();
    try {
      await until('the exporter failed to deliver and retries', async () => (await exportMetric(exporter, 'kevents_export_failed_total', 'am')) > (Number.isNaN(failed) ? 0 : failed) + 1, 30_000);
      const back = Date.now();
      await am.start();
      await am2.start();
      await until('the alert written during the outage reached Alertmanager', async () => (await alerts('namespace="down"')).length === 1, 60_000);
      const [held] = await alerts('namespace="down"');
      assert.ok(Date.parse(held!.startsAt) < back, `the burst starts with the write made during the outage, not after it: ${held!.startsAt}`);
      await until('and the other of the pair', async () => (await alerts('namespace="down"', am2)).length === 1, 30_000);
      await until('and its webhook', () => notified('down', 'FailedScheduling').length > 0, 30_000);
    } finally {
      repeating = false;
      await repeats;
    }
    assert.equal(Number.isNaN(await exportMetric(exporter, 'kevents_export_dead_lettered_total', 'am')) ? 0 : await exportMetric(exporter, 'kevents_export_dead_lettered_total', 'am'), 0);
  });

  void it('refuses a config whose Alertmanager URL is not http(s), with its line and column', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'sinks:\n  - name: am\n    type: alertmanager\n    url: alertmanager:9093\n    alert: {resendInterval: 1m}\n');
    const r = await runBuiltCli(['export', '--config', bad, '--from', `sqlite:${join(dir, 'events.db')}`, '--listen', '127.0.0.1:0']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /bad\.yaml:4:10: sinks\[0\]\.url: "alertmanager:9093" must be an http:\/\/ or https:\/\/ URL/);
  });
});
