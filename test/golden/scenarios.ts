/**
 * Incident scenarios, recorded for real: each one drives the kevents recorder
 * (the core/v1 pipeline as the kubelet and controllers use it, the
 * events.k8s.io/v1 one as the scheduler does) on a fake clock that starts at a
 * fixed instant, writing through the REST client into a running kevents serve.
 * Event times and names therefore come out the same on every run.
 */
import { KubeConfig } from '@kubernetes/client-node';
import type { ObjectReference } from '../../src/api/index.js';
import { sinkFromKubeConfig } from '../../src/client/index.js';
import { CollectingLogger, FAKE_CLOCK_START, FakeClock } from '../../src/internal/index.js';
import { createEventBroadcaster, createLegacyEventBroadcaster } from '../../src/recorder/index.js';
import type { EventRecorder, LegacyEventRecorder } from '../../src/recorder/index.js';

/** SCENARIO_START is when every scenario begins: 2025-01-01T00:00:00Z. */
export const SCENARIO_START = FAKE_CLOCK_START;

/** Scenario is one recorded incident and what its timeline must say. */
export interface Scenario {
  /** name is the golden file's base name. */
  name: string;
  namespace: string;
  /** for is the `--for` argument of its timeline. */
  for: string;
  /** cause is the reason of the event that caused the incident: the summary's first Warning. */
  cause: string;
  /** hint is the reason of the event whose next steps (the failure catalogue's) come first. */
  hint: string;
  /** hintCommand is a fragment of the command the next step must carry. */
  hintCommand: string;
}

/** SCENARIOS are the incidents recordScenarios writes. */
export const SCENARIOS: readonly Scenario[] = [
  { name: 'image-pull-failure', namespace: 'shop', for: 'pod/api-7c9d8b6f5-h4k2p', cause: 'Failed', hint: 'Failed', hintCommand: "-o 'jsonpath={.spec.containers[*].image}'" },
  { name: 'unschedulable', namespace: 'batch', for: 'pod/trainer-0', cause: 'FailedScheduling', hint: 'FailedScheduling', hintCommand: 'kubectl describe nodes' },
  { name: 'crash-loop', namespace: 'payments', for: 'pod/checkout-5f7d8c9b6-m2x4z', cause: 'BackOff', hint: 'BackOff', hintCommand: 'kubectl logs checkout-5f7d8c9b6-m2x4z -n payments -c checkout --previous' },
  { name: 'oom-kill', namespace: 'analytics', for: 'pod/ingest-7b6c5d4f8-q8w2z', cause: 'SystemOOM', hint: 'BackOff', hintCommand: '.lastState.terminated.reason' },
  { name: 'node-pressure-eviction', namespace: 'media', for: 'pod/transcoder-6d5c4b8f7-k9j2h', cause: 'EvictionThresholdMet', hint: 'Evicted', hintCommand: 'kubectl describe node node-e' },
  { name: 'rollout-never-available', namespace: 'store', for: 'deployment/frontend', cause: 'Unhealthy', hint: 'Unhealthy', hintCommand: 'kubectl port-forward pod/frontend-7d9f8c6b5-4xk2p -n store 8080' },
];

function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'kevents', server }],
    users: [{ name: 'kevents' }],
    contexts: [{ name: 'kevents', cluster: 'kevents', user: 'kevents' }],
    currentContext: 'kevents',
  });
  return kc;
}

function pod(namespace: string, name: string, container?: string): ObjectReference {
  return { kind: 'Pod', namespace, name, uid: `uid-${name}`, apiVersion: 'v1', ...(container !== undefined ? { fieldPath: `spec.containers{${container}}` } : {}) };
}

function node(name: string): ObjectReference {
  return { kind: 'Node', name, uid: name, apiVersion: 'v1' };
}

/** Script is the clock and the recorders of one recording session. */
interface Script {
  at(seconds: number): Promise<void>;
  kubelet(host: string): LegacyEventRecorder;
  controller(component: string): LegacyEventRecorder;
  scheduler: EventRecorder;
}

/** kubeletStart records the kubelet's events of a container starting. */
function containerStarts(k: LegacyEventRecorder, ref: ObjectReference, image: string, container: string): void {
  k.event({ involvedObject: ref, type: 'Normal', reason: 'Pulled', message: `Container image "${image}" already present on machine` });
  k.event({ involvedObject: ref, type: 'Normal', reason: 'Created', message: `Created container: ${container}` });
  k.event({ involvedObject: ref, type: 'Normal', reason: 'Started', message: `Started container ${container}` });
}

function scheduled(s: Script, namespace: string, name: string, nodeName: string): void {
  s.scheduler.event({ regarding: pod(namespace, name), type: 'Normal', reason: 'Scheduled', action: 'Binding', note: `Successfully assigned ${namespace}/${name} to ${nodeName}` });
}

