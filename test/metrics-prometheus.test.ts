import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import { createNamespaces } from './support/cluster-setup.js';
import { startControlPlane } from './support/control-plane.js';
import type { ControlPlane } from './support/control-plane.js';
import { kubeletEvent } from './support/kubelet-events.js';
import { startMirror, stopMirror, untilListed } from './support/mirror-process.js';
import type { MirrorProcess } from './support/mirror-process.js';
import { freePorts } from './support/ports.js';
import { startAlertmanager, startPrometheus } from './support/prometheus.js';
import type { PeerProcess, PromSample } from './support/prometheus.js';
import { startAlertmanagerReceiver } from './support/sink-receivers.js';
import type { AlertmanagerReceiver } from './support/sink-receivers.js';
import { sleep, until } from './support/wait.js';

/**
 * Event metrics against the real Prometheus: `kevents mirror --event-metrics` archives a real
 * kube-apiserver, Prometheus scrapes it every second, and a burst written through both event APIs
 * (core/v1 count bumps, an events.k8s.io/v1 series) must come out of Prometheus' HTTP API as exactly
 * its decompressed count; a restart of the mirror must add nothing; a rule over kevents_events_total
 * must fire in Prometheus and reach the real Alertmanager and its webhook.
 */

const NS = 'burst';
/** RULES are the test's rule (quick: 1 minute, no `for`) and the PrometheusRule that deploy/ ships, which Prometheus must load. */
const TEST_GROUP = {
  name: 'kevents-test',
  rules: [
    {
      alert: 'KeventsBackOffBurst',
      expr: 'sum by (namespace, reason) (increase(kevents_events_total{type="Warning", reason="BackOff"}[1m])) > 5',
      labels: { severity: 'warning' },
      annotations: { summary: '{{ $labels.reason }} repeats in {{ $labels.namespace }}' },
    },
  ],
};
const DEPLOY_RULE = parse(readFileSync(new URL('../deploy/kustomize/components/monitoring/prometheusrule.yaml', import.meta.url), 'utf8')) as { spec: { groups: { name: string; rules: { alert: string }[] }[] } };
const RULES = stringify({ groups: [TEST_GROUP, ...DEPLOY_RULE.spec.groups] });

const kubeletCore = (name: string, pod: string, count: number): Record<string, unknown> => kubeletEvent({ namespace: NS, name, pod, count });

const eventTimes = new Map<string, string>();

/** seriesEvent is an events.k8s.io/v1 event, with a series once it repeated (its eventTime is its first, and immutable). */
function seriesEvent(name: string, pod: string, count: number): Record<string, unknown> {
  const now = new Date().toISOString().replace('Z', '000Z');
  if (!eventTimes.has(name)) eventTimes.set(name, now);
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name, namespace: NS },
    eventTime: eventTimes.get(name),
    reportingController: 'kubelet',
    reportingInstance: 'node-1',
    action: 'Restarting',
    reason: 'BackOff',
    type: 'Warning',
    note: 'Back-off restarting failed container app',
    regarding: { kind: 'Pod', namespace: NS, name: pod, apiVersion: 'v1' },
    ...(count > 1 ? { series: { count, lastObservedTime: now } } : {}),
  };
}

const total = (samples: PromSample[]): number | undefined => (samples.length === 0 ? undefined : samples.reduce((s, x) => s + x.value, 0));

