import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { abandonRealNode, findOnPath, plainHttpRegistryHosts, realNodeHostUnavailable, realNodeLogs, registryHostsDir, startRealNode as startNode, stopRealNode } from '../../src/lab/index.js';
import type { NodeImages, RealNodeState, Taint } from '../../src/lab/index.js';
import { findPeers } from './control-plane.js';
import type { ControlPlane } from './control-plane.js';
import { freePorts } from './ports.js';
import { until } from './wait.js';

// The real node of the tests is the lab's (src/lab/real-node.ts), started against a test control plane, with
// two docker-registries on loopback beside it for the pull failures.

/** RealNodePeers is what scripts/peers.mjs says about the real node: the kubelet and its images, or why they are missing. */
export interface RealNodePeers {
  kubelet?: string;
  nodeImages?: NodeImages;
  kubeletUnavailable?: string;
}

/** REAL_NODE_TAINT keeps every pod that does not tolerate it off the real node. */
export const REAL_NODE_TAINT: Taint = { key: 'kevents.test/real-node', value: 'yes', effect: 'NoSchedule' };

/** RealNode is a running containerd + kubelet registered with a control plane as one node. */
export interface RealNode {
  name: string;
  /** busybox is the name of the imported busybox image (`sh`, `sleep`, `cat`…). */
  busybox: string;
  /**
   * registry is `127.0.0.1:PORT` of an empty docker-registry (plain HTTP, known to containerd) whose
   * pulls answer not found, or undefined where docker-registry is not installed.
   */
  registry: string | undefined;
  /**
   * lockedRegistry is `127.0.0.1:PORT` of a docker-registry behind htpasswd auth the node has no credentials
   * for, or undefined where docker-registry or a bcrypt hasher is missing.
   */
  lockedRegistry: string | undefined;
  /** logs are the last lines containerd and the kubelet wrote, to show with a failure. */
  logs(): string;
  /** stop deletes the node's pods, stops the kubelet and containerd and removes their mounts, cgroups, files and sysctl changes. */
  stop(): Promise<void>;
}

/**
 * realNodeUnavailable says in one line why the real node cannot run here, or undefined when it can:
 * the kubelet tests skip with that reason rather than pass without running.
 */
export function realNodeUnavailable(): string | undefined {
  const peers = findPeers() as RealNodePeers;
  if (peers.kubeletUnavailable !== undefined) return peers.kubeletUnavailable;
  if (peers.kubelet === undefined || peers.nodeImages === undefined) return 'scripts/peers.mjs built no kubelet (KEVENTS_PEERS names none)';
  return realNodeHostUnavailable(process.env.PATH);
}

/**
 * unfinished are the nodes not stopped yet: a test process that ends without stopping its node (a crash, a
 * cancelled run) still kills the node's processes and lifts its mounts on the way out.
 */
const unfinished = new Map<string, RealNodeState>();
process.once('exit', () => {
  for (const node of unfinished.values()) abandonRealNode(node);
});

/** DOCKER_REGISTRY is Debian's docker-registry (the CNCF distribution registry). */
const DOCKER_REGISTRY = '/usr/bin/docker-registry';

