import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { IncidentList } from '../src/api/index.js';
import { incidentDocument, incidentQueryParams, incidentsAnswer, incidentWindow, resolveIncidents } from '../src/api/index.js';
import { httpTimelineSource } from '../src/cli/read/timeline-source.js';
import { createReadClient, loadKubeConfig } from '../src/client/index.js';
import { collectIncidents } from '../src/diagnosis/index.js';
import { isoSecondsAgo, request } from './support/http.js';
import { runBuiltCli as cli } from './support/cli-process.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';

const ARCHIVE = '/apis/archive.kevents.io/v1alpha1';

/**
 * Issue 48's windows: a StatefulSet whose claim's StorageClass is missing
 * (its pod created 50 minutes ago) and an image that does not exist (the
 * registry's NotFound last said 6 minutes ago, the back-off still going), read
 * with windows shorter than the failures. The look-back gives a short window
 * the cause and the root the archive holds; the CLI, the served route and the
 * CLI's own build over any API server give one answer.
 */
describe('kevents incidents: look-back and one answer', () => {
  let srv: ServerProcess;
  const now = Date.now();
  const ago = (s: number) => isoSecondsAgo(s, now);
  const kubelet = { component: 'kubelet', host: 'node-1' };
  const pod = (namespace: string, name: string) => ({ kind: 'Pod', namespace, name, apiVersion: 'v1', uid: `uid-${name}` });
  const events: [string, Record<string, unknown>][] = [
    ['data', { metadata: { name: 'postgres.create' }, involvedObject: { kind: 'StatefulSet', namespace: 'data', name: 'postgres', apiVersion: 'apps/v1' }, reason: 'SuccessfulCreate', type: 'Normal', message: 'create Pod postgres-0 in StatefulSet postgres successful', count: 1, firstTimestamp: ago(50 * 60), lastTimestamp: ago(50 * 60), source: { component: 'statefulset-controller' } }],
    ['data', { metadata: { name: 'postgres-0.sched' }, involvedObject: pod('data', 'postgres-0'), reason: 'FailedScheduling', type: 'Warning', message: '0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.', count: 30, firstTimestamp: ago(45 * 60), lastTimestamp: ago(60), source: { component: 'default-scheduler' } }],
    ['data', { metadata: { name: 'data-postgres-0.prov' }, involvedObject: { kind: 'PersistentVolumeClaim', namespace: 'data', name: 'data-postgres-0', apiVersion: 'v1' }, reason: 'ProvisioningFailed', type: 'Warning', message: 'storageclass.storage.k8s.io "fast" not found', count: 200, firstTimestamp: ago(45 * 60), lastTimestamp: ago(60), source: { component: 'persistentvolume-controller' } }],
    ['img', { metadata: { name: 'web-1.pull' }, involvedObject: { ...pod('img', 'web-1'), fieldPath: 'spec.containers{web}' }, reason: 'Failed', type: 'Warning', message: 'Failed to pull image "registry.example/web:v9": rpc error: code = NotFound desc = failed to pull and unpack image "registry.example/web:v9": failed to resolve reference "registry.example/web:v9": registry.example/web:v9: not found', count: 4, firstTimestamp: ago(29 * 60), lastTimestamp: ago(6 * 60), source: kubelet }],
    ['img', { metadata: { name: 'web-1.backoff' }, involvedObject: { ...pod('img', 'web-1'), fieldPath: 'spec.containers{web}' }, reason: 'BackOff', type: 'Normal', message: 'Back-off pulling image "registry.example/web:v9"', count: 60, firstTimestamp: ago(29 * 60), lastTimestamp: ago(30), source: kubelet }],
    ['img', { metadata: { name: 'web-1.ipbo' }, involvedObject: { ...pod('img', 'web-1'), fieldPath: 'spec.containers{web}' }, reason: 'Failed', type: 'Warning', message: 'Error: ImagePullBackOff', count: 60, firstTimestamp: ago(29 * 60), lastTimestamp: ago(30), source: kubelet }],
  ];
  before(async () => {
    srv = await startServer(['--event-ttl', '0']);
    for (const [ns, e] of events) {
      const r = await request(srv.url, 'POST', `/api/v1/namespaces/${ns}/events`, e);
      assert.equal(r.status, 201, r.text);
    }
  });
  after(async () => {
    await srv.stop();
  });

  const incidents = async (args: string[]): Promise<IncidentList> => {
    const r = await cli(['incidents', '-A', '-o', 'json', '--server', srv.url, ...args]);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as IncidentList;
  };
  const summary = (l: IncidentList) => l.incidents.map((i) => [i.namespace, i.kind, i.root]);

  it('a window shorter than the failure takes its cause and its root from the look-back', async () => {
    const short = await incidents(['--since', '3m']);
    assert.deepEqual(summary(short), [
      ['img', 'image-not-found', 'Pod/web-1'],
      ['data', 'volume-provisioning', 'StatefulSet/postgres'],
    ]);
    const web = resolveIncidents(structuredClone(short)).incidents[0]!;
    assert.equal(web.facts.image, 'registry.example/web:v9');
    assert.equal(web.start.time, ago(29 * 60));
    // What the window counts stays the window's: the NotFound of 6 minutes ago is no evidence of a 3-minute window.
    assert.ok(web.evidence.every((row) => row.reason !== 'Failed' || row.message === 'Error: ImagePullBackOff'), JSON.stringify(web.evidence));
    // The same failing events in an hour's window: the same kinds and roots.
    assert.deepEqual(summary(await incidents(['--since', '1h'])), summary(short));
  });

  it('--look-back 0 reads nothing before the window', async () => {
    assert.deepEqual(summary(await incidents(['--since', '3m', '--look-back', '0'])), [
      ['img', 'image-pull-backoff', 'Pod/web-1'],
      ['data', 'volume-provisioning', 'Pod/postgres-0'],
    ]);
  });

  it('the CLI, the served route and the CLI\'s own build over the API give the same JSON for the same window', async () => {
    const sinceTime = new Date(now - 10 * 60_000).toISOString();
    for (const lookBack of ['24h', '0']) {
      const printed = await incidents(['--since-time', sinceTime, '--look-back', lookBack]);
      const w = incidentWindow({ sinceTime, lookBack }, Date.now());
      const api = await request(srv.url, 'GET', `${ARCHIVE}/incidents?${incidentQueryParams(w).toString()}`);
      assert.equal(api.status, 200, api.text);
      // -o json prints the document as served (the list kind's items' status), each repeated text once.
      assert.deepEqual(incidentDocument(api.json), printed, `lookBack ${lookBack}`);
      const client = createReadClient({ kubeConfig: await loadKubeConfig({ server: srv.url }) });
      const built = await collectIncidents({ source: httpTimelineSource(client), since: w.since, until: w.until, lookBack: w.lookBack });
      assert.deepEqual(incidentsAnswer(built, Infinity), printed, `lookBack ${lookBack}: built over the core/v1 and occurrences APIs`);
    }
  });

  it('the route refuses what the window reader refuses, naming the parameter', async () => {
    for (const [query, message] of [
      ['since=1h', /since: .*not an RFC 3339 time/],
      ['lookBack=8d', /lookBack: must be at most 7d/],
      [`since=${encodeURIComponent(ago(60))}&until=${encodeURIComponent(ago(120))}`, /until: must be after the start/],
    ] as const) {
      const r = await request(srv.url, 'GET', `${ARCHIVE}/incidents?${query}`);
      assert.equal(r.status, 400, r.text);
      assert.match(r.text, message);
    }
    const r = await cli(['incidents', '--look-back', 'forever', '--server', srv.url]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--look-back: invalid duration/);
  });
});

