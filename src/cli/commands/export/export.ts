// kevents export: flags (flags.ts) → options → validate → run.
import { Registry, collectDefaultMetrics } from 'prom-client';
import { createConsoleLogger } from '../../../internal/index.js';
import type { Logger, LogLevel } from '../../../internal/index.js';
import type { LeaseClient } from '../../../cluster/index.js';
import { startElected, leadershipLost } from '../../daemon/elected.js';
import type { LeaderTask } from '../../daemon/elected.js';
import { leaderTimings } from '../../flags/leader-elect.js';
import type { LeaderElectFlags } from '../../flags/leader-elect.js';
import { UsageError } from '../../errors.js';
import type { EventMetricsRun } from '../../daemon/event-metrics.js';
import { openLeaseTable, readExportConfig, startExport } from '../../daemon/export-sinks.js';
import type { ExportRun } from '../../daemon/export-sinks.js';
import { listenHealth } from '../../daemon/health-server.js';
import type { CliIO } from '../../io.js';
import { parseListen } from '../../flags/listen.js';
import { DEFAULT_STORAGE, describeStorage, parseStorageSpec, storageFlagValue } from '../../flags/storage.js';
import type { StorageSpec } from '../../flags/storage.js';
import { withStoragePassword } from '../../flags/storage-password.js';
import { untilSignal } from '../../daemon/until-signal.js';

/** ExportFlags are the flags of `kevents export`. */
export interface ExportFlags extends LeaderElectFlags {
  /** config is the export config; without it (and with --event-metrics) the command only counts. */
  config?: string;
  /** storage is the archive's URL (--storage; default DEFAULT_STORAGE). */
  storage?: string;
  /** from is --storage's older name. */
  from?: string;
  /** storagePasswordFile holds the password of a postgres:// --storage, which its URL then leaves out. */
  storagePasswordFile?: string;
  listen: string;
  logLevel: string;
  /** eventMetrics counts the archive's events on /metrics: true for the defaults, or a config file (docs/metrics.md). */
  eventMetrics?: string | true;
  leaderElect?: boolean;
  leaderElectResourceName?: string;
  leaderElectResourceNamespace?: string;
  /** kubeconfig, context and inCluster name the cluster whose Lease the replicas elect on (without them, a PostgreSQL archive's lease table). */
  kubeconfig?: string;
  context?: string;
  inCluster?: boolean;
}

/** DEFAULT_EXPORT_LEASE is the lease the replicas of one exporter elect their leader on. */
export const DEFAULT_EXPORT_LEASE = 'kevents-export';
/** DEFAULT_TABLE_LEASE_NAMESPACE is the namespace of a lease kept in the archive's lease table (it names no cluster namespace). */
const DEFAULT_TABLE_LEASE_NAMESPACE = 'kevents';

const given = (s: string | undefined): s is string => s !== undefined && s !== '';

/** LeaseSite is where the replicas' lease lives: its client, namespace, what to call it in messages, and what to close. */
interface LeaseSite {
  client: LeaseClient;
  namespace: string;
  describe: string;
  close(): Promise<void>;
}

/**
 * leaseSite picks where the exporters elect: a coordination.k8s.io Lease when a
 * cluster is named (or the process runs in one), else the lease table of a
 * PostgreSQL archive. An SQLite archive lives on one machine, where one
 * exporter is all there is.
 */
async function leaseSite(flags: ExportFlags, spec: StorageSpec, env: NodeJS.ProcessEnv): Promise<LeaseSite> {
  const namespaceFlag = given(flags.leaderElectResourceNamespace) ? flags.leaderElectResourceNamespace : undefined;
  if (given(flags.kubeconfig) || given(flags.context) || flags.inCluster === true || given(env.KUBERNETES_SERVICE_HOST)) {
    const { connectSource } = await import('../../flags/source.js');
    const cluster = await import('../../../cluster/index.js');
    const source = await connectSource({ kubeconfig: flags.kubeconfig, context: flags.context, inCluster: flags.inCluster }, env);
    const namespace = namespaceFlag ?? source.namespace;
    return { client: cluster.restLeaseClient(source.rest), namespace, describe: `Lease ${namespace}/`, close: () => Promise.resolve() };
  }
  if (spec.kind === 'postgres') {
    const { tableLeaseClient } = await import('./table-lease-client.js');
    const table = await openLeaseTable(spec);
    const namespace = namespaceFlag ?? DEFAULT_TABLE_LEASE_NAMESPACE;
    return { client: tableLeaseClient(table), namespace, describe: `the archive's lease ${namespace}/`, close: () => table.close() };
  }
  throw new UsageError(
    '--leader-elect needs a cluster to hold the Lease (--kubeconfig, --context or --in-cluster) or a PostgreSQL archive (--storage postgres://…) to hold the lock; an SQLite archive has one exporter',
  );
}

/** ExportOptions are the checked flags: the archive, where /metrics listens, and the log level. */
export interface ExportOptions {
  spec: StorageSpec;
  host: string;
  port: number;
  level: LogLevel;
}

