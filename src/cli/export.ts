import { Registry, collectDefaultMetrics } from 'prom-client';
import { createConsoleLogger } from '../internal/index.js';
import type { LogLevel } from '../internal/index.js';
import { UsageError } from './errors.js';
import type { EventMetricsRun } from './event-metrics.js';
import { startExport } from './export-sinks.js';
import type { ExportRun } from './export-sinks.js';
import { listenHealth } from './health-server.js';
import type { CliIO } from './run.js';
import { parseListen } from './serve.js';
import { describeStorage, parseStorageSpec } from './storage-spec.js';
import { untilSignal } from './until-signal.js';

/** ExportFlags are the flags of `kevents export`. */
export interface ExportFlags {
  /** config is the export config; without it (and with --event-metrics) the command only counts. */
  config?: string;
  from: string;
  listen: string;
  logLevel: string;
  /** eventMetrics counts the archive's events on /metrics: true for the defaults, or a config file (docs/metrics.md). */
  eventMetrics?: string | true;
}

/** runExport runs `kevents export` until SIGINT or SIGTERM; SIGHUP reloads the config. */
export async function runExport(flags: ExportFlags, io: CliIO): Promise<void> {
  if ((flags.config === undefined || flags.config === '') && flags.eventMetrics === undefined) {
    throw new UsageError('say what to do with the archive: --config FILE (sinks), --event-metrics [FILE] (Prometheus series), or both');
  }
  const config = flags.config !== undefined && flags.config !== '' ? flags.config : undefined;
  const spec = parseStorageSpec(flags.from);
  const { host, port } = parseListen(flags.listen);
  const level = flags.logLevel as LogLevel;
  if (!['error', 'warn', 'info', 'debug'].includes(level)) throw new UsageError('--log-level must be error, warn, info or debug');
  const logger = createConsoleLogger({ level, stream: io.stderr });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'kevents_' });
  let counting: EventMetricsRun | undefined;
  if (flags.eventMetrics !== undefined) {
    const { startEventMetrics } = await import('./event-metrics.js');
    counting = await startEventMetrics(spec, flags.eventMetrics, { registry, logger });
  }
  let run: ExportRun | undefined;
  try {
    if (config !== undefined) run = await startExport(spec, config, { logger, registry, flag: '--from' });
  } catch (e) {
    await counting?.stop();
    throw e;
  }
  let health;
  try {
    health = await listenHealth({ host, port, registry, checks: () => (run !== undefined ? [{ name: 'export', check: () => run.exporter.readiness() }] : []) });
  } catch (e) {
    await run?.stop();
    await counting?.stop();
    throw e;
  }
  io.stdout.write(
    [
      run !== undefined
        ? `kevents export: ${describeStorage(spec)} -> ${run.sinks.join(', ')} (SIGHUP reloads ${config})`
        : `kevents export: ${describeStorage(spec)} -> event metrics only (no --config)`,
      `  metrics and readiness on ${health.origin} (/metrics, /readyz)`,
      '',
    ].join('\n'),
  );
  await untilSignal(logger);
  await run?.stop();
  await counting?.stop();
  await health.close();
}