describe('kevents incidents: an answer the server ended short', () => {
  let srv: ServerProcess;
  before(async () => {
    srv = await startServer(['--event-ttl', '0', '--max-answer-bytes', '64KiB']);
    // 60 pods each with a Warning the catalogue does not know, its long message in each incident's cause and facts.
    for (let n = 0; n < 60; n++) {
      const e = {
        metadata: { name: `p-${n}.odd` },
        involvedObject: { kind: 'Pod', namespace: 'many', name: `p-${n}`, apiVersion: 'v1' },
        reason: 'SomethingOdd',
        type: 'Warning',
        message: `odd ${n} ${'x'.repeat(1200)}`,
        count: 1,
        firstTimestamp: isoSecondsAgo(600 - n),
        lastTimestamp: isoSecondsAgo(600 - n),
        source: { component: 'example-controller' },
      };
      const r = await request(srv.url, 'POST', '/api/v1/namespaces/many/events', e);
      assert.equal(r.status, 201, r.text);
    }
  });
  after(async () => {
    await srv.stop();
  });

  it('prints the incidents it got and says on stderr how many older ones were left out', async () => {
    const json = await cli(['incidents', '-n', 'many', '--since', '1h', '-o', 'json', '--server', srv.url]);
    assert.equal(json.code, 0, json.stderr);
    const list = JSON.parse(json.stdout) as IncidentList;
    assert.ok((list.incidentsLeftOut ?? 0) > 0, `nothing left out of ${list.incidents.length}`);
    assert.equal(list.incidents.length + list.incidentsLeftOut!, 60);
    const table = await cli(['incidents', '-n', 'many', '--since', '1h', '--server', srv.url]);
    assert.equal(table.code, 0, table.stderr);
    assert.equal(table.stdout.trimEnd().split('\n').length, 1 + list.incidents.length);
    assert.match(table.stderr, new RegExp(`^${list.incidentsLeftOut} older incidents left out of the server's answer \\(past its --max-answer-bytes\\)`, 'm'));
  });
});
