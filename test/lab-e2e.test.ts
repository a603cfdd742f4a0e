import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findPeers } from './support/control-plane.js';
import { hasKubectl } from './support/kubectl.js';
import { run, sh } from './support/run.js';
import type { Run } from './support/run.js';
import { CLI } from './support/server-process.js';

// One lab for the whole file, as a learner keeps one for the course. The TTL is short so exercise 7
// really waits for the cluster to forget; kube-apiserver's lease reuse is scaled down with it.
const TTL = '1m';
const root = mkdtempSync(join(tmpdir(), 'kevents-lab-e2e-'));
const dir = join(root, 'lab');
const home = join(root, 'home');
mkdirSync(home, { recursive: true });

const kevents = (...args: string[]): Promise<Run> => run(process.execPath, [CLI, ...args]);

let kubeconfig = '';
let archive = '';

/** learner runs a learner's shell snippet: kubectl (the one on PATH) against the lab. */
function learner(script: string): Promise<Run> {
  // kubectl keeps its discovery cache under a HOME of its own, as a fresh learner's would be.
  return sh(script, { HOME: home, KUBECONFIG: kubeconfig, KEVENTS_SERVER: archive });
}

async function shOk(script: string): Promise<string> {
  const r = await learner(script);
  assert.equal(r.code, 0, `script failed (${r.code}):\n${script}\n${r.stdout}\n${r.stderr}`);
  return r.stdout + r.stderr;
}

const check = (n: number): Promise<Run> => kevents('lab', 'check', String(n), '--dir', dir);

async function fails(n: number, missing: RegExp): Promise<void> {
  const r = await check(n);
  assert.equal(r.code, 1, `check ${n} should fail:\n${r.stdout}${r.stderr}`);
  assert.match(r.stdout, missing);
  assert.match(r.stdout, new RegExp(`Exercise ${n} is not done yet`));
}

async function passes(n: number): Promise<string> {
  const r = await check(n);
  assert.equal(r.code, 0, `check ${n} should pass:\n${r.stdout}${r.stderr}`);
  assert.match(r.stdout, new RegExp(`Exercise ${n} is done\\.`));
  assert.doesNotMatch(r.stdout, /missing/);
  return r.stdout;
}

/** eventually retries a check until it passes, for what the scheduler, kwok or the TTL do in their own time. */
async function eventually(n: number, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await check(n);
    if (r.code === 0) return passes(n);
    if (Date.now() > deadline) assert.fail(`check ${n} never passed:\n${r.stdout}${r.stderr}`);
    await new Promise((res) => setTimeout(res, 2_000));
  }
}

const WIDGET_UID = "WIDGET_UID=$(kubectl get widget demo -o jsonpath='{.metadata.uid}')";
const NOW = 'NOW=$(date -u +%Y-%m-%dT%H:%M:%SZ)';
const REF = '{ apiVersion: lab.kevents.dev/v1, kind: Widget, name: demo, namespace: lab, uid: $WIDGET_UID }';

function coreEvent(name: string, type: string, reason: string, message: string): string {
  return `${WIDGET_UID}; ${NOW}
kubectl create -f - <<EOF
apiVersion: v1
kind: Event
metadata: { name: ${name} }
involvedObject: ${REF}
type: ${type}
reason: ${reason}
message: ${message}
source: { component: widget-controller }
firstTimestamp: "$NOW"
lastTimestamp: "$NOW"
count: 1
EOF`;
}