/** bcrypt hashes a password for docker-registry's htpasswd (bcrypt only) with Debian's Python and libxcrypt. */
function bcrypt(password: string): string | undefined {
  const r = spawnSync('/usr/bin/python3', ['-W', 'ignore', '-c', 'import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH)))', password], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.startsWith('$2') ? r.stdout.trim() : undefined;
}

interface Registry {
  child: ChildProcess;
  host: string;
  exited: Promise<void>;
}

/**
 * startRegistry runs an empty docker-registry on a loopback port (behind htpasswd auth with user `kevents` when
 * a hash is given) and tells the node's containerd, through its hosts folder (read at each pull), that it speaks
 * plain HTTP.
 */
async function startRegistry(dir: string, name: string, htpasswdHash: string | undefined): Promise<Registry> {
  const host = `127.0.0.1:${(await freePorts(1))[0]!}`;
  let auth = '';
  if (htpasswdHash !== undefined) {
    writeFileSync(join(dir, `${name}.htpasswd`), `kevents:${htpasswdHash}\n`);
    auth = `auth: {htpasswd: {realm: kevents, path: ${dir}/${name}.htpasswd}}\n`;
  }
  writeFileSync(join(dir, `${name}-registry.yaml`), `version: 0.1\nlog: {level: warn}\nstorage: {filesystem: {rootdirectory: ${dir}/${name}-registry}}\nhttp: {addr: "${host}"}\n${auth}`);
  const child = spawn(DOCKER_REGISTRY, ['serve', join(dir, `${name}-registry.yaml`)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    err = (err + d.toString()).slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  mkdirSync(join(registryHostsDir(dir), host), { recursive: true });
  writeFileSync(join(registryHostsDir(dir), host, 'hosts.toml'), plainHttpRegistryHosts(host));
  await until(`docker-registry ${name} listens on ${host}`, async () => {
    if (child.exitCode !== null) throw new Error(`docker-registry exited: ${err.slice(-2000)}`);
    try {
      const res = await fetch(`http://${host}/v2/`);
      return res.status === (htpasswdHash === undefined ? 200 : 401);
    } catch {
      return false;
    }
  }, 30_000, 200);
  return { child, host, exited };
}

async function stopRegistry(r: Registry): Promise<void> {
  if (r.child.exitCode !== null || r.child.signalCode !== null) return;
  r.child.kill('SIGTERM');
  const timer = setTimeout(() => r.child.kill('SIGKILL'), 15_000);
  await r.exited;
  clearTimeout(timer);
}

/**
 * startRealNode runs the lab's real node (containerd and a kubelet, src/lab/real-node.ts) in a scratch folder,
 * registered with the control plane as node `name` tainted with REAL_NODE_TAINT, and, where docker-registry is
 * installed, an open and a locked registry on loopback. Pods for it need `hostNetwork: true`, a toleration (or
 * nodeName) and `automountServiceAccountToken: false`; their images are the imported busybox only.
 */
export async function startRealNode(cp: ControlPlane, name = 'real-1'): Promise<RealNode> {
  const peers = findPeers() as RealNodePeers;
  if (peers.kubelet === undefined || peers.nodeImages === undefined) throw new Error(realNodeUnavailable() ?? 'no kubelet');
  const dir = mkdtempSync('/tmp/kevents-node-');
  const binaries = { kubelet: peers.kubelet, images: peers.nodeImages, containerd: findOnPath('containerd', process.env.PATH) ?? 'containerd', ctr: findOnPath('ctr', process.env.PATH) ?? 'ctr' };
  const state = await startNode({
    name,
    dir,
    binaries,
    kubeconfig: cp.kubeconfigFile(),
    taint: REAL_NODE_TAINT,
    isReady: async () => {
      const r = await cp.request('GET', `/api/v1/nodes/${name}`);
      const conditions = (r.json as { status?: { conditions?: { type: string; status: string }[] } } | undefined)?.status?.conditions ?? [];
      return r.status === 200 && conditions.some((c) => c.type === 'Ready' && c.status === 'True');
    },
    record: (s) => unfinished.set(dir, s),
  });
  const registries: Registry[] = [];
  const stop = async (): Promise<void> => {
    // Pods deleted through the API stop the kubelet's containers as a node drain would; whatever remains is killed.
    const pods = await cp.request('GET', `/api/v1/pods?fieldSelector=spec.nodeName%3D${name}`);
    for (const p of ((pods.json as { items?: { metadata: { namespace: string; name: string } }[] } | undefined)?.items ?? [])) {
      await cp.request('DELETE', `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}?gracePeriodSeconds=0`);
    }
    for (const r of registries) await stopRegistry(r);
    await stopRealNode(state);
    unfinished.delete(dir);
  };
  try {
    if (existsSync(DOCKER_REGISTRY)) {
      registries.push(await startRegistry(dir, 'open', undefined));
      const hash = bcrypt(randomBytes(12).toString('hex'));
      if (hash !== undefined) registries.push(await startRegistry(dir, 'locked', hash));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    name,
    busybox: state.busybox,
    registry: registries[0]?.host,
    lockedRegistry: registries[1]?.host,
    logs: () => realNodeLogs(state, 6000),
    stop,
  };
}
