import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findPeers } from './control-plane.js';
import type { ControlPlane } from './control-plane.js';
import { freePorts } from './ports.js';
import { alive } from './processes.js';
import { until } from './wait.js';

/** NodeImage is one image the node's containerd imports: its name and its OCI archive (scripts/node-images.mjs). */
export interface NodeImage {
  name: string;
  archive: string;
}

/** RealNodePeers is what scripts/peers.mjs says about the real node: the kubelet and its images, or why they are missing. */
export interface RealNodePeers {
  kubelet?: string;
  nodeImages?: { pause: NodeImage; busybox: NodeImage };
  kubeletUnavailable?: string;
}

/** REAL_NODE_TAINT keeps every pod that does not tolerate it off the real node. */
export const REAL_NODE_TAINT = { key: 'kevents.test/real-node', value: 'yes', effect: 'NoSchedule' };

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
  if (process.getuid?.() !== 0) return 'the kubelet and containerd need root (mounts, cgroups, namespaces)';
  for (const cmd of ['containerd', 'ctr', 'runc']) {
    if (spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status !== 0) return `${cmd} is not installed (apt-get install containerd)`;
  }
  if (!existsSync('/usr/lib/cni/loopback')) return 'the CNI loopback plugin is missing (apt-get install containernetworking-plugins)';
  return undefined;
}

/** KERNEL_TUNABLES are the sysctls the kubelet sets at start (protectKernelDefaults off): put back at stop. */
const KERNEL_TUNABLES = ['vm/overcommit_memory', 'vm/panic_on_oom', 'kernel/panic', 'kernel/panic_on_oops', 'kernel/keys/root_maxkeys', 'kernel/keys/root_maxbytes'];

/** DOCKER_REGISTRY is Debian's docker-registry (the CNCF distribution registry). */
const DOCKER_REGISTRY = '/usr/bin/docker-registry';

/** bcrypt hashes a password for docker-registry's htpasswd (bcrypt only) with Debian's Python and libxcrypt. */
function bcrypt(password: string): string | undefined {
  const r = spawnSync('/usr/bin/python3', ['-W', 'ignore', '-c', 'import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH)))', password], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.startsWith('$2') ? r.stdout.trim() : undefined;
}

/**
 * startRegistry runs an empty docker-registry on a loopback port (behind htpasswd auth with user `kevents` when
 * a hash is given) and tells the node's containerd, through its hosts folder, that it speaks plain HTTP.
 */
async function startRegistry(dir: string, name: string, htpasswdHash: string | undefined): Promise<{ proc: Proc; host: string }> {
  const host = `127.0.0.1:${(await freePorts(1))[0]!}`;
  let auth = '';
  if (htpasswdHash !== undefined) {
    writeFileSync(join(dir, `${name}.htpasswd`), `kevents:${htpasswdHash}\n`);
    auth = `auth: {htpasswd: {realm: kevents, path: ${dir}/${name}.htpasswd}}\n`;
  }
  writeFileSync(join(dir, `${name}-registry.yaml`), `version: 0.1\nlog: {level: warn}\nstorage: {filesystem: {rootdirectory: ${dir}/${name}-registry}}\nhttp: {addr: "${host}"}\n${auth}`);
  const proc = launch(DOCKER_REGISTRY, ['serve', join(dir, `${name}-registry.yaml`)]);
  mkdirSync(join(dir, 'certs.d', host), { recursive: true });
  writeFileSync(join(dir, 'certs.d', host, 'hosts.toml'), `server = "http://${host}"\n\n[host."http://${host}"]\n  capabilities = ["pull", "resolve"]\n`);
  await until(`docker-registry ${name} listens on ${host}`, async () => {
    if (proc.child.exitCode !== null) throw new Error(`docker-registry exited: ${proc.err().slice(-2000)}`);
    try {
      const res = await fetch(`http://${host}/v2/`);
      return res.status === (htpasswdHash === undefined ? 200 : 401);
    } catch {
      return false;
    }
  }, 30_000, 200);
  return { proc, host };
}

function containerdConfig(dir: string, pause: string): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `version = 2
root = "${dir}/containerd/root"
state = "${dir}/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = "${dir}/containerd.sock"

[plugins."io.containerd.internal.v1.opt"]
  path = "${dir}/containerd/opt"

[${cri}]
  sandbox_image = "${pause}"
  # runc cannot write oom_score_adj below the caller's here: without this every sandbox fails.
  restrict_oom_score_adj = true
  enable_selinux = false

[${cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[${cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[${cri}.containerd.runtimes.runc.options]
  SystemdCgroup = false

[${cri}.cni]
  bin_dir = "/usr/lib/cni"
  conf_dir = "${dir}/cni"

[${cri}.registry]
  config_path = "${dir}/certs.d"
`;
}