async function imagePullFailure(s: Script): Promise<void> {
  const ns = 'shop';
  const name = 'api-7c9d8b6f5-h4k2p';
  const image = 'registry.example.com/shop/api:v2.3.1';
  const ref = pod(ns, name, 'api');
  const k = s.kubelet('node-a');
  await s.at(0);
  scheduled(s, ns, name, 'node-a');
  for (let i = 0; i < 4; i++) {
    await s.at(1 + i * 75);
    k.event({ involvedObject: ref, type: 'Normal', reason: 'Pulling', message: `Pulling image "${image}"` });
    await s.at(3 + i * 75);
    k.event({
      involvedObject: ref,
      type: 'Warning',
      reason: 'Failed',
      message: `Failed to pull image "${image}": rpc error: code = NotFound desc = failed to pull and unpack image "${image}": failed to resolve reference "${image}": ${image}: not found`,
    });
    k.event({ involvedObject: ref, type: 'Warning', reason: 'Failed', message: 'Error: ErrImagePull' });
    await s.at(4 + i * 75);
    k.event({ involvedObject: ref, type: 'Normal', reason: 'BackOff', message: `Back-off pulling image "${image}"` });
    k.event({ involvedObject: ref, type: 'Warning', reason: 'Failed', message: 'Error: ImagePullBackOff' });
  }
}

async function unschedulable(s: Script): Promise<void> {
  const ns = 'batch';
  const name = 'trainer-0';
  const note =
    '0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.';
  s.controller('statefulset-controller').event({
    involvedObject: { kind: 'StatefulSet', namespace: ns, name: 'trainer', uid: 'uid-trainer', apiVersion: 'apps/v1' },
    type: 'Normal',
    reason: 'SuccessfulCreate',
    message: `create Pod ${name} in StatefulSet trainer successful`,
  });
  for (let i = 0; i < 5; i++) {
    await s.at(1 + i * 60);
    s.scheduler.event({ regarding: pod(ns, name), type: 'Warning', reason: 'FailedScheduling', action: 'Scheduling', note });
  }
}

async function crashLoop(s: Script): Promise<void> {
  const ns = 'payments';
  const name = 'checkout-5f7d8c9b6-m2x4z';
  const ref = pod(ns, name, 'checkout');
  const k = s.kubelet('node-c');
  await s.at(0);
  scheduled(s, ns, name, 'node-c');
  const restarts = [2, 20, 45, 90, 170, 330];
  for (const [i, t] of restarts.entries()) {
    await s.at(t);
    containerStarts(k, ref, 'registry.example.com/payments/checkout:1.4.0', 'checkout');
    await s.at(t + 5);
    if (i > 0 || t > 0) k.event({ involvedObject: ref, type: 'Warning', reason: 'BackOff', message: `Back-off restarting failed container checkout in pod ${name}_${ns}(uid-${name})` });
  }
}

async function oomKill(s: Script): Promise<void> {
  const ns = 'analytics';
  const name = 'ingest-7b6c5d4f8-q8w2z';
  const ref = pod(ns, name, 'ingest');
  const k = s.kubelet('node-d');
  await s.at(0);
  scheduled(s, ns, name, 'node-d');
  await s.at(3);
  containerStarts(k, ref, 'registry.example.com/analytics/ingest:5.0.2', 'ingest');
  for (const [i, t] of [240, 300, 420].entries()) {
    await s.at(t);
    k.event({ involvedObject: node('node-d'), type: 'Warning', reason: 'SystemOOM', message: `System OOM encountered, victim process: ingest, pid: ${48213 + i * 97}` });
    await s.at(t + 1);
    if (i > 0) k.event({ involvedObject: ref, type: 'Warning', reason: 'BackOff', message: `Back-off restarting failed container ingest in pod ${name}_${ns}(uid-${name})` });
    await s.at(t + 20);
    containerStarts(k, ref, 'registry.example.com/analytics/ingest:5.0.2', 'ingest');
  }
}

