import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEtcd } from './etcd.js';
import type { EtcdCluster } from './etcd.js';
import { freePorts } from './ports.js';

/** Peers are the real upstream binaries `scripts/peers.mjs` built (absolute paths). */
export interface Peers {
  'kube-apiserver': string;
  'kube-scheduler': string;
  'kube-controller-manager': string;
  kwok: string;
  etcd: string;
  kubernetesVersion: string;
  kwokVersion: string;
  /** otelcol is the OpenTelemetry Collector (otlp and k8s_events receivers, file and debug exporters). */
  otelcol?: string;
  /** prometheus and alertmanager are there when the builder was asked for them (the metrics tests). */
  prometheus?: string;
  alertmanager?: string;
  /** krew is the krew binary (kubectl krew) and krewValidateManifest krew-index's check, or krewUnavailable says why they could not be built. */
  krew?: string;
  krewValidateManifest?: string;
  krewUnavailable?: string;
}

let cachedPeers: Peers | undefined;

/**
 * findPeers reads the peers that the test set-up built (KEVENTS_PEERS, set by run-tests.mjs),
 * or builds them on first use through scripts/peers.mjs when a test file runs on its own.
 */
export function findPeers(): Peers {
  if (cachedPeers !== undefined) return cachedPeers;
  const fromEnv = process.env.KEVENTS_PEERS;
  const text = fromEnv !== undefined && fromEnv !== '' ? fromEnv : execFileSync(process.execPath, [new URL('../../scripts/peers.mjs', import.meta.url).pathname, '--json', '--quiet'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  cachedPeers = JSON.parse(text) as Peers;
  return cachedPeers;
}

/** ADMIN_TOKEN and READ_TOKEN are the static bearer tokens of the test control plane. */
export const ADMIN_TOKEN = 'kevents-admin-token';
export const READ_TOKEN = 'kevents-read-token';

/** ControlPlane is a running etcd + kube-apiserver (and optionally scheduler and controller manager) on loopback. */
export interface ControlPlane {
  /** url is the API server, https://127.0.0.1:PORT. */
  url: string;
  /** caFile is the CA that signed the serving certificate (PEM file). */
  caFile: string;
  /** adminToken authenticates as a member of system:masters. */
  adminToken: string;
  /** readToken authenticates as user `reader`, bound to the `view` ClusterRole (get/list/watch events, no writes). */
  readToken: string;
  /** kubeconfigFile writes (once per token) a kubeconfig for a token, the admin's by default, and returns its path. */
  kubeconfigFile(token?: string): string;
  /** etcdUrl is the client URL of the control plane's etcd. */
  etcdUrl: string;
  /** etcd is the control plane's etcd cluster (kill or compact it in tests). */
  etcd: EtcdCluster;
  /** dir holds the certificates, keys, token file and kubeconfigs. */
  dir: string;
  /** serviceAccountKeyFile is the RSA private key that signs service-account tokens. */
  serviceAccountKeyFile: string;
  /** request sends one request to the API server with a token (admin by default) and parses JSON. */
  request(method: string, path: string, body?: unknown, options?: { token?: string; contentType?: string; headers?: Record<string, string> }): Promise<ApiResult>;
  /** logs is what the control plane's processes wrote on stderr (last 200 kB each). */
  logs(): Record<string, string>;
  /** restartApiServer stops kube-apiserver alone and starts it again with the same arguments (etcd keeps running), resolving once it is ready. */
  restartApiServer(): Promise<void>;
  /** stop ends every process and removes the directory. */
  stop(): Promise<void>;
}

/** ApiResult is the status, headers and body of one answer of the API server. */
export interface ApiResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/** StartControlPlaneOptions shape the control plane. */
export interface StartControlPlaneOptions {
  /** eventTtl is kube-apiserver's --event-ttl (1h by default, as upstream). */
  eventTtl?: string;
  /** authorizationMode is kube-apiserver's --authorization-mode (RBAC by default). */
  authorizationMode?: string;
  /** extraArgs are appended to kube-apiserver's arguments. */
  extraArgs?: string[];
  /** etcdArgs are appended to etcd's arguments. */
  etcdArgs?: string[];
  /** scheduler starts the real kube-scheduler as well. */
  scheduler?: boolean;
  /** controllerManager starts the real kube-controller-manager as well. */
  controllerManager?: boolean;
  /** controllerManagerArgs are appended to kube-controller-manager's arguments. */
  controllerManagerArgs?: string[];
}

const READY_TIMEOUT_MS = 90_000;
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** makeCertificates writes a CA, a serving certificate for 127.0.0.1/localhost and a service-account key pair. */
function makeCertificates(dir: string): void {
  openssl(dir, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=kevents-test-ca']);
  writeFileSync(join(dir, 'serving.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n');
  openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'serving.key', '-out', 'serving.csr', '-subj', '/CN=kube-apiserver']);
  openssl(dir, ['x509', '-req', '-in', 'serving.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'serving.crt', '-days', '2', '-extfile', 'serving.ext']);
  openssl(dir, ['genrsa', '-out', 'sa.key', '2048']);
  openssl(dir, ['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
}

/** kubeconfigYaml is a kubeconfig for one server (its CA file) and one bearer token. */
export function kubeconfigYaml(url: string, caFile: string, token: string, user: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: test',
    '  cluster:',
    `    server: ${url}`,
    `    certificate-authority: ${caFile}`,
    'users:',
    `- name: ${user}`,
    '  user:',
    `    token: ${token}`,
    'contexts:',
    '- name: test',
    '  context:',
    '    cluster: test',
    `    user: ${user}`,
    '    namespace: default',
    'current-context: test',
    '',
  ].join('\n');
}

function apiRequest(url: string, ca: Buffer, method: string, path: string, body: unknown, token: string | undefined, contentType: string, headers: Record<string, string>): Promise<ApiResult> {
  return new Promise((resolve, reject) => {
    const target = new URL(path, url);
    const h: Record<string, string> = { Accept: 'application/json', ...headers };
    if (token !== undefined && token !== '') h.Authorization = `Bearer ${token}`;
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      h['Content-Type'] = contentType;
    }
    const req = httpsRequest(target, { method, headers: h, ca, timeout: 30_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        let json: any;
        try {
          json = text === '' ? undefined : JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

interface Proc {
  name: string;
  child: ChildProcess;
  err: () => string;
  exited: Promise<void>;
}

function launch(name: string, bin: string, args: string[]): Proc {
  const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  live.add(child);
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
    if (err.length > 400_000) err = err.slice(-200_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => {
    live.delete(child);
    resolve();
  }));
  return { name, child, err: () => err, exited };
}

async function stopProc(p: Proc): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => p.child.kill('SIGKILL'), 10_000);
  await p.exited;
  clearTimeout(timer);
}

/**
 * startControlPlane runs a real etcd and kube-apiserver on free loopback ports, with generated
 * certificates, service-account keys and a static token file holding an admin token and a read-only
 * token, and resolves once /readyz answers ok and the `default` namespace exists.
 */
export async function startControlPlane(options: StartControlPlaneOptions = {}): Promise<ControlPlane> {
  const peers = findPeers();
  const dir = mkdtempSync(join(tmpdir(), 'kevents-cp-'));
  makeCertificates(dir);
  writeFileSync(join(dir, 'tokens.csv'), `${ADMIN_TOKEN},admin,admin-uid,"system:masters"\n${READ_TOKEN},reader,reader-uid,"kevents:readers"\n`);
  const etcd = await startEtcd({ dataRoot: dir, ...(options.etcdArgs !== undefined ? { extraArgs: options.etcdArgs } : {}) });
  const etcdUrl = etcd.endpoints[0]!;
  const [port] = await freePorts(1);
  const url = `https://127.0.0.1:${port}`;
  const caFile = join(dir, 'ca.crt');
  const ca = readFileSync(caFile);
  const procs: Proc[] = [];
  const args = [
    `--etcd-servers=${etcdUrl}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${join(dir, 'certs')}`,
    `--tls-cert-file=${join(dir, 'serving.crt')}`,
    `--tls-private-key-file=${join(dir, 'serving.key')}`,
    `--client-ca-file=${caFile}`,
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${join(dir, 'sa.pub')}`,
    `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
    '--service-cluster-ip-range=10.96.0.0/16',
    `--token-auth-file=${join(dir, 'tokens.csv')}`,
    `--authorization-mode=${options.authorizationMode ?? 'RBAC'}`,
    `--event-ttl=${options.eventTtl ?? '1h'}`,
    '--profiling=false',
    '--v=0',
    ...(options.extraArgs ?? []),
  ];
  let apiserver = launch('kube-apiserver', peers['kube-apiserver'], args);
  procs.push(apiserver);
  const files = new Map<string, string>();
  let stopped = false;
  const cp: ControlPlane = {
    url,
    caFile,
    adminToken: ADMIN_TOKEN,
    readToken: READ_TOKEN,
    etcdUrl,
    etcd,
    dir,
    serviceAccountKeyFile: join(dir, 'sa.key'),
    kubeconfigFile(token = ADMIN_TOKEN) {
      const known = files.get(token);
      if (known !== undefined) return known;
      const path = join(dir, `kubeconfig-${files.size}.yaml`);
      writeFileSync(path, kubeconfigYaml(url, caFile, token, token === ADMIN_TOKEN ? 'admin' : `user-${files.size}`));
      files.set(token, path);
      return path;
    },
    request(method, path, body, opts = {}) {
      return apiRequest(url, ca, method, path, body, opts.token ?? ADMIN_TOKEN, opts.contentType ?? 'application/json', opts.headers ?? {});
    },
    logs() {
      return Object.fromEntries(procs.map((p) => [p.name, p.err().slice(-200_000)]));
    },
    async restartApiServer() {
      await stopProc(apiserver);
      apiserver = launch('kube-apiserver', peers['kube-apiserver'], args);
      procs[0] = apiserver;
      await waitReady(cp, apiserver);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const p of [...procs].reverse()) await stopProc(p);
      await etcd.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await waitReady(cp, apiserver);
    if ((options.authorizationMode ?? 'RBAC').includes('RBAC')) {
      // `view` is an aggregated role that only kube-controller-manager fills in: the reader gets a role of its own.
      const role = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'kevents-test-reader' },
        rules: [{ apiGroups: ['', 'events.k8s.io'], resources: ['events', 'namespaces', 'pods', 'nodes'], verbs: ['get', 'list', 'watch'] }],
      };
      const binding = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'kevents-test-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kevents-test-reader' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'kevents:readers' }],
      };
      for (const [path, obj] of [['/apis/rbac.authorization.k8s.io/v1/clusterroles', role], ['/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', binding]] as const) {
        const r = await cp.request('POST', path, obj);
        if (r.status !== 201 && r.status !== 409) throw new Error(`setting up the read-only token failed: ${r.status} ${r.text}`);
      }
      // RBAC reads its objects through informers: wait until the binding is in force.
      const deadline = Date.now() + 20_000;
      while ((await cp.request('GET', '/api/v1/events?limit=1', undefined, { token: READ_TOKEN })).status !== 200) {
        if (Date.now() > deadline) throw new Error('the read-only token never got its role');
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const kubeconfig = cp.kubeconfigFile();
    if (options.scheduler === true) {
      const [sport] = await freePorts(1);
      procs.push(launch('kube-scheduler', peers['kube-scheduler'], [`--kubeconfig=${kubeconfig}`, `--authentication-kubeconfig=${kubeconfig}`, `--authorization-kubeconfig=${kubeconfig}`, '--leader-elect=false', '--bind-address=127.0.0.1', `--secure-port=${sport}`, `--cert-dir=${join(dir, 'scheduler-certs')}`, '--v=0']));
    }
    if (options.controllerManager === true) {
      const [cport] = await freePorts(1);
      procs.push(launch('kube-controller-manager', peers['kube-controller-manager'], [
        `--kubeconfig=${kubeconfig}`, `--authentication-kubeconfig=${kubeconfig}`, `--authorization-kubeconfig=${kubeconfig}`,
        '--leader-elect=false', '--bind-address=127.0.0.1', `--secure-port=${cport}`, `--cert-dir=${join(dir, 'cm-certs')}`,
        `--service-account-private-key-file=${join(dir, 'sa.key')}`, `--root-ca-file=${caFile}`,
        '--use-service-account-credentials=false', '--cluster-cidr=10.244.0.0/16', '--allocate-node-cidrs=false', '--v=0',
        ...(options.controllerManagerArgs ?? []),
      ]));
    }
    for (const p of procs.slice(1)) {
      await new Promise((r) => setTimeout(r, 200));
      if (p.child.exitCode !== null) throw new Error(`${p.name} exited at start: ${p.err().slice(-4000)}`);
    }
  } catch (err) {
    await cp.stop();
    throw err;
  }
  return cp;
}

async function waitReady(cp: ControlPlane, apiserver: Proc): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = '';
  for (;;) {
    if (apiserver.child.exitCode !== null) throw new Error(`kube-apiserver exited (${apiserver.child.exitCode}): ${apiserver.err().slice(-4000)}`);
    try {
      const ready = await cp.request('GET', '/readyz');
      last = `${ready.status} ${ready.text.slice(0, 300)}`;
      if (ready.status === 200) {
        const ns = await cp.request('GET', '/api/v1/namespaces/default');
        if (ns.status === 200) return;
        last = `namespace default: ${ns.status}`;
      }
    } catch (err) {
      last = String(err);
    }
    if (Date.now() > deadline) throw new Error(`kube-apiserver not ready within ${READY_TIMEOUT_MS} ms (${last}): ${apiserver.err().slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
