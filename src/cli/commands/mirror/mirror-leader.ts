import type { Registry } from 'prom-client';
import type { Logger } from '../../../internal/index.js';
import type { MirrorOptions } from '../../../mirror/index.js';
import type { EventStore } from '../../../storage/index.js';
import { startElected } from '../../daemon/elected.js';
import { leaderTimings } from '../../flags/leader-elect.js';
import type { Elected, LeaderTask } from '../../daemon/elected.js';
import type { LeaderElectFlags } from '../../flags/leader-elect.js';
import { startMirror } from '../../daemon/mirror.js';
import type { RetentionFlags } from '../../flags/retention.js';
import { connectSource } from '../../flags/source.js';
import type { SourceFlags } from '../../flags/source.js';

/**
 * ElectedMirrorFlags are the flags of `kevents mirror` an elected mirror reads: declared here, not taken from
 * mirror.ts, which loads this file on demand, so that the two do not import each other.
 */
export type ElectedMirrorFlags = SourceFlags &
  RetentionFlags &
  LeaderElectFlags & { cluster?: string | undefined; leaderElectResourceName?: string | undefined; leaderElectResourceNamespace?: string | undefined };

/** DEFAULT_LEASE_NAME is the Lease the replicas of one mirror elect their leader on. */
export const DEFAULT_LEASE_NAME = 'kevents-mirror';

/**
 * startElectedMirror campaigns for the Lease `--leader-elect-resource-name` in
 * `--leader-elect-resource-namespace` (default: the pod's namespace) and runs
 * the mirror while it leads, and `alsoWhileLeading` (the `--sinks` exporter)
 * beside it, so that one replica alone writes the archive and delivers the
 * sinks. The next leader resumes from the checkpoint (and the sinks from the
 * positions) the last one committed in the shared archive, so a failover
 * neither skips nor repeats a change.
 */
export async function startElectedMirror(
  store: EventStore,
  flags: ElectedMirrorFlags,
  deps: { logger: Logger; registry: Registry; onArchived?: MirrorOptions['onArchived'] | undefined; alsoWhileLeading?: () => Promise<LeaderTask> },
): Promise<Elected> {
  const timings = await leaderTimings(flags);
  const cluster = await import('../../../cluster/index.js');
  const source = await connectSource(flags);
  const { logger, registry } = deps;
  const namespace = flags.leaderElectResourceNamespace !== undefined && flags.leaderElectResourceNamespace !== '' ? flags.leaderElectResourceNamespace : source.namespace;
  const name = flags.leaderElectResourceName !== undefined && flags.leaderElectResourceName !== '' ? flags.leaderElectResourceName : DEFAULT_LEASE_NAME;
  const elected = await startElected(
    {
      lease: cluster.restLeaseClient(source.rest),
      namespace,
      name,
      timings,
      logger,
      registry,
      gauge: { name: 'kevents_mirror_leader', help: 'Whether this replica holds the mirror Lease and runs the mirror (1) or stands by (0).' },
      what: 'the mirror',
      lostWhy: `leader election lost: the mirror stopped so that the new leader alone writes the archive${deps.alsoWhileLeading !== undefined ? ' and delivers the sinks' : ''}`,
    },
    async () => {
      const run = await startMirror(store, flags, { logger, registry, source, onArchived: deps.onArchived });
      let also: LeaderTask | undefined;
      try {
        also = await deps.alsoWhileLeading?.();
      } catch (e) {
        await run.stop();
        throw e;
      }
      return {
        readiness() {
          const m = run.mirror.readiness();
          const a = also?.readiness();
          return a === undefined || !m.ready || a.ready ? m : a;
        },
        async stop() {
          await also?.stop();
          await run.stop();
        },
      };
    },
  );
  return { ...elected, describe: `leader election on Lease ${elected.describe}` };
}
