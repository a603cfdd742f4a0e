import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { startControlPlane } from './support/control-plane.js';
import type { ControlPlane } from './support/control-plane.js';
import { run } from './support/run.js';
import type { Run } from './support/run.js';
import { CLI, startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';

/**
 * The archive in the cluster's own API: a real kube-apiserver with the aggregation layer's flags
 * proxies `archive.kevents.io/v1alpha1` (an APIService, an ExternalName Service to localhost) to a
 * `kevents serve` that trusts its front-proxy certificate and authorizes each user again with
 * SubjectAccessReview. kubectl (the one on PATH) reads incidents as two users with Roles in two
 * namespaces; kevents itself refuses forged headers, a certificate of another CA and a name not allowed.
 */

const GROUP = 'archive.kevents.io';
const API = `/apis/${GROUP}/v1alpha1`;

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** ca writes a CA `name`.crt/.key. */
function ca(dir: string, name: string): void {
  openssl(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2', '-subj', `/CN=${name}`]);
}

/** leaf writes `name`.crt/.key for `subject`, signed by the CA `caName` (its files in `caDir`), with an extension file's text. */
function leaf(dir: string, name: string, subject: string, caDir: string, caName: string, ext: string): void {
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(dir, ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject]);
  openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', join(caDir, `${caName}.crt`), '-CAkey', join(caDir, `${caName}.key`), '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`]);
}

const CLIENT_EXT = 'extendedKeyUsage=clientAuth\n';

interface Answer {
  status: number;
  text: string;
  json: any;
}

/** direct sends one request straight to kevents, with a client certificate (its files) or none. */
function direct(url: string, caFile: string, path: string, options: { cert?: [string, string]; headers?: Record<string, string>; method?: string; body?: unknown } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      new URL(path, url),
      {
        method: options.method ?? 'GET',
        ca: readFileSync(caFile),
        servername: 'kevents.kevents.svc',
        headers: { Accept: 'application/json', ...options.headers },
        // A fresh connection each time: a kept-alive one would carry the first certificate over.
        agent: false,
        ...(options.cert !== undefined ? { cert: readFileSync(options.cert[0]), key: readFileSync(options.cert[1]) } : {}),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          let json: any;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, text, json });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body === undefined ? undefined : JSON.stringify(options.body));
  });
}

function kubeconfigWithCert(cp: ControlPlane, user: string, dir: string): string {
  const path = join(dir, `${user}.kubeconfig`);
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: test',
      '  cluster:',
      `    server: ${cp.url}`,
      `    certificate-authority: ${cp.caFile}`,
      'users:',
      `- name: ${user}`,
      '  user:',
      `    client-certificate: ${join(dir, `${user}.crt`)}`,
      `    client-key: ${join(dir, `${user}.key`)}`,
      'contexts:',
      '- name: test',
      '  context: {cluster: test, user: ' + user + '}',
      'current-context: test',
      '',
    ].join('\n'),
  );
  return path;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

describe('the archive through the aggregation layer', { timeout: 600_000 }, () => {
  let dir: string;
  let cp: ControlPlane;
  let kevents: ServerProcess;
  let kubectl: (user: string, args: string[]) => Promise<Run>;
  const fp = (name: string): [string, string] => [join(dir, `${name}.crt`), join(dir, `${name}.key`)];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kevents-aggregated-'));
    // The front proxy's CA and its client certificate, as kubeadm makes them; a second CA and a second name to refuse.
    ca(dir, 'front-proxy-ca');
    leaf(dir, 'front-proxy-client', '/CN=front-proxy-client', dir, 'front-proxy-ca', CLIENT_EXT);
    leaf(dir, 'intruder', '/CN=intruder', dir, 'front-proxy-ca', CLIENT_EXT);
    ca(dir, 'other-ca');
    leaf(dir, 'other-proxy', '/CN=front-proxy-client', dir, 'other-ca', CLIENT_EXT);
    // kevents' serving certificate: kube-apiserver checks it for the Service's name, kevents.kevents.svc.
    ca(dir, 'kevents-ca');
    leaf(dir, 'kevents', '/CN=kevents', dir, 'kevents-ca', 'subjectAltName=DNS:kevents.kevents.svc,DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');

    cp = await startControlPlane({
      extraArgs: [
        `--requestheader-client-ca-file=${join(dir, 'front-proxy-ca.crt')}`,
        '--requestheader-allowed-names=front-proxy-client',
        '--requestheader-username-headers=X-Remote-User',
        '--requestheader-group-headers=X-Remote-Group',
        '--requestheader-extra-headers-prefix=X-Remote-Extra-',
        `--proxy-client-cert-file=${join(dir, 'front-proxy-client.crt')}`,
        `--proxy-client-key-file=${join(dir, 'front-proxy-client.key')}`,
      ],
    });
    // Two users by client certificate (the control plane's CA), each with a Role in one namespace.
    for (const user of ['alice', 'bob']) leaf(dir, user, `/CN=${user}`, cp.dir, 'ca', CLIENT_EXT);
    kevents = await startServer([
      '--tls-cert-file', join(dir, 'kevents.crt'),
      '--tls-private-key-file', join(dir, 'kevents.key'),
      '--delegate-auth', '--delegate-auth-kubeconfig', cp.kubeconfigFile(),
      '--requestheader-client-ca-file', join(dir, 'front-proxy-ca.crt'),
      '--requestheader-allowed-names', 'front-proxy-client',
    ]);

    const apply = async (path: string, obj: unknown): Promise<void> => {
      const r = await cp.request('POST', path, obj);
      assert.ok(r.status === 201 || r.status === 409, `${path}: ${r.status} ${r.text}`);
    };
    for (const ns of ['kevents', 'shop', 'pay']) await apply('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await apply('/api/v1/namespaces/kevents/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'kevents', namespace: 'kevents' },
      spec: { type: 'ExternalName', externalName: 'localhost', ports: [{ name: 'https', port: kevents.port, protocol: 'TCP' }] },
    });
    await apply('/apis/apiregistration.k8s.io/v1/apiservices', {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: `v1alpha1.${GROUP}` },
      spec: {
        group: GROUP,
        version: 'v1alpha1',
        service: { namespace: 'kevents', name: 'kevents', port: kevents.port },
        caBundle: readFileSync(join(dir, 'kevents-ca.crt')).toString('base64'),
        groupPriorityMinimum: 1000,
        versionPriority: 15,
      },
    });
    const reader = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'archive-reader' },
      rules: [
        { apiGroups: [GROUP], resources: ['events', 'incidents', 'occurrences', 'search', 'timeline'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [''], resources: ['events'], verbs: ['get', 'list'] },
      ],
    };
    await apply('/apis/rbac.authorization.k8s.io/v1/clusterroles', reader);
    for (const [user, ns] of [['alice', 'shop'], ['bob', 'pay']] as const) {
      await apply(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: `${user}-archive`, namespace: ns },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'archive-reader' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
      });
    }

    // The events of an incident in shop, written straight to kevents with the admin's token (TokenReview).
    const now = Date.now();
    const at = (minutesAgo: number): string => new Date(now - minutesAgo * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'web-7d4b9c8f5.17a', namespace: 'shop' },
      involvedObject: { kind: 'ReplicaSet', namespace: 'shop', name: 'web-7d4b9c8f5', apiVersion: 'apps/v1' },
      reason: 'FailedCreate',
      type: 'Warning',
      message: 'Error creating: pods "web-7d4b9c8f5-x" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2',
      source: { component: 'replicaset-controller' },
      firstTimestamp: at(20),
      lastTimestamp: at(1),
      count: 7,
    };
    const posted = await direct(kevents.url, join(dir, 'kevents-ca.crt'), '/api/v1/namespaces/shop/events', {
      method: 'POST',
      body: event,
      headers: { Authorization: `Bearer ${cp.adminToken}`, 'Content-Type': 'application/json' },
    });
    assert.equal(posted.status, 201, posted.text);

    kubectl = (user, args) => {
      const cache = mkdtempSync(join(tmpdir(), 'kevents-kubectl-cache-'));
      const kubeconfig = user === 'admin' ? cp.kubeconfigFile() : kubeconfigWithCert(cp, user, dir);
      return run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', cache, ...args], { env: { KUBECONFIG: '', HOME: cache }, timeoutMs: 60_000 }).finally(() => rmSync(cache, { recursive: true, force: true }));
    };
    // The APIService is Available once kube-apiserver reached kevents' discovery, and RBAC has seen the bindings once alice may list.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const r = await kubectl('alice', ['get', '--raw', `${API}/namespaces/shop/incidents`]);
      if (r.code === 0) break;
      if (Date.now() > deadline) throw new Error(`the aggregated API never answered alice: ${r.stderr}\n${kevents.stderr()}\n${cp.logs()['kube-apiserver']?.slice(-4000) ?? ''}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  });

  after(async () => {
    await kevents?.stop();
    await cp?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
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
