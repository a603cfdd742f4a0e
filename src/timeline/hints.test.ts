import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hintsFor } from './hints.js';
import type { HintContext } from './hints.js';
import { testEvent } from './test-events.js';

const ctx: HintContext = { nodeOfPod: new Map([['shop/api-1', 'node-a']]) };
const pod = (reason: string, message: string, type = 'Warning', fieldPath?: string) =>
  testEvent({ name: `e-${reason}`, namespace: 'shop', object: 'api-1', reason, message, type, first: 0, host: 'node-a', ...(fieldPath !== undefined ? { fieldPath } : {}) });

describe('hintsFor', () => {
  const cases: { name: string; event: ReturnType<typeof pod>; reason: string; commands: string[] }[] = [
    {
      name: 'FailedScheduling on resources and taints',
      event: pod('FailedScheduling', '0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient cpu.'),
      reason: 'FailedScheduling',
      commands: ['kubectl describe nodes', "kubectl get pod api-1 -n shop -o jsonpath='{.spec.containers[*].resources.requests}'", 'kubectl get nodes -o custom-columns=NAME:.metadata.name,TAINTS:.spec.taints'],
    },
    {
      name: 'FailedScheduling on affinity',
      event: pod('FailedScheduling', "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."),
      reason: 'FailedScheduling',
      commands: ['kubectl describe nodes', "kubectl get pod api-1 -n shop -o jsonpath='{.spec.nodeSelector} {.spec.affinity.nodeAffinity}'"],
    },
    {
      name: 'crash loop',
      event: pod('BackOff', 'Back-off restarting failed container api in pod api-1_shop(1234)', 'Warning', 'spec.containers{api}'),
      reason: 'BackOff',
      commands: ['kubectl logs api-1 -n shop -c api --previous', 'kubectl debug api-1 -n shop -it --copy-to=api-1-debug --container=api -- sh'],
    },
    {
      name: 'image pull failure reported as Failed',
      event: pod('Failed', 'Failed to pull image "reg.example/api:v2": not found'),
      reason: 'ErrImagePull',
      commands: ["kubectl get pod api-1 -n shop -o jsonpath='{.spec.containers[*].image}'", "kubectl get pod api-1 -n shop -o jsonpath='{.spec.serviceAccountName} {.spec.imagePullSecrets}'"],
    },
    {
      name: 'image pull back-off',
      event: pod('BackOff', 'Back-off pulling image "reg.example/api:v2"', 'Normal'),
      reason: 'ErrImagePull',
      commands: ["kubectl get pod api-1 -n shop -o jsonpath='{.spec.containers[*].image}'", "kubectl get pod api-1 -n shop -o jsonpath='{.spec.serviceAccountName} {.spec.imagePullSecrets}'"],
    },
    {
      name: 'liveness probe with an endpoint',
      event: pod('Unhealthy', 'Liveness probe failed: Get "http://10.0.0.5:9090/livez": context deadline exceeded', 'Warning', 'spec.containers{api}'),
      reason: 'Unhealthy',
      commands: ["kubectl get pod api-1 -n shop -o jsonpath='{.spec.containers[?(@.name==\"api\")].livenessProbe}'", 'kubectl port-forward pod/api-1 -n shop 9090:9090'],
    },
    {
      name: 'eviction',
      event: pod('Evicted', 'The node was low on resource: memory.'),
      reason: 'Evicted',
      commands: ['kubectl describe node node-a', 'kubectl get pods -A --field-selector spec.nodeName=node-a'],
    },
    {
      name: 'OOM on the node',
      event: testEvent({ name: 'oom', kind: 'Node', object: 'node-a', reason: 'SystemOOM', message: 'System OOM encountered, victim process: api, pid: 1', type: 'Warning', first: 0 }),
      reason: 'OOMKilled',
      commands: [
        "kubectl get pod <pod> -n default -o jsonpath='{range .status.containerStatuses[*]}{.name}: {.lastState.terminated.reason}{\"\\n\"}{end}'",
        "kubectl get pod <pod> -n default -o jsonpath='{range .spec.containers[*]}{.name}: {.resources.limits.memory}{\"\\n\"}{end}'",
        'kubectl logs <pod> -n default --previous',
      ],
    },
    {
      name: 'distroless container',
      event: pod('Failed', 'Error: failed to start: exec: "sh": executable file not found in $PATH', 'Warning', 'spec.containers{api}'),
      reason: 'distroless',
      commands: ['kubectl debug -it api-1 -n shop --image=busybox:1.36 --target=api'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const hints = hintsFor([c.event], ctx);
      assert.deepEqual(hints.map((h) => h.command), c.commands);
      assert.ok(hints.every((h) => h.reason === c.reason && h.why !== ''));
    });
  }
  it('offers nothing for events that need no action', () => {
    assert.deepEqual(hintsFor([pod('Started', 'Started container api', 'Normal'), pod('Pulled', 'Container image "x" already present on machine', 'Normal')], ctx), []);
  });
  it('answers each rule once, for the earliest event it matches', () => {
    const a = testEvent({ name: 'a', namespace: 'shop', object: 'api-1', reason: 'BackOff', message: 'Back-off restarting failed container api in pod api-1_shop(1)', type: 'Warning', first: 0 });
    const b = testEvent({ name: 'b', namespace: 'shop', object: 'api-2', reason: 'BackOff', message: 'Back-off restarting failed container api in pod api-2_shop(2)', type: 'Warning', first: 1 });
    const hints = hintsFor([a, b], ctx);
    assert.equal(hints.length, 2);
    assert.ok(hints.every((h) => h.command.includes('api-1 -n shop')));
  });
  it('puts the root pod into the steps for its node\'s events', () => {
    const oom = testEvent({ name: 'oom', kind: 'Node', object: 'node-a', reason: 'SystemOOM', message: 'System OOM encountered', type: 'Warning', first: 0 });
    const hints = hintsFor([oom], { ...ctx, rootPod: { namespace: 'shop', name: 'api-1' } });
    assert.match(hints[0]!.command, /^kubectl get pod api-1 -n shop /);
  });
});
