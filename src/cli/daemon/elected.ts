import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { LeaseClient } from '../../cluster/index.js';
import type { Logger } from '../../internal/index.js';
import { CliError } from '../errors.js';
import type { LeaderTimings } from '../flags/leader-elect.js';

/** LeaderTask is the work a replica does while it leads. */
export interface LeaderTask {
  readiness(): { ready: boolean; message: string };
  /** stop ends the work, its last acknowledged step saved, before the lease is given up. */
  stop(): Promise<void>;
}

/** ElectedOptions configure startElected. */
export interface ElectedOptions {
  lease: LeaseClient;
  namespace: string;
  name: string;
  timings: LeaderTimings;
  logger: Logger;
  registry: Registry;
  /** gauge is the metric that says whether this replica leads (`kevents_mirror_leader`, `kevents_export_leader`). */
  gauge: { name: string; help: string };
  /** what names the work in messages: `the mirror`, `the sinks`. */
  what: string;
  /** lostWhy says why the process exits when it stopped leading. */
  lostWhy: string;
}

/** Elected is work that runs only while its replica holds the lease. */
export interface Elected {
  readiness(): { ready: boolean; message: string };
  /** lost resolves, with why, when this replica stopped leading for good (renewals failed, or its work could not start): the process should exit. */
  lost: Promise<string>;
  /** stop stops the work (its last step saved), then gives the lease up for the next replica. */
  stop(): Promise<void>;
  describe: string;
}

/**
 * startElected campaigns for a lease and runs `start`'s work while it leads,
 * with client-go's semantics: the work stops before another replica may take
 * over (renewDeadline < leaseDuration), and a replica that lost the lease exits
 * rather than campaign again, so that work that saves its position in a shared
 * archive resumes in the next leader exactly where it stopped.
 */
export async function startElected(o: ElectedOptions, start: () => Promise<LeaderTask>): Promise<Elected> {
  const cluster = await import('../../cluster/index.js');
  const { logger } = o;
  const identity = `${hostname()}_${randomUUID()}`;
  const gauge = new Gauge({ name: o.gauge.name, help: o.gauge.help, registers: [o.registry] });
  gauge.set(0);
  let run: Promise<LeaderTask | undefined> | undefined;
  let current: LeaderTask | undefined;
  let onLost: (why: string) => void = () => {};
  const lost = new Promise<string>((resolve) => (onLost = resolve));
  const stopTask = async (): Promise<void> => {
    const r = await run;
    await r?.stop();
    current = undefined;
    gauge.set(0);
  };
  const campaign = new AbortController();
  const elector = cluster.createLeaderElector(
    { client: o.lease, namespace: o.namespace, name: o.name, identity, ...o.timings, releaseOnCancel: true, logger },
    {
      onStartedLeading(leading) {
        gauge.set(1);
        run = start().then(
          (r) => (current = r),
          (e: unknown) => {
            // A leader that cannot do the work must not sit on the lease: give it up (the process exits) for another replica.
            logger.error(`starting ${o.what} failed; giving the lease up`, { error: (e as Error).message });
            onLost(`${o.what} could not start (${(e as Error).message}); the lease was given up for another replica`);
            return undefined;
          },
        );
        leading.addEventListener('abort', () => {
          if (!campaign.signal.aborted) void stopTask().then(() => onLost(o.lostWhy), () => onLost(o.lostWhy));
        });
      },
      onStoppedLeading() {
        gauge.set(0);
      },
    },
  );
  const electing = elector.run(campaign.signal).catch((e: unknown) => {
    logger.error('leader election failed', { error: (e as Error).message });
    onLost(`leader election failed: ${(e as Error).message}`);
  });
  return {
    lost,
    describe: `${o.namespace}/${o.name} as ${identity}`,
    readiness() {
      if (current !== undefined) return current.readiness();
      const leader = elector.leader();
      return { ready: true, message: elector.isLeader() ? `leading, starting ${o.what}` : `standing by (leader: ${leader === '' ? 'none yet' : leader})` };
    },
    async stop() {
      await stopTask();
      campaign.abort();
      await electing;
    },
  };
}

/** leadershipLost is the error `kevents mirror` and `kevents export` exit with when they stopped leading (the pod restarts and campaigns again). */
export function leadershipLost(why: string): CliError {
  return new CliError(why);
}
