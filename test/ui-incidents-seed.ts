import { legacyEvent, newApiEvent } from './support/http.js';
import { mustCreate } from './ui-scenario.js';

/** HOSTILE_POD is a pod name an attacker chose: markup, both quotes and a newline (the API server checks no referenced name). */
export const HOSTILE_POD = 'evil<script>"q\'\nx';
/** HOSTILE_MESSAGE is an event message that would run script if rendered as HTML. */
export const HOSTILE_MESSAGE = '<script>alert(1)</script> "quoted" \'single\'\nsecond line <img src=x onerror=alert(2)>';

/** LabIncident is one failure the seed holds: its catalogue kind, its root and namespace, and a phrase its cause holds. */
export interface LabIncident {
  kind: string;
  root: string;
  namespace: string;
  cause: RegExp;
  /** rootEvent is a message of the root's own events or of what it owns, which its timeline shows. */
  rootEvent: string;
}

const QUOTA_REFUSAL =
  'Error creating: pods "web-7d4b9c8f5-x2x7k" is forbidden: exceeded quota: compute-resources, requested: limits.memory=2Gi, used: limits.memory=0, limited: limits.memory=1Gi';
const INSUFFICIENT_CPU = '0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.';
const IMAGE_NOT_FOUND =
  'Failed to pull image "registry.example.com/shop/web:1.4.2": failed to pull and unpack image "registry.example.com/shop/web:1.4.2": failed to resolve reference "registry.example.com/shop/web:1.4.2": registry.example.com/shop/web:1.4.2: not found';
const LIVENESS = 'Liveness probe failed: HTTP probe failed with statuscode: 500';
const CRASH_LOOP = 'Back-off restarting failed container api in pod api-5c6b8d7f9-x2k9p_shop(8f1c0a4e-5b6c-4d7e-8f90-a1b2c3d4e5f6)';

/** LAB_INCIDENTS are the failures the seed writes, one incident each. */
export const LAB_INCIDENTS: LabIncident[] = [
  { kind: 'other', root: `Pod/${HOSTILE_POD}`, namespace: 'default', cause: /reported "Failed"/, rootEvent: HOSTILE_MESSAGE },
  { kind: 'create-forbidden-quota', root: 'Deployment/web', namespace: 'quota', cause: /compute-resources/, rootEvent: QUOTA_REFUSAL },
  { kind: 'crash-loop', root: 'Deployment/api', namespace: 'shop', cause: /crash-looping/, rootEvent: CRASH_LOOP },
  { kind: 'unschedulable-resources', root: 'Job/report-28731', namespace: 'batch', cause: /enough free "cpu"/, rootEvent: INSUFFICIENT_CPU },
  { kind: 'probe-liveness', root: 'Pod/cache-0', namespace: 'probes', cause: /liveness probe/i, rootEvent: LIVENESS },
  { kind: 'image-not-found', root: 'Deployment/web', namespace: 'shop', cause: /registry has no such image/, rootEvent: IMAGE_NOT_FOUND },
];

/**
 * seedLabFailures writes the lab's failures through the server's two event
 * APIs, each event as its upstream component writes it (client-go's
 * tools/record for the controllers and the kubelet, events.k8s.io/v1 with a
 * series for the scheduler): a ResourceQuota refusing a Deployment's
 * ReplicaSet, a Job's pod no node has the CPU for, a Deployment whose image is
 * not in the registry, a Deployment whose pod crash-loops, a liveness probe
 * whose event gives no first time (an old kubelet's repeat with its first
 * report lost: its start is only bounded), and one pod whose name and message
 * are hostile.
 */
