import { Registry, collectDefaultMetrics } from 'prom-client';
import { KubeConnection, RestClient, UrlConnection, createEventsClient, loadKubeConfig, namespaceOf } from '../client/index.js';
import type { EventsClient } from '../client/index.js';
import { createConsoleLogger, realClock } from '../internal/index.js';
import type { LogLevel, Logger } from '../internal/index.js';
import { ClusterNameTaken, KUBE_SYSTEM, bindSourceCluster, createMirror, sourceClusterUID, startRetention } from '../mirror/index.js';
import type { Mirror, MirrorOptions, Readiness, Retention } from '../mirror/index.js';
import { isArchiveStore } from '../storage/index.js';
import type { ArchiveStore, EventStore } from '../storage/index.js';
import type { ExportRun } from './export-sinks.js';
import { listenHealth } from './health-server.js';
import { untilSignal } from './until-signal.js';
import { validateClusterName } from './cluster-flag.js';
import { CliError, UsageError } from './errors.js';
import { parseGoDuration } from './go-duration.js';
import { parseSize } from './sizes.js';
import type { CliIO } from './run.js';
import { parseListen } from './serve.js';
import { describeStorage, openStore, parseStorageSpec } from './storage-spec.js';

/** MirrorFlags are the flags of `kevents mirror`. */
export interface MirrorFlags {
  kubeconfig?: string;
  context?: string;
  source?: string;
  to: string;
  cluster?: string;
  retention?: string[];
  maxSize?: string;
  /** cacheSize is the SQLite page cache in MiB. */
  cacheSize: string;
  listen: string;
  logLevel: string;
  /** sinks is an export config: the archive's changes are delivered to its sinks (docs/export.md). */
  sinks?: string;
  /** eventMetrics counts the archived events on /metrics: true for the defaults, or a config file (docs/metrics.md). */
  eventMetrics?: string | true;
  /** inCluster reads the source from the pod's service account (the default in a pod without other source flags). */
  inCluster?: boolean;
  leaderElect?: boolean;
  leaderElectLeaseDuration?: string;
  leaderElectRenewDeadline?: string;
  leaderElectRetryPeriod?: string;
  leaderElectResourceName?: string;
  leaderElectResourceNamespace?: string;
}

/** SourceFlags say where a mirror reads from: a URL, or a kubeconfig and context. */
export interface SourceFlags {
  source?: string | undefined;
  kubeconfig?: string | undefined;
  context?: string | undefined;
  inCluster?: boolean | undefined;
}

/** SourceConnection is how a mirror reaches its source: the events client, a REST client for other APIs, and the namespace it runs in. */
export interface SourceConnection {
  client: EventsClient;
  rest: RestClient;
  server: string;
  /** namespace is the in-cluster namespace, or the kubeconfig context's, else `default`. */
  namespace: string;
  /** kind says how the source was given; `context` is the kubeconfig context's name. */
  kind: 'url' | 'in-cluster' | 'kubeconfig';
  context?: string;
}

const given = (v: string | undefined): v is string => v !== undefined && v !== '';

/**
 * connectSource resolves the source flags: `--source URL` (no credentials), a
 * kubeconfig and context, or the pod's service account (`--in-cluster`, and the
 * default in a pod when no other source is given, as client-go's clients do).
 */
