import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CoreEvent } from '../api/index.js';
import { buildIncidents } from './incidents.js';
import { iso, T0, testEvent } from '../../test/support/timeline-events.js';
import { simpleCommandWords } from '../../test/support/posix-command.js';

const MIN = 60;
const ns = 'shop';
let serial = 0;

/** ev is a test event in namespace shop; times in seconds after T0. */
function ev(o: Omit<Parameters<typeof testEvent>[0], 'name' | 'namespace'> & { name?: string }): CoreEvent {
  serial++;
  return testEvent({ namespace: ns, type: 'Warning', ...o, name: o.name ?? `ev-${serial}` });
}

const window = { since: T0, until: T0 + 60 * MIN * 1000 };

describe('buildIncidents', () => {
  it('a ResourceQuota refusing a Deployment\'s ReplicaSet is one incident of the Deployment, from its first refusal', () => {
    const events = [
      ev({ kind: 'Deployment', object: 'web', reason: 'ScalingReplicaSet', type: 'Normal', component: 'deployment-controller', message: 'Scaled up replica set web-7d4b9c8f5 to 3', first: 60 }),
      ev({ kind: 'ReplicaSet', object: 'web-7d4b9c8f5', reason: 'SuccessfulCreate', type: 'Normal', component: 'replicaset-controller', message: 'Created pod: web-7d4b9c8f5-x2x7k', first: 61 }),
      ev({
        kind: 'ReplicaSet',
        object: 'web-7d4b9c8f5',
        reason: 'FailedCreate',
        component: 'replicaset-controller',
        message: 'Error creating: pods "web-7d4b9c8f5-bcdfg" is forbidden: exceeded quota: compute-resources, requested: limits.memory=2Gi, used: limits.memory=7Gi, limited: limits.memory=8Gi',
        first: 62,
        last: 62 + 48 * MIN,
        count: 14,
      }),
    ];
    const { incidents } = buildIncidents({ events, ...window });
    assert.equal(incidents.length, 1);
    const [i] = incidents;
    assert.equal(i!.kind, 'create-forbidden-quota');
    assert.equal(i!.root, 'Deployment/web');
    assert.deepEqual(i!.objects, ['Deployment/web', 'ReplicaSet/web-7d4b9c8f5']);
    assert.equal(i!.facts.quota, 'compute-resources');
    assert.equal(i!.facts.limited, 'limits.memory=8Gi');
    assert.deepEqual(i!.start, { time: iso(62), estimated: false });
    assert.equal(i!.lastSeen, iso(62 + 48 * MIN));
    assert.equal(i!.occurrences, 14);
    assert.equal(i!.ongoing, true);
    assert.match(i!.cause, /^ReplicaSet "web-7d4b9c8f5" cannot create pods: ResourceQuota "compute-resources" would be exceeded/);
    assert.ok(i!.hints.some((h) => h.command === 'kubectl describe resourcequota compute-resources -n shop'), JSON.stringify(i!.hints));
    assert.equal(i!.evidence.reduce((n, r) => n + r.count, 0), 14);
  });

  it("a PVC's missing StorageClass is the cause of its Deployment's unschedulable pods", () => {
    const events = [
      ev({ kind: 'Deployment', object: 'db', reason: 'ScalingReplicaSet', type: 'Normal', message: 'Scaled up replica set db-5c6b7d8f9 to 1', first: 10 }),
      ev({ kind: 'ReplicaSet', object: 'db-5c6b7d8f9', reason: 'SuccessfulCreate', type: 'Normal', message: 'Created pod: db-5c6b7d8f9-q2w4r', first: 11 }),
      ev({ kind: 'PersistentVolumeClaim', object: 'data', reason: 'ProvisioningFailed', component: 'persistentvolume-controller', message: 'storageclass.storage.k8s.io "fast" not found', first: 9, last: 9 + 20 * MIN, count: 30 }),
      ev({ object: 'db-5c6b7d8f9-q2w4r', reason: 'FailedScheduling', component: 'default-scheduler', message: '0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.', first: 12, last: 12 + 15 * MIN, count: 4 }),
    ];
    const { incidents } = buildIncidents({ events, ...window });
    assert.equal(incidents.length, 1, JSON.stringify(incidents.map((i) => i.root)));
    const [i] = incidents;
    assert.equal(i!.kind, 'volume-provisioning');
    assert.equal(i!.root, 'Deployment/db');
    assert.deepEqual(new Set(i!.objects), new Set(['Deployment/db', 'PersistentVolumeClaim/data', 'Pod/db-5c6b7d8f9-q2w4r']));
    assert.equal(i!.facts.storageClass, 'fast');
    assert.equal(i!.start.time, iso(9));
    assert.match(i!.cause, /StorageClass "fast" does not exist/);
  });

  it("a `Failed \"Error: …\"` before BackOff is the crash loop's cause", () => {
    const events = [
      ev({ object: 'api-6d5f7c9b8-abcde', reason: 'Scheduled', type: 'Normal', component: 'default-scheduler', message: 'Successfully assigned shop/api-6d5f7c9b8-abcde to node-a', first: 5 }),
      ev({ object: 'api-6d5f7c9b8-abcde', reason: 'Failed', fieldPath: 'spec.containers{api}', host: 'node-a', message: 'Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "wge": executable file not found in $PATH: unknown', first: 8, last: 8 + 10 * MIN, count: 7 }),
      ev({ object: 'api-6d5f7c9b8-abcde', reason: 'BackOff', fieldPath: 'spec.containers{api}', host: 'node-a', message: 'Back-off restarting failed container api in pod api-6d5f7c9b8-abcde_shop(uid)', first: 9, last: 9 + 11 * MIN, count: 40 }),
    ];
    const [i, ...rest] = buildIncidents({ events, ...window }).incidents;
    assert.equal(rest.length, 0);
    assert.equal(i!.kind, 'start-error');
    assert.equal(i!.facts.command, 'wge');
    assert.equal(i!.root, 'Pod/api-6d5f7c9b8-abcde');
    assert.equal(i!.start.time, iso(8));
    assert.equal(i!.occurrences, 47);
  });

  it("a real kubelet's liveness failure: Unhealthy (the probe's output) then Killing (the container) in one second, and the incident says both", () => {
    const events = [
      ev({ object: 'probe', reason: 'Unhealthy', component: 'kubelet', fieldPath: 'spec.containers{main}', message: "Liveness probe failed: cat: can't open '/tmp/healthy': No such file or directory\n", first: 30 }),
      ev({ object: 'probe', reason: 'Killing', type: 'Normal', component: 'kubelet', fieldPath: 'spec.containers{main}', message: 'Container main failed liveness probe, will be restarted', first: 30 }),
    ];
    const { incidents } = buildIncidents({ events, ...window });
    assert.equal(incidents.length, 1);
    assert.equal(incidents[0]!.kind, 'probe-liveness');
    assert.equal(incidents[0]!.facts.container, 'main');
    assert.equal(incidents[0]!.facts.probe, 'liveness');
    assert.equal(incidents[0]!.facts.output, "cat: can't open '/tmp/healthy': No such file or directory");
    assert.match(incidents[0]!.cause, /can't open/);
  });

  it('a crash loop with no cause in events says so', () => {
    const events = [ev({ object: 'api-1', reason: 'BackOff', fieldPath: 'spec.containers{api}', host: 'node-a', message: 'Back-off restarting failed container api in pod api-1_shop(uid)', first: 100, last: 100 + 5 * MIN, count: 9 })];
    const [i] = buildIncidents({ events, ...window }).incidents;
    assert.equal(i!.kind, 'crash-loop');
    assert.match(i!.cause, /events do not record why: read its last state and logs/);
    assert.ok(i!.hints.some((h) => h.command === 'kubectl logs api-1 -n shop -c api --previous'), JSON.stringify(i!.hints));
  });

  it("a Job's resolved service-account refusal is a step, not the cause of its failure", () => {
    const events = [
      ev({ kind: 'Job', object: 'migrate', reason: 'FailedCreate', component: 'job-controller', message: 'Error creating: pods "migrate-" is forbidden: error looking up service account shop/migrator: serviceaccount "migrator" not found', first: 10, last: 24 * MIN, count: 4 }),
      ev({ kind: 'Job', object: 'migrate', reason: 'SuccessfulCreate', type: 'Normal', component: 'job-controller', message: 'Created pod: migrate-x7k2p', first: 25 * MIN }),
      ev({ kind: 'Job', object: 'migrate', reason: 'BackoffLimitExceeded', component: 'job-controller', message: 'Job has reached the specified backoff limit', first: 26 * MIN }),
    ];
    const [i, ...rest] = buildIncidents({ events, ...window }).incidents;
    assert.equal(rest.length, 0);
    assert.equal(i!.kind, 'job-backoff-limit');
    assert.equal(i!.root, 'Job/migrate');
    assert.equal(i!.start.time, iso(26 * MIN));
    assert.match(i!.cause, /events do not record why they failed/);
  });

  it("a failed Job's incident names the pods it created, and its first step reads the last one's logs by its own name", () => {
    const events = [
      ev({ kind: 'Job', object: 'get-data', reason: 'SuccessfulCreate', type: 'Normal', component: 'job-controller', message: 'Created pod: get-data-mldtn', first: 10 }),
      ev({ kind: 'Job', object: 'get-data', reason: 'SuccessfulCreate', type: 'Normal', component: 'job-controller', message: 'Created pod: get-data-x2x7k', first: 70 }),
      ev({ kind: 'Job', object: 'get-data', reason: 'BackoffLimitExceeded', component: 'job-controller', message: 'Job has reached the specified backoff limit', first: 130 }),
    ];
    const [i, ...rest] = buildIncidents({ events, ...window }).incidents;
    assert.equal(rest.length, 0);
    assert.equal(i!.kind, 'job-backoff-limit');
    assert.equal(i!.root, 'Job/get-data');
    assert.deepEqual(i!.objects, ['Job/get-data', 'Pod/get-data-mldtn', 'Pod/get-data-x2x7k']);
    assert.equal(i!.hints[0]!.command, 'kubectl logs get-data-x2x7k -n shop');
    // The Job form stays, as the alternative while the Job exists.
    assert.ok(i!.hints.some((h) => h.command === 'kubectl logs job/get-data -n shop'), JSON.stringify(i!.hints));
  });

  it("a Job's failing pods give its cause, and the Job is the root", () => {
    const events = [
      ev({ kind: 'Job', object: 'migrate', reason: 'SuccessfulCreate', type: 'Normal', message: 'Created pod: migrate-x7k2p', first: 10 }),
      ev({ object: 'migrate-x7k2p', reason: 'Failed', fieldPath: 'spec.containers{main}', host: 'node-a', message: 'Error: configmap "migrate-env" not found', first: 12, last: 200, count: 6 }),
      ev({ kind: 'Job', object: 'migrate', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit', first: 600 }),
    ];
    const [i, ...rest] = buildIncidents({ events, ...window }).incidents;
    assert.equal(rest.length, 0);
    assert.equal(i!.kind, 'config-missing');
    assert.equal(i!.root, 'Job/migrate');
    assert.deepEqual(i!.objects, ['Job/migrate', 'Pod/migrate-x7k2p']);
    assert.equal(i!.start.time, iso(12));
  });

  describe('a catalogued cause outranks `other` on the same root', () => {
    const shop = () => [
      ev({ kind: 'Deployment', object: 'web', reason: 'ScalingReplicaSet', type: 'Normal', component: 'deployment-controller', message: 'Scaled up replica set web-7d4b9c8f5 to 3', first: 0 }),
      ev({ kind: 'ReplicaSet', object: 'web-7d4b9c8f5', reason: 'FailedCreate', component: 'replicaset-controller', message: 'Error creating: pods "web-7d4b9c8f5-bcdfg" is forbidden: exceeded quota: compute, requested: limits.cpu=2, used: limits.cpu=7, limited: limits.cpu=8', first: 10, last: 45 * MIN, count: 30 }),
    ];

    it("the README's RolloutStuck Warning on the Deployment is a row of the quota's incident, not its cause", () => {
      const stuck = ev({ kind: 'Deployment', object: 'web', reason: 'RolloutStuck', message: 'rollout has not progressed', component: 'kevents-record', first: 45 * MIN + 48 });
      const without = buildIncidents({ events: shop(), ...window }).incidents;
      const { incidents } = buildIncidents({ events: [...shop(), stuck], ...window });
      assert.equal(incidents.length, 1, JSON.stringify(incidents.map((i) => [i.root, i.kind])));
      const [i] = incidents;
      assert.equal(i!.kind, 'create-forbidden-quota');
      assert.equal(i!.root, 'Deployment/web');
      assert.equal(i!.cause, without[0]!.cause);
      assert.deepEqual(i!.start, without[0]!.start);
      assert.ok(i!.hints.some((h) => h.command === 'kubectl describe resourcequota compute -n shop'), JSON.stringify(i!.hints));
      assert.ok(i!.evidence.some((r) => r.reason === 'RolloutStuck'), 'the Warning stays as evidence');
      assert.equal(i!.lastSeen, iso(45 * MIN + 48));
    });

    it('an unrecognised Warning is its own `other` incident where nothing catalogued touches its root', () => {
      const lone = ev({ kind: 'Deployment', object: 'api', reason: 'RolloutStuck', message: 'rollout has not progressed', first: 30 * MIN });
      const { incidents } = buildIncidents({ events: [...shop(), lone], ...window });
      assert.deepEqual(incidents.map((i) => [i.root, i.kind]).sort(), [['Deployment/api', 'other'], ['Deployment/web', 'create-forbidden-quota']]);
    });
  });

  describe('a step the pod got past is resolved', () => {
    const pod = 'web-7d4b9c8f5-x2x7k';
    const cases: { name: string; failing: CoreEvent[]; progress: CoreEvent[]; ongoing: boolean }[] = [
      {
        name: 'FailedMount, then the kubelet pulls the image (it pulls only once volumes are mounted)',
        failing: [ev({ object: pod, reason: 'FailedMount', host: 'node-a', message: 'MountVolume.SetUp failed for volume "conf" : configmap "app-conf" not found', first: 10, last: 50 * MIN, count: 20 })],
        progress: [ev({ object: pod, reason: 'Pulling', type: 'Normal', fieldPath: 'spec.containers{web}', host: 'node-a', message: 'Pulling image "nginx:1.27"', first: 50 * MIN + 5 })],
        ongoing: false,
      },
      {
        name: 'FailedScheduling, then Scheduled',
        failing: [ev({ object: pod, reason: 'FailedScheduling', component: 'default-scheduler', message: '0/3 nodes are available: 3 Insufficient cpu.', first: 10, last: 50 * MIN, count: 12 })],
        progress: [ev({ object: pod, reason: 'Scheduled', type: 'Normal', component: 'default-scheduler', message: `Successfully assigned shop/${pod} to node-a`, first: 50 * MIN + 30 })],
        ongoing: false,
      },
      {
        name: 'pull errors, then Pulled',
        failing: [
          ev({ object: pod, reason: 'Failed', fieldPath: 'spec.containers{web}', host: 'node-a', message: 'Failed to pull image "registry.internal/web:1": failed to pull and unpack image "registry.internal/web:1": failed to resolve reference "registry.internal/web:1": failed to do request: Head "https://registry.internal/v2/web/manifests/1": dial tcp 10.0.0.9:443: i/o timeout', first: 10, last: 50 * MIN, count: 9 }),
          ev({ object: pod, reason: 'Failed', fieldPath: 'spec.containers{web}', host: 'node-a', message: 'Error: ImagePullBackOff', first: 11, last: 50 * MIN, count: 30 }),
        ],
        progress: [ev({ object: pod, reason: 'Pulled', type: 'Normal', fieldPath: 'spec.containers{web}', host: 'node-a', message: 'Successfully pulled image "registry.internal/web:1" in 2.1s', first: 50 * MIN + 20 })],
        ongoing: false,
      },
      {
        name: "another container's image pulled does not end this one's pull errors",
        failing: [ev({ object: pod, reason: 'Failed', fieldPath: 'spec.containers{web}', host: 'node-a', message: 'Failed to pull image "nginx:1.99": failed to pull and unpack image "docker.io/library/nginx:1.99": failed to resolve reference "docker.io/library/nginx:1.99": docker.io/library/nginx:1.99: not found', first: 10, last: 50 * MIN, count: 9 })],
        progress: [ev({ object: pod, reason: 'Pulled', type: 'Normal', fieldPath: 'spec.containers{sidecar}', host: 'node-a', message: 'Container image "envoy:1.30" already present on machine', first: 50 * MIN + 20 })],
        ongoing: true,
      },
      {
        name: 'progress before the last failure ends nothing',
        failing: [ev({ object: pod, reason: 'FailedScheduling', component: 'default-scheduler', message: '0/3 nodes are available: 3 Insufficient cpu.', first: 10, last: 50 * MIN, count: 12 })],
        progress: [ev({ object: pod, reason: 'Scheduled', type: 'Normal', component: 'default-scheduler', message: `Successfully assigned shop/${pod} to node-a`, first: 5 })],
        ongoing: true,
      },
      {
        name: 'a crash loop is not ended by the container starting again',
        failing: [ev({ object: pod, reason: 'BackOff', fieldPath: 'spec.containers{web}', host: 'node-a', message: `Back-off restarting failed container web in pod ${pod}_shop(u)`, first: 10, last: 50 * MIN, count: 30 })],
        progress: [ev({ object: pod, reason: 'Started', type: 'Normal', fieldPath: 'spec.containers{web}', host: 'node-a', message: 'Started container web', first: 50 * MIN + 10 })],
        ongoing: true,
      },
    ];
    for (const c of cases) {
      it(c.name, () => {
        const before = buildIncidents({ events: c.failing, ...window }).incidents;
        assert.equal(before.length, 1);
        assert.equal(before[0]!.ongoing, true, 'ongoing before the progress');
        const after = buildIncidents({ events: [...c.failing, ...c.progress], ...window }).incidents;
        assert.equal(after.length, 1);
        assert.equal(after[0]!.ongoing, c.ongoing);
        assert.equal(after[0]!.kind, before[0]!.kind);
        // Progress after the window's end is not known at its end.
        assert.equal(buildIncidents({ events: [...c.failing, ...c.progress], since: T0, until: T0 + 50 * MIN * 1000 + 1000 }).incidents[0]!.ongoing, true);
      });
    }

    it('a pod that got past a step, beside one that did not, leaves its Deployment ongoing', () => {
      const events = [
        ev({ object: 'web-1', reason: 'FailedScheduling', message: '0/3 nodes are available: 3 Insufficient cpu.', first: 10, last: 50 * MIN, count: 12 }),
        ev({ object: 'web-1', reason: 'Scheduled', type: 'Normal', message: 'Successfully assigned shop/web-1 to node-a', first: 50 * MIN + 1 }),
        ev({ object: 'web-2', reason: 'FailedScheduling', message: '0/3 nodes are available: 3 Insufficient cpu.', first: 10, last: 50 * MIN, count: 12 }),
        ev({ kind: 'ReplicaSet', object: 'web', reason: 'SuccessfulCreate', type: 'Normal', message: 'Created pod: web-1', first: 5 }),
        ev({ kind: 'ReplicaSet', object: 'web', reason: 'SuccessfulCreate', type: 'Normal', message: 'Created pod: web-2', first: 5 }),
      ];
      const { incidents } = buildIncidents({ events, ...window });
      assert.equal(incidents.length, 1, JSON.stringify(incidents.map((i) => i.root)));
      assert.equal(incidents[0]!.ongoing, true);
      assert.match(incidents[0]!.cause, /web-2/, 'the pod still failing is the one stated');
    });
  });

  it("the start is never later than the incident's earliest failing event: an `Error: ImagePullBackOff` before the registry's answer", () => {
    const pod = 'get-data-mldtn';
    const events = [
      ev({ object: pod, reason: 'Failed', fieldPath: 'spec.containers{main}', host: 'node-a', message: 'Error: ImagePullBackOff', first: 100, last: 100 + 20 * MIN, count: 40 }),
      ev({ object: pod, reason: 'Failed', fieldPath: 'spec.containers{main}', host: 'node-a', message: 'Failed to pull image "acme/get-data:2": failed to pull and unpack image "docker.io/acme/get-data:2": failed to resolve reference "docker.io/acme/get-data:2": docker.io/acme/get-data:2: not found', first: 111, last: 100 + 20 * MIN + 5, count: 6 }),
    ];
    const [i, ...rest] = buildIncidents({ events, ...window }).incidents;
    assert.equal(rest.length, 0);
    assert.equal(i!.kind, 'image-not-found');
    assert.equal(i!.start.time, iso(100));
  });

  it('two events of one failure 601 s apart start at the first (a shrunk counter-example of the properties)', () => {
    const message = '0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.';
    const events = [0, 601].map((t) => ev({ object: 'web-1', reason: 'FailedScheduling', component: 'default-scheduler', message, first: t, count: 5 }));
    const [i, ...rest] = buildIncidents({ events, since: T0, until: T0 + 602_000 }).incidents;
    assert.equal(rest.length, 0);
    assert.equal(i!.kind, 'unschedulable-resources');
    assert.equal(i!.start.time, iso(0));
  });

  it('a chronic node-wide warning on every pod is one node incident', () => {
    const events = ['a-1', 'b-2', 'c-3', 'd-4'].map((pod, n) =>
      ev({ object: pod, reason: 'DNSConfigForming', host: 'node-a', message: 'Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 10.0.0.2 10.0.0.3 10.0.0.4', first: 30 + n, last: 50 * MIN, count: 20 }),
    );
    const { incidents } = buildIncidents({ events, ...window });
    assert.equal(incidents.length, 1);
    assert.equal(incidents[0]!.kind, 'dns-config');
    assert.equal(incidents[0]!.root, 'Node/node-a');
    assert.equal(incidents[0]!.namespace, '');
    assert.equal(incidents[0]!.objects.length, 5);
    assert.match(incidents[0]!.cause, /Cosmetic/);
  });

  it("a node that stops reporting explains its pods' NotReady, through their Scheduled events", () => {
    const events = [
      ev({ object: 'web-1', reason: 'Scheduled', type: 'Normal', component: 'default-scheduler', message: 'Successfully assigned shop/web-1 to node-b', first: 1 }),
      ev({ object: 'web-2', reason: 'Scheduled', type: 'Normal', component: 'default-scheduler', message: 'Successfully assigned shop/web-2 to node-b', first: 2 }),
      { ...ev({ kind: 'Node', object: 'node-b', reason: 'NodeNotReady', type: 'Normal', component: 'node-controller', message: 'Node node-b status is now: NodeNotReady', first: 20 * MIN }), metadata: { name: 'node-b.1', namespace: 'default', uid: 'n1' } },
      ev({ object: 'web-1', reason: 'NodeNotReady', component: 'node-controller', message: 'Node is not ready', first: 20 * MIN + 1 }),
      ev({ object: 'web-2', reason: 'NodeNotReady', component: 'node-controller', message: 'Node is not ready', first: 20 * MIN + 1 }),
    ];
    const { incidents } = buildIncidents({ events, ...window });
    assert.equal(incidents.length, 1, JSON.stringify(incidents.map((i) => i.root)));
    const [i] = incidents;
    assert.equal(i!.kind, 'node-not-ready');
    assert.equal(i!.root, 'Node/node-b');
    assert.deepEqual(new Set(i!.objects), new Set(['Node/node-b', 'Pod/web-1', 'Pod/web-2']));
    assert.equal(i!.start.time, iso(20 * MIN));
  });

  it('a healthy rollout is not an incident', () => {
    const events = [
      ev({ kind: 'Deployment', object: 'web', reason: 'ScalingReplicaSet', type: 'Normal', message: 'Scaled up replica set web-7d4b9c8f5 to 1', first: 0 }),
      ev({ kind: 'ReplicaSet', object: 'web-7d4b9c8f5', reason: 'SuccessfulCreate', type: 'Normal', message: 'Created pod: web-7d4b9c8f5-x2x7k', first: 1 }),
      ev({ object: 'web-7d4b9c8f5-x2x7k', reason: 'Pulled', type: 'Normal', message: 'Container image "nginx:1.27" already present on machine', first: 3 }),
      ev({ object: 'web-7d4b9c8f5-x2x7k', reason: 'Unhealthy', message: 'Readiness probe failed: Get "http://10.0.0.5:80/": dial tcp 10.0.0.5:80: connect: connection refused', first: 5, last: 15, count: 2 }),
    ];
    assert.deepEqual(buildIncidents({ events, ...window }).incidents, []);
  });

  describe('causes that are Normal events', () => {
    it("the image's Normal BackOff joins the registry's answer before it: one incident, from the first failed pull", () => {
      const pod = 'web-7d4b9c8f5-x2x7k';
      const events = [
        ev({ object: pod, reason: 'Failed', fieldPath: 'spec.containers{web}', host: 'node-a', message: 'Failed to pull image "nginx:1.99": failed to pull and unpack image "docker.io/library/nginx:1.99": failed to resolve reference "docker.io/library/nginx:1.99": docker.io/library/nginx:1.99: not found', first: 10, last: 10 + 5 * MIN, count: 3 }),
        ev({ object: pod, reason: 'Failed', fieldPath: 'spec.containers{web}', host: 'node-a', message: 'Error: ErrImagePull', first: 10, last: 10 + 5 * MIN, count: 3 }),
        ev({ object: pod, reason: 'BackOff', type: 'Normal', fieldPath: 'spec.containers{web}', host: 'node-a', message: 'Back-off pulling image "nginx:1.99"', first: 11, last: 11 + 10 * MIN, count: 30 }),
        ev({ object: pod, reason: 'Failed', fieldPath: 'spec.containers{web}', host: 'node-a', message: 'Error: ImagePullBackOff', first: 11, last: 11 + 10 * MIN, count: 30 }),
      ];
      const [i, ...rest] = buildIncidents({ events, ...window }).incidents;
      assert.equal(rest.length, 0);
      assert.equal(i!.kind, 'image-not-found');
      assert.equal(i!.root, `Pod/${pod}`);
      assert.equal(i!.facts.image, 'nginx:1.99');
      assert.equal(i!.start.time, iso(10));
      assert.equal(i!.occurrences, 66);
    });

    it("a Normal image BackOff alone is an incident that says events do not record the registry's answer", () => {
      const events = [ev({ object: 'web-1', reason: 'BackOff', type: 'Normal', fieldPath: 'spec.containers{web}', host: 'node-a', message: 'Back-off pulling image "nginx:1.99"', first: 60, last: 60 + 10 * MIN, count: 30 })];
      const [i] = buildIncidents({ events, ...window }).incidents;
      assert.equal(i!.kind, 'image-pull-backoff');
      assert.match(i!.cause, /^Pod "web-1" cannot pull image "nginx:1\.99"; events do not record the registry's answer/);
    });

    it("a Normal FailedBinding on a claim is the cause of its pods' unbound claims", () => {
      const events = [
        ev({ kind: 'PersistentVolumeClaim', object: 'data', reason: 'FailedBinding', type: 'Normal', component: 'persistentvolume-controller', message: 'no persistent volumes available for this claim and no storage class is set', first: 5, last: 5 + 10 * MIN, count: 40 }),
        ev({ object: 'db-0', reason: 'FailedScheduling', component: 'default-scheduler', message: '0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.', first: 6, last: 6 + 10 * MIN, count: 5 }),
      ];
      const { incidents } = buildIncidents({ events, ...window });
      assert.equal(incidents.length, 1, JSON.stringify(incidents.map((i) => i.root)));
      assert.equal(incidents[0]!.kind, 'volume-provisioning');
      assert.equal(incidents[0]!.facts.problem, 'no-volume');
      assert.deepEqual(new Set(incidents[0]!.objects), new Set(['Pod/db-0', 'PersistentVolumeClaim/data']));
      assert.equal(incidents[0]!.start.time, iso(5));
    });

    it("a Normal TaintManagerEviction of a node's pods is the node's incident, found through their Scheduled events", () => {
      const events = [
        ev({ object: 'web-1', reason: 'Scheduled', type: 'Normal', component: 'default-scheduler', message: 'Successfully assigned shop/web-1 to node-b', first: 1 }),
        ev({ object: 'web-2', reason: 'Scheduled', type: 'Normal', component: 'default-scheduler', message: 'Successfully assigned shop/web-2 to node-b', first: 2 }),
        ev({ object: 'web-1', reason: 'TaintManagerEviction', type: 'Normal', component: 'taint-eviction-controller', message: 'Marking for deletion Pod shop/web-1', first: 25 * MIN }),
        ev({ object: 'web-2', reason: 'TaintManagerEviction', type: 'Normal', component: 'taint-eviction-controller', message: 'Marking for deletion Pod shop/web-2', first: 25 * MIN }),
      ];
      const { incidents } = buildIncidents({ events, ...window });
      assert.equal(incidents.length, 1, JSON.stringify(incidents.map((i) => i.root)));
      assert.equal(incidents[0]!.kind, 'node-not-ready');
      assert.equal(incidents[0]!.root, 'Node/node-b');
      assert.match(incidents[0]!.cause, /^The node "node-b" stopped reporting \(NotReady\); its pods were marked not ready and then deleted by the taint manager\.$/);
    });
  });

  it('an incident in JSON has the fields the CLI and API document, in their order', () => {
    const events = [ev({ kind: 'ReplicaSet', object: 'web-7d4b9c8f5', reason: 'FailedCreate', message: 'Error creating: pods "web-7d4b9c8f5-x2x7k" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1', first: 10 })];
    const list = JSON.parse(JSON.stringify(buildIncidents({ events, ...window }))) as Record<string, unknown> & { incidents: Record<string, unknown>[] };
    assert.deepEqual(Object.keys(list), ['window', 'incidents']);
    assert.deepEqual(Object.keys(list.window as object), ['since', 'until']);
    // `facts`, beside the fields, carries what the cause was built from (docs/cli.md); `cluster` is there when the event names one.
    assert.deepEqual(Object.keys(list.incidents[0]!), ['kind', 'cause', 'facts', 'namespace', 'root', 'objects', 'start', 'lastSeen', 'ongoing', 'occurrences', 'hints', 'evidence']);
    assert.deepEqual(Object.keys(list.incidents[0]!.start as object), ['time', 'estimated']);
    assert.deepEqual(Object.keys((list.incidents[0]!.hints as object[])[0]!), ['command', 'why']);
  });

  it('pods evicted under disk pressure are one node incident, from the pressure', () => {
    const events = [
      ev({ kind: 'Node', object: 'node-c', reason: 'NodeHasDiskPressure', type: 'Normal', message: 'Node node-c status is now: NodeHasDiskPressure', first: 100 }),
      ev({ kind: 'Node', object: 'node-c', reason: 'EvictionThresholdMet', message: 'Attempting to reclaim ephemeral-storage', first: 101, last: 400, count: 5 }),
      ev({ object: 'web-1', reason: 'Evicted', host: 'node-c', message: 'The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: 9Gi. ', first: 120 }),
      ev({ object: 'web-2', reason: 'Evicted', host: 'node-c', message: 'The node had condition: [DiskPressure]. ', first: 130 }),
    ];
    const { incidents } = buildIncidents({ events, ...window });
    assert.equal(incidents.length, 1);
    assert.equal(incidents[0]!.kind, 'evicted-pressure');
    assert.equal(incidents[0]!.root, 'Node/node-c');
    assert.equal(incidents[0]!.start.time, iso(100));
  });

  it('an unknown Warning repeats its reason and message, and claims no cause', () => {
    const events = [ev({ object: 'web-1', reason: 'FailedSync', message: 'error determining status: boom', first: 10 })];
    const [i] = buildIncidents({ events, ...window }).incidents;
    assert.equal(i!.kind, 'other');
    assert.equal(i!.cause, 'Pod "web-1" reported "FailedSync": "error determining status: boom".');
  });

  it('a start does not reach back to a folded first time from an earlier episode', () => {
    const events = [ev({ object: 'web-1', reason: 'BackOff', message: 'Back-off restarting failed container app in pod web-1_shop(u)', first: -3 * 24 * 3600, last: 10 * MIN, count: 2 })];
    const [i] = buildIncidents({ events, ...window }).incidents;
    assert.equal(i!.start.time, iso(10 * MIN));
  });

  it('a start reaches back before the window over a continuous run', () => {
    const events = [ev({ object: 'web-1', reason: 'BackOff', message: 'Back-off restarting failed container app in pod web-1_shop(u)', first: -10 * MIN, last: 10 * MIN, count: 21 })];
    const [i] = buildIncidents({ events, ...window }).incidents;
    assert.equal(i!.start.time, iso(-10 * MIN));
    assert.equal(i!.start.estimated, false);
  });

  it('an incident whose events stopped long before the window ends is not ongoing', () => {
    const events = [ev({ object: 'web-1', reason: 'FailedSync', message: 'x', first: 60 })];
    assert.equal(buildIncidents({ events, ...window }).incidents[0]!.ongoing, false);
  });

  it('does not depend on the order of its input, and puts the most recent first', () => {
    const events = [
      ev({ object: 'a-1', reason: 'FailedSync', message: 'x', first: 60 }),
      ev({ object: 'b-1', reason: 'FailedSync', message: 'y', first: 600 }),
      ev({ kind: 'Node', object: 'node-a', reason: 'ImageGCFailed', message: 'failed to garbage collect required amount of images', first: 300 }),
    ];
    const one = buildIncidents({ events, ...window });
    const two = buildIncidents({ events: [...events].reverse(), ...window });
    assert.deepEqual(one, two);
    assert.deepEqual(
      one.incidents.map((i) => i.root),
      ['Pod/b-1', 'Node/node-a', 'Pod/a-1'],
    );
  });

  describe('hostile values stay one line and one command', () => {
    const hostile = ['web;rm -rf ~', "we'b\"x", 'web\nkubectl delete ns prod', 'web$(id)', 'w\u001b]52;c;aGk=\u0007eb'];
    for (const h of hostile) {
      it(JSON.stringify(h), () => {
        const events = [
          ev({ kind: 'ReplicaSet', object: h, reason: 'FailedCreate', message: `Error creating: pods "${h}-" is forbidden: exceeded quota: ${h}, requested: cpu=${h}, used: cpu=1, limited: cpu=1`, first: 10 }),
          ev({ object: h, reason: 'Failed', fieldPath: `spec.containers{${h}}`, message: `Error: configmap "${h}" not found`, host: h, first: 20 }),
          ev({ kind: 'PersistentVolumeClaim', object: h, reason: 'ProvisioningFailed', message: `storageclass.storage.k8s.io "${h}" not found`, first: 30 }),
          ev({ object: `${h}-2`, reason: 'DNSConfigForming', host: h, message: `Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: ${h}`, first: 40 }),
          ev({ object: `${h}-3`, reason: h, message: h, first: 50 }),
        ];
        const { incidents } = buildIncidents({ events, ...window });
        assert.ok(incidents.length >= 4);
        assert.ok(incidents.some((i) => i.hints.some((x) => /<(?:name|pod|node|kind)>/.test(x.command))), 'a refused value leaves its placeholder');
        for (const i of incidents) {
          assert.doesNotMatch(i.cause, /[\n\r\u001b\u0007]/, i.cause);
          for (const hint of i.hints) {
            assert.doesNotMatch(hint.command, /[\n\r\u001b\u0007]/, hint.command);
            assert.doesNotMatch(hint.why, /[\n\r\u001b\u0007]/, hint.why);
            // One command: every value is a valid name or a placeholder, so no `;`, `$(` or quote of the value survives unquoted.
            assert.ok(!hint.command.includes(h), hint.command);
            const words = simpleCommandWords(hint.command);
            assert.equal(words[0], 'kubectl');
            assert.ok(!words.includes(h), hint.command);
          }
        }
      });
    }
  });
});

describe('explainTimeline', () => {
  it("states the cause of a timeline's object, and leads its table and markdown with it", async () => {
    const { buildTimeline } = await import('../timeline/index.js');
    const { formatTimeline } = await import('../print/index.js');
    const { explainTimeline } = await import('./explain-timeline.js');
    const events = [
      ev({ kind: 'Deployment', object: 'web', reason: 'ScalingReplicaSet', type: 'Normal', message: 'Scaled up replica set web-7d4b9c8f5 to 3', first: 60 }),
      ev({ kind: 'ReplicaSet', object: 'web-7d4b9c8f5', reason: 'FailedCreate', message: 'Error creating: pods "web-7d4b9c8f5-bcdfg" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1', first: 62 }),
      ev({ object: 'other-1', reason: 'FailedSync', message: 'x', first: 70 }),
    ];
    const t = buildTimeline({ events, for: { kind: 'Deployment', name: 'web', namespace: ns }, ...window, explain: explainTimeline });
    assert.deepEqual(t.summary.cause, { kind: 'create-forbidden-quota', text: 'ReplicaSet "web-7d4b9c8f5" cannot create pods: ResourceQuota "q" would be exceeded (requested "pods=1", used "pods=1", limited "pods=1").', root: 'Deployment/web' });
    // The steps are the incident's, under the reason of the event that showed it; the other pod's are not this timeline's.
    assert.deepEqual(t.hints[0], { reason: 'FailedCreate', command: 'kubectl describe resourcequota q -n shop', why: "the quota's limits and what is already used against them" });
    assert.ok(!t.hints.some((h) => h.command.includes('other-1')), JSON.stringify(t.hints));
    assert.ok(buildTimeline({ events, ...window, explain: explainTimeline }).hints.some((h) => h.command === 'kubectl describe Pod other-1 -n shop'), 'a namespace timeline has every incident\'s steps');
    assert.match(formatTimeline(t, { format: 'table' }).split('\n')[1]!, /^Cause: ReplicaSet "web-7d4b9c8f5" cannot create pods/);
    assert.match(formatTimeline(t, { format: 'markdown' }), /^- \*\*Cause:\*\* ReplicaSet "web-7d4b9c8f5" cannot create pods/m);
    const healthy = buildTimeline({ events: events.slice(0, 1), for: { kind: 'Deployment', name: 'web', namespace: ns }, ...window, explain: explainTimeline });
    assert.equal(healthy.summary.cause, null);
    assert.deepEqual(healthy.hints, []);
    assert.equal(buildTimeline({ events, ...window }).summary.cause, undefined);
  });
});
