// kevents mirror: flags (flags.ts) → options → validate → run.
import { Registry, collectDefaultMetrics } from 'prom-client';
import { createConsoleLogger, realClock } from '../../../internal/index.js';
import type { LogLevel } from '../../../internal/index.js';
import type { MirrorOptions, Readiness } from '../../../mirror/index.js';
import type { ExportRun } from '../../daemon/export-sinks.js';
import { listenHealth } from '../../daemon/health-server.js';
import { startMirror } from '../../daemon/mirror.js';
import { untilSignal } from '../../daemon/until-signal.js';
import { UsageError } from '../../errors.js';
import type { CliIO } from '../../io.js';
import { parseListen } from '../../flags/listen.js';
import { parseRetention } from '../../flags/retention.js';
import { given } from '../../flags/source.js';
import { openStore } from '../../daemon/open-store.js';
import { describeStorage, parseStorageSpec, storageFlagValue } from '../../flags/storage.js';
import type { StorageSpec } from '../../flags/storage.js';
import { withStoragePassword } from '../../flags/storage-password.js';

/** MirrorFlags are the flags of `kevents mirror`. */
export interface MirrorFlags {
  kubeconfig?: string;
  context?: string;
  source?: string;
  /** storage is the archive's URL (--storage). */
  storage?: string;
  /** to is --storage's older name. */
  to?: string;
  /** storagePasswordFile holds the password of a postgres:// --storage, which its URL then leaves out. */
  storagePasswordFile?: string;
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

/** MirrorCommandOptions are the checked flags: the archive, where /metrics listens, the log level and the SQLite cache. */
export interface MirrorCommandOptions {
  spec: StorageSpec;
  host: string;
  port: number;
  level: LogLevel;
  cacheMiB: number;
}

/** mirrorOptions checks the flags, in the order their errors were always reported, before anything is opened. */
export function mirrorOptions(flags: MirrorFlags, env: NodeJS.ProcessEnv, warn: (line: string) => void): MirrorCommandOptions {
  if (!given(flags.source) && !given(flags.kubeconfig) && !given(flags.context) && flags.inCluster !== true && !given(env.KUBERNETES_SERVICE_HOST)) {
    throw new UsageError('say where to mirror from: --source URL, --kubeconfig PATH [--context NAME], or --in-cluster');
  }
  const storage = storageFlagValue(flags.storage, { flag: '--to', value: flags.to });
  const spec = withStoragePassword(parseStorageSpec(storage), { urlFlag: '--storage', file: flags.storagePasswordFile, warn });
  const { host, port } = parseListen(flags.listen);
  parseRetention(flags);
  const level = flags.logLevel as LogLevel;
  if (!['error', 'warn', 'info', 'debug'].includes(level)) throw new UsageError('--log-level must be error, warn, info or debug');
  const cacheMiB = Number(flags.cacheSize);
  if (!Number.isInteger(cacheMiB) || cacheMiB < 1 || cacheMiB > 65536) throw new UsageError(`--cache-size must be a whole number of MiB from 1 to 65536, not ${JSON.stringify(flags.cacheSize)}`);
  return { spec, host, port, level, cacheMiB };
}

/** runMirror runs `kevents mirror` until SIGINT or SIGTERM. */
export async function runMirror(flags: MirrorFlags, io: CliIO): Promise<void> {
  const { spec, host, port, level, cacheMiB } = mirrorOptions(flags, io.env, (line) => io.stderr.write(`${line}\n`));
  const logger = createConsoleLogger({ level, stream: io.stderr });
  const store = await openStore(spec, { clock: realClock, logger, sqliteCacheMiB: cacheMiB });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'kevents_' });
  let run: { readiness(): Readiness; stop(): Promise<void>; lost?: Promise<string>; source: string; cluster?: string | undefined };
  // The mirror tells the event metrics what each commit appended: what it archived already is never counted again.
  let onArchived: MirrorOptions['onArchived'];
  if (flags.eventMetrics !== undefined) {
    const { registerEventMetrics } = await import('../../daemon/event-metrics.js');
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
              const { startExport } = await import('../../daemon/export-sinks.js');
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
      const { startExport } = await import('../../daemon/export-sinks.js');
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
    const { leadershipLost } = await import('../../daemon/elected.js');
    throw leadershipLost(lost);
  }
}
