// The --leader-elect-* timings of kevents mirror and kevents export, read and checked in one place.
import type { Command } from 'commander';
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

/** LeaderElectHelp is what differs between the commands' `--leader-elect-*` help: what the leader stops doing when a
 * renewal fails, what the lease is called (a coordination.k8s.io `Lease`, or any `lease` where the archive may hold
 * it), and where its namespace defaults to. */
export interface LeaderElectHelp {
  /** leaseName is the default of --leader-elect-resource-name. */
  leaseName: string;
  /** stops is the work a leader stops when its renewal deadline passes ("mirroring"). */
  stops: string;
  /** lease is the noun for the lock ("Lease" or "lease"). */
  lease: string;
  /** namespaceDefault says where --leader-elect-resource-namespace defaults to, in parentheses after "default: ". */
  namespaceDefault: string;
}

/** addLeaderElectFlags adds the `--leader-elect-*` timings and the lease's name and namespace (read into
 * LeaderElectFlags) to a command; --leader-elect itself, whose help says what is elected, stays with the command. */
export function addLeaderElectFlags(c: Command, help: LeaderElectHelp): Command {
  return c
    .option('--leader-elect-lease-duration <duration>', 'how long standby replicas wait after the last renewal before taking over', '15s')
    .option('--leader-elect-renew-deadline <duration>', `how long the leader retries a renewal before it stops ${help.stops}`, '10s')
    .option('--leader-elect-retry-period <duration>', `how often replicas try to acquire or renew the ${help.lease}`, '2s')
    .option('--leader-elect-resource-name <name>', `name of the ${help.lease}`, help.leaseName)
    .option('--leader-elect-resource-namespace <ns>', `namespace of the ${help.lease} (default: ${help.namespaceDefault})`);
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
