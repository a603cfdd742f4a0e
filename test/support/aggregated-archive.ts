import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startControlPlane } from './control-plane.js';
import type { ControlPlane } from './control-plane.js';
import { run } from './run.js';
import type { Run } from './run.js';
import { startServer } from './server-process.js';
import type { ServerProcess } from './server-process.js';
import { ca, CLIENT_EXT, leaf } from './tls.js';

/**
 * The archive in the cluster's own API, as the tests set it up: a real kube-apiserver with the aggregation layer's
 * flags proxies `archive.kevents.io/v1alpha1` (an APIService, an ExternalName Service to localhost) to a
 * `kevents serve` that trusts its front-proxy certificate and authorizes each user again with SubjectAccessReview.
 * Users alice and bob (client certificates) may read the archive in shop and pay; one incident is in shop.
 */

/** GROUP is the archive's API group, as kube-apiserver aggregates it. */
export const GROUP = 'archive.kevents.io';
/** API is the path of the group's version. */
export const API = `/apis/${GROUP}/v1alpha1`;

/** Answer is one answer of kevents to a direct request. */
export interface Answer {
  status: number;
  text: string;
  json: any;
}

/** direct sends one request straight to kevents, with a client certificate (its files) or none. */
export function direct(url: string, caFile: string, path: string, options: { cert?: [string, string]; headers?: Record<string, string>; method?: string; body?: unknown } = {}): Promise<Answer> {
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

/** kubeconfigWithCert writes a kubeconfig for `user` by the client certificate `dir`/`user`.crt, and returns its path. */
export function kubeconfigWithCert(cp: ControlPlane, user: string, dir: string): string {
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

/** AggregatedArchive is a running control plane aggregating a kevents archive, with its certificates in dir. */
export interface AggregatedArchive {
  dir: string;
  cp: ControlPlane;
  kevents: ServerProcess;
  /** kubectl runs the kubectl on PATH as `user` (alice, bob, or admin), with a discovery cache of its own. */
  kubectl: (user: string, args: string[]) => Promise<Run>;
  /** fp gives the certificate and key files of a name made in dir (front-proxy-client, intruder, other-proxy). */
  fp: (name: string) => [string, string];
  /** stop ends kevents and the control plane and removes dir. */
  stop: () => Promise<void>;
}

/**
 * startAggregatedArchive starts the control plane and kevents, registers the APIService, binds alice to shop and bob
 * to pay (the ClusterRole archive-reader), writes an incident's event in shop and waits until alice reads it
 * through kube-apiserver.
 */
export async function startAggregatedArchive(): Promise<AggregatedArchive> {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-aggregated-'));
  let cp: ControlPlane | undefined;
  let kevents: ServerProcess | undefined;
  const stop = async (): Promise<void> => {
    await kevents?.stop();
    await cp?.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
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
    await register(dir, cp, kevents);
    const kubectl = kubectlAs(dir, cp);
    // The APIService is Available once kube-apiserver reached kevents' discovery, and RBAC has seen the bindings once alice may list.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const r = await kubectl('alice', ['get', '--raw', `${API}/namespaces/shop/incidents`]);
      if (r.code === 0) break;
      if (Date.now() > deadline) throw new Error(`the aggregated API never answered alice: ${r.stderr}\n${kevents.stderr()}\n${cp.logs()['kube-apiserver']?.slice(-4000) ?? ''}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    return { dir, cp, kevents, kubectl, fp: (name) => [join(dir, `${name}.crt`), join(dir, `${name}.key`)], stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** kubectlAs runs the kubectl on PATH as a user of the control plane, each run with a discovery cache of its own. */
function kubectlAs(dir: string, cp: ControlPlane): (user: string, args: string[]) => Promise<Run> {
  return (user, args) => {
    const cache = mkdtempSync(join(tmpdir(), 'kevents-kubectl-cache-'));
    const kubeconfig = user === 'admin' ? cp.kubeconfigFile() : kubeconfigWithCert(cp, user, dir);
    return run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', cache, ...args], { env: { KUBECONFIG: '', HOME: cache }, timeoutMs: 60_000 }).finally(() => rmSync(cache, { recursive: true, force: true }));
  };
}

/**
 * register gives the cluster the archive (namespaces, the ExternalName Service, the APIService), the ClusterRole
 * archive-reader bound to alice in shop and bob in pay, and kevents the events of one incident in shop.
 */
async function register(dir: string, cp: ControlPlane, kevents: ServerProcess): Promise<void> {
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
}
