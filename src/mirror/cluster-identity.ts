import { isNotFound } from '../api/index.js';
import type { Logger } from '../internal/index.js';
import type { ArchiveStore } from '../storage/index.js';

/** KUBE_SYSTEM is the namespace whose UID identifies a cluster (OpenTelemetry's `k8s.cluster.uid`): it is created with the cluster and never deleted. */
export const KUBE_SYSTEM = 'kube-system';

/** NamespaceGetter is what reading a cluster's identity needs of a REST client (the client module's `RestClient` has this shape). */
export interface NamespaceGetter {
  request<T>(req: { method: 'GET'; path: string; verb: string; signal?: AbortSignal }): Promise<T>;
}

/**
 * sourceClusterUID reads the UID of the source's `kube-system` namespace;
 * undefined when the source has no namespaces API (a `kevents serve` source is
 * an events server, not a cluster). Any other failure (403: the mirror's RBAC
 * lacks `get` on that namespace) is thrown.
 */
export async function sourceClusterUID(rest: NamespaceGetter): Promise<string | undefined> {
  try {
    const ns = await rest.request<{ metadata?: { uid?: string } }>({ method: 'GET', path: `/api/v1/namespaces/${KUBE_SYSTEM}`, verb: `get namespaces ${KUBE_SYSTEM}` });
    const uid = ns.metadata?.uid;
    return uid !== undefined && uid !== '' ? uid : undefined;
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** ClusterNameTaken is the refusal of a mirror whose cluster name the archive has bound to another cluster. */
export class ClusterNameTaken extends Error {
  override name = 'ClusterNameTaken';
}

/**
 * bindSourceCluster binds the mirror's cluster name to its source's UID in the
 * archive before anything is written under it. A name bound to another UID is
 * another cluster: ClusterNameTaken, with a one-line message. A UID already
 * known under other names (a cluster mirrored again under a new name) is
 * bound under this one too and reported.
 */
export async function bindSourceCluster(store: ArchiveStore, identity: { name: string; uid: string }, logger: Logger): Promise<void> {
  const binding = await store.bindCluster(identity);
  if (binding.boundUID !== undefined && binding.boundUID !== identity.uid) {
    throw new ClusterNameTaken(
      `cluster name ${JSON.stringify(identity.name)} is bound to another cluster in this archive (kube-system UID ${binding.boundUID}, this source's is ${identity.uid}): give this one another --cluster`,
    );
  }
  if (binding.boundUID === undefined && binding.otherNames.length > 0) {
    logger.warn('this cluster is already archived under another name: its events will be found under both', { cluster: identity.name, uid: identity.uid, otherNames: binding.otherNames });
  }
}
