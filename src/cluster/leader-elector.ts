import { formatMicroTime, isNotFound } from '../api/index.js';
import { noopLogger, realClock } from '../internal/index.js';
import type { Clock, Logger } from '../internal/index.js';
import type { Lease, LeaseClient } from './lease-client.js';

/** DEFAULT_LEASE_DURATION_MS is kube-controller-manager's --leader-elect-lease-duration (15 s). */
export const DEFAULT_LEASE_DURATION_MS = 15_000;
/** DEFAULT_RENEW_DEADLINE_MS is kube-controller-manager's --leader-elect-renew-deadline (10 s). */
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
/** DEFAULT_RETRY_PERIOD_MS is kube-controller-manager's --leader-elect-retry-period (2 s). */
export const DEFAULT_RETRY_PERIOD_MS = 2_000;
/** JITTER_FACTOR spreads candidates' retries, as client-go's JitterFactor (1.2). */
export const JITTER_FACTOR = 1.2;

/** LeaderElectionConfig is client-go's leaderelection.LeaderElectionConfig, over a Lease. */
export interface LeaderElectionConfig {
  client: LeaseClient;
  namespace: string;
  name: string;
  /** identity names this candidate in the Lease's holderIdentity (hostname_uuid, as client-go). */
  identity: string;
  /** leaseDurationMs: how long candidates wait after the holder's last observed renewal before taking over. */
  leaseDurationMs?: number;
  /** renewDeadlineMs: how long the leader keeps retrying a renewal before it gives up leading. */
  renewDeadlineMs?: number;
  /** retryPeriodMs: how often candidates try to acquire and the leader renews. */
  retryPeriodMs?: number;
  /** releaseOnCancel gives the Lease up (holderIdentity emptied) when the elector is stopped while leading. */
  releaseOnCancel?: boolean;
  clock?: Clock;
  logger?: Logger;
  /** random is Math.random unless a test needs the jitter fixed. */
  random?: () => number;
}

/** LeaderCallbacks are told about leadership: started (with a signal that aborts when it ends) and stopped. */
export interface LeaderCallbacks {
  onStartedLeading(leading: AbortSignal): void;
  onStoppedLeading(): void;
  /** onNewLeader hears each holder this candidate observes, itself included. */
  onNewLeader?(identity: string): void;
}

/** LeaderElector runs one candidate's election. */
export interface LeaderElector {
  /**
   * run campaigns until leading, leads until a renewal fails for renewDeadlineMs (or `signal` aborts),
   * then calls onStoppedLeading and resolves: like client-go, a lost leadership is not regained in the same run.
   */
  run(signal: AbortSignal): Promise<void>;
  isLeader(): boolean;
  /** leader is the holder last observed (empty when none). */
  leader(): string;
}

/** validateLeaderElection checks client-go's rules: leaseDuration > renewDeadline > JITTER_FACTOR × retryPeriod > 0. */
export function validateLeaderElection(c: { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number }): void {
  if (!(c.leaseDurationMs > c.renewDeadlineMs)) throw new RangeError('leaseDuration must be greater than renewDeadline');
  if (!(c.renewDeadlineMs > JITTER_FACTOR * c.retryPeriodMs)) throw new RangeError(`renewDeadline must be greater than retryPeriod*JitterFactor(${JITTER_FACTOR})`);
  if (!(c.leaseDurationMs >= 1000)) throw new RangeError('leaseDuration must be at least one second');
  if (!(c.retryPeriodMs > 0)) throw new RangeError('retryPeriod must be greater than zero');
}

interface Record {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime: string;
  renewTime: string;
  leaseTransitions: number;
}

function recordOf(lease: Lease): Record {
  return {
    holderIdentity: lease.spec.holderIdentity ?? '',
    leaseDurationSeconds: lease.spec.leaseDurationSeconds ?? 0,
    acquireTime: lease.spec.acquireTime ?? '',
    renewTime: lease.spec.renewTime ?? '',
    leaseTransitions: lease.spec.leaseTransitions ?? 0,
  };
}

/**
 * createLeaderElector follows client-go's tools/leaderelection: a candidate
 * takes the Lease when its holder has not renewed it for leaseDuration of the
 * candidate's own clock (time since it observed the record change, so clock
 * skew between nodes does not matter), every write is a compare-and-swap on
 * the Lease's resourceVersion, the leader renews every retryPeriod and stops
 * leading once renewals have failed for renewDeadline (before any other
 * candidate may take over, since renewDeadline < leaseDuration).
 */
