// Events the printer tests of src/api (the server's Table) and src/print (kubectl's listings) both read.
import type { CoreEvent } from '../../src/api/index.js';
/** NOW is the clock the printer tests read ages against. */
export const NOW = Date.parse('2024-05-01T12:00:00Z');

/** ev is an event about Pod default/web-1, with the fields a case sets. */
export function ev(over: Partial<CoreEvent> = {}): CoreEvent {
  return {
    metadata: { name: 'web-1.17c', namespace: 'default' },
    involvedObject: { kind: 'Pod', name: 'web-1', namespace: 'default' },
    ...over,
  };
}

/** SCHEDULED is an events.k8s.io event: eventTime and reporting fields only. */
export const SCHEDULED = ev({
  metadata: { name: 'web-1.a', namespace: 'default' },
  reason: 'Scheduled',
  message: 'Successfully assigned default/web-1 to node-1',
  type: 'Normal',
  eventTime: '2024-05-01T11:50:00.000000Z',
  firstTimestamp: null,
  lastTimestamp: null,
  reportingComponent: 'default-scheduler',
  reportingInstance: 'default-scheduler-node-0',
  source: {},
});
/** BACKOFF is a core/v1 kubelet event repeated 12 times, its message padded as kubelet's are not. */
export const BACKOFF = ev({
  metadata: { name: 'web-1.b', namespace: 'default' },
  involvedObject: { kind: 'Pod', name: 'web-1', namespace: 'default', fieldPath: 'spec.containers{app}' },
  reason: 'BackOff',
  message: '  Back-off restarting failed container\n',
  type: 'Warning',
  source: { component: 'kubelet', host: 'node-1' },
  firstTimestamp: '2024-05-01T11:50:00Z',
  lastTimestamp: '2024-05-01T11:56:49Z',
  count: 12,
});
/** SCALED is an events.k8s.io event with a series. */
export const SCALED = ev({
  metadata: { name: 'web.c', namespace: 'apps' },
  involvedObject: { kind: 'Deployment', name: 'web', namespace: 'apps' },
  reason: 'ScalingReplicaSet',
  message: 'Scaled up replica set web-abc to 2',
  type: 'Normal',
  eventTime: '2024-05-01T11:55:00.000000Z',
  series: { count: 2, lastObservedTime: '2024-05-01T11:59:30.000000Z' },
  reportingComponent: 'deployment-controller',
});
