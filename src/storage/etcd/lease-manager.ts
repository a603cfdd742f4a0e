/** LeaseManagerOptions tune lease sharing; see the constants in options.ts for the defaults' reasons. */
export interface LeaseManagerOptions {
  /** grant asks etcd for a lease of `ttlSeconds` and resolves to its ID. */
  grant: (ttlSeconds: number) => Promise<string>;
  reuseDurationSeconds: number;
  reuseDurationPercent: number;
  maxObjectCount: number;
  /** now is wall-clock time in ms, finer than a millisecond: etcd leases run in real time, whatever clock the store's timers use. */
  now?: () => number;
}

/**
 * LeaseManager shares etcd leases between writes with the same TTL, as
 * kube-apiserver's leaseManager does: a cached lease is reused while it still
 * outlives `now + ttl` but not `now + ttl + R` (R = min(percent × ttl,
 * reuseDurationSeconds), in whole seconds) and has had at most `maxObjectCount`
 * objects attached; otherwise a lease of `ttl + R` is granted. An object thus
 * expires between ttl and ttl + R after its last write, and a burst of writes
 * costs one lease per thousand objects, not one per write. While a grant is
 * under way further calls wait for it, as behind upstream's mutex, so
 * concurrent writers wait for one grant instead of each asking for their own.
 */
export class LeaseManager {
  private prevId = '';
  private prevExpiresAt = 0;
  private attached = 0;
  /** pending settles when the grant under way does; callers that arrive meanwhile wait for it, as behind upstream's mutex. */
  private pending: Promise<void> | undefined;
  private readonly now: () => number;
  /** granted counts the leases asked of etcd (for tests and metrics). */
  granted = 0;

  constructor(private readonly o: LeaseManagerOptions) {
    this.now = o.now ?? (() => performance.timeOrigin + performance.now());
  }

  /** getLease resolves to a lease for an object written now with `ttlSeconds` (a positive whole number). */
  getLease(ttlSeconds: number): Promise<string> {
    // The time is read once a grant under way is done, so writers that waited for it see that lease as fresh, not as equally old.
    if (this.pending !== undefined) return this.pending.then(() => this.getLease(ttlSeconds));
    const now = this.now();
    const ttl = ttlSeconds;
    const reuse = Math.min(Math.trunc(this.o.reuseDurationPercent * ttl), this.o.reuseDurationSeconds);
    const valid = now + ttl * 1000 < this.prevExpiresAt;
    // "Does not outlive now + ttl + R": a lease granted at this very instant qualifies (upstream's strict
    // After never meets a tie at nanosecond resolution; milliseconds do).
    const sufficient = now + (ttl + reuse) * 1000 >= this.prevExpiresAt;
    // Every call counts, whether or not its write then succeeds, as upstream counts.
    this.attached++;
    // The common case answers without waiting on anything: most writes share the cached lease.
    if (valid && sufficient && this.attached <= this.o.maxObjectCount) return Promise.resolve(this.prevId);
    const run = this.o.grant(ttl + reuse).then((id) => {
      this.granted++;
      this.prevId = id;
      this.prevExpiresAt = now + (ttl + reuse) * 1000;
      this.attached = 1;
      return id;
    });
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.pending = settled;
    // Registered before any waiter, so waiters find no grant under way; after a failed grant the first of them asks again.
    void settled.then(() => {
      if (this.pending === settled) this.pending = undefined;
    });
    return run;
  }

  /** forget drops a cached lease that etcd no longer knows (revoked, or expired early), so the next write gets a new one. */
  forget(id: string): void {
    if (id === this.prevId) this.prevExpiresAt = 0;
  }
}