async function nodePressureEviction(s: Script): Promise<void> {
  const ns = 'media';
  const name = 'transcoder-6d5c4b8f7-k9j2h';
  const ref = pod(ns, name, 'transcoder');
  const k = s.kubelet('node-e');
  await s.at(0);
  scheduled(s, ns, name, 'node-e');
  await s.at(2);
  containerStarts(k, ref, 'registry.example.com/media/transcoder:3.1.0', 'transcoder');
  await s.at(600);
  k.event({ involvedObject: node('node-e'), type: 'Warning', reason: 'EvictionThresholdMet', message: 'Attempting to reclaim memory' });
  k.event({ involvedObject: node('node-e'), type: 'Normal', reason: 'NodeHasInsufficientMemory', message: 'Node node-e status is now: NodeHasInsufficientMemory' });
  await s.at(605);
  k.event({
    involvedObject: pod(ns, name),
    type: 'Warning',
    reason: 'Evicted',
    message:
      'The node was low on resource: memory. Threshold quantity: 100Mi, available: 51200Ki. Container transcoder was using 3145728Ki, request is 512Mi, has larger consumption of memory.',
  });
  k.event({ involvedObject: ref, type: 'Normal', reason: 'Killing', message: 'Stopping container transcoder' });
  await s.at(900);
  k.event({ involvedObject: node('node-e'), type: 'Normal', reason: 'NodeHasSufficientMemory', message: 'Node node-e status is now: NodeHasSufficientMemory' });
}

async function rolloutNeverAvailable(s: Script): Promise<void> {
  const ns = 'store';
  const rs = 'frontend-7d9f8c6b5';
  const pods = [`${rs}-4xk2p`, `${rs}-9m7zq`];
  await s.at(0);
  s.controller('deployment-controller').event({
    involvedObject: { kind: 'Deployment', namespace: ns, name: 'frontend', uid: 'uid-frontend', apiVersion: 'apps/v1' },
    type: 'Normal',
    reason: 'ScalingReplicaSet',
    message: `Scaled up replica set ${rs} from 0 to 2`,
  });
  await s.at(1);
  for (const p of pods) {
    s.controller('replicaset-controller').event({
      involvedObject: { kind: 'ReplicaSet', namespace: ns, name: rs, uid: `uid-${rs}`, apiVersion: 'apps/v1' },
      type: 'Normal',
      reason: 'SuccessfulCreate',
      message: `Created pod: ${p}`,
    });
  }
  await s.at(2);
  for (const p of pods) scheduled(s, ns, p, 'node-f');
  const k = s.kubelet('node-f');
  await s.at(4);
  for (const p of pods) containerStarts(k, pod(ns, p, 'web'), 'registry.example.com/store/frontend:8.2.0', 'web');
  for (let i = 0; i < 8; i++) {
    await s.at(15 + i * 30);
    pods.forEach((p, j) =>
      k.event({
        involvedObject: pod(ns, p, 'web'),
        type: 'Warning',
        reason: 'Unhealthy',
        message: `Readiness probe failed: Get "http://10.244.1.${17 + j}:8080/healthz": dial tcp 10.244.1.${17 + j}:8080: connect: connection refused`,
      }),
    );
  }
}

/**
 * recordScenarios records every scenario into the server at `url`, each on its
 * own clock from SCENARIO_START, and waits until every write has landed.
 */
export async function recordScenarios(url: string): Promise<void> {
  const sink = sinkFromKubeConfig(kubeConfigFor(url));
  const scripts = [imagePullFailure, unschedulable, crashLoop, oomKill, nodePressureEviction, rolloutNeverAvailable];
  for (const script of scripts) {
    const clock = new FakeClock(SCENARIO_START);
    const logger = new CollectingLogger();
    const legacy = createLegacyEventBroadcaster({ sink, clock, logger });
    const modern = createEventBroadcaster({ sink, clock, logger, hostname: 'cp-1' });
    const kubelets = new Map<string, LegacyEventRecorder>();
    const controllers = new Map<string, LegacyEventRecorder>();
    let elapsed = 0;
    const s: Script = {
      async at(seconds) {
        await legacy.idle();
        await modern.idle();
        const target = seconds * 1000;
        if (target > elapsed) {
          await clock.advance(target - elapsed);
          elapsed = target;
        }
      },
      kubelet(host) {
        let r = kubelets.get(host);
        if (r === undefined) kubelets.set(host, (r = legacy.newRecorder({ source: { component: 'kubelet', host } })));
        return r;
      },
      controller(component) {
        let r = controllers.get(component);
        if (r === undefined) controllers.set(component, (r = legacy.newRecorder({ source: { component } })));
        return r;
      },
      scheduler: modern.newRecorder({ reportingController: 'default-scheduler' }),
    };
    await script(s);
    await legacy.idle();
    await modern.idle();
    // Shutting down writes the final series counts; the fake clock then stands still.
    const done = Promise.all([legacy.shutdown({ timeoutMs: 5000 }), modern.shutdown({ timeoutMs: 5000 })]);
    await clock.advance(0);
    await done;
    const failed = legacy.counters.failed + modern.counters.failed + legacy.counters.dropped + modern.counters.dropped;
    if (failed > 0) throw new Error(`scenario ${script.name}: ${failed} writes failed or were dropped: ${JSON.stringify(logger.entries)}`);
  }
}
