import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { API, direct, GROUP, kubeconfigWithCert, startAggregatedArchive } from './support/aggregated-archive.js';
import type { AggregatedArchive } from './support/aggregated-archive.js';
import type { ControlPlane } from './support/control-plane.js';
import { run } from './support/run.js';
import type { Run } from './support/run.js';
import { CLI, startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';

/**
 * The archive in the cluster's own API (set up by support/aggregated-archive.ts): a real kube-apiserver with the
 * aggregation layer's flags proxies `archive.kevents.io/v1alpha1` (an APIService, an ExternalName Service to
 * localhost) to a `kevents serve` that trusts its front-proxy certificate and authorizes each user again with
 * SubjectAccessReview. kubectl (the one on PATH) reads incidents as two users with Roles in two
 * namespaces; kevents itself refuses forged headers, a certificate of another CA and a name not allowed.
 */

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

describe('the archive through the aggregation layer', { timeout: 600_000 }, () => {
  let archive: AggregatedArchive | undefined;
  let dir: string;
  let cp: ControlPlane;
  let kevents: ServerProcess;
  let kubectl: AggregatedArchive['kubectl'];
  let fp: AggregatedArchive['fp'];

  before(async () => {
    archive = await startAggregatedArchive();
    ({ dir, cp, kevents, kubectl, fp } = archive);
  });

  after(async () => {
    await archive?.stop();
  });

  it('lists the group in kubectl api-resources and in both discovery documents', async () => {
    const r = await kubectl('alice', ['api-resources', '--api-group', GROUP, '--no-headers']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      r.stdout.trim().split('\n').map((l) => l.split(/\s+/).filter((c) => c !== '')[0]).sort(),
      ['events', 'incidents', 'occurrences'],
    );
    const v1 = await kubectl('alice', ['get', '--raw', API]);
    assert.deepEqual((JSON.parse(v1.stdout) as { resources: { name: string }[] }).resources.map((x) => x.name), ['events', 'incidents', 'occurrences']);
  });

  it('prints the incidents of shop as a table, and -o json as a List of Incident', async () => {
    const table = await kubectl('alice', ['get', 'incidents', '-n', 'shop']);
    assert.equal(table.code, 0, table.stderr);
    const [head, row, ...rest] = table.stdout.trimEnd().split('\n');
    assert.match(head!, /^NAME\s+STATUS\s+SINCE\s+ROOT\s+CAUSE$/);
    assert.match(row!, /^replicaset\.web-7d4b9c8f5\s+Ongoing\s+2\dm\s+ReplicaSet\/web-7d4b9c8f5\s+ReplicaSet "web-7d4b9c8f5" cannot create pods: ResourceQuota "compute" would be exceeded/);
    assert.deepEqual(rest, []);
    const json = await kubectl('alice', ['get', 'incidents', '-n', 'shop', '-o', 'json']);
    assert.equal(json.code, 0, json.stderr);
    const list = JSON.parse(json.stdout) as { kind: string; items: { apiVersion: string; kind: string; metadata: { name: string; namespace: string }; status: { kind: string; occurrences: number } }[] };
    assert.equal(list.kind, 'List');
    assert.deepEqual(
      list.items.map((i) => [i.apiVersion, i.kind, i.metadata.namespace, i.metadata.name, i.status.kind, i.status.occurrences]),
      [[`${GROUP}/v1alpha1`, 'Incident', 'shop', 'replicaset.web-7d4b9c8f5', 'create-forbidden-quota', 7]],
    );
    const one = await kubectl('alice', ['get', 'incident', 'replicaset.web-7d4b9c8f5', '-n', 'shop', '-o', 'jsonpath={.status.root}']);
    assert.equal(one.code, 0, one.stderr);
    assert.equal(one.stdout, 'ReplicaSet/web-7d4b9c8f5');
  });

  it("prints the archive's events (events.archive.kevents.io) with kubectl's event columns", async () => {
    const r = await kubectl('alice', ['get', `events.${GROUP}`, '-n', 'shop']);
    assert.equal(r.code, 0, r.stderr);
    const [head, row, ...rest] = r.stdout.trimEnd().split('\n');
    assert.match(head!, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
    assert.match(row!, /^\S+\s+Warning\s+FailedCreate\s+replicaset\/web-7d4b9c8f5\s+Error creating: pods "web-7d4b9c8f5-x" is forbidden: exceeded quota: compute/);
    assert.deepEqual(rest, []);
    const other = await kubectl('bob', ['get', `events.${GROUP}`, '-n', 'shop']);
    assert.match(other.stderr, /Forbidden.*User "bob" cannot list resource "events" in API group "archive\.kevents\.io"/);
  });

  it("lists incidents through client-node's CustomObjectsApi as alice, and is refused pay", async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigWithCert(cp, 'alice', dir));
    const api = kc.makeApiClient(CustomObjectsApi);
    const list = (await api.listNamespacedCustomObject({ group: GROUP, version: 'v1alpha1', namespace: 'shop', plural: 'incidents' })) as { kind: string; items: { metadata: { name: string } }[] };
    assert.equal(list.kind, 'IncidentList');
    assert.deepEqual(list.items.map((i) => i.metadata.name), ['replicaset.web-7d4b9c8f5']);
    await assert.rejects(api.listNamespacedCustomObject({ group: GROUP, version: 'v1alpha1', namespace: 'pay', plural: 'incidents' }), (e: { code?: number }) => e.code === 403);
  });

  it('runs kevents read commands as kubectl kevents through the current context, under the cluster\'s RBAC', async () => {
    // kubectl finds the plugin on PATH, as npm's bin link puts it there.
    const bin = join(dir, 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'kubectl-kevents'), `#!/bin/sh\nexec "${process.execPath}" "${join(CLI, '..', 'kubectl-kevents.js')}" "$@"\n`);
    chmodSync(join(bin, 'kubectl-kevents'), 0o755);
    const plugin = (user: string, args: string[]): Promise<Run> =>
      run('kubectl', ['kevents', ...args], { env: { KUBECONFIG: kubeconfigWithCert(cp, user, dir), PATH: `${bin}:${process.env.PATH ?? ''}` }, timeoutMs: 60_000 });
    const incidents = await plugin('alice', ['incidents', '-n', 'shop', '--since', '1h']);
    assert.equal(incidents.code, 0, incidents.stderr);
    assert.match(incidents.stdout, /ReplicaSet\/web-7d4b9c8f5/);
    assert.match(incidents.stdout, /ResourceQuota "compute" would be exceeded/);
    const search = await plugin('alice', ['search', 'quota', '-n', 'shop']);
    assert.equal(search.code, 0, search.stderr);
    assert.match(search.stdout, /FailedCreate/);
    const refused = await plugin('bob', ['incidents', '-n', 'shop', '--since', '1h']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /Forbidden/);
  });

  it('searches and reads a timeline through --raw and occurrences as a resource, authorized by both the cluster and kevents', async () => {
    const r = await kubectl('alice', ['get', '--raw', `${API}/namespaces/shop/search?q=quota`]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /exceeded quota: compute/);
    const timeline = await kubectl('alice', ['get', '--raw', `${API}/namespaces/shop/timeline?for=replicaset/web-7d4b9c8f5`]);
    assert.equal(timeline.code, 0, timeline.stderr);
    assert.ok((JSON.parse(timeline.stdout) as { rows: { reason: string }[] }).rows.some((row) => row.reason === 'FailedCreate'), timeline.stdout.slice(0, 400));
    const occurrences = await kubectl('alice', ['get', 'occurrences', '-n', 'shop']);
    assert.equal(occurrences.code, 0, occurrences.stderr);
    assert.match(occurrences.stdout, /FailedCreate\s+replicaset\/web-7d4b9c8f5/);
  });

  it('refuses another namespace and another user (403 from kube-apiserver)', async () => {
    const other = await kubectl('alice', ['get', 'incidents', '-n', 'pay']);
    assert.notEqual(other.code, 0);
    assert.match(other.stderr, /Forbidden.*User "alice" cannot list resource "incidents" in API group "archive\.kevents\.io" in the namespace "pay"/);
    const bob = await kubectl('bob', ['get', 'incidents', '-n', 'shop']);
    assert.notEqual(bob.code, 0);
    assert.match(bob.stderr, /Forbidden.*User "bob" cannot list resource "incidents"/);
    const all = await kubectl('alice', ['get', 'incidents', '-A']);
    assert.match(all.stderr, /Forbidden/);
    const admin = await kubectl('admin', ['get', 'incidents', '-A']);
    assert.equal(admin.code, 0, admin.stderr);
    assert.match(admin.stdout, /^NAMESPACE\s+NAME\s+STATUS\s+SINCE\s+ROOT\s+CAUSE\nshop\s+replicaset\.web-7d4b9c8f5\s+Ongoing/);
  });

  it('authorizes a direct request with the proxy certificate again: a user is allowed only what RBAC gives', async () => {
    const caFile = join(dir, 'kevents-ca.crt');
    const allowed = await direct(kevents.url, caFile, `${API}/namespaces/shop/incidents`, { cert: fp('front-proxy-client'), headers: { 'X-Remote-User': 'alice' } });
    assert.equal(allowed.status, 200, allowed.text);
    assert.equal(allowed.json.items.length, 1);
    const elsewhere = await direct(kevents.url, caFile, `${API}/namespaces/pay/incidents`, { cert: fp('front-proxy-client'), headers: { 'X-Remote-User': 'alice' } });
    assert.equal(elsewhere.status, 403, elsewhere.text);
    assert.match(elsewhere.json.message, /User "alice" cannot list resource "incidents" in API group "archive\.kevents\.io" in the namespace "pay"/);
    const bob = await direct(kevents.url, caFile, `${API}/namespaces/shop/incidents`, { cert: fp('front-proxy-client'), headers: { 'X-Remote-User': 'bob' } });
    assert.equal(bob.status, 403, bob.text);
  });

  it('refuses forged headers without the certificate, a certificate of another CA and a name not allowed (401)', async () => {
    const caFile = join(dir, 'kevents-ca.crt');
    const forged = { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' };
    for (const cert of [undefined, fp('other-proxy'), fp('intruder')]) {
      const r = await direct(kevents.url, caFile, `${API}/incidents`, { ...(cert !== undefined ? { cert } : {}), headers: forged });
      assert.equal(r.status, 401, `${cert?.[0] ?? 'no certificate'}: ${r.text}`);
      assert.equal(r.json.reason, 'Unauthorized');
    }
  });

  it("reads the front proxy's CA and names from the cluster's extension-apiserver-authentication with --delegate-auth alone", async () => {
    const second = await startServer([
      '--tls-cert-file', join(dir, 'kevents.crt'),
      '--tls-private-key-file', join(dir, 'kevents.key'),
      '--delegate-auth', '--delegate-auth-kubeconfig', cp.kubeconfigFile(),
    ]);
    try {
      const caFile = join(dir, 'kevents-ca.crt');
      const path = `${API}/namespaces/shop/incidents`;
      assert.equal((await direct(second.url, caFile, path, { cert: fp('front-proxy-client'), headers: { 'X-Remote-User': 'alice' } })).status, 200);
      assert.equal((await direct(second.url, caFile, path, { cert: fp('front-proxy-client'), headers: { 'X-Remote-User': 'bob' } })).status, 403);
      // The ConfigMap names front-proxy-client alone, and its CA alone.
      assert.equal((await direct(second.url, caFile, path, { cert: fp('intruder'), headers: { 'X-Remote-User': 'alice' } })).status, 401);
      assert.equal((await direct(second.url, caFile, path, { cert: fp('other-proxy'), headers: { 'X-Remote-User': 'alice' } })).status, 401);
    } finally {
      await second.stop();
    }
  });

  it('measures kubectl get incidents -A through the aggregator against kevents directly', async (t) => {
    const direct = join(dir, 'direct.kubeconfig');
    writeFileSync(direct, readFileSync(cp.kubeconfigFile(), 'utf8').replace(cp.url, kevents.url).replace(cp.caFile, join(dir, 'kevents-ca.crt')));
    const times = async (kubeconfig: string): Promise<number[]> => {
      const out: number[] = [];
      // One discovery cache per route, kept from run to run as a user's is.
      const cache = mkdtempSync(join(tmpdir(), 'kevents-kubectl-cache-'));
      for (let i = 0; i < 20; i++) {
        const started = performance.now();
        const r = await run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', cache, 'get', 'incidents', '-A'], { env: { KUBECONFIG: '', HOME: cache } });
        out.push(performance.now() - started);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /replicaset\.web-7d4b9c8f5/);
      }
      rmSync(cache, { recursive: true, force: true });
      return out.sort((a, b) => a - b);
    };
    const through = await times(cp.kubeconfigFile());
    const straight = await times(direct);
    t.diagnostic(`kubectl get incidents -A, 20 runs each: aggregator p50 ${percentile(through, 50).toFixed(0)} ms p99 ${percentile(through, 99).toFixed(0)} ms; direct p50 ${percentile(straight, 50).toFixed(0)} ms p99 ${percentile(straight, 99).toFixed(0)} ms`);
    // The request kubectl sends (a Table of every namespace's incidents), 200 times each way over kept-alive connections, without kubectl's start.
    const requests = async (url: string, caFile: string, servername: string): Promise<number[]> => {
      const agent = new Agent({ keepAlive: true, ca: readFileSync(caFile), servername });
      const out: number[] = [];
      try {
        for (let i = 0; i < 200; i++) {
          const started = performance.now();
          const status = await new Promise<number>((resolve, reject) => {
            const req = httpsRequest(new URL(`${API}/incidents`, url), { agent, headers: { Authorization: `Bearer ${cp.adminToken}`, Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' } }, (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            });
            req.on('error', reject);
            req.end();
          });
          out.push(performance.now() - started);
          assert.equal(status, 200);
        }
      } finally {
        agent.destroy();
      }
      return out.sort((a, b) => a - b);
    };
    const viaApi = await requests(cp.url, cp.caFile, '127.0.0.1');
    const toKevents = await requests(kevents.url, join(dir, 'kevents-ca.crt'), 'kevents.kevents.svc');
    t.diagnostic(`GET incidents as a Table, 200 requests each: aggregator p50 ${percentile(viaApi, 50).toFixed(1)} ms p99 ${percentile(viaApi, 99).toFixed(1)} ms; direct p50 ${percentile(toKevents, 50).toFixed(1)} ms p99 ${percentile(toKevents, 99).toFixed(1)} ms`);
  });
});
