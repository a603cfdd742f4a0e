/**
 * The lease table: leases kept beside an archive, for replicas that share the
 * archive but no cluster to elect a leader on (several `kevents export`
 * processes over one PostgreSQL archive). It keeps what a coordination.k8s.io
 * Lease keeps and is written the same way: every write is a compare-and-swap
 * on a version, so client-go's election algorithm runs over it unchanged.
 */

/** StoredLease is one lease: its spec (holder, times, transitions) as the elector wrote it, and the version of that write. */
export interface StoredLease {
  namespace: string;
  name: string;
  /** spec is a Lease's spec (holderIdentity, leaseDurationSeconds, acquireTime, renewTime, leaseTransitions). */
  spec: Record<string, unknown>;
  /** version changes with every write: the resourceVersion an update must name. */
  version: string;
}

/**
 * LeaseTable reads and writes leases. `create` of a lease that exists fails
 * with a StorageError `KeyExists`; `update` naming a stale version fails with
 * `ResourceVersionConflicts`; a lost database is `Unreachable`.
 */
export interface LeaseTable {
  get(namespace: string, name: string): Promise<StoredLease | undefined>;
  create(lease: Omit<StoredLease, 'version'>): Promise<StoredLease>;
  update(lease: StoredLease): Promise<StoredLease>;
  close(): Promise<void>;
}
