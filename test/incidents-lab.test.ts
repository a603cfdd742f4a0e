import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CoreEvent, Incident, IncidentList } from '../src/api/index.js';
import { findPeers } from './support/control-plane.js';
import { hasKubectl } from './support/kubectl.js';
import { CLI } from './support/server-process.js';

// Failures built by the real upstream components of the lab (kube-apiserver's admission, kube-scheduler,
// kube-controller-manager's ReplicaSet, Job, PersistentVolume and HPA controllers, kwok's nodes), read back as
// incidents from the lab's archive (`kevents serve --mirror`).
const root = mkdtempSync(join(tmpdir(), 'kevents-incidents-lab-'));
const dir = join(root, 'lab');
const home = join(root, 'home');
mkdirSync(home, { recursive: true });

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(program: string, args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 180_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(program, args, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

let kubeconfig = '';
let archive = '';
const started = new Date(Date.now() - 60_000).toISOString();

async function shOk(script: string): Promise<string> {
  const r = await run('bash', ['-euo', 'pipefail', '-c', script], { HOME: home, KUBECONFIG: kubeconfig });
  assert.equal(r.code, 0, `script failed (${r.code}):\n${script}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(`${archive}${path}`);
  assert.equal(res.status, 200, `${path}: ${await res.clone().text()}`);
  return (await res.json()) as T;
}

/** incidentOf waits until the archive's incidents of a namespace hold one that `want` accepts. */
async function incidentOf(namespace: string | undefined, want: (i: Incident) => boolean, what: string, timeoutMs = 150_000): Promise<Incident> {
  const path = namespace === undefined ? '/apis/archive.kevents.io/v1alpha1/incidents' : `/apis/archive.kevents.io/v1alpha1/namespaces/${namespace}/incidents`;
  const deadline = Date.now() + timeoutMs;
  let last: IncidentList | undefined;
  for (;;) {
    last = await getJson<IncidentList>(`${path}?since=${started}`);
    const found = last.incidents.find(want);
    if (found !== undefined) return found;
    if (Date.now() > deadline) assert.fail(`${what}: never seen; the incidents:\n${JSON.stringify(last.incidents.map((i) => [i.kind, i.root, i.cause]), null, 1)}`);
    await new Promise((r) => setTimeout(r, 2_000));
  }
}

/** firstTime is the earliest first time of the archive's events of a namespace with a reason (and object kind). */
async function firstTime(namespace: string, reason: string, kind?: string): Promise<string> {
  const list = await getJson<{ items: CoreEvent[] }>(`/api/v1/namespaces/${namespace}/events?fieldSelector=reason%3D${reason}`);
  const times = list.items
    .filter((e) => kind === undefined || e.involvedObject.kind === kind)
    .map((e) => e.firstTimestamp ?? e.eventTime ?? '')
    .filter((t) => t !== '')
    .map((t) => new Date(t).toISOString().replace('.000Z', 'Z'))
    .sort();
  assert.ok(times.length > 0, `no ${reason} in ${namespace}`);
  return times[0]!;
}

function sameSecond(a: string, b: string): void {
  assert.equal(a.slice(0, 19), b.slice(0, 19), `${a} vs ${b}`);
}

const skip = !hasKubectl() ? 'kubectl is not installed' : false;

describe('incidents of failures a real control plane makes', { skip, timeout: 900_000 }, () => {
  before(async () => {
    findPeers();
    const up = await run(process.execPath, [CLI, 'lab', 'up', '--dir', dir, '--no-build']);
    assert.equal(up.code, 0, `lab up failed:\n${up.stdout}\n${up.stderr}`);
    kubeconfig = /kubeconfig: (\S+)/.exec(up.stdout)?.[1] ?? '';
    archive = /KEVENTS_ARCHIVE=(\S+)/.exec(up.stdout)?.[1] ?? '';
    // A node that stops: kwok no longer heartbeats a node once its kwok annotation is gone, and after the lab's
    // node-monitor grace kube-controller-manager marks it and its pods NotReady. Started first, as it is the slowest.
    await shOk(`kubectl create namespace nodes
kubectl -n nodes run pinned --image=nginx:1.27 --overrides='{"spec":{"nodeSelector":{"kubernetes.io/hostname":"kwok-node-2"}}}'
kubectl -n nodes wait --for=condition=Ready pod/pinned --timeout=120s
kubectl annotate node kwok-node-2 kwok.x-k8s.io/node-`);
    // Every failure at once, each in its own namespace; they take the controllers' own time to show.
    await shOk(`
kubectl create namespace quota
kubectl create namespace storage
kubectl create namespace placement
kubectl create namespace psa
kubectl create namespace batch
kubectl create namespace scale
kubectl label namespace psa pod-security.kubernetes.io/enforce=restricted
kubectl apply -f - <<'EOF'
apiVersion: v1
kind: ResourceQuota
metadata: { name: compute-resources, namespace: quota }
spec: { hard: { limits.memory: 1Gi } }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: web, namespace: quota }
spec:
  replicas: 2
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      containers:
      - { name: web, image: nginx:1.27, resources: { limits: { memory: 2Gi, cpu: 100m } } }
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: data, namespace: storage }
spec:
  storageClassName: no-such-class
  accessModes: [ReadWriteOnce]
  resources: { requests: { storage: 1Gi } }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: db, namespace: storage }
spec:
  replicas: 1
  selector: { matchLabels: { app: db } }
  template:
    metadata: { labels: { app: db } }
    spec:
      containers: [{ name: db, image: postgres:16 }]
      volumes: [{ name: data, persistentVolumeClaim: { claimName: data } }]
---
apiVersion: v1
kind: Pod
metadata: { name: picky, namespace: placement }
spec:
  nodeSelector: { disktype: nvme }
  containers: [{ name: app, image: nginx:1.27 }]
---
apiVersion: v1
kind: Pod
metadata: { name: greedy, namespace: placement }
spec:
  containers: [{ name: app, image: nginx:1.27, resources: { requests: { cpu: "3" } } }]
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: rooted, namespace: psa }
spec:
  replicas: 1
  selector: { matchLabels: { app: rooted } }
  template:
    metadata: { labels: { app: rooted } }
    spec:
      containers: [{ name: app, image: busybox:1.36 }]
