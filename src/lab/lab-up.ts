import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { CHECKER, LEARNER, auditPolicyYaml } from './audit-log.js';
import type { LabBinaries } from './binaries.js';
import { KUBERNETES_VERSION, KWOK_VERSION } from './binaries.js';
import { makeCertificates } from './certificates.js';
import { kwokStagesYaml } from './kwok-stages.js';
import { createLabApi, freePorts, httpStatus } from './lab-api.js';
import { LabError } from './lab-error.js';
import { LAB_CLUSTER, LAB_NAMESPACE, REAL_NODE_NAME, REAL_NODE_TAINT, labProcesses, readState, statePath, writeState } from './lab-state.js';
import type { LabState } from './lab-state.js';
import { isRunning, startProcess, stopProcess, tail } from './processes.js';
import type { LabProcess } from './processes.js';
import { realNodeDir, startRealNode, stopRealNode } from './real-node.js';
import type { RealNodeBinaries } from './real-node-find.js';

/** LabUpOptions shape a lab. */
export interface LabUpOptions {
  dir: string;
  binaries: LabBinaries;
  /** nodes is how many kwok nodes, each with nodeCpu and nodeMemory allocatable. */
  nodes: number;
  nodeCpu: string;
  nodeMemory: string;
  /** eventTtl is kube-apiserver's --event-ttl (a Go duration) and eventTtlSeconds the same in seconds. */
  eventTtl: string;
  eventTtlSeconds: number;
  /** kevents is how to run kevents itself (the archive is `kevents serve --mirror`): a program and its first arguments. */
  kevents: string[];
  /** realNode adds the real node (`--kubelet`): containerd and a kubelet, registered as REAL_NODE_NAME. */
  realNode?: RealNodeBinaries;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
}

/** READY_TIMEOUT_MS bounds each wait of `lab up` (the API server's first start on a busy machine is the slow one). */
const READY_TIMEOUT_MS = 120_000;

/** NODE_MONITOR_GRACE is how long kube-controller-manager waits for a node's heartbeat before it marks the node NotReady. */
const NODE_MONITOR_GRACE = '3m';

/** COMPONENTS are the users of the lab's programs: each its own token, so the audit log tells them from the learner. */
const COMPONENTS = ['lab-scheduler', 'lab-controller-manager', 'lab-kwok', 'lab-mirror', 'lab-kubelet', CHECKER] as const;

function token(): string {
  return randomBytes(24).toString('hex');
}

function kubeconfigYaml(server: string, caFile: string, user: string, secret: string, namespace: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'kevents-lab', cluster: { server, 'certificate-authority': caFile } }],
    users: [{ name: user, user: { token: secret } }],
    contexts: [{ name: 'kevents-lab', context: { cluster: 'kevents-lab', user, namespace } }],
    'current-context': 'kevents-lab',
  });
}