/** running tells whether a pid is a live process (an exited one that init has not reaped yet is not). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

const skip = !hasKubectl() ? 'kubectl is not installed' : false;

describe('kevents lab: the course on a real control plane', { skip, timeout: 600_000 }, () => {
  let pids: { name: string; pid: number }[] = [];

  before(async () => {
    // The binaries come from the peers cache, where lab up looks by itself; it must never build them here.
    findPeers();
    const up = await kevents('lab', 'up', '--dir', dir, '--event-ttl', TTL, '--no-build');
    assert.equal(up.code, 0, `lab up failed:\n${up.stdout}\n${up.stderr}`);
    kubeconfig = /kubeconfig: (\S+)/.exec(up.stdout)?.[1] ?? '';
    archive = /KEVENTS_SERVER=(\S+)/.exec(up.stdout)?.[1] ?? '';
    assert.equal(kubeconfig, join(dir, 'kubeconfig'));
    assert.match(archive, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(up.stdout, /3 kwok nodes .* each 2 CPU and 4Gi/);
    const state = JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as { processes: { name: string; pid: number }[] };
    pids = state.processes;
    assert.deepEqual(pids.map((p) => p.name), ['etcd', 'kube-apiserver', 'kube-scheduler', 'kube-controller-manager', 'kwok', 'kevents-archive']);
  });

  after(async () => {
    await kevents('lab', 'down', '--dir', dir);
    rmSync(root, { recursive: true, force: true });
  });

  it('lists the exercises and prints each with its commands, before any is done', async () => {
    const list = await kevents('lab', 'exercises');
    assert.equal(list.code, 0);
    for (let n = 1; n <= 7; n++) assert.match(list.stdout, new RegExp(`^  ${n}  `, 'm'));
    const five = await kevents('lab', 'exercise', '5', '--dir', dir);
    assert.match(five.stdout, /replicas: 4/);
    assert.match(five.stdout, /cpu: 1500m/);
    assert.match(five.stdout, new RegExp(`kevents lab check 5 --dir ${dir}`));
    const bad = await kevents('lab', 'exercise', '9');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /no exercise "9": the exercises are 1 to 7/);
    await fails(1, /missing {2}no established CustomResourceDefinition widgets\.lab\.kevents\.dev/);
    await fails(2, /missing {2}no create of an event without involvedObject through core\/v1 refused in namespace lab yet/);
    await fails(3, /missing {2}no event of type Critical found for widget\/demo/);
    await fails(4, /missing {2}no event for widget\/demo has a count above 1/);
    await fails(5, /missing {2}no FailedScheduling for want of CPU from default-scheduler/);
    await fails(6, /missing {2}no pod labelled lab\.kevents\.dev\/fail=true/);
    await fails(7, /missing {2}the archive holds no FailedScheduling for want of CPU/);
  });

  it('exercise 1: a custom resource, an event through each API, each read back through the other', async () => {
    await shOk(`kubectl apply -f - <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: widgets.lab.kevents.dev }
spec:
  group: lab.kevents.dev
  scope: Namespaced
  names: { kind: Widget, plural: widgets, singular: widget, listKind: WidgetList }
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true }
EOF
kubectl wait --for condition=Established crd/widgets.lab.kevents.dev
kubectl apply -f - <<'EOF'
apiVersion: lab.kevents.dev/v1
kind: Widget
metadata: { name: demo }
spec: { size: 3 }
EOF`);
    await fails(1, /missing {2}no event for widget\/demo made through core\/v1 yet/);
    await shOk(`${coreEvent('demo.core', 'Normal', 'ReconcileStarted', 'Reconciling widget demo')}
kubectl create -f - <<EOF
apiVersion: events.k8s.io/v1
kind: Event
metadata: { name: demo.events }
regarding: ${REF}
type: Normal
reason: ReconcileSucceeded
action: Reconcile
note: Widget demo is ready
reportingController: lab.kevents.dev/widget-controller
reportingInstance: widget-controller-0
eventTime: "$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)"
EOF`);
    await fails(1, /missing {2}demo\.core \(made through core\/v1\) was not read back through events\.k8s\.io\/v1 yet/);
    const viaEvents = await shOk('kubectl get events.events.k8s.io demo.core -o yaml');
    assert.match(viaEvents, /regarding:/);
    assert.match(viaEvents, /note: Reconciling widget demo/);
    assert.match(viaEvents, /deprecatedSource:\s+component: widget-controller/);
    await fails(1, /missing {2}demo\.events \(made through events\.k8s\.io\/v1\) was not read back through core\/v1 yet/);
    const viaCore = await shOk('kubectl get events demo.events -o yaml');
    assert.match(viaCore, /involvedObject:/);
    assert.match(viaCore, /message: Widget demo is ready/);
    assert.match(viaCore, /reportingComponent: lab\.kevents\.dev\/widget-controller/);
    const out = await passes(1);
    assert.match(out, /\| target {3}\| involvedObject/);
  });

  it('exercise 2: an event without its target, and the exact refusal through both APIs', async () => {
    const core = await learner(`kubectl create -f - <<'EOF'
apiVersion: v1
kind: Event
metadata: { name: no-target.core }
type: Normal
reason: Orphan
message: nobody to talk about
EOF`);
    assert.notEqual(core.code, 0);
    assert.match(core.stderr, /The Event "no-target\.core" is invalid: involvedObject\.namespace: Invalid value: "": does not match event\.namespace/);
    await fails(2, /missing {2}no create of an event without regarding through events\.k8s\.io\/v1/);
    const modern = await learner(`kubectl create -f - <<EOF
apiVersion: events.k8s.io/v1
kind: Event
metadata: { name: no-target.events }
type: Normal
reason: Orphan
action: Nothing
note: nobody to talk about
reportingController: lab.kevents.dev/hand
reportingInstance: hand-0
eventTime: "$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)"
EOF`);
    assert.notEqual(modern.code, 0);
    assert.match(modern.stderr, /The Event "no-target\.events" is invalid: involvedObject\.namespace: Invalid value: "": does not match event\.namespace/);
    const out = await passes(2);
    assert.match(out, /refused through events\.k8s\.io\/v1: Event "no-target\.events" is invalid: involvedObject\.namespace/);
  });

  it('exercise 3: type Critical is stored and listed, and kubectl events refuses the filter', async () => {
    await shOk(coreEvent('demo.critical', 'Critical', 'DiskAlmostFull', 'Volume of widget demo is 97% full'));
    await fails(3, /missing {2}list it: kubectl get events/);
    const listed = await shOk('kubectl get events --field-selector type=Critical');
    assert.match(listed, /Critical\s+DiskAlmostFull\s+widget\/demo/);
    const refused = await learner('kubectl events --types=Critical');
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /valid --types are Normal or Warning/);
    await passes(3);
  });

  it('exercise 4: count and lastTimestamp bumped by hand show as (x12 over 3m)', async () => {
    await shOk(coreEvent('demo.repeat', 'Warning', 'ReconcileFailed', 'Image tag 1.2.3 does not exist'));
    await fails(4, /missing {2}no event for widget\/demo has a count above 1/);
    await shOk(`THEN=$(date -u -d '3 minutes ago' +%Y-%m-%dT%H:%M:%SZ)
kubectl patch event demo.repeat --type merge -p "{\\"count\\":12,\\"firstTimestamp\\":\\"$THEN\\",\\"lastTimestamp\\":\\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\\"}"`);
    await fails(4, /missing {2}list it after the change: kubectl events --for widget\/demo/);
    const listing = await shOk('kubectl events --for widget/demo');
    assert.match(listing, /\(x12 over 3m\d*s?\)\s+Warning\s+ReconcileFailed\s+Widget\/demo/);
    const out = await passes(4);
    assert.match(out, /show it now as: \d+s \(x12 over 3m/);
  });

  it("exercise 5: a Deployment too large for the nodes, and the real scheduler's sentence", async () => {
    await shOk(`kubectl apply -f - <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: { name: hog }
spec:
  replicas: 4
  selector: { matchLabels: { app: hog } }
  template:
    metadata: { labels: { app: hog } }
    spec:
      containers:
      - name: hog
        image: nginx
        resources: { requests: { cpu: 1500m } }
EOF`);
    const out = await eventually(5, 90_000);
    assert.match(out, /the scheduler said: 0\/3 nodes are available: 3 Insufficient cpu\./);
    // While the incident goes on, the cluster still holds its events: exercise 7 is not done.
    await fails(7, /missing {2}the cluster still holds \d+ of them: they expire 1m0s after their last write/);
    const listed = await shOk('kubectl get events --field-selector reason=FailedScheduling');
    assert.match(listed, /Warning\s+FailedScheduling\s+pod\/hog-[a-z0-9]+-[a-z0-9]{5}\s+0\/3 nodes are available: 3 Insufficient cpu\./);
  });

  it("exercise 6: the kubelet's reasons, simulated by kwok, and a crash loop", async () => {
    await fails(6, /missing {2}no pod labelled lab\.kevents\.dev\/fail=true/);
    await shOk('kubectl run crashy --image=busybox --labels=lab.kevents.dev/fail=true');
    const out = await eventually(6, 90_000);
    assert.match(out, /went through Pulling, Pulled, Created, Started/);
    assert.match(out, /pod crashy \(lab\.kevents\.dev\/fail=true\) went through Unhealthy and BackOff/);
    const events = await shOk('kubectl get events --field-selector involvedObject.name=crashy -o wide');
    assert.match(events, /Warning\s+BackOff\s+pod\/crashy\s+kwok_controller\s+Back-off restarting failed container/);
  });

  it('exercise 7: after the TTL the cluster has forgotten, and the archive rebuilds the incident table', async () => {
    await shOk('kubectl delete deployment hog');
    const out = await eventually(7, 240_000);
    assert.match(out, /the cluster has forgotten them \(--event-ttl=1m0s\)/);
    const none = await shOk('kubectl get events --field-selector reason=FailedScheduling');
    assert.match(none, /No resources found in lab namespace\./);
    const table = await run(process.execPath, [CLI, 'timeline', '--server', archive, '-n', 'lab', '--for', 'deployment/hog', '-o', 'markdown']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^# Timeline of Deployment\/hog in lab$/m);
    assert.match(table.stdout, /^\| [^|]+ \| Warning \| FailedScheduling \| Pod\/hog-[a-z0-9]+-[a-z0-9]{5} \| \d+ \| 0\/3 nodes are available: 3 Insufficient cpu\./m);
    assert.match(table.stdout, /\| Normal \| ScalingReplicaSet \| Deployment\/hog \|/);
    assert.match(table.stdout, /\| Normal \| Started \| Pod\/hog-/);
  });

  it('lab down stops every program and leaves no file behind', async () => {
    const down = await kevents('lab', 'down', '--dir', dir);
    assert.equal(down.code, 0, down.stderr);
    assert.match(down.stdout, /stopped kevents-archive, kwok, kube-controller-manager, kube-scheduler, kube-apiserver, etcd; removed/);
    assert.equal(existsSync(dir), false);
    for (const p of pids) assert.equal(running(p.pid), false, `${p.name} (pid ${p.pid}) still runs`);
    const left = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).filter((d) => {
      try {
        return readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(dir);
      } catch {
        return false;
      }
    });
    assert.deepEqual(left, []);
    const again = await kevents('lab', 'down', '--dir', dir);
    assert.equal(again.code, 0);
    assert.match(again.stderr, /no lab in .*, nothing to do/);
    const status = await kevents('lab', 'check', '1', '--dir', dir);
    assert.equal(status.code, 1);
    assert.match(status.stderr, /no lab in .*: start one with kevents lab up/);
  });
});