---
apiVersion: batch/v1
kind: Job
metadata: { name: migrate, namespace: batch }
spec:
  backoffLimit: 0
  template:
    spec:
      serviceAccountName: migrator
      restartPolicy: Never
      containers: [{ name: main, image: busybox:1.36 }]
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: api, namespace: scale }
spec:
  replicas: 1
  selector: { matchLabels: { app: api } }
  template:
    metadata: { labels: { app: api } }
    spec:
      containers: [{ name: api, image: nginx:1.27, resources: { requests: { cpu: 100m } } }]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: { name: api, namespace: scale }
spec:
  scaleTargetRef: { apiVersion: apps/v1, kind: Deployment, name: api }
  minReplicas: 1
  maxReplicas: 3
  metrics: [{ type: Resource, resource: { name: cpu, target: { type: Utilization, averageUtilization: 50 } } }]
EOF`);
  });

  after(async () => {
    await run(process.execPath, [CLI, 'lab', 'down', '--dir', dir]);
    rmSync(root, { recursive: true, force: true });
  });

  it('a ResourceQuota refusing a ReplicaSet: one incident of the Deployment, from the first refusal', async () => {
    const i = await incidentOf('quota', (x) => x.kind === 'create-forbidden-quota', 'the quota refusal');
    assert.equal(i.root, 'Deployment/web');
    assert.equal(i.objects[0], 'Deployment/web');
    assert.ok(i.objects.some((o) => /^ReplicaSet\/web-/.test(o)), i.objects.join());
    assert.equal(i.facts.quota, 'compute-resources');
    assert.equal(i.facts.limited, 'limits.memory=1Gi');
    assert.equal(i.ongoing, true);
    sameSecond(i.start.time, await firstTime('quota', 'FailedCreate'));
    assert.ok(i.hints.some((h) => h.command === 'kubectl describe resourcequota compute-resources -n quota'), JSON.stringify(i.hints));
  });

  it('a PVC with a missing StorageClass is the cause of its Deployment\'s unschedulable pod', async () => {
    const i = await incidentOf('storage', (x) => x.kind === 'volume-provisioning' && x.objects.some((o) => o.startsWith('Pod/')), 'the missing StorageClass');
    assert.equal(i.root, 'Deployment/db');
    assert.ok(i.objects.includes('PersistentVolumeClaim/data'), i.objects.join());
    assert.equal(i.facts.storageClass, 'no-such-class');
    assert.match(i.cause, /StorageClass "no-such-class" does not exist/);
    const first = [await firstTime('storage', 'ProvisioningFailed'), await firstTime('storage', 'FailedScheduling')].sort()[0]!;
    sameSecond(i.start.time, first);
  });

  it('a nodeSelector no node matches, and a request no node has room for', async () => {
    const picky = await incidentOf('placement', (x) => x.root === 'Pod/picky', 'the nodeSelector');
    assert.equal(picky.kind, 'unschedulable-affinity');
    assert.equal(picky.facts.nodes, '3');
    const greedy = await incidentOf('placement', (x) => x.root === 'Pod/greedy', 'the CPU request');
    assert.equal(greedy.kind, 'unschedulable-resources');
    assert.equal(greedy.facts.resources, 'cpu');
    assert.match(greedy.cause, /no node has enough free "cpu"/);
  });

  it('PodSecurity restricted refusing a Deployment\'s pods', async () => {
    const i = await incidentOf('psa', (x) => x.kind === 'create-forbidden-admission', 'the PodSecurity refusal');
    assert.equal(i.root, 'Deployment/rooted');
    assert.equal(i.facts.problem, 'pod-security');
    assert.match(i.facts.level ?? '', /^restricted/);
    sameSecond(i.start.time, await firstTime('psa', 'FailedCreate'));
  });

  it('an HPA without a metrics API', async () => {
    const i = await incidentOf('scale', (x) => x.kind === 'hpa-metrics', 'the HPA', 240_000);
    assert.equal(i.root, 'HorizontalPodAutoscaler/api');
    assert.equal(i.facts.problem, 'no-api');
  });

  it("a Job past its backoff limit: the resolved service-account refusal is a step, not the cause", async () => {
    await incidentOf('batch', (x) => x.kind === 'create-forbidden-serviceaccount', 'the missing ServiceAccount');
    await shOk('kubectl -n batch create serviceaccount migrator');
    // kwok runs the pod; its container's failure is what a kubelet would report in the pod's status.
    const pod = (await shOk("for i in $(seq 1 60); do p=$(kubectl -n batch get pods -l job-name=migrate -o jsonpath='{.items[0].metadata.name}' 2>/dev/null || true); [ -n \"$p\" ] && { echo $p; exit 0; }; sleep 2; done; exit 1")).trim();
    await shOk(`kubectl -n batch patch pod ${pod} --subresource=status --type=merge -p '{"status":{"phase":"Failed","containerStatuses":[{"name":"main","image":"busybox:1.36","imageID":"","ready":false,"restartCount":0,"state":{"terminated":{"exitCode":1,"reason":"Error"}}}]}}'`);
    const i = await incidentOf('batch', (x) => x.kind === 'job-backoff-limit', 'the backoff limit');
    assert.equal(i.root, 'Job/migrate');
    assert.match(i.cause, /events do not record why they failed/);
    sameSecond(i.start.time, await firstTime('batch', 'BackoffLimitExceeded'));
    assert.ok(i.evidence.some((r) => r.reason === 'FailedCreate'), 'the resolved step stays in the evidence');
  });

  it("a node that stops reporting: one node incident that joins its pods' NotReady", async () => {
    const i = await incidentOf(undefined, (x) => x.root === 'Node/kwok-node-2' && x.kind === 'node-not-ready' && x.objects.includes('Pod/pinned'), 'the stopped node', 420_000);
    assert.equal(i.namespace, '');
    assert.equal(i.facts.node, 'kwok-node-2');
    assert.match(i.cause, /^The node "kwok-node-2" stopped reporting \(NotReady\)/);
    sameSecond(i.start.time, (await getJson<{ items: CoreEvent[] }>('/api/v1/events?fieldSelector=reason%3DNodeNotReady,involvedObject.kind%3DNode')).items.map((e) => new Date(e.firstTimestamp ?? e.eventTime ?? '').toISOString()).sort()[0]!);
  });

  it('taints no pod tolerates', async () => {
    await shOk(`kubectl taint nodes --all dedicated=gpu:NoSchedule
kubectl -n placement run tainted --image=nginx:1.27`);
    try {
      const i = await incidentOf('placement', (x) => x.root === 'Pod/tainted', 'the taint');
      assert.equal(i.kind, 'unschedulable-taint');
      assert.equal(i.facts.taint, 'dedicated: gpu');
    } finally {
      await shOk('kubectl taint nodes --all dedicated=gpu:NoSchedule-');
    }
  });
});
