import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseForArgument, resolveKind } from './kinds.js';
import { inScope, scopeObjects } from './scope.js';
import { testEvent } from '../../test/support/timeline-events.js';

const ns = 'store';
const events = [
  testEvent({ name: 'd1', namespace: ns, kind: 'Deployment', object: 'web', reason: 'ScalingReplicaSet', message: 'Scaled up replica set web-7d9f8c6b5 from 0 to 2', first: 0 }),
  testEvent({ name: 'r1', namespace: ns, kind: 'ReplicaSet', object: 'web-7d9f8c6b5', reason: 'SuccessfulCreate', message: 'Created pod: web-7d9f8c6b5-4xk2p', first: 1 }),
  // Named by convention only: its own creation event is gone.
  testEvent({ name: 'p2', namespace: ns, object: 'web-7d9f8c6b5-9m7zq', reason: 'Started', first: 2 }),
  testEvent({ name: 'p1', namespace: ns, object: 'web-7d9f8c6b5-4xk2p', reason: 'Scheduled', message: 'Successfully assigned store/web-7d9f8c6b5-4xk2p to node-f', first: 2 }),
  // An older ReplicaSet of the same Deployment, known only by its name.
  testEvent({ name: 'r0', namespace: ns, kind: 'ReplicaSet', object: 'web-5b8c7d9f4', reason: 'SuccessfulDelete', message: 'Deleted pod: web-5b8c7d9f4-zzzzz', first: 3 }),
  // Look-alikes that are not the Deployment's.
  testEvent({ name: 'x1', namespace: ns, kind: 'ReplicaSet', object: 'web-api-6c7d8f9b5', reason: 'SuccessfulCreate', first: 4 }),
  testEvent({ name: 'x2', namespace: ns, object: 'web-api-6c7d8f9b5-bcdfg', reason: 'Started', first: 4 }),
  testEvent({ name: 'x3', namespace: 'other', object: 'web-7d9f8c6b5-4xk2p', reason: 'Started', first: 4 }),
  testEvent({ name: 'n1', kind: 'Node', object: 'node-f', reason: 'NodeReady', first: 5 }),
  testEvent({ name: 'n2', kind: 'Node', object: 'node-g', reason: 'NodeReady', first: 5 }),
];

describe('scopeObjects', () => {
  it('follows a Deployment to its ReplicaSets and their Pods, by message and by name, and to the pods\' node', () => {
    const scope = scopeObjects({ kind: 'Deployment', name: 'web', namespace: ns }, events);
    assert.deepEqual(scope.objects, [
      'Deployment/web',
      'ReplicaSet/web-7d9f8c6b5',
      'ReplicaSet/web-5b8c7d9f4',
      'Pod/web-7d9f8c6b5-4xk2p',
      'Pod/web-7d9f8c6b5-9m7zq',
      'Pod/web-5b8c7d9f4-zzzzz',
    ]);
    assert.equal(scope.how['ReplicaSet/web-7d9f8c6b5'], 'event message');
    assert.equal(scope.how['ReplicaSet/web-5b8c7d9f4'], 'name');
    assert.deepEqual(scope.nodes, ['node-f']);
    assert.deepEqual(events.filter((e) => inScope(scope, e)).map((e) => e.metadata.name), ['d1', 'r1', 'p2', 'p1', 'r0', 'n1']);
  });
  it('prefers recorded owner references over naming', () => {
    const scope = scopeObjects({ kind: 'Deployment', name: 'web', namespace: ns }, events, [
      { namespace: ns, owner: { kind: 'Deployment', name: 'web' }, child: { kind: 'ReplicaSet', name: 'web-api-6c7d8f9b5' } },
    ]);
    assert.deepEqual(scope.objects.slice(0, 3), ['Deployment/web', 'ReplicaSet/web-api-6c7d8f9b5', 'Pod/web-api-6c7d8f9b5-bcdfg']);
    assert.equal(scope.how['ReplicaSet/web-api-6c7d8f9b5'], 'owner reference');
  });
  it('scopes a StatefulSet to its ordinal pods and a CronJob to its jobs', () => {
    const sts = [
      testEvent({ name: 's', kind: 'StatefulSet', object: 'db', reason: 'SuccessfulCreate', message: 'create Pod db-0 in StatefulSet db successful', first: 0 }),
      testEvent({ name: 'p', object: 'db-1', reason: 'Started', first: 1 }),
      testEvent({ name: 'q', object: 'db-x', reason: 'Started', first: 1 }),
      testEvent({ name: 'c', kind: 'CronJob', object: 'nightly', reason: 'SuccessfulCreate', message: 'Created job nightly-28391234', first: 0 }),
      testEvent({ name: 'j', kind: 'Job', object: 'nightly-28391234', reason: 'SuccessfulCreate', message: 'Created pod: nightly-28391234-x2x7k', first: 0 }),
    ];
    assert.deepEqual(scopeObjects({ kind: 'StatefulSet', name: 'db', namespace: 'default' }, sts).objects, ['StatefulSet/db', 'Pod/db-0', 'Pod/db-1']);
    assert.deepEqual(scopeObjects({ kind: 'CronJob', name: 'nightly', namespace: 'default' }, sts).objects, ['CronJob/nightly', 'Job/nightly-28391234', 'Pod/nightly-28391234-x2x7k']);
  });
});

describe('parseForArgument', () => {
  const cases: [string, string | { kind: string; name: string }][] = [
    ['pod/web-1', { kind: 'Pod', name: 'web-1' }],
    ['po/web-1', { kind: 'Pod', name: 'web-1' }],
    ['deploy/web', { kind: 'Deployment', name: 'web' }],
    ['Deployment/web', { kind: 'Deployment', name: 'web' }],
    ['deployments.apps/web', { kind: 'Deployment', name: 'web' }],
    ['replicasets.v1.apps/web-1', { kind: 'ReplicaSet', name: 'web-1' }],
    ['no/node-1', { kind: 'Node', name: 'node-1' }],
    ['web-1', '--for must be in resource/name form'],
    ['pod/a/b', 'arguments in resource/name form may not have more than one slash'],
    ['widgets/w', 'the server doesn\'t have a resource type "widgets"'],
  ];
  for (const [text, want] of cases) {
    it(text, () => {
      if (typeof want === 'string') assert.throws(() => parseForArgument(text), { message: want });
      else assert.deepEqual({ kind: parseForArgument(text).kind, name: parseForArgument(text).name }, want);
    });
  }
  it('keeps an unknown kind when asked to, for custom resources in an archive', () => {
    assert.equal(parseForArgument('Widget/w', { allowUnknown: true }).kind, 'Widget');
    assert.equal(resolveKind('deployments.batch'), undefined);
  });
});
