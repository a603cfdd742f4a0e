import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { IncidentList, IncidentObjectList } from '../src/api/index.js';
import { isoSecondsAgo, request } from './support/http.js';
import { runBuiltCli as cli } from './support/cli-process.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';

/**
 * The user report: a Deployment whose ReplicaSet a ResourceQuota
 * refuses, 14 times over 28 minutes, read with `kevents incidents` from
 * `kevents serve`; the CLI and the server's API give the same incidents.
 */
describe('kevents incidents', () => {
  let srv: ServerProcess;
  const now = Date.now();
  const first = isoSecondsAgo(30 * 60, now);
  const last = isoSecondsAgo(2 * 60, now);
  const event = (name: string, body: Record<string, unknown>) => ({ metadata: { name }, source: { component: 'replicaset-controller' }, count: 1, ...body });
  before(async () => {
    srv = await startServer(['--event-ttl', '0']);
    for (const [ns, e] of [
      ['shop', event('web.scale', { involvedObject: { kind: 'Deployment', namespace: 'shop', name: 'web', apiVersion: 'apps/v1' }, reason: 'ScalingReplicaSet', type: 'Normal', message: 'Scaled up replica set web-7d4b9c8f5 to 3', firstTimestamp: first, lastTimestamp: first, source: { component: 'deployment-controller' } })],
      [
        'shop',
        event('web-7d4b9c8f5.quota', {
          involvedObject: { kind: 'ReplicaSet', namespace: 'shop', name: 'web-7d4b9c8f5', apiVersion: 'apps/v1' },
          reason: 'FailedCreate',
          type: 'Warning',
          message: 'Error creating: pods "web-7d4b9c8f5-x2x7k" is forbidden: exceeded quota: compute-resources, requested: limits.memory=2Gi, used: limits.memory=7Gi, limited: limits.memory=8Gi',
          count: 14,
          firstTimestamp: first,
          lastTimestamp: last,
        }),
      ],
      ['pay', event('api-1.backoff', { involvedObject: { kind: 'Pod', namespace: 'pay', name: 'api-1', apiVersion: 'v1', fieldPath: 'spec.containers{api}' }, reason: 'BackOff', type: 'Warning', message: 'Back-off restarting failed container api in pod api-1_pay(u)', count: 3, firstTimestamp: isoSecondsAgo(10 * 60, now), lastTimestamp: isoSecondsAgo(60, now), source: { component: 'kubelet', host: 'node-1' } })],
    ] as const) {
      const r = await request(srv.url, 'POST', `/api/v1/namespaces/${ns}/events`, e);
      assert.equal(r.status, 201, r.text);
    }
  });
  after(async () => {
    await srv.stop();
  });

  it('prints one line per incident, with its status, start, root and cause', async () => {
    const r = await cli(['incidents', '-n', 'shop', '--since', '1h', '--server', srv.url]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^STATUS +SINCE +ROOT +CAUSE$/);
    assert.equal(lines.length, 2, r.stdout);
    assert.match(lines[1]!, /^ongoing +30m +Deployment\/web +ReplicaSet "web-7d4b9c8f5" cannot create pods: ResourceQuota "compute-resources" would be exceeded \(requested "limits\.memory=2Gi", used "limits\.memory=7Gi", limited "limits\.memory=8Gi"\)\.$/);
  });

  it('-A -o json: every namespace, most recent first, the same as the server\'s API', async () => {
    const r = await cli(['incidents', '-A', '--since', '1h', '-o', 'json', '--server', srv.url]);
    assert.equal(r.code, 0, r.stderr);
    const list = JSON.parse(r.stdout) as IncidentList;
    assert.deepEqual(
      list.incidents.map((i) => [i.namespace, i.kind, i.root]),
      [
        ['pay', 'crash-loop', 'Pod/api-1'],
        ['shop', 'create-forbidden-quota', 'Deployment/web'],
      ],
    );
    const quota = list.incidents[1]!;
    assert.deepEqual(quota.start, { time: first, estimated: false });
    assert.equal(quota.lastSeen, last);
    assert.equal(quota.occurrences, 14);
    assert.deepEqual(quota.objects, ['Deployment/web', 'ReplicaSet/web-7d4b9c8f5']);
    assert.deepEqual(quota.hints[0], { command: 'kubectl describe resourcequota compute-resources -n shop', why: "the quota's limits and what is already used against them" });
    const api = await request(srv.url, 'GET', `/apis/archive.kevents.io/v1alpha1/incidents?since=${encodeURIComponent(list.window.since!)}`);
    assert.equal(api.status, 200, api.text);
    // The route answers the list kind: each item's status is an incident of the CLI's document.
    const served = api.json as IncidentObjectList;
    assert.equal(served.kind, 'IncidentList');
    assert.deepEqual(
      served.items.map(({ status: i }) => [i.kind, i.root, i.cause, i.start, i.occurrences]),
      list.incidents.map((i) => [i.kind, i.root, i.cause, i.start, i.occurrences]),
    );
  });

  it('-o markdown gives each incident its next steps', async () => {
    const r = await cli(['incidents', '-n', 'pay', '-o', 'markdown', '--server', srv.url]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\| ongoing \| .* \| pay \| `Pod\/api-1` \| Container "api" of pod "api-1" is crash-looping; events do not record why: read its last state and logs\. \|/);
    assert.match(r.stdout, /```sh\n {2}kubectl logs api-1 -n pay -c api --previous\n/);
  });

  it('refuses a bad flag with a usage error', async () => {
    const r = await cli(['incidents', '--since', '1h', '--since-time', '2026-01-01T00:00:00Z', '--server', srv.url]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /at most one of --since or --since-time/);
  });
});