/** exportOptions checks the flags, in the order their errors were always reported, before the archive is opened. */
export function exportOptions(flags: ExportFlags, warn: (line: string) => void): ExportOptions {
  if ((flags.config === undefined || flags.config === '') && flags.eventMetrics === undefined) {
    throw new UsageError('say what to do with the archive: --config FILE (sinks), --event-metrics [FILE] (Prometheus series), or both');
  }
  const storage = storageFlagValue(flags.storage, { flag: '--from', value: flags.from }, DEFAULT_STORAGE);
  const spec = withStoragePassword(parseStorageSpec(storage), { urlFlag: '--storage', file: flags.storagePasswordFile, warn });
  const { host, port } = parseListen(flags.listen);
  const level = flags.logLevel as LogLevel;
  if (!['error', 'warn', 'info', 'debug'].includes(level)) throw new UsageError('--log-level must be error, warn, info or debug');
  if (flags.leaderElect !== true && (given(flags.kubeconfig) || given(flags.context) || flags.inCluster === true)) {
    throw new UsageError('--kubeconfig, --context and --in-cluster name the cluster of the --leader-elect Lease: add --leader-elect');
  }
  return { spec, host, port, level };
}

/** runExport runs `kevents export` until SIGINT or SIGTERM; SIGHUP reloads the config. */
export async function runExport(flags: ExportFlags, io: CliIO): Promise<void> {
  const { spec, host, port, level } = exportOptions(flags, (line) => io.stderr.write(`${line}\n`));
  const logger = createConsoleLogger({ level, stream: io.stderr });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'kevents_' });
  const deps = { logger, registry };
  const work = flags.leaderElect === true ? await electedExport(flags, spec, io.env, deps) : await plainExport(flags, spec, deps);
  let health;
  try {
    health = await listenHealth({ host, port, registry, checks: () => [{ name: 'export', check: () => work.readiness() }] });
  } catch (e) {
    await work.stop();
    throw e;
  }
  io.stdout.write([`kevents export: ${describeStorage(spec)} -> ${work.describe}`, `  metrics and readiness on ${health.origin} (/metrics, /readyz)`, ''].join('\n'));
  const lost = await Promise.race([untilSignal(logger).then(() => undefined), ...(work.lost !== undefined ? [work.lost] : [])]);
  await work.stop();
  await health.close();
  if (lost !== undefined) {
    throw leadershipLost(lost);
  }
}

/** ExportWork is the exporter as runExport runs it: always, or while this replica leads. */
interface ExportWork extends LeaderTask {
  describe: string;
  lost?: Promise<string>;
}

/** startWork starts what the flags ask of the archive: the sinks of --config, the series of --event-metrics, or both. */
async function startWork(flags: ExportFlags, spec: StorageSpec, deps: { logger: Logger; registry: Registry }): Promise<LeaderTask> {
  let counting: EventMetricsRun | undefined;
  if (flags.eventMetrics !== undefined) {
    const { startEventMetrics } = await import('../../daemon/event-metrics.js');
    counting = await startEventMetrics(spec, flags.eventMetrics, deps);
  }
  let run: ExportRun | undefined;
  try {
    if (given(flags.config)) run = await startExport(spec, flags.config, { ...deps, flag: '--storage' });
  } catch (e) {
    await counting?.stop();
    throw e;
  }
  return {
    readiness: () => run?.exporter.readiness() ?? { ready: true, message: 'counting' },
    async stop() {
      await run?.stop();
      await counting?.stop();
    },
  };
}

/** what says what the work delivers, for the banner. */
async function what(flags: ExportFlags): Promise<string> {
  if (!given(flags.config)) return 'event metrics only (no --config)';
  const config = await readExportConfig(flags.config);
  return `${config.sinks.map((s) => s.name).join(', ')}${flags.eventMetrics !== undefined ? ' and event metrics' : ''} (SIGHUP reloads ${flags.config})`;
}

async function plainExport(flags: ExportFlags, spec: StorageSpec, deps: { logger: Logger; registry: Registry }): Promise<ExportWork> {
  const describe = await what(flags);
  return { describe, ...(await startWork(flags, spec, deps)) };
}

/**
 * electedExport delivers the sinks (and counts the event metrics) only while
 * this replica holds the lease: the next leader resumes from the positions the
 * last one committed in the archive, and the sinks' own guards against a
 * redelivered batch (the read-back of `delivered`, record ids) cover the batch
 * that was in flight. A standby counts nothing, so the replicas' series never
 * add up to twice the events.
 */
async function electedExport(flags: ExportFlags, spec: StorageSpec, env: NodeJS.ProcessEnv, deps: { logger: Logger; registry: Registry }): Promise<ExportWork> {
  const timings = await leaderTimings(flags);
  // A standby that would only find a broken config once it leads would then give the lease up: check it now.
  const describe = await what(flags);
  const site = await leaseSite(flags, spec, env);
  const name = given(flags.leaderElectResourceName) ? flags.leaderElectResourceName : DEFAULT_EXPORT_LEASE;
  let elected;
  try {
    elected = await startElected(
      {
        lease: site.client,
        namespace: site.namespace,
        name,
        timings,
        ...deps,
        gauge: { name: 'kevents_export_leader', help: 'Whether this replica holds the export lease and delivers the sinks (1) or stands by (0).' },
        what: 'the sinks',
        lostWhy: 'leader election lost: the sinks stopped so that the new leader alone delivers them',
      },
      () => startWork(flags, spec, deps),
    );
  } catch (e) {
    await site.close();
    throw e;
  }
  return {
    describe: `${describe} while leading on ${site.describe}${elected.describe}`,
    lost: elected.lost,
    readiness: () => elected.readiness(),
    async stop() {
      await elected.stop();
      await site.close();
    },
  };
}