async function waitFor(what: string, proc: LabProcess | undefined, test: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (proc !== undefined && !isRunning(proc)) throw new LabError(`${proc.name} exited while waiting for ${what}; the end of ${proc.log}:\n${tail(proc)}`);
    if (await test()) return;
    if (Date.now() > deadline) throw new LabError(`${what}: not within ${READY_TIMEOUT_MS / 1000} s${proc !== undefined ? `; the end of ${proc.log}:\n${tail(proc)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** leaseReuseSeconds keeps kube-apiserver's lease sharing (60 s by default) well under a short TTL, so events expire when the TTL says. */
function leaseReuseSeconds(ttlSeconds: number): number {
  return Math.max(1, Math.min(60, Math.floor(ttlSeconds / 10)));
}

interface Node {
  metadata: { name: string };
  status?: { conditions?: { type: string; status: string }[] };
}

interface NodeList {
  items: Node[];
}

function isReady(n: Node | undefined): boolean {
  return n?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

/**
 * labUp starts a lab in options.dir: etcd, kube-apiserver (with the event TTL
 * and an audit log of the learner's event requests), kube-scheduler,
 * kube-controller-manager, kwok with the lab's pod stages and its nodes, and
 * `kevents serve --mirror` as the archive, and with options.realNode the real
 * node; it resolves once all of it is ready. state.json is written after each
 * start, so `lab down` can undo a failed start.
 */
export async function labUp(o: LabUpOptions): Promise<LabState> {
  if (existsSync(statePath(o.dir))) {
    const old = readState(o.dir);
    if (labProcesses(old).some(isRunning)) throw new LabError(`a lab already runs in ${o.dir} (kevents lab status); stop it first with kevents lab down`);
    // A real node that died with its lab may leave mounts in the folder: lifted before the folder goes.
    if (old.realNode !== undefined) await stopRealNode(old.realNode);
    rmSync(o.dir, { recursive: true, force: true });
  }
  const started = Date.now();
  const pki = join(o.dir, 'pki');
  for (const d of [pki, join(o.dir, 'logs'), join(o.dir, 'kubeconfigs'), join(o.dir, 'run')]) mkdirSync(d, { recursive: true });
  makeCertificates(pki);
  const tokens = Object.fromEntries([LEARNER, ...COMPONENTS].map((u) => [u, token()])) as Record<string, string>;
  writeFileSync(join(pki, 'tokens.csv'), Object.entries(tokens).map(([u, t]) => `${t},${u},${u},"system:masters"`).join('\n') + '\n', { mode: 0o600 });
  writeFileSync(join(o.dir, 'audit-policy.yaml'), auditPolicyYaml());
  writeFileSync(join(o.dir, 'kwok-stages.yaml'), kwokStagesYaml());
  const [etcdPort, etcdPeerPort, apiPort, schedulerPort, cmPort, archivePort] = (await freePorts(6)) as [number, number, number, number, number, number];
  const apiServer = `https://127.0.0.1:${apiPort}`;
  const caFile = join(pki, 'ca.crt');
  const kubeconfigOf = (user: string): string => {
    const path = user === LEARNER ? join(o.dir, 'kubeconfig') : join(o.dir, 'kubeconfigs', `${user}.yaml`);
    writeFileSync(path, kubeconfigYaml(apiServer, caFile, user, tokens[user]!, LAB_NAMESPACE), { mode: 0o600 });
    return path;
  };
  const state: LabState = {
    dir: o.dir,
    apiServer,
    archive: `http://127.0.0.1:${archivePort}`,
    caFile,
    kubeconfig: kubeconfigOf(LEARNER),
    checkToken: tokens[CHECKER]!,
    auditLog: join(o.dir, 'logs', 'audit.log'),
    namespace: LAB_NAMESPACE,
    eventTtl: o.eventTtl,
    eventTtlSeconds: o.eventTtlSeconds,
    nodes: { names: Array.from({ length: o.nodes }, (_, i) => `kwok-node-${i}`), cpu: o.nodeCpu, memory: o.nodeMemory },
    kubernetesVersion: '',
    kwokVersion: KWOK_VERSION,
    startedAt: new Date(started).toISOString(),
    processes: [],
  };
  writeState(state);
  const start = async (name: string, bin: string, args: string[]): Promise<LabProcess> => {
    const p = await startProcess({ name, bin, args, dir: o.dir, env: o.env });
    state.processes.push(p);
    writeFileSync(join(o.dir, 'run', `${name}.pid`), `${p.pid}\n`);
    writeState(state);
    return p;
  };
  const api = createLabApi({ server: apiServer, caFile, token: tokens[LEARNER]! });
  try {
    o.log('starting etcd');
    const etcd = await start('etcd', o.binaries.etcd, [
      '--name', 'lab',
      '--data-dir', join(o.dir, 'etcd'),
      '--listen-client-urls', `http://127.0.0.1:${etcdPort}`,
      '--advertise-client-urls', `http://127.0.0.1:${etcdPort}`,
      '--listen-peer-urls', `http://127.0.0.1:${etcdPeerPort}`,
      '--initial-advertise-peer-urls', `http://127.0.0.1:${etcdPeerPort}`,
      '--initial-cluster', `lab=http://127.0.0.1:${etcdPeerPort}`,
      '--log-level', 'warn',
    ]);
    await waitFor('etcd to be healthy', etcd, async () => (await httpStatus(`http://127.0.0.1:${etcdPort}/health`)) === 200);
    o.log(`starting kube-apiserver (--event-ttl=${o.eventTtl})`);
    const apiserver = await start('kube-apiserver', o.binaries['kube-apiserver'], [
      `--etcd-servers=http://127.0.0.1:${etcdPort}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--cert-dir=${join(pki, 'generated')}`,
      `--tls-cert-file=${join(pki, 'serving.crt')}`,
      `--tls-private-key-file=${join(pki, 'serving.key')}`,
      `--client-ca-file=${caFile}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${join(pki, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(pki, 'sa.key')}`,
      '--service-cluster-ip-range=10.96.0.0/16',
      `--token-auth-file=${join(pki, 'tokens.csv')}`,
      '--authorization-mode=RBAC',
      `--event-ttl=${o.eventTtl}`,
      `--lease-reuse-duration-seconds=${leaseReuseSeconds(o.eventTtlSeconds)}`,
      `--audit-policy-file=${join(o.dir, 'audit-policy.yaml')}`,
      `--audit-log-path=${state.auditLog}`,
      '--audit-log-format=json',
      '--audit-log-maxsize=100',
      '--profiling=false',
      '--v=0',
    ]);
    await waitFor('kube-apiserver to be ready', apiserver, async () => (await api.probe('/readyz')) === 200 && (await api.getOrUndefined('/api/v1/namespaces/default')) !== undefined);
    const version = await api.get<{ gitVersion?: string }>('/version');
    state.kubernetesVersion = version.gitVersion ?? '';
    await api.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: LAB_NAMESPACE } });
    o.log('starting kube-scheduler, kube-controller-manager and kwok');
    const sched = kubeconfigOf('lab-scheduler');
    await start('kube-scheduler', o.binaries['kube-scheduler'], [
      `--kubeconfig=${sched}`, `--authentication-kubeconfig=${sched}`, `--authorization-kubeconfig=${sched}`,
      '--leader-elect=false', '--bind-address=127.0.0.1', `--secure-port=${schedulerPort}`, `--cert-dir=${join(pki, 'scheduler')}`, '--v=0',
    ]);
    const cm = kubeconfigOf('lab-controller-manager');
    await start('kube-controller-manager', o.binaries['kube-controller-manager'], [
      `--kubeconfig=${cm}`, `--authentication-kubeconfig=${cm}`, `--authorization-kubeconfig=${cm}`,
      '--leader-elect=false', '--bind-address=127.0.0.1', `--secure-port=${cmPort}`, `--cert-dir=${join(pki, 'controller-manager')}`,
      `--service-account-private-key-file=${join(pki, 'sa.key')}`, `--root-ca-file=${caFile}`, '--use-service-account-credentials=false',
      '--cluster-name=kevents-lab', '--cluster-cidr=10.244.0.0/16', '--allocate-node-cidrs=false',
      // kwok's node heartbeat comes every 20 to 55 s, near the default grace of 50 s: a node would flap NotReady.
      `--node-monitor-grace-period=${NODE_MONITOR_GRACE}`, '--v=0',
    ]);
    await start('kwok', o.binaries.kwok, [
      `--kubeconfig=${kubeconfigOf('lab-kwok')}`,
      `--config=${join(o.dir, 'kwok-stages.yaml')}`,
      '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
      '--cidr=10.0.0.1/16',
      '--node-ip=10.0.255.1',
      '--v=WARN',
    ]);
    for (const name of state.nodes.names) {
      const resources = { cpu: o.nodeCpu, memory: o.nodeMemory, pods: '110' };
      await api.create('/api/v1/nodes', {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: {
          name,
          annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
          labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', type: 'kwok' },
        },
        status: { capacity: resources, allocatable: resources },
      });
    }
    o.log('starting the archive (kevents serve --mirror)');
    const archive = await start('kevents-archive', o.kevents[0]!, [
      ...o.kevents.slice(1),
      'serve',
      '--listen', `127.0.0.1:${archivePort}`,
      '--storage', `sqlite:${join(o.dir, 'archive.db')}`,
      '--event-ttl', '0',
      '--mirror', kubeconfigOf('lab-mirror'),
      '--cluster', LAB_CLUSTER,
      '--log-level', 'warn',
    ]);
    if (o.realNode !== undefined) {
      o.log(`starting the real node ${REAL_NODE_NAME} (containerd and kubelet ${KUBERNETES_VERSION})`);
      state.realNode = await startRealNode({
        name: REAL_NODE_NAME,
        dir: realNodeDir(o.dir),
        binaries: o.realNode,
        kubeconfig: kubeconfigOf('lab-kubelet'),
        taint: REAL_NODE_TAINT,
        isReady: async () => isReady(await api.getOrUndefined<Node>(`/api/v1/nodes/${REAL_NODE_NAME}`)),
        record: (node) => {
          state.realNode = node;
          writeState(state);
        },
        env: o.env,
      });
    }
    await waitFor(`${o.nodes} kwok nodes to be Ready`, undefined, async () => {
      const nodes = await api.get<NodeList>('/api/v1/nodes');
      return nodes.items.filter((n) => n.metadata.name !== REAL_NODE_NAME && isReady(n)).length >= o.nodes;
    });
    await waitFor(`the default ServiceAccount of namespace ${LAB_NAMESPACE}`, undefined, async () => (await api.getOrUndefined(`/api/v1/namespaces/${LAB_NAMESPACE}/serviceaccounts/default`)) !== undefined);
    await waitFor('the archive to be ready', archive, async () => (await httpStatus(`${state.archive}/readyz`)) === 200);
    writeState(state);
    return state;
  } catch (e) {
    if (state.realNode !== undefined) await stopRealNode(state.realNode).catch(() => undefined);
    for (const p of [...state.processes].reverse()) await stopProcess(p).catch(() => undefined);
    throw e;
  } finally {
    api.close();
  }
}