export async function connectSource(flags: SourceFlags, env: NodeJS.ProcessEnv = process.env): Promise<SourceConnection> {
  const hasSource = given(flags.source);
  const hasKubeconfig = given(flags.kubeconfig) || given(flags.context);
  if ([hasSource, hasKubeconfig, flags.inCluster === true].filter(Boolean).length > 1) {
    throw new UsageError('give one of --source URL, --kubeconfig/--context and --in-cluster');
  }
  const userAgent = 'kevents-mirror';
  if (hasSource) {
    // A URL source needs no kubeconfig, so @kubernetes/client-node is never loaded (a third of the process's memory).
    const server = sourceOrigin(flags.source!);
    const connection = new UrlConnection(server);
    return { client: createEventsClient({ connection, userAgent }), rest: new RestClient(connection, { userAgent }), server, namespace: 'default', kind: 'url' };
  }
  if (flags.inCluster === true || (!hasKubeconfig && given(env.KUBERNETES_SERVICE_HOST))) {
    const { inClusterConfig, InClusterConnection } = await import('../cluster/index.js');
    let config;
    try {
      config = inClusterConfig({ env });
    } catch (e) {
      throw new CliError(`--in-cluster: ${(e as Error).message}`, { cause: e });
    }
    const connection = new InClusterConnection(config);
    return {
      client: createEventsClient({ connection, userAgent }),
      rest: new RestClient(connection, { userAgent }),
      server: config.server.origin,
      namespace: config.namespace,
      kind: 'in-cluster',
    };
  }
  const kubeConfig = await loadKubeConfig({ kubeconfig: flags.kubeconfig, context: flags.context });
  const connection = new KubeConnection(kubeConfig);
  return {
    client: createEventsClient({ connection, userAgent }),
    rest: new RestClient(connection, { userAgent }),
    server: kubeConfig.getCurrentCluster()?.server ?? '',
    namespace: namespaceOf(kubeConfig),
    kind: 'kubeconfig',
    context: kubeConfig.getCurrentContext(),
  };
}

/** RetentionFlags are `--retention` (repeatable: one default and any per-cluster `NAME=DURATION`) and `--max-size`. */
export interface RetentionFlags {
  retention?: string | string[] | undefined;
  maxSize?: string | undefined;
}

/** RetentionLimits are the parsed retention flags. */
export interface RetentionLimits {
  maxAgeMs?: number;
  clusterMaxAgeMs?: Record<string, number>;
  maxBytes?: number;
}

/**
 * parseRetention reads `--retention` and `--max-size` (both optional). Each
 * `--retention` is a duration (every cluster without one of its own, and local
 * writes) or `NAME=DURATION` (only what was archived from cluster NAME).
 */
export function parseRetention(flags: RetentionFlags): RetentionLimits {
  const out: RetentionLimits = {};
  const values = typeof flags.retention === 'string' ? [flags.retention] : (flags.retention ?? []);
  for (const value of values.filter((v) => v !== '')) {
    const eq = value.indexOf('=');
    const cluster = eq < 0 ? undefined : validateClusterName(value.slice(0, eq), 'cluster name in --retention');
    let ms: number;
    try {
      ms = parseGoDuration(value.slice(eq + 1));
    } catch (e) {
      throw new UsageError(`--retention ${value}: ${(e as Error).message}`);
    }
    if (cluster === undefined) {
      if (out.maxAgeMs !== undefined) throw new UsageError(`--retention ${value}: a default retention is given twice`);
      out.maxAgeMs = ms;
    } else {
      out.clusterMaxAgeMs ??= {};
      if (out.clusterMaxAgeMs[cluster] !== undefined) throw new UsageError(`--retention ${value}: cluster ${cluster} is given twice`);
      out.clusterMaxAgeMs[cluster] = ms;
    }
  }
  if (flags.maxSize !== undefined && flags.maxSize !== '') out.maxBytes = parseSize(flags.maxSize);
  return out;
}

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

/** sourceOrigin is the origin of `--source` (the checkpoint's id without --cluster, so it must not change between runs). */
function sourceOrigin(source: string): string {
  try {
    return new URL(source).origin;
  } catch {
    throw new CliError(`invalid --source ${JSON.stringify(source)}: use a URL such as http://127.0.0.1:8080`);
  }
}

/** startStoreRetention runs retention over a store's occurrences and events without a mirror (`kevents serve --retention`). */
export function startStoreRetention(store: EventStore, flags: RetentionFlags, logger: Logger): Retention {
  if (!isArchiveStore(store)) throw new CliError('--retention and --max-size need a storage backend with an archive: use sqlite:, postgres:// or memory:');
  return startRetention(store, { ...parseRetention(flags), clock: realClock, logger });
}

