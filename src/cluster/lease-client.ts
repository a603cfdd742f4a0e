import { isNotFound } from '../api/index.js';
import type { RestClient } from '../client/index.js';

/** Lease is the part of a coordination.k8s.io/v1 Lease that leader election reads and writes. */
export interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string; annotations?: Record<string, string>; [k: string]: unknown };
  spec: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
    [k: string]: unknown;
  };
}

/** LeaseClient reads and writes one namespace's Leases; an update is a compare-and-swap on resourceVersion. */
export interface LeaseClient {
  /** get returns the Lease, or undefined when there is none. */
  get(namespace: string, name: string, signal?: AbortSignal): Promise<Lease | undefined>;
  create(lease: Lease, signal?: AbortSignal): Promise<Lease>;
  /** update replaces the Lease; a stale resourceVersion is a Conflict. */
  update(lease: Lease, signal?: AbortSignal): Promise<Lease>;
}

const path = (namespace: string, name?: string): string =>
  `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;

/** restLeaseClient is a LeaseClient over the API server's coordination.k8s.io/v1 REST API. */
export function restLeaseClient(rest: RestClient): LeaseClient {
  return {
    async get(namespace, name, signal) {
      try {
        return await rest.request<Lease>({ method: 'GET', path: path(namespace, name), verb: 'get leases', ...(signal !== undefined ? { signal } : {}) });
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    },
    create(lease, signal) {
      return rest.request<Lease>({ method: 'POST', path: path(lease.metadata.namespace), body: lease, verb: 'create leases', ...(signal !== undefined ? { signal } : {}) });
    },
    update(lease, signal) {
      return rest.request<Lease>({
        method: 'PUT',
        path: path(lease.metadata.namespace, lease.metadata.name),
        body: lease,
        verb: 'update leases',
        ...(signal !== undefined ? { signal } : {}),
      });
    },
  };
}