export function createLeaderElector(config: LeaderElectionConfig, callbacks: LeaderCallbacks): LeaderElector {
  const leaseDurationMs = config.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
  const renewDeadlineMs = config.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
  const retryPeriodMs = config.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
  validateLeaderElection({ leaseDurationMs, renewDeadlineMs, retryPeriodMs });
  const clock = config.clock ?? realClock;
  const logger = config.logger ?? noopLogger;
  const random = config.random ?? Math.random;
  const { client, namespace, name, identity } = config;
  let lease: Lease | undefined;
  let observed: Record | undefined;
  let observedRaw = '';
  let observedAt = 0;
  let reportedLeader = '';

  const isLeader = (): boolean => observed?.holderIdentity === identity;
  const leaseValid = (now: number): boolean => observedAt + leaseDurationMs > now;
  const observe = (l: Lease): void => {
    lease = l;
    observed = recordOf(l);
    observedAt = clock.now();
    if (observed.holderIdentity !== reportedLeader) {
      reportedLeader = observed.holderIdentity;
      if (reportedLeader !== '') {
        logger.info('new leader elected', { lease: `${namespace}/${name}`, leader: reportedLeader });
        callbacks.onNewLeader?.(reportedLeader);
      }
    }
  };
  const leaseWith = (base: Lease | undefined, r: Record): Lease => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: base?.metadata ?? { name, namespace },
    spec: {
      ...(base?.spec ?? {}),
      holderIdentity: r.holderIdentity,
      leaseDurationSeconds: r.leaseDurationSeconds,
      acquireTime: r.acquireTime,
      renewTime: r.renewTime,
      leaseTransitions: r.leaseTransitions,
    },
  });

  /** tryAcquireOrRenew is client-go's: the leader's optimistic fast path, then get, check, create or update. */
  const tryAcquireOrRenew = async (signal: AbortSignal): Promise<boolean> => {
    const now = clock.now();
    const stamp = formatMicroTime(now) ?? '';
    const record: Record = { holderIdentity: identity, leaseDurationSeconds: Math.round(leaseDurationMs / 1000), acquireTime: stamp, renewTime: stamp, leaseTransitions: 0 };
    if (isLeader() && leaseValid(now) && lease !== undefined && observed !== undefined) {
      try {
        observe(await client.update(leaseWith(lease, { ...record, acquireTime: observed.acquireTime, leaseTransitions: observed.leaseTransitions }), signal));
        return true;
      } catch (e) {
        logger.warn('renewing the lease optimistically failed; falling back to reading it', { lease: `${namespace}/${name}`, error: (e as Error).message });
      }
    }
    let current: Lease | undefined;
    try {
      current = await client.get(namespace, name, signal);
    } catch (e) {
      logger.warn('reading the lease failed', { lease: `${namespace}/${name}`, error: (e as Error).message });
      return false;
    }
    if (current === undefined) {
      try {
        observe(await client.create(leaseWith(undefined, record), signal));
        return true;
      } catch (e) {
        if (!isNotFound(e)) logger.info('creating the lease failed', { lease: `${namespace}/${name}`, error: (e as Error).message });
        return false;
      }
    }
    const old = recordOf(current);
    const raw = JSON.stringify(old);
    if (raw !== observedRaw) {
      observedRaw = raw;
      observe(current);
    } else {
      lease = current;
    }
    if (old.holderIdentity !== '' && leaseValid(now) && !isLeader()) return false;
    const next: Record = isLeader()
      ? { ...record, acquireTime: old.acquireTime, leaseTransitions: old.leaseTransitions }
      : { ...record, leaseTransitions: old.leaseTransitions + 1 };
    try {
      observe(await client.update(leaseWith(current, next), signal));
      return true;
    } catch (e) {
      logger.info('updating the lease failed', { lease: `${namespace}/${name}`, error: (e as Error).message });
      return false;
    }
  };

  const jittered = (ms: number): number => ms + random() * (JITTER_FACTOR * ms);
  const sleep = async (ms: number, signal: AbortSignal): Promise<boolean> => {
    try {
      await clock.sleep(ms, signal);
      return true;
    } catch {
      return false;
    }
  };

  /** release empties the holder, so the next candidate need not wait out the lease. */
  const release = async (): Promise<void> => {
    if (!isLeader() || lease === undefined || observed === undefined) return;
    const stamp = formatMicroTime(clock.now()) ?? '';
    try {
      observe(await client.update(leaseWith(lease, { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: stamp, renewTime: stamp, leaseTransitions: observed.leaseTransitions })));
      logger.info('released the lease', { lease: `${namespace}/${name}` });
    } catch (e) {
      logger.warn('releasing the lease failed', { lease: `${namespace}/${name}`, error: (e as Error).message });
    }
  };

  return {
    isLeader,
    leader: () => observed?.holderIdentity ?? '',
    async run(signal) {
      logger.info('attempting to acquire the leader lease', { lease: `${namespace}/${name}`, identity });
      // Acquire: every retryPeriod (jittered) until this candidate holds the Lease.
      for (;;) {
        if (signal.aborted) return;
        if (await tryAcquireOrRenew(signal)) break;
        if (!(await sleep(jittered(retryPeriodMs), signal))) return;
      }
      logger.info('successfully acquired the lease', { lease: `${namespace}/${name}`, identity });
      const leading = new AbortController();
      callbacks.onStartedLeading(leading.signal);
      // Renew: every retryPeriod; a round retries until renewDeadline after it began, then leadership is lost.
      try {
        for (;;) {
          if (!(await sleep(retryPeriodMs, signal))) break;
          const roundEnds = clock.now() + renewDeadlineMs;
          let renewed = false;
          for (;;) {
            const attempt = new AbortController();
            const onAbort = (): void => attempt.abort();
            signal.addEventListener('abort', onAbort, { once: true });
            const timer = clock.setTimeout(() => attempt.abort(), Math.max(0, roundEnds - clock.now()));
            try {
              renewed = await tryAcquireOrRenew(attempt.signal);
            } finally {
              clock.clearTimeout(timer);
              signal.removeEventListener('abort', onAbort);
            }
            if (renewed || signal.aborted || clock.now() >= roundEnds) break;
            if (!(await sleep(Math.min(retryPeriodMs, Math.max(0, roundEnds - clock.now())), signal))) break;
            if (clock.now() >= roundEnds) break;
          }
          if (signal.aborted) break;
          if (!renewed || !isLeader()) {
            logger.error('failed to renew the lease: leadership lost', { lease: `${namespace}/${name}`, identity });
            break;
          }
        }
      } finally {
        leading.abort(new Error('leadership ended'));
        if (signal.aborted && config.releaseOnCancel === true) await release();
        callbacks.onStoppedLeading();
      }
    },
  };
}
