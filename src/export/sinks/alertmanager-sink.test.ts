import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { createAlertPolicy, DEFAULT_ALERT } from '../alerting.js';
import type { ExportFields } from '../fields.js';
import { isSinkRejected } from '../types.js';
import { alertmanagerAlert, alertmanagerSinkType, stableLabels } from './alertmanager-sink.js';
import type { AlertmanagerOptions } from './alertmanager-sink.js';
import { noopLogger } from '../../internal/index.js';

const T0 = Date.UTC(2025, 0, 1);

function fields(o: { count: number; before?: number; name?: string; uid?: string }): ExportFields {
  return {
    changeId: o.count,
    cluster: 'east',
    namespace: 'prod',
    name: `${o.name ?? 'web-1'}.17`,
    uid: o.uid ?? 'u-1',
    type: 'Warning',
    reason: 'BackOff',
    message: `Back-off restarting failed container (${o.count})`,
    action: '',
    regarding: { kind: 'Pod', namespace: 'prod', name: o.name ?? 'web-1', uid: '', apiVersion: 'v1', fieldPath: '' },
    related: null,
    reportingController: 'kubelet',
    reportingInstance: '',
    count: o.count,
    countBefore: o.before ?? o.count - 1,
    isNew: o.count === 1,
    firstSeen: '',
    lastSeen: '',
    observedTime: new Date(T0).toISOString(),
    labels: {},
    annotations: {},
  };
}

const OPTIONS: Omit<AlertmanagerOptions, 'urls' | 'timeoutMs'> = {
  alertname: 'EventBurst',
  labels: stableLabels(['uid']),
  staticLabels: { severity: 'warning' },
  publicURL: 'https://kevents.example.com/',
};

void describe('alertmanagerAlert', () => {
  void it('labels an alert with what stays constant, puts the message and count in annotations, and ends it on resolve', () => {
    const p = createAlertPolicy({ ...DEFAULT_ALERT, groupWaitMs: 0, resendIntervalMs: 60_000, resolveAll: true }, undefined, undefined);
    p.observe(fields({ count: 1 }), T0);
    const [firing] = p.tick(T0 + 1);
    p.observe(fields({ count: 5, before: 1 }), T0 + 30_000);
    const [again] = p.tick(T0 + 61_000);
    const [resolved] = p.tick(T0 + 30_000 + 400_000);
    const a = alertmanagerAlert(firing!, OPTIONS);
    assert.deepEqual(a.labels, { severity: 'warning', alertname: 'EventBurst', namespace: 'prod', kind: 'Pod', name: 'web-1', reason: 'BackOff', type: 'Warning', cluster: 'east' });
    assert.deepEqual(a.annotations, { message: 'Back-off restarting failed container (1)', count: '1', since: '2025-01-01T00:00:00.000Z' });
    assert.equal(a.startsAt, '2025-01-01T00:00:00.000Z');
    assert.equal(a.endsAt, undefined);
    assert.equal(a.generatorURL, 'https://kevents.example.com/#/timeline?ns=prod&from=2024-12-31T23%3A55%3A00.000Z&object=Pod%2Fprod%2Fweb-1');
    const b = alertmanagerAlert(again!, OPTIONS);
    assert.deepEqual(b.labels, a.labels, 'a resend is the same alert');
    assert.equal(b.annotations.count, '5');
    const c = alertmanagerAlert(resolved!, OPTIONS);
    assert.deepEqual(c.labels, a.labels);
    assert.equal(c.startsAt, a.startsAt);
    assert.equal(c.endsAt, '2025-01-01T00:00:30.000Z');
  });

  void it('carries the cause as an annotation, never as a label, and leaves it out when there is none', () => {
    const p = createAlertPolicy({ ...DEFAULT_ALERT, groupWaitMs: 0 }, undefined, undefined);
    const cause = 'Pod "web-1" is crash-looping: container "app" keeps exiting.';
    p.observe({ ...fields({ count: 1 }), cause }, T0);
    const [firing] = p.tick(T0 + 1);
    const a = alertmanagerAlert(firing!, OPTIONS);
    assert.equal(a.annotations.cause, cause);
    assert.ok(!Object.values(a.labels).includes(cause));
    assert.ok(!Object.hasOwn(alertmanagerAlert({ ...firing!, fields: { ...firing!.fields, cause: '' } }, OPTIONS).annotations, 'cause'));
  });

  void it('keeps only the labels a grouped burst holds constant', () => {
    assert.deepEqual(stableLabels(['namespace', 'reason']), ['namespace', 'reason']);
    assert.deepEqual(stableLabels(['regarding.name', 'reason', 'cluster']), ['name', 'reason', 'cluster']);
  });
});

void describe('alertmanager sink', () => {
  const servers: { close(): void }[] = [];
  after(() => servers.forEach((s) => s.close()));
  const listen = async (status: number, got: unknown[][]): Promise<string> => {
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        got.push(JSON.parse(body) as unknown[]);
        res.writeHead(status);
        res.end();
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const sink = (urls: string[]) => alertmanagerSinkType.create({ ...OPTIONS, urls, timeoutMs: 2_000 }, { logger: noopLogger, env: {} });
  const record = () => {
    const p = createAlertPolicy({ ...DEFAULT_ALERT, groupWaitMs: 0 }, undefined, undefined);
    p.observe(fields({ count: 1 }), T0);
    return p.tick(T0 + 1);
  };

  void it('posts every alert to each Alertmanager, and is delivered while one of them takes it', async () => {
    const a: unknown[][] = [];
    const b: unknown[][] = [];
    const urls = [await listen(200, a), await listen(200, b), 'http://127.0.0.1:1'];
    await sink(urls).send(record(), AbortSignal.timeout(5_000));
    assert.equal(a.length, 1);
    assert.equal(b.length, 1);
    assert.deepEqual(a[0], b[0]);
  });

  void it('fails when no Alertmanager takes the alerts: unavailable is retried, a refusal by all is a refusal', async () => {
    await assert.rejects(sink(['http://127.0.0.1:1']).send(record(), AbortSignal.timeout(5_000)), (e: Error) => !isSinkRejected(e));
    const refusing = await listen(400, []);
    await assert.rejects(sink([refusing]).send(record(), AbortSignal.timeout(5_000)), (e: Error) => isSinkRejected(e));
    await assert.rejects(sink([refusing, 'http://127.0.0.1:1']).send(record(), AbortSignal.timeout(5_000)), (e: Error) => !isSinkRejected(e));
  });
});
