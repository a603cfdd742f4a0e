import type { Lease, LeaseClient } from '../../../cluster/index.js';
import { abortable } from '../../../internal/index.js';
import type { LeaseTable, StoredLease } from '../../../storage/index.js';

/** settled rejects as soon as `signal` aborts, so an elector's deadline holds even when the database hangs (a late answer is dropped). */
function settled<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  return abortable(p, signal, () => new Error('the lease request was abandoned: the database did not answer in time'));
}

function leaseOf(s: StoredLease): Lease {
  return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: s.name, namespace: s.namespace, resourceVersion: s.version }, spec: s.spec };
}

/**
 * tableLeaseClient is a LeaseClient over an archive's lease table: the leases
 * `kevents export --leader-elect` replicas elect on when no cluster holds one
 * for them. The elector is the same; only where the lease lives differs.
 */
export function tableLeaseClient(table: LeaseTable): LeaseClient {
  return {
    async get(namespace, name, signal) {
      const s = await settled(table.get(namespace, name), signal);
      return s === undefined ? undefined : leaseOf(s);
    },
    async create(lease, signal) {
      return leaseOf(await settled(table.create({ namespace: lease.metadata.namespace, name: lease.metadata.name, spec: lease.spec }), signal));
    },
    async update(lease, signal) {
      const version = lease.metadata.resourceVersion ?? '';
      return leaseOf(await settled(table.update({ namespace: lease.metadata.namespace, name: lease.metadata.name, spec: lease.spec, version }), signal));
    },
  };
}