/** runMirror runs `kevents mirror` until SIGINT or SIGTERM. */
export async function runMirror(flags: MirrorFlags, io: CliIO): Promise<void> {
  if (!given(flags.source) && !given(flags.kubeconfig) && !given(flags.context) && flags.inCluster !== true && !given(io.env.KUBERNETES_SERVICE_HOST)) {
    throw new UsageError('say where to mirror from: --source URL, --kubeconfig PATH [--context NAME], or --in-cluster');
  }
  const spec = parseStorageSpec(flags.to);
  const { host, port } = parseListen(flags.listen);
  parseRetention(flags);
  const level = flags.logLevel as LogLevel;
  if (!['error', 'warn', 'info', 'debug'].includes(level)) throw new UsageError('--log-level must be error, warn, info or debug');
  const logger = createConsoleLogger({ level, stream: io.stderr });
  const cacheMiB = Number(flags.cacheSize);
  if (!Number.isInteger(cacheMiB) || cacheMiB < 1 || cacheMiB > 65536) throw new UsageError(`--cache-size must be a whole number of MiB from 1 to 65536, not ${JSON.stringify(flags.cacheSize)}`);
  const store = await openStore(spec, { clock: realClock, logger, sqliteCacheMiB: cacheMiB });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'kevents_' });
  let run: { readiness(): Readiness; stop(): Promise<void>; lost?: Promise<string>; source: string; cluster?: string | undefined };
  // The mirror tells the event metrics what each commit appended: what it archived already is never counted again.
  let onArchived: MirrorOptions['onArchived'];
  if (flags.eventMetrics !== undefined) {
    const { registerEventMetrics } = await import('./event-metrics.js');
    const metrics = await registerEventMetrics(flags.eventMetrics, registry);
    onArchived = (changes) => {
      for (const c of changes) metrics.observe(c);
    };
  }
  try {
    await store.ready();
    if (flags.leaderElect === true) {
      // With --sinks the leader alone delivers them too: every replica would otherwise deliver every change.
      const sinks = given(flags.sinks) ? flags.sinks : undefined;
      const { startElectedMirror } = await import('./mirror-leader.js');
      const alsoWhileLeading =
        sinks === undefined
          ? undefined
          : async () => {
              const { startExport } = await import('./export-sinks.js');
              const e = await startExport(spec, sinks, { logger, registry, flag: '--sinks' });
              return { readiness: () => e.exporter.readiness(), stop: () => e.stop() };
            };
      const elected = await startElectedMirror(store, flags, { logger, registry, onArchived, ...(alsoWhileLeading !== undefined ? { alsoWhileLeading } : {}) });
      run = { ...elected, readiness: () => elected.readiness(), source: elected.describe, cluster: flags.cluster };
    } else {
      const started = await startMirror(store, flags, { logger, registry, onArchived });
      run = { readiness: () => started.mirror.readiness(), stop: () => started.stop(), source: started.source, cluster: started.cluster };
    }
  } catch (e) {
        await store.close();
    throw e;
  }
  let exporting: ExportRun | undefined;
  if (flags.sinks !== undefined && flags.sinks !== '' && flags.leaderElect !== true) {
    try {
      const { startExport } = await import('./export-sinks.js');
      exporting = await startExport(spec, flags.sinks, { logger, registry, flag: '--sinks' });
    } catch (e) {
      await run.stop();
            await store.close();
      throw e;
    }
  }
  let health;
  try {
    health = await listenHealth({
      host,
      port,
      registry,
      checks: () => [{ name: 'mirror', check: () => run.readiness() }, ...(exporting !== undefined ? [{ name: 'export', check: () => exporting.exporter.readiness() }] : [])],
    });
  } catch (e) {
    await exporting?.stop();
    await run.stop();
        await store.close();
    throw e;
  }
  io.stdout.write(
    [
      `kevents mirror: ${run.source} -> ${describeStorage(spec)}${run.cluster !== undefined ? ` (cluster ${run.cluster})` : ''}`,
      `  metrics and readiness on ${health.origin} (/metrics, /readyz)`,
      '',
    ].join('\n'),
  );
  const lost = await Promise.race([untilSignal(logger).then(() => undefined), ...(run.lost !== undefined ? [run.lost] : [])]);
  await exporting?.stop();
  await run.stop();
    await health.close();
  await store.close();
  if (lost !== undefined) {
    const { leadershipLost } = await import('./mirror-leader.js');
    throw leadershipLost(lost);
  }
}
