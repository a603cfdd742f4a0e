import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { Logger } from '../internal/index.js';
import type { MirrorOptions, Readiness } from '../mirror/index.js';
import type { EventStore } from '../storage/index.js';
import { CliError, UsageError } from './errors.js';
import { parseGoDuration } from './go-duration.js';
import { connectSource, startMirror } from './mirror.js';
import type { MirrorFlags, MirrorRun } from './mirror.js';

/** DEFAULT_LEASE_NAME is the Lease the replicas of one mirror elect their leader on. */
export const DEFAULT_LEASE_NAME = 'kevents-mirror';

/** ElectedMirror is a mirror that runs only while its replica holds the Lease. */
export interface ElectedMirror {
  readiness(): Readiness;
  /** lost resolves, with why, when this replica stopped leading for good (renewals failed, or its mirror could not start): the process should exit. */
  lost: Promise<string>;
  /** stop stops the mirror (its last batch committed), then gives the Lease up for the next replica. */
  stop(): Promise<void>;
  describe: string;
}

function duration(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined || text === '') return fallback;
  try {
    return parseGoDuration(text);
  } catch (e) {
    throw new UsageError(`${name}: ${(e as Error).message}`);
  }
}

/**
 * startElectedMirror campaigns for the Lease `--leader-elect-resource-name` in
 * `--leader-elect-resource-namespace` (default: the pod's namespace) and runs
 * the mirror while it leads. The next leader resumes from the checkpoint the
 * last one committed in the shared archive, in the same transaction as its
 * events, so a failover neither skips nor repeats a change.
 */
export async function startElectedMirror(store: EventStore, flags: MirrorFlags, deps: { logger: Logger; registry: Registry; onArchived?: MirrorOptions['onArchived'] | undefined }): Promise<ElectedMirror> {
  const cluster = await import('../cluster/index.js');
  const leaseDurationMs = duration('--leader-elect-lease-duration', flags.leaderElectLeaseDuration, cluster.DEFAULT_LEASE_DURATION_MS);
  const renewDeadlineMs = duration('--leader-elect-renew-deadline', flags.leaderElectRenewDeadline, cluster.DEFAULT_RENEW_DEADLINE_MS);
  const retryPeriodMs = duration('--leader-elect-retry-period', flags.leaderElectRetryPeriod, cluster.DEFAULT_RETRY_PERIOD_MS);
  try {
    cluster.validateLeaderElection({ leaseDurationMs, renewDeadlineMs, retryPeriodMs });
  } catch (e) {
    throw new UsageError(`leader election: ${(e as Error).message}`);
  }
  const source = await connectSource(flags);
  const { logger } = deps;
  const namespace = flags.leaderElectResourceNamespace !== undefined && flags.leaderElectResourceNamespace !== '' ? flags.leaderElectResourceNamespace : source.namespace;
  const name = flags.leaderElectResourceName !== undefined && flags.leaderElectResourceName !== '' ? flags.leaderElectResourceName : DEFAULT_LEASE_NAME;
  const identity = `${hostname()}_${randomUUID()}`;
  const leaderGauge = new Gauge({ name: 'kevents_mirror_leader', help: 'Whether this replica holds the mirror Lease and runs the mirror (1) or stands by (0).', registers: [deps.registry] });
  leaderGauge.set(0);
  let run: Promise<MirrorRun | undefined> | undefined;
  let current: MirrorRun | undefined;
  let onLost: (why: string) => void = () => {};
  const lost = new Promise<string>((resolve) => (onLost = resolve));
  const stopMirror = async (): Promise<void> => {
    const r = await run;
    await r?.stop();
    current = undefined;
    leaderGauge.set(0);
  };
  const campaign = new AbortController();
  const elector = cluster.createLeaderElector(
    { client: cluster.restLeaseClient(source.rest), namespace, name, identity, leaseDurationMs, renewDeadlineMs, retryPeriodMs, releaseOnCancel: true, logger },
    {
      onStartedLeading(leading) {
        leaderGauge.set(1);
        run = startMirror(store, flags, { logger, registry: deps.registry, source, onArchived: deps.onArchived }).then(
          (r) => (current = r),
          (e: unknown) => {
            // A leader that cannot mirror must not sit on the Lease: give it up (the process exits) for another replica.
            logger.error('starting the mirror failed; giving the lease up', { error: (e as Error).message });
            onLost(`the mirror could not start (${(e as Error).message}); the lease was given up for another replica`);
            return undefined;
          },
        );
        leading.addEventListener('abort', () => {
          // Stop writing before another replica may take over (renewDeadline < leaseDuration).
          const why = 'leader election lost: the mirror stopped so that the new leader alone writes the archive';
          if (!campaign.signal.aborted) void stopMirror().then(() => onLost(why), () => onLost(why));
        });
      },
      onStoppedLeading() {
        leaderGauge.set(0);
      },
    },
  );
  const electing = elector.run(campaign.signal).catch((e: unknown) => {
    logger.error('leader election failed', { error: (e as Error).message });
    onLost(`leader election failed: ${(e as Error).message}`);
  });
  return {
    lost,
    describe: `leader election on Lease ${namespace}/${name} as ${identity}`,
    readiness() {
      if (current !== undefined) return current.mirror.readiness();
      const leader = elector.leader();
      return { ready: true, message: elector.isLeader() ? 'leading, starting the mirror' : `standing by (leader: ${leader === '' ? 'none yet' : leader})` };
    },
    async stop() {
      await stopMirror();
      campaign.abort();
      await electing;
    },
  };
}

/** leadershipLost is the error `kevents mirror` exits with when it stopped leading (its pod restarts and campaigns again). */
export function leadershipLost(why: string): CliError {
  return new CliError(why);
}
