// The --leader-elect-* timings of kevents mirror and kevents export, read and checked in one place.
import { UsageError } from '../errors.js';
import { parseDurationFlag } from './duration.js';

/** LeaderElectFlags are the `--leader-elect-*` timings `kevents mirror` and `kevents export` share. */
export interface LeaderElectFlags {
  leaderElectLeaseDuration?: string | undefined;
  leaderElectRenewDeadline?: string | undefined;
  leaderElectRetryPeriod?: string | undefined;
}

/** LeaderTimings are an election's durations, in ms. */
export interface LeaderTimings {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

function duration(name: string, text: string | undefined, fallback: number): number {
  return text === undefined || text === '' ? fallback : parseDurationFlag(name, text);
}

/** leaderTimings reads the `--leader-elect-*` durations (client-go's defaults where absent) and checks client-go's rules on them. */
export async function leaderTimings(flags: LeaderElectFlags): Promise<LeaderTimings> {
  const cluster = await import('../../cluster/index.js');
  const t = {
    leaseDurationMs: duration('--leader-elect-lease-duration', flags.leaderElectLeaseDuration, cluster.DEFAULT_LEASE_DURATION_MS),
    renewDeadlineMs: duration('--leader-elect-renew-deadline', flags.leaderElectRenewDeadline, cluster.DEFAULT_RENEW_DEADLINE_MS),
    retryPeriodMs: duration('--leader-elect-retry-period', flags.leaderElectRetryPeriod, cluster.DEFAULT_RETRY_PERIOD_MS),
  };
  try {
    cluster.validateLeaderElection(t);
  } catch (e) {
    throw new UsageError(`leader election: ${(e as Error).message}`);
  }
  return t;
}
