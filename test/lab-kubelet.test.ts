import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { findPeers } from './support/control-plane.js';
import { hasKubectl } from './support/kubectl.js';
import { realNodeUnavailable } from './support/real-node.js';
import type { RealNodePeers } from './support/real-node.js';
import { run, sh } from './support/run.js';
import type { Run } from './support/run.js';
import { CLI } from './support/server-process.js';
import { until } from './support/wait.js';

/**
 * `kevents lab up --kubelet`: the lab with its real node real-1 (a kubelet and containerd on this machine), exercise 6
 * read from the kubelet's own events, and `lab down` leaving no process, mount or cgroup of the node behind. Where the
 * node cannot run here, the file is skipped with the reason.
 */

const root = mkdtempSync(join(tmpdir(), 'kevents-lab-kubelet-'));
const dir = join(root, 'lab');
const home = join(root, 'home');
mkdirSync(home, { recursive: true });

const kevents = (args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> => run(process.execPath, [CLI, ...args], { env, timeoutMs: 600_000 });

let kubeconfig = '';

function learner(script: string): Promise<Run> {
  return sh(script, { HOME: home, KUBECONFIG: kubeconfig });
}

async function shOk(script: string): Promise<string> {
  const r = await learner(script);
  assert.equal(r.code, 0, `script failed (${r.code}):\n${script}\n${r.stdout}\n${r.stderr}`);
  return r.stdout + r.stderr;
}

const check = (n: number): Promise<Run> => kevents(['lab', 'check', String(n), '--dir', dir]);

/** eventually retries a check until it passes, for what the kubelet and the scheduler do in their own time. */
async function eventually(n: number, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await check(n);
    if (r.code === 0) return r.stdout;
    if (Date.now() > deadline) assert.fail(`check ${n} never passed:\n${r.stdout}${r.stderr}\n${nodeLogs()}`);
    await new Promise((res) => setTimeout(res, 2_000));
  }
}

/** heredoc is the `kubectl apply -f - <<'EOF' … EOF` snippet of an exercise's text, as the learner copies it. */
function heredoc(text: string): string {
  const lines = text.split('\n');
  const from = lines.findIndex((l) => l.trim().startsWith('kubectl apply -f - <<'));
  const to = lines.findIndex((l, i) => i > from && l.trim() === 'EOF');
  assert.ok(from >= 0 && to > from, `no manifest in:\n${text}`);
  return lines.slice(from, to + 1).map((l) => l.replace(/^ {4}/, '')).join('\n');
}

interface NodeState {
  dir: string;
  cgroupRoot: string;
  processes: { name: string; pid: number; log: string }[];
}

let node: NodeState | undefined;

/** KUBELET_HOST_PATHS are where the kubelet writes outside its folder whatever its flags say. */
const KUBELET_HOST_PATHS = ['/var/lib/kubelet', '/var/log/containers', '/var/log/pods'];
let pids: { name: string; pid: number }[] = [];

function nodeLogs(): string {
  return (node?.processes ?? []).map((p) => {
    try {
      return `${p.name}:\n${readFileSync(p.log, 'utf8').slice(-3000)}`;
    } catch {
      return `${p.name}: no log`;
    }
  }).join('\n');
}

function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * allExited waits until none of the programs runs: lab commands return once a program has let go of its memory (its
 * command line reads empty), and a large one may take a moment more on a busy machine to become a zombie.
 */
async function allExited(ps: { name: string; pid: number }[]): Promise<void> {
  try {
    await until('every program of the lab has exited', () => ps.every((p) => !running(p.pid)), 30_000, 200);
  } catch {
    assert.deepEqual(ps.filter((p) => running(p.pid)).map((p) => `${p.name} (pid ${p.pid})`), [], 'still running');
  }
}

/** mentioning are the live processes whose command line names path. */
function mentioning(path: string): string[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d) && running(Number(d))).filter((d) => {
    try {
      return readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(path);
    } catch {
      return false;
    }
  });
}