export async function seedLabFailures(base: string): Promise<void> {
  const core = [
    // Image not found, in shop, started 40 minutes ago.
    legacyEvent({ name: 'web.17e1', namespace: 'shop', kind: 'Deployment', object: 'web', reason: 'ScalingReplicaSet', component: 'deployment-controller',
      message: 'Scaled up replica set web-7d9f6c5b4 to 1', firstAgo: 2410, lastAgo: 2410 }),
    legacyEvent({ name: 'web-7d9f6c5b4.17e2', namespace: 'shop', kind: 'ReplicaSet', object: 'web-7d9f6c5b4', reason: 'SuccessfulCreate', component: 'replicaset-controller',
      message: 'Created pod: web-7d9f6c5b4-abcde', firstAgo: 2405, lastAgo: 2405 }),
    legacyEvent({ name: 'web-7d9f6c5b4-abcde.17e3', namespace: 'shop', object: 'web-7d9f6c5b4-abcde', reason: 'Pulling', host: 'node-a', fieldPath: 'spec.containers{web}',
      message: 'Pulling image "registry.example.com/shop/web:1.4.2"', count: 9, firstAgo: 2400, lastAgo: 120 }),
    legacyEvent({ name: 'web-7d9f6c5b4-abcde.17e4', namespace: 'shop', object: 'web-7d9f6c5b4-abcde', reason: 'Failed', type: 'Warning', host: 'node-a', fieldPath: 'spec.containers{web}',
      message: IMAGE_NOT_FOUND, count: 9, firstAgo: 2399, lastAgo: 119 }),
    legacyEvent({ name: 'web-7d9f6c5b4-abcde.17e5', namespace: 'shop', object: 'web-7d9f6c5b4-abcde', reason: 'Failed', type: 'Warning', host: 'node-a', fieldPath: 'spec.containers{web}',
      message: 'Error: ErrImagePull', count: 9, firstAgo: 2399, lastAgo: 119 }),
    legacyEvent({ name: 'web-7d9f6c5b4-abcde.17e6', namespace: 'shop', object: 'web-7d9f6c5b4-abcde', reason: 'BackOff', host: 'node-a', fieldPath: 'spec.containers{web}',
      message: 'Back-off pulling image "registry.example.com/shop/web:1.4.2"', count: 30, firstAgo: 2390, lastAgo: 60 }),
    // Crash loop, in shop, started 25 minutes ago.
    legacyEvent({ name: 'api.17f1', namespace: 'shop', kind: 'Deployment', object: 'api', reason: 'ScalingReplicaSet', component: 'deployment-controller',
      message: 'Scaled up replica set api-5c6b8d7f9 to 1', firstAgo: 1520, lastAgo: 1520 }),
    legacyEvent({ name: 'api-5c6b8d7f9.17f2', namespace: 'shop', kind: 'ReplicaSet', object: 'api-5c6b8d7f9', reason: 'SuccessfulCreate', component: 'replicaset-controller',
      message: 'Created pod: api-5c6b8d7f9-x2k9p', firstAgo: 1515, lastAgo: 1515 }),
    legacyEvent({ name: 'api-5c6b8d7f9-x2k9p.17f3', namespace: 'shop', object: 'api-5c6b8d7f9-x2k9p', reason: 'BackOff', type: 'Warning', host: 'node-b', fieldPath: 'spec.containers{api}',
      message: CRASH_LOOP, count: 23, firstAgo: 1500, lastAgo: 30 }),
    // Quota refusal, in quota, started 15 minutes ago.
    legacyEvent({ name: 'web.1801', namespace: 'quota', kind: 'Deployment', object: 'web', reason: 'ScalingReplicaSet', component: 'deployment-controller',
      message: 'Scaled up replica set web-7d4b9c8f5 to 2', firstAgo: 905, lastAgo: 905 }),
    legacyEvent({ name: 'web-7d4b9c8f5.1802', namespace: 'quota', kind: 'ReplicaSet', object: 'web-7d4b9c8f5', reason: 'FailedCreate', type: 'Warning', component: 'replicaset-controller',
      message: QUOTA_REFUSAL, count: 14, firstAgo: 900, lastAgo: 20 }),
    // The hostile pod, 5 minutes ago.
    legacyEvent({ name: 'evil.1901', namespace: 'default', object: HOSTILE_POD, reason: 'Failed', type: 'Warning', host: 'node-a', message: HOSTILE_MESSAGE, firstAgo: 300, lastAgo: 300 }),
  ];
  // Only a last time: the start is an estimate, before the last time the event gives.
  const liveness = legacyEvent({ name: 'cache-0.1b01', namespace: 'probes', object: 'cache-0', reason: 'Unhealthy', type: 'Warning', host: 'node-b', fieldPath: 'spec.containers{cache}',
    message: LIVENESS, count: 3, firstAgo: 600, lastAgo: 600 });
  delete liveness.firstTimestamp;
  core.push(liveness);
  const v1 = [
    // Insufficient CPU, in batch, started 30 minutes ago.
    newApiEvent({ name: 'report-28731.1a01', namespace: 'batch', kind: 'Job', object: 'report-28731', reason: 'SuccessfulCreate', action: 'Create', controller: 'job-controller',
      note: 'Created pod: report-28731-zt5kq', eventAgo: 1801 }),
    newApiEvent({ name: 'report-28731-zt5kq.1a02', namespace: 'batch', object: 'report-28731-zt5kq', reason: 'FailedScheduling', type: 'Warning', action: 'Scheduling',
      note: INSUFFICIENT_CPU, eventAgo: 1800, series: { count: 8, lastAgo: 200 } }),
  ];
  for (const e of core) await mustCreate(base, '/api/v1/namespaces/', e);
  for (const e of v1) await mustCreate(base, '/apis/events.k8s.io/v1/namespaces/', e);
}
