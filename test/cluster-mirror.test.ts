import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { startControlPlane } from './support/control-plane.js';
import type { ControlPlane } from './support/control-plane.js';
import { legacyEvent, request } from './support/http.js';
import { findKubectls, runKubectl } from './support/kubectl.js';
import { CLI, startServer } from './support/server-process.js';
import { mirrorMetric, waitForMirror } from './support/mirror-process.js';
import type { MirrorProcess } from './support/mirror-process.js';
import { makeCertificates } from './support/tls.js';

/**
 * kevents inside a cluster, on the real kube-apiserver of the test suite: the RBAC of
 * deploy/ applied as is, the mirror running with that service account's token (read
 * the way a pod reads it, KUBERNETES_SERVICE_HOST and the mounted token, CA and
 * namespace), and two leader-elected mirror replicas over one PostgreSQL archive
 * whose leader is killed with SIGKILL under load, three times.
 */

const POSTGRES_URL = process.env.KEVENTS_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:55432/test';
const DEPLOY = new URL('../deploy/kustomize/', import.meta.url).pathname;
const kubectl = findKubectls().at(-1)!;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(what: string, fn: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(200);
  }
}

function kubectlRun(cp: ControlPlane, args: string[], input?: string): string {
  return execFileSync(kubectl.path, ['--kubeconfig', cp.kubeconfigFile(), ...args], { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** serviceAccountDir writes what the kubelet mounts in a pod: a fresh token of kevents/kevents, the CA and the namespace. */
function serviceAccountDir(cp: ControlPlane): string {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-sa-'));
  writeFileSync(join(dir, 'token'), kubectlRun(cp, ['create', 'token', 'kevents', '-n', 'kevents', '--duration', '2h']).trim());
  copyFileSync(cp.caFile, join(dir, 'ca.crt'));
  writeFileSync(join(dir, 'namespace'), 'kevents');
  return dir;
}

type Mirror = MirrorProcess;

function startMirror(cp: ControlPlane, saDir: string, args: string[]): Promise<Mirror> {
  const url = new URL(cp.url);
  const child = spawn(process.execPath, ['--enable-source-maps', CLI, 'mirror', '--cluster', 'lab', '--listen', '127.0.0.1:0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, KUBERNETES_SERVICE_HOST: url.hostname, KUBERNETES_SERVICE_PORT: url.port, KEVENTS_SERVICE_ACCOUNT_DIR: saDir, KUBECONFIG: '/dev/null' },
  });
  return waitForMirror(child);
}

async function isLeader(m: Mirror): Promise<boolean> {
  try {
    const text = await (await fetch(`${m.metricsUrl}/metrics`)).text();
    return /^kevents_mirror_leader 1$/m.test(text);
  } catch {
    return false;
  }
}

async function kill(m: Mirror, signal: NodeJS.Signals): Promise<void> {
  if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill(signal);
  await m.exited;
}

const CORE = '/api/v1/namespaces/default/events';

async function kubectlLikeRequest(url: string, caFile: string, method: string, path: string, body: unknown, token: string): Promise<{ status: number; text: string; json: unknown }> {
  const { request: httpsRequest } = await import('node:https');
  const { readFileSync } = await import('node:fs');
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      new URL(path, url),
      { method, ca: readFileSync(caFile), headers: { Accept: 'application/json', Authorization: `Bearer ${token}`, ...(payload !== undefined ? { 'Content-Type': 'application/json' } : {}) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, json: JSON.parse(text) as unknown }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

void describe('kevents in the cluster', { timeout: 600_000 }, () => {
  let cp: ControlPlane;
  let saDir: string;
  const mirrors: Mirror[] = [];
  const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
  const schema = `kevents_cluster_${process.pid}`;
  before(async () => {
    cp = await startControlPlane();
    // The manifests as a user applies them: the whole postgres overlay, RBAC included.
    kubectlRun(cp, ['apply', '-k', join(DEPLOY, 'overlays/postgres')]);
    saDir = serviceAccountDir(cp);
  });
  after(async () => {
    for (const m of mirrors) await kill(m, 'SIGKILL');
    await cp?.stop();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  void it('the manifests pass kubectl apply --dry-run=server, both overlays', () => {
    for (const overlay of ['sqlite', 'postgres']) {
      const out = kubectlRun(cp, ['apply', '--dry-run=server', '-k', join(DEPLOY, 'overlays', overlay)]);
      assert.match(out, /deployment\.apps\/kevents (configured|unchanged|created) \(server dry run\)/, out);
      assert.match(out, /clusterrole\.rbac\.authorization\.k8s\.io\/kevents-mirror .*\(server dry run\)/, out);
    }
  });

  void it('the service account may list and watch events in both groups, get the kube-system namespace and use its Lease, and nothing else', async () => {
    const token = execFileSync('cat', [join(saDir, 'token')], { encoding: 'utf8' });
    const as = (method: string, path: string, body?: unknown): Promise<number> => cp.request(method, path, body, { token }).then((r) => r.status);
    assert.equal(await as('GET', '/api/v1/events'), 200);
    assert.equal(await as('GET', '/apis/events.k8s.io/v1/events?limit=1'), 200);
    assert.equal(await as('GET', '/api/v1/namespaces/default/events'), 200);
    // The cluster's identity: that one namespace, read only.
    assert.equal(await as('GET', '/api/v1/namespaces/kube-system'), 200);
    const merge = { contentType: 'application/merge-patch+json', token };
    const denied: [string, string, unknown?][] = [
      ['GET', '/api/v1/namespaces/default'],
      ['GET', '/api/v1/namespaces/kevents'],
      ['GET', '/api/v1/namespaces'],
      ['GET', '/api/v1/namespaces?watch=true&fieldSelector=metadata.name%3Dkube-system'],
      ['DELETE', '/api/v1/namespaces/kube-system'],
      ['POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'forged' } }],
      ['GET', '/api/v1/namespaces/kube-system/configmaps'],
      ['POST', CORE, legacyEvent({ name: 'forged', object: 'x', reason: 'R', message: 'm', firstAgo: 1, lastAgo: 1 })],
      ['GET', `${CORE}/some-event`],
      ['DELETE', `${CORE}/some-event`],
      ['GET', '/api/v1/pods'],
      ['GET', '/api/v1/namespaces/kevents/secrets'],
      ['GET', '/apis/apps/v1/deployments'],
      ['GET', '/apis/coordination.k8s.io/v1/namespaces/kevents/leases/other'],
      ['GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/kevents-mirror'],
      ['DELETE', '/apis/coordination.k8s.io/v1/namespaces/kevents/leases/kevents-mirror'],
    ];
    for (const [method, path, body] of denied) assert.equal(await as(method, path, body), 403, `${method} ${path}`);
    for (const verb of ['PATCH', 'PUT'] as const) {
      const body = verb === 'PATCH' ? { metadata: { labels: { forged: 'yes' } } } : (await cp.request('GET', '/api/v1/namespaces/kube-system')).json;
      const r = await cp.request(verb, '/api/v1/namespaces/kube-system', body, verb === 'PATCH' ? merge : { token });
      assert.equal(r.status, 403, `${verb} kube-system: ${r.text}`);
    }
    const forbidden = await cp.request('POST', CORE, denied[0]![2], { token });
    assert.equal(forbidden.json.message, 'events is forbidden: User "system:serviceaccount:kevents:kevents" cannot create resource "events" in API group "" in the namespace "default"');
  });

  void it('the mirror, in-cluster with that token, archives the cluster\'s events', async () => {
    for (let i = 0; i < 5; i++) {
      const r = await cp.request('POST', CORE, legacyEvent({ name: `rbac-${i}`, object: `web-${i}`, reason: 'Started', message: 'Started container', firstAgo: 5, lastAgo: 5 }));
      assert.equal(r.status, 201, r.text);
    }
    const file = join(mkdtempSync(join(tmpdir(), 'kevents-cluster-')), 'archive.db');
    const m = await startMirror(cp, saDir, ['--to', `sqlite:${file}`]);
    mirrors.push(m);
    assert.match(m.output(), new RegExp(`kevents mirror: ${cp.url.replace(/[.]/g, '\\.')} -> `));
    await until('the mirror is ready', async () => (await fetch(`${m.metricsUrl}/readyz`)).status === 200);
    let metrics = '';
    try {
      await until('the events are archived', async () => {
        metrics = await (await fetch(`${m.metricsUrl}/metrics`)).text();
        // The control plane may write events of its own meanwhile (a node's, a lease's): the five are among them.
        return Number(/^kevents_mirror_events_written_total (\d+)/m.exec(metrics)?.[1] ?? 0) >= 5;
      });
    } catch (err) {
      // What the mirror said and counted, so that a failure here can be read without running it again.
      const counted = metrics.split('\n').filter((l) => l.startsWith('kevents_mirror_')).join('\n');
      throw new Error(`${(err as Error).message}\n--- the mirror's metrics:\n${counted}\n--- its output:\n${m.output()}`);
    }
    await kill(m, 'SIGTERM');
    assert.equal(m.child.exitCode, 0, m.output());
    assert.doesNotMatch(m.output(), /forbidden/i);
    const archive = await startServer(['--storage', `sqlite:${file}`, '--event-ttl', '0']);
    try {
      const r = await request(archive.url, 'GET', CORE);
      const items = r.json.items as { metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> } }[];
      assert.deepEqual(items.map((e) => e.metadata.name).filter((n) => n.startsWith('rbac-')).sort(), ['rbac-0', 'rbac-1', 'rbac-2', 'rbac-3', 'rbac-4']);
      // The service account read the cluster's identity: every event is archived under it.
      const uid = (await cp.request('GET', '/api/v1/namespaces/kube-system')).json.metadata.uid as string;
      assert.match(uid, /^[0-9a-f-]{36}$/);
      for (const e of items) {
        assert.equal(e.metadata.labels?.['archive.kevents.io/cluster'], 'lab', e.metadata.name);
        assert.equal(e.metadata.annotations?.['archive.kevents.io/cluster-uid'], uid, e.metadata.name);
      }
    } finally {
      await archive.stop();
    }
  });

  void it('kevents serve --mirror in-cluster archives with the service account and serves what it archived', async () => {
    const url = new URL(cp.url);
    const file = join(mkdtempSync(join(tmpdir(), 'kevents-serve-mirror-')), 'archive.db');
    const server = await startServer(['--storage', `sqlite:${file}`, '--event-ttl', '0', '--mirror', 'in-cluster', '--cluster', 'lab'], {
      KUBERNETES_SERVICE_HOST: url.hostname,
      KUBERNETES_SERVICE_PORT: url.port,
      KEVENTS_SERVICE_ACCOUNT_DIR: saDir,
    });
    try {
      await until('the cluster\'s events are served from the archive', async () => {
        const r = await request(server.url, 'GET', CORE);
        return (r.json.items as { metadata: { name: string } }[]).filter((e) => e.metadata.name.startsWith('rbac-')).length === 5;
      });
      assert.equal((await request(server.url, 'GET', '/readyz')).status, 200);
    } finally {
      await server.stop();
    }
  });

  void it('kevents serve --delegate-auth asks the cluster (TokenReview, SubjectAccessReview) and answers exactly as kube-apiserver does', async () => {
    const token = execFileSync('cat', [join(saDir, 'token')], { encoding: 'utf8' });
    const certs = makeCertificates();
    const server = await startServer(['--tls-cert-file', certs.certFile, '--tls-private-key-file', certs.keyFile, '--delegate-auth', '--delegate-auth-kubeconfig', cp.kubeconfigFile()]);
    try {
      const body = legacyEvent({ name: 'delegated', object: 'x', reason: 'R', message: 'm', firstAgo: 1, lastAgo: 1 });
      for (const [method, path, withBody, who] of [
        ['POST', CORE, true, token],
        ['DELETE', `${CORE}/delegated`, false, token],
        ['GET', '/apis/events.k8s.io/v1/namespaces/kube-system/events/x', false, token],
        ['GET', '/api/v1/events', false, 'not-a-token'],
      ] as const) {
        const upstream = await cp.request(method, path, withBody ? body : undefined, { token: who });
        const ours = await kubectlLikeRequest(server.url, certs.caFile, method, path, withBody ? body : undefined, who);
        assert.equal(ours.status, upstream.status, `${method} ${path}: ${ours.text}`);
        assert.deepEqual(ours.json, upstream.json, `${method} ${path}`);
      }
      // The service account may list events: kevents lets it (a SubjectAccessReview said so).
      assert.equal((await kubectlLikeRequest(server.url, certs.caFile, 'GET', '/api/v1/events', undefined, token)).status, 200);
      // kubectl prints the same refusal from both servers.
      const create = (url: string, ca: string): Promise<{ code: number; stderr: string }> =>
        runKubectl(kubectl, url, ['--certificate-authority', ca, '--token', token, 'create', '-f', '-'], { input: JSON.stringify(body) });
      const fromKevents = await create(server.url, certs.caFile);
      const fromUpstream = await create(cp.url, cp.caFile);
      assert.equal(fromKevents.code, 1);
      assert.equal(fromKevents.stderr, fromUpstream.stderr);
      assert.match(fromKevents.stderr, /User "system:serviceaccount:kevents:kevents" cannot create resource "events"/);
    } finally {
      await server.stop();
    }
  });

  void it('two leader-elected replicas, the leader killed with SIGKILL under load three times: every event and every change archived exactly once', async (t) => {
    const leaseMs = 3_000;
    const flags = ['--to', `${POSTGRES_URL}?schema=${schema}`, '--leader-elect', '--leader-elect-lease-duration', '3s', '--leader-elect-renew-deadline', '2s', '--leader-elect-retry-period', '500ms'];
    mirrors.push(await startMirror(cp, saDir, flags), await startMirror(cp, saDir, flags));
    // The load bumps its events, so it starts once a leader has committed its first list: a bump
    // that list already saw would be folded into the event's first archived state.
    await until('a replica leads and has listed the source', async () => {
      for (const m of mirrors) if ((await isLeader(m)) && (await mirrorMetric(m, 'kevents_mirror_ready')) === 1) return true;
      return false;
    });
    // Load: new events, and count bumps of earlier ones, one request at a time, all through the test.
    const counts = new Map<string, number>();
    let stopLoad = false;
    let writes = 0;
    const load = (async () => {
      let n = 0;
      while (!stopLoad) {
        const names = [...counts.keys()];
        if (names.length < 40 || n % 3 === 0) {
          const name = `load-${names.length}`;
          const r = await cp.request('POST', CORE, legacyEvent({ name, object: `pod-${names.length}`, reason: 'BackOff', message: 'Back-off restarting failed container', type: 'Warning', firstAgo: 60, lastAgo: 60 }));
          assert.equal(r.status, 201, r.text);
          counts.set(name, 1);
        } else {
          const name = names[n % names.length]!;
          const count = counts.get(name)! + 1;
          const r = await cp.request('PATCH', `${CORE}/${name}`, { count, lastTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') }, { contentType: 'application/merge-patch+json' });
          assert.equal(r.status, 200, r.text);
          counts.set(name, count);
        }
        n++;
        writes++;
        await sleep(30);
      }
    })();
    const live = (): Mirror[] => mirrors.filter((m) => m.child.exitCode === null && m.child.signalCode === null);
    const kills: number[] = [];
    for (let round = 0; round < 3; round++) {
      let leader: Mirror | undefined;
      await until('one replica leads', async () => {
        const leading = [];
        for (const m of live()) if (await isLeader(m)) leading.push(m);
        assert.ok(leading.length <= 1, 'never two leaders at once');
        leader = leading[0];
        return leader !== undefined;
      });
      const before = writes;
      await until('the load moves on under this leader', () => Promise.resolve(writes > before + 40));
      kills.push(Date.now());
      await kill(leader!, 'SIGKILL');
      // The pod comes back: a new standby replica.
      mirrors.push(await startMirror(cp, saDir, flags));
    }
    await until('a leader after the third kill', async () => {
      for (const m of live()) if (await isLeader(m)) return true;
      return false;
    });
    stopLoad = true;
    await load;
    // Read the archive through a server over the same schema.
    const archive = await startServer(['--storage', `${POSTGRES_URL}?schema=${schema}`, '--event-ttl', '0']);
    try {
      const occurrences = async (): Promise<{ event: string; before: number; after: number; observed: number }[]> => {
        const out: { event: string; before: number; after: number; observed: number }[] = [];
        let token = '';
        do {
          const r = await request(archive.url, 'GET', `/apis/archive.kevents.io/v1alpha1/namespaces/default/occurrences?limit=500${token === '' ? '' : `&continue=${token}`}`);
          assert.equal(r.status, 200, r.text);
          for (const o of r.json.items as { event: { name: string }; countBefore: number; countAfter: number; observedTime: string }[]) {
            out.push({ event: o.event.name, before: o.countBefore, after: o.countAfter, observed: Date.parse(o.observedTime) });
          }
          token = (r.json.metadata as { continue?: string }).continue ?? '';
        } while (token !== '');
        return out;
      };
      const expected = [...counts].filter(([name]) => name.startsWith('load-'));
      await until('the archive has caught up with the source', async () => {
        const r = await request(archive.url, 'GET', CORE);
        const archived = new Map((r.json.items as { metadata: { name: string }; count: number }[]).map((e) => [e.metadata.name, e.count]));
        return expected.every(([name, count]) => archived.get(name) === count);
      });
      const all = await occurrences();
      for (const [name, count] of expected) {
        const chain = all.filter((o) => o.event === name).map((o) => `${o.before}->${o.after}`);
        const want = Array.from({ length: count }, (_, i) => `${i}->${i + 1}`);
        assert.deepEqual(chain, want, `every change of ${name} exactly once`);
      }
      const changes = expected.reduce((s, [, c]) => s + c, 0);
      assert.equal(all.filter((o) => o.event.startsWith('load-')).length, changes);
      // The failover gap: from the last change archived before each kill to the first one after it.
      const times = all.map((o) => o.observed).sort((a, b) => a - b);
      const gaps = kills.map((k) => {
        const last = times.filter((x) => x <= k).at(-1) ?? k;
        const next = times.find((x) => x > k) ?? k;
        return next - last;
      });
      t.diagnostic(`${writes} writes (${expected.length} events, ${changes} changes); failover gaps ${gaps.map((g) => `${(g / 1000).toFixed(1)} s`).join(', ')} with a ${leaseMs / 1000} s lease`);
    } finally {
      await archive.stop();
    }
  });

  void it('a leader whose Lease another holder took stops mirroring within the renew deadline and exits', async () => {
    for (const m of mirrors) await kill(m, 'SIGKILL');
    const file = join(mkdtempSync(join(tmpdir(), 'kevents-lost-')), 'archive.db');
    const m = await startMirror(cp, saDir, ['--to', `sqlite:${file}`, '--leader-elect', '--leader-elect-lease-duration', '3s', '--leader-elect-renew-deadline', '2s', '--leader-elect-retry-period', '500ms']);
    mirrors.push(m);
    await until('it leads', () => isLeader(m));
    const path = '/apis/coordination.k8s.io/v1/namespaces/kevents/leases/kevents-mirror';
    await until('the Lease is taken', async () => {
      const lease = (await cp.request('GET', path)).json as { spec: Record<string, unknown> };
      lease.spec.holderIdentity = 'intruder';
      lease.spec.renewTime = new Date(Date.now() + 60_000).toISOString().replace('Z', '000Z');
      return (await cp.request('PUT', path, lease)).status === 200;
    });
    await m.exited;
    assert.equal(m.child.exitCode, 1, m.output());
    assert.match(m.output(), /error: leader election lost: the mirror stopped so that the new leader alone writes the archive/);
    const lease = (await cp.request('GET', path)).json as { spec: { holderIdentity: string } };
    assert.equal(lease.spec.holderIdentity, 'intruder', 'a replica that lost the Lease does not release it');
    // Hand the Lease back for the tests that follow.
    await cp.request('DELETE', path);
  });

  // Last: it grants the service account system:auth-delegator, which the tests above must not see.
  void it('a rotated service-account token is used from the next request on (the old one revoked)', async () => {
    kubectlRun(cp, ['create', 'clusterrolebinding', 'kevents-auth-delegator', '--clusterrole=system:auth-delegator', '--serviceaccount=kevents:kevents']);
    const dir = mkdtempSync(join(tmpdir(), 'kevents-sa-rotation-'));
    const tokenBoundTo = (secret: string): string => {
      kubectlRun(cp, ['create', 'secret', 'generic', secret, '-n', 'kevents']);
      return kubectlRun(cp, ['create', 'token', 'kevents', '-n', 'kevents', '--bound-object-kind', 'Secret', '--bound-object-name', secret]).trim();
    };
    const first = tokenBoundTo('rotation-a');
    const second = tokenBoundTo('rotation-b');
    writeFileSync(join(dir, 'token'), first);
    copyFileSync(cp.caFile, join(dir, 'ca.crt'));
    writeFileSync(join(dir, 'namespace'), 'kevents');
    const url = new URL(cp.url);
    const certs = makeCertificates();
    const server = await startServer(['--tls-cert-file', certs.certFile, '--tls-private-key-file', certs.keyFile, '--delegate-auth'], {
      KUBERNETES_SERVICE_HOST: url.hostname,
      KUBERNETES_SERVICE_PORT: url.port,
      KEVENTS_SERVICE_ACCOUNT_DIR: dir,
    });
    try {
      // Each client token is new to kevents, so each request makes its own TokenReview with the service account's token.
      assert.equal((await kubectlLikeRequest(server.url, certs.caFile, 'GET', '/api/v1/events', undefined, cp.readToken)).status, 200);
      writeFileSync(join(dir, 'token.new'), second);
      renameSync(join(dir, 'token.new'), join(dir, 'token'));
      kubectlRun(cp, ['delete', 'secret', 'rotation-a', '-n', 'kevents']);
      await until('the first token is revoked', async () => (await cp.request('GET', '/api/v1/events?limit=1', undefined, { token: first })).status === 401);
      await sleep(1_100);
      const r = await kubectlLikeRequest(server.url, certs.caFile, 'GET', '/api/v1/events', undefined, cp.adminToken);
      assert.equal(r.status, 200, r.text);
    } finally {
      await server.stop();
    }
  });
});
