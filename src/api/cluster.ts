import type { CoreEvent } from './types.js';

/**
 * A cluster's identity in a shared archive, as OpenTelemetry's `k8s.cluster.uid`
 * convention names it: the UID of its `kube-system` namespace, which lives as long
 * as the cluster does, with a name people use (`kevents mirror --cluster`).
 */

/** CLUSTER_LABEL names the cluster an archived event came from, so several clusters can share one archive. */
export const CLUSTER_LABEL = 'archive.kevents.io/cluster';
/** CLUSTER_UID_ANNOTATION keeps the UID of the `kube-system` namespace of the cluster an archived event came from. */
export const CLUSTER_UID_ANNOTATION = 'archive.kevents.io/cluster-uid';
/**
 * CLUSTER_FIELD is the field label that selects events by cluster
 * (`--field-selector kevents.io/cluster=prod`): the value of CLUSTER_LABEL, "" for
 * an event written locally. kube-apiserver refuses the label; kubectl passes it on.
 */
export const CLUSTER_FIELD = 'kevents.io/cluster';

/** eventCluster is the name of the cluster an event was archived from, "" when it was written locally. */
export function eventCluster(e: CoreEvent): string {
  return (e.metadata as CoreEvent['metadata'] | undefined)?.labels?.[CLUSTER_LABEL] ?? '';
}

/** eventClusterUID is the UID of the cluster an event was archived from, "" when unknown. */
export function eventClusterUID(e: CoreEvent): string {
  return (e.metadata as CoreEvent['metadata'] | undefined)?.annotations?.[CLUSTER_UID_ANNOTATION] ?? '';
}