const unavailable = !hasKubectl() ? 'kubectl is not installed' : realNodeUnavailable();
if (unavailable !== undefined) process.stderr.write(`lab-kubelet: skipped: ${unavailable}\n`);

describe('kevents lab up --kubelet: a real node in the lab', { skip: unavailable ?? false, timeout: 900_000 }, () => {
  /** env points lab up at the peers' cache, where the kubelet and the node's images were built. */
  let env: NodeJS.ProcessEnv = {};

  /** hostPathsBefore are the kubelet's paths outside its folder that existed before the lab. */
  let hostPathsBefore: string[] = [];
  /** kubeletBefore says another kubelet ran as the lab started: the paths it shares then come and go with it. */
  let kubeletBefore = false;

  before(async () => {
    hostPathsBefore = KUBELET_HOST_PATHS.filter((p) => existsSync(p));
    kubeletBefore = otherKubeletRuns();
    const peers = findPeers() as RealNodePeers;
    env = { KEVENTS_PEERS_CACHE: dirname(dirname(peers.nodeImages!.pause.archive)) };
    const up = await kevents(['lab', 'up', '--dir', dir, '--kubelet', '--no-build'], env);
    assert.equal(up.code, 0, `lab up --kubelet failed:\n${up.stdout}\n${up.stderr}`);
    kubeconfig = join(dir, 'kubeconfig');
    const state = JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as { processes: { name: string; pid: number }[]; realNode?: NodeState };
    node = state.realNode;
    pids = [...state.processes, ...(node?.processes ?? [])];
    assert.match(up.stdout, /real node: {2}real-1 \(kubelet v1\.33\.\d+ and containerd on this machine\), tainted lab\.kevents\.dev\/real-node=yes:NoSchedule/);
    const took = /up in ([\d.]+) s/.exec(up.stdout)?.[1];
    process.stderr.write(`lab-kubelet: lab up --kubelet took ${took ?? '?'} s\n`);
  });

  after(async () => {
    await kevents(['lab', 'down', '--dir', dir]);
    rmSync(root, { recursive: true, force: true });
  });

  it('real-1 is Ready with its taint, beside the kwok nodes, and lab status lists its programs', async () => {
    assert.ok(node !== undefined, 'state.json has no realNode');
    assert.deepEqual(node.processes.map((p) => p.name), ['containerd', 'kubelet']);
    // What lab down must remove is there while the node runs: its cgroups, mounts and processes.
    const present = leftovers(dir, node.cgroupRoot);
    for (const kind of ['process', 'mount', 'cgroup']) assert.ok(present.some((l) => l.startsWith(`${kind} `)), `no ${kind} of the node found while it runs: ${present.join(', ')}`);
    const n = JSON.parse(await shOk('kubectl get node real-1 -o json')) as { spec: { taints?: { key: string; value: string; effect: string }[] }; status: { conditions: { type: string; status: string }[] } };
    assert.deepEqual(n.spec.taints?.filter((t) => t.key === 'lab.kevents.dev/real-node'), [{ key: 'lab.kevents.dev/real-node', value: 'yes', effect: 'NoSchedule' }]);
    assert.ok(n.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True'), JSON.stringify(n.status.conditions));
    const nodes = await shOk('kubectl get nodes -o name');
    assert.deepEqual(nodes.trim().split('\n').sort(), ['node/kwok-node-0', 'node/kwok-node-1', 'node/kwok-node-2', 'node/real-1']);
    const status = await kevents(['lab', 'status', '--dir', dir]);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^ {2}containerd +running \(pid \d+\)/m);
    assert.match(status.stdout, /^ {2}kubelet +running \(pid \d+\)/m);
  });

  it('exercise 6 is the real one: its check fails until a pod crash-loops on real-1, then reads the kubelet\'s own events', async () => {
    const list = await kevents(['lab', 'exercises', '--dir', dir]);
    assert.match(list.stdout, /^ {2}6 {2}The kubelet's reasons \(real\)/m);
    const simulated = await kevents(['lab', 'exercises']);
    assert.match(simulated.stdout, /^ {2}6 {2}The kubelet's reasons \(simulated\)/m);
    const six = await kevents(['lab', 'exercise', '6', '--dir', dir]);
    assert.equal(six.code, 0, six.stderr);
    assert.match(six.stdout, /tainted lab\.kevents\.dev\/real-node=yes:NoSchedule/);
    const before = await check(6);
    assert.equal(before.code, 1, before.stdout);
    assert.match(before.stdout, /missing {2}no pod of namespace lab runs on real-1 yet/);
    assert.match(before.stdout, /missing {2}no Warning BackOff from the kubelet on real-1 yet/);
    await shOk(heredoc(six.stdout));
    const out = await eventually(6, 300_000);
    assert.match(out, /done {5}pod crashy went through Created and Started on real-1, written by its kubelet/);
    assert.match(out, /done {5}pod crashy crash-loops: the kubelet on real-1 wrote a Warning BackOff/);
    assert.match(out, /the kubelet said: Back-off restarting failed container main in pod crashy_lab\([0-9a-f-]+\)/);
    assert.match(out, /Exercise 6 is done\./);
    const events = (JSON.parse(await shOk('kubectl get events --field-selector involvedObject.name=crashy -o json')) as { items: { reason: string; type: string; message: string; source?: { component?: string; host?: string }; reportingComponent?: string; involvedObject: { fieldPath?: string } }[] }).items;
    const backOff = events.find((e) => e.reason === 'BackOff' && e.type === 'Warning');
    assert.ok(backOff !== undefined, JSON.stringify(events));
    assert.deepEqual(backOff.source, { component: 'kubelet', host: 'real-1' });
    assert.equal(backOff.reportingComponent, 'kubelet');
    assert.equal(backOff.involvedObject.fieldPath, 'spec.containers{main}');
    assert.deepEqual(events.filter((e) => e.source?.component === 'kwok_controller'), [], 'a pod of the real node has no simulated event');
    for (const e of events) process.stderr.write(`lab-kubelet: ${e.type} ${e.reason} ${JSON.stringify(e.message)} (${e.source?.component ?? ''})\n`);
  });

  it('a pod without the toleration stays off real-1: exercise 5\'s scheduler sentence names the taint', async () => {
    const five = await kevents(['lab', 'exercise', '5', '--dir', dir]);
    const sentence = /FailedScheduling {3}pod\/hog-… {3}(.+)$/m.exec(five.stdout)?.[1];
    assert.ok(sentence !== undefined, five.stdout);
    await shOk(heredoc(five.stdout));
    const out = await eventually(5, 120_000);
    assert.ok(out.includes(`the scheduler said: ${sentence}`), `${out}\nexpected: ${sentence}`);
    const onReal = await shOk('kubectl get pods -l app=hog --field-selector spec.nodeName=real-1 -o name');
    assert.equal(onReal.trim(), '');
    await shOk('kubectl delete deployment hog');
  });

  it('lab down stops the node first and leaves no process, mount or cgroup of it', async () => {
    assert.ok(node !== undefined);
    const down = await kevents(['lab', 'down', '--dir', dir]);
    assert.equal(down.code, 0, down.stderr);
    assert.match(down.stdout, /stopped kubelet, containerd, kevents-archive, kwok, kube-controller-manager, kube-scheduler, kube-apiserver, etcd; removed/);
    assert.equal(existsSync(dir), false);
    await allExited(pids);
    assert.equal(node.dir, join(dir, 'real-node'));
    assert.deepEqual(leftovers(dir, node.cgroupRoot), [], 'a process (a shim, a container), mount or cgroup of the lab is left');
    assert.ok(readFileSync('/proc/self/mountinfo', 'utf8').includes(' cgroup'), 'no cgroup hierarchy found in /proc/self/mountinfo');
    // Another kubelet (test/incidents-kubelet's, run beside this file) shares them: the last node to stop removes them.
    if (kubeletBefore || otherKubeletRuns()) process.stderr.write('lab-kubelet: another kubelet ran beside the lab: the host paths it shares are not checked\n');
    else assert.deepEqual(KUBELET_HOST_PATHS.filter((p) => existsSync(p)), hostPathsBefore, 'the kubelet\'s paths outside its folder are as before');
  });
});

/** otherKubeletRuns says a kubelet process runs on this host (test/incidents-kubelet's, run beside this file). */
function otherKubeletRuns(): boolean {
  return readdirSync('/proc').some((d) => {
    if (!/^\d+$/.test(d) || !running(Number(d))) return false;
    try {
      return readFileSync(`/proc/${d}/comm`, 'utf8').trim() === 'kubelet';
    } catch {
      return false;
    }
  });
}

/** leftovers are the node's processes, mounts and cgroups still on the host. */
function leftovers(nodeDir: string, cgroupRoot: string): string[] {
  const mountinfo = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' '));
  const mounts = mountinfo.map((f) => f[4] ?? '').filter((m) => m.startsWith(nodeDir));
  const cgroups = mountinfo.filter((f) => f.includes('cgroup') || f.includes('cgroup2')).map((f) => join(f[4]!, cgroupRoot)).filter((c) => existsSync(c));
  return [...mentioning(nodeDir).map((pid) => `process ${pid}`), ...mounts.map((m) => `mount ${m}`), ...cgroups.map((c) => `cgroup ${c}`)];
}

