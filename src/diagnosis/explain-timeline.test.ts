import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatTimeline } from '../print/index.js';
import { buildTimeline } from '../timeline/index.js';
import { T0, testEvent } from '../../test/support/timeline-events.js';
import { explainTimeline } from './explain-timeline.js';

const MIN = 60;
const window = { since: T0, until: T0 + 60 * MIN * 1000 };

/** Four unrelated incidents in three namespaces, the most recent an unrecognised Warning, as `kevents timeline -A` reads them. */
const events = [
  testEvent({ name: 'q', namespace: 'shop', kind: 'ReplicaSet', object: 'web-7d4b9c8f5', type: 'Warning', reason: 'FailedCreate', component: 'replicaset-controller', message: 'Error creating: pods "web-7d4b9c8f5-b" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=4, limited: pods=4', first: 60, last: 40 * MIN, count: 20 }),
  testEvent({ name: 'img', namespace: 'img', object: 'web-1', type: 'Warning', reason: 'Failed', message: 'Failed to pull image "nginx:1.99": failed to pull and unpack image "docker.io/library/nginx:1.99": failed to resolve reference "docker.io/library/nginx:1.99": docker.io/library/nginx:1.99: not found', first: 120, last: 41 * MIN, count: 9 }),
  testEvent({ name: 'pvc', namespace: 'data', kind: 'PersistentVolumeClaim', object: 'data-postgres-0', type: 'Warning', reason: 'ProvisioningFailed', component: 'persistentvolume-controller', message: 'storageclass.storage.k8s.io "fast" not found', first: 180, last: 42 * MIN, count: 30 }),
  testEvent({ name: 'stuck', namespace: 'shop', kind: 'Deployment', object: 'api', type: 'Warning', reason: 'RolloutStuck', component: 'kevents-record', message: 'rollout is stuck', first: 43 * MIN }),
];

describe('explainTimeline over several incidents', () => {
  it('gives each incident its cause and none for all', () => {
    const t = buildTimeline({ events, ...window, explain: explainTimeline });
    assert.equal(t.summary.cause, null);
    assert.deepEqual(
      t.summary.causes?.map((c) => [c.namespace, c.root, c.kind]),
      [
        ['shop', 'Deployment/api', 'other'],
        ['data', 'PersistentVolumeClaim/data-postgres-0', 'volume-provisioning'],
        ['img', 'Pod/web-1', 'image-not-found'],
        ['shop', 'ReplicaSet/web-7d4b9c8f5', 'create-forbidden-quota'],
      ],
    );
    const table = formatTimeline(t, { format: 'table', showNamespace: true }).split('\n');
    assert.ok(!table.some((l) => l.startsWith('Cause: ')), table.join('\n'));
    assert.equal(table[1], 'Causes: 4 incidents, one line each (kevents incidents shows each with its next steps)');
    assert.match(table[2]!, /^ {2}Deployment\/api in shop: /);
    assert.match(table[4]!, /^ {2}Pod\/web-1 in img: Pod "web-1" cannot pull image "nginx:1\.99"/);
    assert.match(table[6]!, /^First Warning: /);
    const md = formatTimeline(t, { format: 'markdown' });
    assert.match(md, /^- \*\*Causes:\*\* 4 incidents/m);
    assert.match(md, /^ {2}- `ReplicaSet\/web-7d4b9c8f5 in shop`: ReplicaSet "web-7d4b9c8f5" cannot create pods/m);
  });

  it('a namespace with one incident keeps its one cause line', () => {
    const t = buildTimeline({ events: events.slice(1, 2), ...window, explain: explainTimeline });
    assert.equal(t.summary.cause?.kind, 'image-not-found');
    assert.equal(t.summary.causes, undefined);
    assert.match(formatTimeline(t, { format: 'table' }).split('\n')[1]!, /^Cause: Pod "web-1" cannot pull image/);
  });

  it('an object\'s timeline states its own incident, whatever else the namespace holds', () => {
    const t = buildTimeline({ events, for: { kind: 'ReplicaSet', name: 'web-7d4b9c8f5', namespace: 'shop' }, ...window, explain: explainTimeline });
    assert.equal(t.summary.cause?.kind, 'create-forbidden-quota');
    assert.equal(t.summary.causes, undefined);
  });
});

describe('explainTimeline: the objects its cause takes in', () => {
  const data = [
    testEvent({ name: 'create', namespace: 'data', kind: 'StatefulSet', object: 'postgres', reason: 'SuccessfulCreate', component: 'statefulset-controller', message: 'create Pod postgres-0 in StatefulSet postgres successful', first: 30 }),
    testEvent({ name: 'sched', namespace: 'data', object: 'postgres-0', type: 'Warning', reason: 'FailedScheduling', component: 'default-scheduler', message: '0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.', first: 31, last: 40 * MIN, count: 11 }),
    testEvent({ name: 'prov', namespace: 'data', kind: 'PersistentVolumeClaim', object: 'data-postgres-0', type: 'Warning', reason: 'ProvisioningFailed', component: 'persistentvolume-controller', message: 'storageclass.storage.k8s.io "fast" not found', first: 31, last: 40 * MIN, count: 200 }),
    testEvent({ name: 'other', namespace: 'data', kind: 'PersistentVolumeClaim', object: 'logs', type: 'Warning', reason: 'ProvisioningFailed', component: 'persistentvolume-controller', message: 'storageclass.storage.k8s.io "slow" not found', first: 31, count: 3 }),
  ];
  const statefulSet = { kind: 'StatefulSet', name: 'postgres', namespace: 'data' };

  it("a StatefulSet's timeline whose cause is its claim's StorageClass shows the claim's events", () => {
    const t = buildTimeline({ events: data, for: statefulSet, ...window, explain: explainTimeline });
    assert.equal(t.summary.cause?.kind, 'volume-provisioning');
    assert.equal(t.summary.cause?.root, 'StatefulSet/postgres');
    assert.deepEqual(new Map(t.summary.objects.map((o) => [o.object, o.count])), new Map([['StatefulSet/postgres', 1], ['Pod/postgres-0', 11], ['PersistentVolumeClaim/data-postgres-0', 200]]));
    assert.equal(t.summary.occurrences, 212);
    // The same timeline without the catalogue is its owner's scope alone.
    assert.equal(buildTimeline({ events: data, for: statefulSet, ...window }).summary.occurrences, 12);
  });

  it('a timeline of an object whose incident has another root takes in nothing more', () => {
    const t = buildTimeline({ events: data, for: { kind: 'Pod', name: 'postgres-0', namespace: 'data' }, ...window, explain: explainTimeline });
    assert.deepEqual(t.summary.objects.map((o) => o.object), ['Pod/postgres-0']);
  });
});
