import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePorts } from './lab-api.js';
import { LabError } from './lab-error.js';
import { cgroupHierarchies, killInCgroups, killMentioning, otherKubeletRuns, processesInCgroups, processesMentioning, rmCgroupTree, unmountUnder } from './node-host.js';
import { isRunning, startProcess, stopProcess, tail } from './processes.js';
import type { LabProcess } from './processes.js';
import { containerdConfig, kubeletConfig, loopbackCni, registryHostsDir } from './real-node-config.js';
import type { Taint } from './real-node-config.js';
import type { RealNodeBinaries } from './real-node-find.js';

/**
 * RealNodeState is what undoes a real node, from any process: its folder, its cgroup root, its programs and what
 * it changed on the host. The lab keeps it in state.json; it is written before anything starts.
 */
export interface RealNodeState {
  name: string;
  /** dir holds containerd's root, state and socket, the kubelet's root, the pods' logs and the programs' logs. */
  dir: string;
  /** cgroupRoot is the node's cgroup below each hierarchy's root: its pods' cgroups, and nothing else's. */
  cgroupRoot: string;
  taint: Taint;
  /** busybox is the name of the imported image the node's pods run (`sh`, `sleep`, `cat`…). */
  busybox: string;
  ctr: string;
  /** processes are containerd and the kubelet, in the order they started. */
  processes: LabProcess[];
  /** sysctls are the kernel tunables the kubelet sets at start, as they were: put back at stop. */
  sysctls: Record<string, string>;
  /** hostPathsBefore are the paths outside dir the kubelet writes to that existed before it: the others go at stop. */
  hostPathsBefore: string[];
}

/** RealNodeOptions shape a real node. */
export interface RealNodeOptions {
  /** name is the node's name (the kubelet's --hostname-override). */
  name: string;
  dir: string;
  binaries: RealNodeBinaries;
  /** kubeconfig is how the kubelet reaches the API server. */
  kubeconfig: string;
  /** taint keeps every pod that does not tolerate it off the node. */
  taint: Taint;
  /** isReady reads whether the API server has the node Ready. */
  isReady: () => Promise<boolean>;
  /** record is given the state before anything starts and after each program starts, so a failed start can be undone. */
  record?: (state: RealNodeState) => void;
  env?: NodeJS.ProcessEnv;
}

/** KERNEL_TUNABLES are the sysctls the kubelet sets at start (protectKernelDefaults off). */
const KERNEL_TUNABLES = ['vm/overcommit_memory', 'vm/panic_on_oom', 'kernel/panic', 'kernel/panic_on_oops', 'kernel/keys/root_maxkeys', 'kernel/keys/root_maxbytes'];

/** KUBELET_HOST_PATHS are where the kubelet writes outside its root folder whatever its flags say. */
const KUBELET_HOST_PATHS = ['/var/lib/kubelet', '/var/log/containers', '/var/log/pods'];

/**
 * HOST_PATHS_MADE lists the KUBELET_HOST_PATHS that a kevents node made. Two nodes may overlap (a test's beside the
 * lab's): the second finds the paths there, and only this list tells the last one to stop that they go.
 * It is on /run, so a reboot forgets it with the processes it was about.
 */
const HOST_PATHS_MADE = '/run/kevents-real-node-host-paths';

function hostPathsMade(): string[] {
  try {
    return readFileSync(HOST_PATHS_MADE, 'utf8').split('\n').filter((p) => KUBELET_HOST_PATHS.includes(p));
  } catch {
    return [];
  }
}

/** claimHostPaths makes the kubelet's host paths that are missing, and adds them to HOST_PATHS_MADE. */
function claimHostPaths(): void {
  const missing = KUBELET_HOST_PATHS.filter((p) => !existsSync(p));
  if (missing.length === 0) return;
  for (const p of missing) mkdirSync(p, { recursive: true });
  writeFileSync(HOST_PATHS_MADE, [...new Set([...hostPathsMade(), ...missing])].join('\n') + '\n');
}

/** START_TIMEOUT_MS bounds containerd's start and the kubelet's registration, each (a busy two-core machine is slow). */
const START_TIMEOUT_MS = 180_000;

/** STOP_TIMEOUT_MS bounds the wait for the node's containers to be gone after their kill. */
const STOP_TIMEOUT_MS = 30_000;

/** realNodeDir is where a lab in labDir keeps its real node. */
export function realNodeDir(labDir: string): string {
  return join(labDir, 'real-node');
}

/** SOCKET_PATH_MAX is the longest path a unix socket may have on Linux (sun_path is 108 bytes with its NUL). */
const SOCKET_PATH_MAX = 107;

