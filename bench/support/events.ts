import type { CoreEvent } from '../../src/api/index.js';

/** KubeletFields are the fields of a core/v1 Event past its metadata and involvedObject. */
export type KubeletFields = Pick<CoreEvent, 'reason' | 'message' | 'source' | 'firstTimestamp' | 'lastTimestamp' | 'count' | 'type' | 'reportingComponent' | 'reportingInstance'>;

/**
 * kubeletFields are what the storage and mirror benches write after an event's
 * identity: a kubelet container event at time `t` (RFC 3339, seconds), BackOff
 * (Warning) one time in five and Pulled (Normal) otherwise, from one of 50 nodes.
 */
export function kubeletFields(i: number, t: string): KubeletFields {
  const backOff = i % 5 === 0;
  return {
    reason: backOff ? 'BackOff' : 'Pulled',
    message: backOff ? 'Back-off restarting failed container app in pod' : 'Container image "registry.example/app:1.2.3" already present on machine',
    source: { component: 'kubelet', host: `node-${i % 50}` },
    firstTimestamp: t,
    lastTimestamp: t,
    count: 1,
    type: backOff ? 'Warning' : 'Normal',
    reportingComponent: 'kubelet',
    reportingInstance: `node-${i % 50}`,
  };
}