function kubeletConfig(dir: string, cgroupRoot: string, port: number): string {
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: ${port}
healthzBindAddress: 127.0.0.1
healthzPort: 0
readOnlyPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
cgroupRoot: /${cgroupRoot}
cgroupsPerQOS: true
enforceNodeAllocatable: ["pods"]
failSwapOn: false
failCgroupV1: false
containerRuntimeEndpoint: unix://${dir}/containerd.sock
podLogsDir: ${dir}/pod-logs
staticPodPath: ""
registerWithTaints:
- {key: ${REAL_NODE_TAINT.key}, value: "${REAL_NODE_TAINT.value}", effect: ${REAL_NODE_TAINT.effect}}
evictionHard: {memory.available: "1Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
nodeStatusUpdateFrequency: 5s
syncFrequency: 5s
fileCheckFrequency: 60s
`;
}

/** cgroupHierarchies are the mount points of the cgroup (v1) hierarchies, or the one v2 mount. */
function cgroupHierarchies(): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' '))
    .filter((f) => f.includes('cgroup') || f.includes('cgroup2'))
    .map((f) => f[4]!)
    .filter((p) => p.startsWith('/sys/fs/cgroup'));
}

/** rmCgroupTree removes a cgroup folder and those below it, deepest first (a cgroup is removed with rmdir only). */
function rmCgroupTree(path: string): void {
  if (!existsSync(path)) return;
  for (const entry of readdirSync(path, { withFileTypes: true })) if (entry.isDirectory()) rmCgroupTree(join(path, entry.name));
  try {
    rmdirSync(path);
  } catch {
    // A process still in it (it was killed just now): the next test run's cleanup gets it.
  }
}

/** mountsUnder are the mount points below dir, deepest first. */
function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((p): p is string => p !== undefined && (p === dir || p.startsWith(`${dir}/`)))
    .reverse();
}

/** processesMentioning are the pids whose command line names dir: the shims and containers this node started. */
function processesMentioning(dir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(dir)) pids.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

/** killMentioning kills, at once, the processes whose command line names dir. */
function killMentioning(dir: string): void {
  for (const pid of processesMentioning(dir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}

function unmountUnder(dir: string): void {
  for (const m of mountsUnder(dir)) spawnSync('umount', ['-l', m], { stdio: 'ignore' });
}

/**
 * unfinished are the scratch folders of nodes not stopped yet: a test process that ends without stopping its node
 * (a crash, a cancelled run) still kills the node's processes and lifts its mounts on the way out.
 */
const unfinished = new Map<string, string>();
process.once('exit', () => {
  for (const [dir, cgroupRoot] of unfinished) {
    killMentioning(dir);
    killInCgroups(cgroupRoot);
    unmountUnder(dir);
  }
});

/** killInCgroups kills every process in the node's cgroups: the containers, which name no folder of the node. */
function killInCgroups(cgroupRoot: string): void {
  const visit = (path: string): void => {
    if (!existsSync(path)) return;
    let pids: string[] = [];
    try {
      pids = readFileSync(join(path, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
    } catch {
      // Removed meanwhile.
    }
    for (const pid of pids) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
    for (const entry of readdirSync(path, { withFileTypes: true })) if (entry.isDirectory()) visit(join(path, entry.name));
  };
  for (const h of cgroupHierarchies()) visit(join(h, cgroupRoot));
}

interface Proc {
  child: ChildProcess;
  err: () => string;
  exited: Promise<void>;
}

function launch(bin: string, args: string[]): Proc {
  const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    err = (err + d.toString()).slice(-200_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, err: () => err, exited };
}

async function stopProc(p: Proc): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => p.child.kill('SIGKILL'), 15_000);
  await p.exited;
  clearTimeout(timer);
}

/**
 * startRealNode runs containerd (its own config, state, root and socket under a scratch folder) and a
 * kubelet that registers node `name` with the control plane, tainted with REAL_NODE_TAINT, and waits
 * until the node is Ready. Pods for it need `hostNetwork: true`, a toleration (or nodeName) and
 * `automountServiceAccountToken: false`; their images are the imported busybox only.
 */
export async function startRealNode(cp: ControlPlane, name = 'real-1'): Promise<RealNode> {
  const peers = findPeers() as RealNodePeers;
  if (peers.kubelet === undefined || peers.nodeImages === undefined) throw new Error(realNodeUnavailable() ?? 'no kubelet');
  const { pause, busybox } = peers.nodeImages;
  const dir = mkdtempSync('/tmp/kevents-node-');

  const cgroupRoot = `kevents-${dir.split('-').pop()!}`;
  unfinished.set(dir, cgroupRoot);
  const tunables = new Map(KERNEL_TUNABLES.filter((t) => existsSync(`/proc/sys/${t}`)).map((t) => [t, readFileSync(`/proc/sys/${t}`, 'utf8')]));
  const hadVarLibKubelet = existsSync('/var/lib/kubelet');
  const hadVarLogContainers = existsSync('/var/log/containers');
  const hadVarLogPods = existsSync('/var/log/pods');
  const socket = join(dir, 'containerd.sock');
  const ctr = (...args: string[]): string => execFileSync('ctr', ['--address', socket, '--namespace', 'k8s.io', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  let containerd: Proc | undefined;
  let kubelet: Proc | undefined;
  const registries: Proc[] = [];
  let registryHost: string | undefined;
  let lockedHost: string | undefined;

  const cleanup = async (): Promise<void> => {
    if (kubelet !== undefined) await stopProc(kubelet);
    if (containerd !== undefined && containerd.child.exitCode === null) {
      try {
        for (const id of ctr('tasks', 'ls', '-q').split('\n').filter(Boolean)) {
          try {
            ctr('tasks', 'kill', '-s', 'SIGKILL', id);
          } catch {
            // Already stopped.
          }
        }
        await until('the node has no running task', () => ctr('tasks', 'ls', '-q').trim() === '' || ctr('tasks', 'ls').split('\n').slice(1).filter(Boolean).every((l) => /STOPPED/.test(l)), 30_000, 300);
        for (const id of ctr('tasks', 'ls', '-q').split('\n').filter(Boolean)) ctr('tasks', 'delete', id);
      } catch {
        // The processes are killed by pid below.
      }
      await stopProc(containerd);
    }
    for (const r of registries) await stopProc(r);
    // Shims and containers outlive containerd by design; ours name the scratch folder in their command lines.
    killMentioning(dir);
    killInCgroups(cgroupRoot);
    await until('the node\'s processes are gone', () => processesMentioning(dir).every((pid) => !alive(pid)), 30_000, 200);
    unmountUnder(dir);
    unfinished.delete(dir);
    for (const h of cgroupHierarchies()) rmCgroupTree(join(h, cgroupRoot));
    for (const [t, v] of tunables) {
      try {
        writeFileSync(`/proc/sys/${t}`, v);
      } catch {
        // A read-only /proc/sys: the kubelet could not change it either.
      }
    }
    // The kubelet writes a few places outside its root folder whatever its flags say.
    if (!hadVarLibKubelet) rmSync('/var/lib/kubelet', { recursive: true, force: true });
    for (const [path, had] of [['/var/log/containers', hadVarLogContainers], ['/var/log/pods', hadVarLogPods]] as const) {
      if (!existsSync(path)) continue;
      for (const entry of readdirSync(path)) {
        const p = join(path, entry);
        try {
          if (lstatSync(p).isSymbolicLink() && readlinkSync(p).startsWith(dir)) rmSync(p, { force: true });
        } catch {
          // Gone meanwhile.
        }
      }
      if (!had && readdirSync(path).length === 0) rmdirSync(path);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    for (const d of ['containerd', 'cni', 'certs.d', 'kubelet', 'pod-logs']) mkdirSync(join(dir, d), { recursive: true });
    // Node network ready without a bridge: the pods use the host's network, and nothing leaves loopback.
    writeFileSync(join(dir, 'cni', '10-loopback.conflist'), JSON.stringify({ cniVersion: '0.4.0', name: 'kevents-loopback', plugins: [{ type: 'loopback' }] }));
    writeFileSync(join(dir, 'containerd.toml'), containerdConfig(dir, pause.name));
    if (existsSync(DOCKER_REGISTRY)) {
      const open = await startRegistry(dir, 'open', undefined);
      registries.push(open.proc);
      registryHost = open.host;
      const hash = bcrypt(randomBytes(12).toString('hex'));
      if (hash !== undefined) {
        const locked = await startRegistry(dir, 'locked', hash);
        registries.push(locked.proc);
        lockedHost = locked.host;
      }
    }
    containerd = launch('containerd', ['--config', join(dir, 'containerd.toml'), '--log-level', 'warn']);
    await until('containerd answers on its socket', () => {
      if (containerd!.child.exitCode !== null) throw new Error(`containerd exited: ${containerd!.err().slice(-2000)}`);
      return spawnSync('ctr', ['--address', socket, 'version'], { stdio: 'ignore', timeout: 10_000 }).status === 0;
    }, 60_000, 300);
    ctr('images', 'import', pause.archive);
    ctr('images', 'import', busybox.archive);
    for (const h of cgroupHierarchies()) mkdirSync(join(h, cgroupRoot), { recursive: true });
    writeFileSync(join(dir, 'kubelet.yaml'), kubeletConfig(dir, cgroupRoot, (await freePorts(1))[0]!));
    kubelet = launch(peers.kubelet, [
      `--config=${join(dir, 'kubelet.yaml')}`,
      `--kubeconfig=${cp.kubeconfigFile()}`,
      `--root-dir=${join(dir, 'kubelet')}`,
      `--cert-dir=${join(dir, 'kubelet', 'pki')}`,
      `--hostname-override=${name}`,
      `--pod-infra-container-image=${pause.name}`,
      '--v=1',
    ]);
    await until(`node ${name} is Ready`, async () => {
      if (kubelet!.child.exitCode !== null) throw new Error(`the kubelet exited: ${kubelet!.err().slice(-3000)}`);
      const r = await cp.request('GET', `/api/v1/nodes/${name}`);
      const conditions = (r.json as { status?: { conditions?: { type: string; status: string }[] } } | undefined)?.status?.conditions ?? [];
      return r.status === 200 && conditions.some((c) => c.type === 'Ready' && c.status === 'True');
    }, 180_000, 500);
  } catch (err) {
    const logs = `containerd: ${containerd?.err().slice(-2000) ?? ''}\nkubelet: ${kubelet?.err().slice(-3000) ?? ''}`;
    await cleanup();
    throw new Error(`the real node did not start: ${String(err)}\n${logs}`, { cause: err });
  }

  return {
    name,
    busybox: busybox.name,
    registry: registryHost,
    lockedRegistry: lockedHost,
    logs: () => `containerd:\n${containerd?.err().slice(-3000) ?? ''}\nkubelet:\n${kubelet?.err().slice(-6000) ?? ''}`,
    stop: async () => {
      // Pods deleted through the API stop the kubelet's containers as a node drain would; whatever remains is killed.
      const pods = await cp.request('GET', `/api/v1/pods?fieldSelector=spec.nodeName%3D${name}`);
      for (const p of ((pods.json as { items?: { metadata: { namespace: string; name: string } }[] } | undefined)?.items ?? [])) {
        await cp.request('DELETE', `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}?gracePeriodSeconds=0`);
      }
      await cleanup();
    },
  };
}