/**
 * realNodeDirProblem says why a node cannot live in dir, or undefined: containerd's socket and the kubelet's
 * pod-resources socket go below it, and a unix socket's path is short.
 */
export function realNodeDirProblem(dir: string): string | undefined {
  const longest = join(dir, 'kubelet', 'pod-resources', 'kubelet.sock');
  if (Buffer.byteLength(longest) <= SOCKET_PATH_MAX) return undefined;
  return `the node's folder ${dir} is too long for its sockets (${longest} has ${Buffer.byteLength(longest)} bytes, a unix socket at most ${SOCKET_PATH_MAX}): use a shorter --dir`;
}

async function poll(what: string, timeoutMs: number, test: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await test())) {
    if (Date.now() > deadline) throw new LabError(`${what}: not within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

function ctr(state: RealNodeState, ...args: string[]): string {
  return execFileSync(state.ctr, ['--address', join(state.dir, 'containerd.sock'), '--namespace', 'k8s.io', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
}

/** realNodeLogs are the last lines containerd and the kubelet wrote, to show with a failure. */
export function realNodeLogs(state: RealNodeState, bytes = 4000): string {
  return state.processes.map((p) => `${p.name} (${p.log}):\n${tail(p, bytes)}`).join('\n');
}

/**
 * startRealNode runs containerd (its own config, state, root and socket in options.dir) with the pause and busybox
 * images imported, and a kubelet that registers node options.name tainted with options.taint, and resolves once
 * the node is Ready. Both programs outlive the caller; stopRealNode undoes everything from the state. Pods for the
 * node need `hostNetwork: true` and a toleration of the taint; their image is the imported busybox.
 */
export async function startRealNode(o: RealNodeOptions): Promise<RealNodeState> {
  const dir = o.dir;
  const problem = realNodeDirProblem(dir);
  if (problem !== undefined) throw new LabError(problem);
  const state: RealNodeState = {
    name: o.name,
    dir,
    cgroupRoot: `kevents-${Date.now().toString(36)}-${process.pid}`,
    taint: o.taint,
    busybox: o.binaries.images.busybox.name,
    ctr: o.binaries.ctr,
    processes: [],
    sysctls: Object.fromEntries(KERNEL_TUNABLES.filter((t) => existsSync(`/proc/sys/${t}`)).map((t) => [t, readFileSync(`/proc/sys/${t}`, 'utf8')])),
    hostPathsBefore: KUBELET_HOST_PATHS.filter((p) => existsSync(p)),
  };
  const record = (): void => o.record?.(state);
  record();
  const start = async (name: string, bin: string, args: string[]): Promise<LabProcess> => {
    const p = await startProcess({ name, bin, args, dir, env: o.env ?? process.env });
    state.processes.push(p);
    record();
    return p;
  };
  try {
    for (const d of ['containerd', 'cni', 'kubelet', 'pod-logs', 'logs']) mkdirSync(join(dir, d), { recursive: true });
    mkdirSync(registryHostsDir(dir), { recursive: true });
    writeFileSync(join(dir, 'cni', '10-loopback.conflist'), loopbackCni());
    writeFileSync(join(dir, 'containerd.toml'), containerdConfig(dir, o.binaries.images.pause.name));
    const containerd = await start('containerd', o.binaries.containerd, ['--config', join(dir, 'containerd.toml'), '--log-level', 'warn']);
    await poll('containerd to answer on its socket', START_TIMEOUT_MS, () => {
      if (!isRunning(containerd)) throw new LabError(`containerd exited: ${tail(containerd)}`);
      return spawnSync(state.ctr, ['--address', join(dir, 'containerd.sock'), 'version'], { stdio: 'ignore', timeout: 10_000 }).status === 0;
    });
    ctr(state, 'images', 'import', o.binaries.images.pause.archive);
    ctr(state, 'images', 'import', o.binaries.images.busybox.archive);
    for (const h of cgroupHierarchies()) mkdirSync(join(h, state.cgroupRoot), { recursive: true });
    claimHostPaths();
    writeFileSync(join(dir, 'kubelet.yaml'), kubeletConfig({ dir, cgroupRoot: state.cgroupRoot, port: (await freePorts(1))[0]!, taint: o.taint }));
    const kubelet = await start('kubelet', o.binaries.kubelet, [
      `--config=${join(dir, 'kubelet.yaml')}`,
      `--kubeconfig=${o.kubeconfig}`,
      `--root-dir=${join(dir, 'kubelet')}`,
      `--cert-dir=${join(dir, 'kubelet', 'pki')}`,
      `--hostname-override=${o.name}`,
      `--pod-infra-container-image=${o.binaries.images.pause.name}`,
      '--v=1',
    ]);
    await poll(`node ${o.name} to be Ready`, START_TIMEOUT_MS, async () => {
      if (!isRunning(kubelet)) throw new LabError(`the kubelet exited: ${tail(kubelet)}`);
      return o.isReady();
    });
    return state;
  } catch (err) {
    const logs = realNodeLogs(state);
    // The start's failure is the one to report; an undoing that fails too is said after it.
    const undone = await stopRealNode(state).then(() => '', (e: Error) => `\n(and undoing it failed: ${e.message})`);
    throw new LabError(`the real node ${o.name} did not start: ${(err as Error).message}\n${logs}${undone}`, { cause: err });
  }
}

/** stopContainers kills the node's containers through containerd, while it still answers. */
async function stopContainers(state: RealNodeState): Promise<void> {
  try {
    for (const id of ctr(state, 'tasks', 'ls', '-q').split('\n').filter(Boolean)) {
      try {
        ctr(state, 'tasks', 'kill', '-s', 'SIGKILL', id);
      } catch {
        // Already stopped.
      }
    }
    await poll('the node to have no running task', STOP_TIMEOUT_MS, () => ctr(state, 'tasks', 'ls').split('\n').slice(1).filter(Boolean).every((l) => /STOPPED/.test(l)));
    for (const id of ctr(state, 'tasks', 'ls', '-q').split('\n').filter(Boolean)) ctr(state, 'tasks', 'delete', id);
  } catch {
    // What containerd could not stop is killed by pid and cgroup afterwards.
  }
}

/** restoreHost puts back the sysctls and removes what the kubelet wrote outside its folder. */
function restoreHost(state: RealNodeState): void {
  for (const [t, v] of Object.entries(state.sysctls)) {
    try {
      writeFileSync(`/proc/sys/${t}`, v);
    } catch {
      // A read-only /proc/sys: the kubelet could not change it either.
    }
  }
  for (const path of ['/var/log/containers', '/var/log/pods']) {
    if (!existsSync(path)) continue;
    for (const entry of readdirSync(path)) {
      const p = join(path, entry);
      try {
        if (lstatSync(p).isSymbolicLink() && readlinkSync(p).startsWith(state.dir)) rmSync(p, { force: true });
      } catch {
        // Gone meanwhile.
      }
    }
  }
  // Another kubelet on this host (a test's node beside the lab's) shares these paths: they stay while it runs.
  if (otherKubeletRuns(state.dir)) return;
  const made = new Set([...hostPathsMade(), ...KUBELET_HOST_PATHS.filter((p) => !state.hostPathsBefore.includes(p))]);
  if (made.has('/var/lib/kubelet')) rmSync('/var/lib/kubelet', { recursive: true, force: true });
  for (const path of ['/var/log/containers', '/var/log/pods']) if (made.has(path) && existsSync(path) && readdirSync(path).length === 0) rmdirSync(path);
  rmSync(HOST_PATHS_MADE, { force: true });
}

/**
 * stopRealNode stops the kubelet, the node's containers and containerd, kills what outlived them (shims and
 * containers, found by the node's folder and cgroups), lifts the node's mounts, removes its cgroups, its folder and
 * what the kubelet wrote on the host, and puts the kernel tunables back. It gives the names of the programs that
 * were still running. Safe to call again, and on a node whose start failed halfway.
 */
export async function stopRealNode(state: RealNodeState): Promise<string[]> {
  const stopped: string[] = [];
  const kubelet = state.processes.find((p) => p.name === 'kubelet');
  const containerd = state.processes.find((p) => p.name === 'containerd');
  if (kubelet !== undefined && isRunning(kubelet)) {
    await stopProcess(kubelet);
    stopped.push(kubelet.name);
  }
  if (containerd !== undefined && isRunning(containerd)) {
    await stopContainers(state);
    await stopProcess(containerd);
    stopped.push(containerd.name);
  }
  // Shims and containers outlive containerd by design; ours name the node's folder or sit in its cgroups.
  killMentioning(state.dir);
  killInCgroups(state.cgroupRoot);
  await poll('the node\'s processes to be gone', STOP_TIMEOUT_MS, () => processesMentioning(state.dir).length === 0 && processesInCgroups(state.cgroupRoot).length === 0);
  unmountUnder(state.dir);
  for (const h of cgroupHierarchies()) rmCgroupTree(join(h, state.cgroupRoot));
  restoreHost(state);
  rmSync(state.dir, { recursive: true, force: true });
  return stopped;
}