describe('kevents lab up --kubelet whose kubelet fails', { skip: unavailable ?? false, timeout: 600_000 }, () => {
  it('fails with the kubelet\'s words, stops all it started, and lab down removes the rest', async () => {
    const where = join(root, 'failing');
    const bin = join(root, 'bin-failing');
    mkdirSync(bin, { recursive: true });
    // --bin-dir is looked at first for the kubelet too; the control plane's programs come from the peers' cache.
    writeFileSync(join(bin, 'kubelet'), '#!/bin/sh\necho "kubelet: refusing to start here" >&2\nexit 1\n');
    chmodSync(join(bin, 'kubelet'), 0o755);
    const peers = findPeers() as RealNodePeers;
    const up = await kevents(['lab', 'up', '--dir', where, '--kubelet', '--bin-dir', bin, '--no-build'], { KEVENTS_PEERS_CACHE: dirname(dirname(peers.nodeImages!.pause.archive)) });
    assert.equal(up.code, 1, up.stdout + up.stderr);
    assert.match(up.stderr, /error: the real node real-1 did not start: the kubelet exited: kubelet: refusing to start here/);
    const state = JSON.parse(readFileSync(join(where, 'state.json'), 'utf8')) as { processes: { name: string; pid: number }[]; realNode: NodeState };
    assert.deepEqual(state.realNode.processes.map((p) => p.name), ['containerd', 'kubelet']);
    await allExited([...state.processes, ...state.realNode.processes]);
    assert.deepEqual(leftovers(state.realNode.dir, state.realNode.cgroupRoot), []);
    assert.equal(existsSync(state.realNode.dir), false);
    const down = await kevents(['lab', 'down', '--dir', where]);
    assert.equal(down.code, 0, down.stderr);
    assert.equal(existsSync(where), false);
  });
});

describe('kevents lab up --kubelet where the node cannot run', () => {
  it('says why in one line, exits 1 and starts nothing', async () => {
    const where = join(root, 'no-node');
    // No containerd on this PATH: the first thing the node needs after root.
    const r = await run(process.execPath, [CLI, 'lab', 'up', '--dir', where, '--kubelet', '--no-build'], { env: { PATH: join(root, 'empty-path') } });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, process.getuid?.() === 0 ? /--kubelet: the real node cannot run here: containerd is not installed \(apt-get install containerd\)/ : /--kubelet: the real node cannot run here: the kubelet and containerd need root/);
    assert.equal(existsSync(where), false);
  });
});