void describe('event metrics scraped by Prometheus', () => {
  let cp: ControlPlane;
  let dir: string;
  let mirror: MirrorProcess;
  let prom: PeerProcess & { query(q: string, t?: number): Promise<PromSample[]> };
  let am: PeerProcess;
  let hook: AlertmanagerReceiver;
  let mirrorArgs: [{ kubeconfig: string }, string, string[]];
  let baselineMs = 0;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kevents-metrics-'));
    cp = await startControlPlane();
    await createNamespaces(cp, [NS]);
    const [port] = await freePorts(1);
    mirrorArgs = [{ kubeconfig: cp.kubeconfigFile(cp.readToken) }, `sqlite:${join(dir, 'archive.db')}`, ['--event-metrics', '--listen', `127.0.0.1:${port}`]];
    mirror = await startMirror(...mirrorArgs);
    await untilListed(mirror);
    hook = await startAlertmanagerReceiver();
    am = await startAlertmanager({ webhookUrl: hook.url, groupBy: ['alertname', 'namespace'] });
    prom = await startPrometheus({ targets: [`127.0.0.1:${port}`], rules: RULES, alertmanager: am.url });
  });

  after(async () => {
    await stopMirror(mirror, 'SIGTERM').catch(() => undefined);
    await prom?.stop();
    await am?.stop();
    await hook?.close();
    await cp?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const create = async (path: string, body: Record<string, unknown>): Promise<void> => {
    const r = await cp.request('POST', path, body);
    assert.equal(r.status, 201, r.text);
  };
  const update = async (path: string, body: Record<string, unknown>): Promise<void> => {
    const r = await cp.request('PUT', path, body);
    assert.equal(r.status, 200, r.text);
  };
  const backOff = async (): Promise<number | undefined> => total(await prom.query(`sum(kevents_events_total{reason="BackOff"})`));
  /** increaseSinceBaseline is the exact increase from the baseline sample on (anchored: no extrapolation past the samples). */
  const increaseSinceBaseline = async (): Promise<number | undefined> => {
    const now = Date.now();
    return total(await prom.query(`sum(increase(kevents_events_total{reason="BackOff"}[${now - baselineMs}ms] anchored))`, now));
  };

  void it('counts a burst through both event APIs as its decompressed count', async () => {
    // A first event makes the series, so that Prometheus holds its value before the burst starts.
    await create(`/api/v1/namespaces/${NS}/events`, kubeletCore('warmup.1', 'warmup', 1));
    await until('Prometheus scraped the first occurrence', async () => (await backOff()) === 1, 60_000, 250);
    baselineMs = Date.now();
    await sleep(1_500);
    const core = `/api/v1/namespaces/${NS}/events`;
    await create(core, kubeletCore('web-1.backoff', 'web-1', 1));
    for (const count of [2, 5, 9]) await update(`${core}/web-1.backoff`, kubeletCore('web-1.backoff', 'web-1', count));
    const v1 = `/apis/events.k8s.io/v1/namespaces/${NS}/events`;
    await create(v1, seriesEvent('web-2.backoff', 'web-2', 1));
    for (const count of [2, 4, 6]) await update(`${v1}/web-2.backoff`, seriesEvent('web-2.backoff', 'web-2', count));
    // The decompressed count of the burst: 9 occurrences of web-1 (1, +1, +3, +4) and 6 of web-2's series.
    const decompressed = 9 + 6;
    await until('Prometheus scraped the whole burst', async () => (await backOff()) === 1 + decompressed, 60_000, 250);
    assert.equal(await increaseSinceBaseline(), decompressed);
  });

  void it('fires a rule over kevents_events_total in Prometheus, and Alertmanager notifies its webhook', async () => {
    await until(
      'Alertmanager holds the rule\'s alert',
      async () => {
        const alerts = (await (await fetch(`${am.url}/api/v2/alerts`)).json()) as { labels: Record<string, string> }[];
        return alerts.some((a) => a.labels.alertname === 'KeventsBackOffBurst' && a.labels.namespace === NS && a.labels.reason === 'BackOff');
      },
      90_000,
      500,
    );
    await until('the webhook got the notification', () => hook.notifications.some((n) => n.alerts.some((a) => a.labels.alertname === 'KeventsBackOffBurst' && a.status === 'firing')), 30_000, 200);
    const n = hook.notifications.find((x) => x.alerts.some((a) => a.labels.alertname === 'KeventsBackOffBurst'))!;
    assert.equal(n.commonLabels.severity, 'warning');
    assert.equal(n.alerts[0]!.annotations.summary, `BackOff repeats in ${NS}`);
  });

  void it('loads the PrometheusRule of deploy/', async () => {
    const body = (await (await fetch(`${prom.url}/api/v1/rules`)).json()) as { data: { groups: { name: string; rules: { name: string; health: string }[] }[] } };
    const loaded = body.data.groups.flatMap((g) => g.rules.map((r) => r.name));
    for (const g of DEPLOY_RULE.spec.groups) for (const r of g.rules) assert.ok(loaded.includes(r.alert), `${r.alert} is not loaded: ${loaded.join(', ')}`);
  });

  void it('adds nothing when the mirror restarts, and counts what comes after', async () => {
    const started = total(await prom.query('kevents_process_start_time_seconds'));
    await stopMirror(mirror, 'SIGTERM');
    mirror = await startMirror(...mirrorArgs);
    await untilListed(mirror);
    await until('Prometheus scraped the restarted mirror', async () => (total(await prom.query('kevents_process_start_time_seconds')) ?? 0) > (started ?? 0), 60_000, 250);
    await sleep(2_500);
    assert.equal(await backOff(), undefined, 'the restarted mirror counted nothing it had archived before');
    assert.equal(await increaseSinceBaseline(), 15, 'the restart added nothing');
    await update(`/api/v1/namespaces/${NS}/events/web-1.backoff`, kubeletCore('web-1.backoff', 'web-1', 12));
    await until('Prometheus scraped the repeat after the restart', async () => (await backOff()) === 3, 60_000, 250);
    assert.equal(await increaseSinceBaseline(), 18, 'a counter reset is taken as one');
  });
});
