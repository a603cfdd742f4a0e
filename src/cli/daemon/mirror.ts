// A mirror composed from command-line flags, and retention without one: what kevents mirror and
// kevents serve --mirror/--retention both run, kept below both commands.
import type { Registry } from 'prom-client';
import { realClock } from '../../internal/index.js';
import type { Logger } from '../../internal/index.js';
import { ClusterNameTaken, KUBE_SYSTEM, bindSourceCluster, createMirror, sourceClusterUID, startRetention } from '../../mirror/index.js';
import type { Mirror, MirrorOptions, Retention } from '../../mirror/index.js';
import { hasRetention, isArchiveStore } from '../../storage/index.js';
import type { ArchiveStore, EventStore } from '../../storage/index.js';
import { validateClusterName } from '../flags/cluster.js';
import { CliError } from '../errors.js';
import { parseRetention } from '../flags/retention.js';
import type { RetentionFlags } from '../flags/retention.js';
import { connectSource, given } from '../flags/source.js';
import type { SourceConnection, SourceFlags } from '../flags/source.js';

/** MirrorRun is a running mirror with its retention loop. */
export interface MirrorRun {
  mirror: Mirror;
  retention: Retention;
  /** source describes where the mirror reads from, for messages. */
  source: string;
  /** cluster is the name the mirror archives under, if any. */
  cluster?: string;
  stop(): Promise<void>;
}

/**
 * startMirror composes a mirror from command-line flags: the source client, the
 * checkpoint id (the cluster name, else the source URL) and the retention loop.
 */
export async function startMirror(
  store: EventStore,
  flags: SourceFlags & RetentionFlags & { cluster?: string | undefined },
  deps: { logger: Logger; registry?: Registry; source?: SourceConnection; onArchived?: MirrorOptions['onArchived'] | undefined },
): Promise<MirrorRun> {
  if (!isArchiveStore(store)) throw new CliError('this storage backend cannot hold an archive (occurrences and checkpoints): use sqlite:, postgres:// or memory:');
  const archive: ArchiveStore = store;
  const source = deps.source ?? (await connectSource(flags));
  const { client, server } = source;
  const identity = await sourceIdentity(archive, source, flags.cluster, deps.logger);
  const mirror = createMirror({
    source: client.coreV1,
    // The checkpoint keeps the key it had before names defaulted to the context: an archive resumes where it was.
    sourceId: given(flags.cluster) ? flags.cluster : server,
    store: archive,
    cluster: identity.cluster,
    clusterUID: identity.clusterUID,
    clock: realClock,
    logger: deps.logger,
    ...(deps.registry !== undefined ? { registry: deps.registry } : {}),
    ...(deps.onArchived !== undefined ? { onArchived: deps.onArchived } : {}),
  });
  const retention = startRetention(archive, { ...parseRetention(flags), clock: realClock, logger: deps.logger });
  const running = mirror.run();
  return {
    mirror,
    retention,
    source: server,
    ...(identity.cluster !== undefined ? { cluster: identity.cluster } : {}),
    async stop() {
      retention.stop();
      await mirror.stop();
      await running;
    },
  };
}

/**
 * sourceIdentity names the source's cluster (`--cluster`, else the kubeconfig
 * context's name; a pod's own cluster has no name it could know, and a URL
 * source keeps none, as before names existed) and, for a named cluster, binds
 * the name to its `kube-system` UID in the archive: a name bound to another
 * cluster is refused before anything is written.
 */
async function sourceIdentity(
  archive: ArchiveStore,
  source: SourceConnection,
  flag: string | undefined,
  logger: Logger,
): Promise<{ cluster?: string; clusterUID?: string }> {
  let cluster: string | undefined;
  if (given(flag)) cluster = validateClusterName(flag);
  else if (source.kind === 'in-cluster') throw new CliError('in a cluster, name it: give --cluster NAME (the name this cluster\'s events are archived and found under)');
  else if (source.kind === 'kubeconfig' && given(source.context)) cluster = validateClusterName(source.context);
  if (cluster === undefined) return {};
  let uid: string | undefined;
  try {
    uid = await sourceClusterUID(source.rest);
  } catch (e) {
    throw new CliError(`reading the source's identity (get namespaces ${KUBE_SYSTEM}): ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  if (uid === undefined) return { cluster };
  try {
    await bindSourceCluster(archive, { name: cluster, uid }, logger);
  } catch (e) {
    if (e instanceof ClusterNameTaken) throw new CliError(e.message, { cause: e });
    throw e;
  }
  return { cluster, clusterUID: uid };
}

/** startStoreRetention runs retention over a store's occurrences and events without a mirror (`kevents serve --retention`). */
export function startStoreRetention(store: EventStore, flags: RetentionFlags, logger: Logger): Retention {
  if (!hasRetention(store)) throw new CliError('--retention and --max-size need a storage backend with an archive: use sqlite:, postgres:// or memory:');
  return startRetention(store, { ...parseRetention(flags), clock: realClock, logger });
}
