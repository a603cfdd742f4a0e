import { readFile } from 'node:fs/promises';
import type { Metric, Registry } from 'prom-client';
import type { Logger } from '../../internal/index.js';
import { createEventMetrics, DEFAULT_EVENT_LABELS, followLog } from '../../metrics/index.js';
import type { EventMetrics, EventMetricsOptions, LogFollower } from '../../metrics/index.js';
import { CliError, UsageError } from '../errors.js';
import type { StorageSpec } from '../flags/storage.js';

/** EventMetricsRun is the event metrics of a running command, counting its archive's changes. */
export interface EventMetricsRun {
  metrics: EventMetrics;
  stop(): Promise<void>;
}

/** loadEventMetricsConfig reads `--event-metrics FILE`; `true` (the flag alone) is the defaults. */
export async function loadEventMetricsConfig(value: string | true): Promise<EventMetricsOptions> {
  if (value === true || value === '') return { labels: DEFAULT_EVENT_LABELS };
  let text: string;
  try {
    text = await readFile(value, 'utf8');
  } catch (e) {
    throw new CliError(`--event-metrics: cannot read ${value}: ${(e as Error).message}`, { cause: e });
  }
  // The config reader (and the export module's rules) load only for a config file.
  const { readEventMetricsConfig } = await import('./event-metrics-config.js');
  return readEventMetricsConfig(text, value);
}

/**
 * registerEventMetrics reads `--event-metrics [FILE]` and registers the event families on the
 * registry; what the command archives from then on is counted by calling `observe`.
 */
export async function registerEventMetrics(value: string | true, registry: Registry): Promise<EventMetrics> {
  const metrics = createEventMetrics(await loadEventMetricsConfig(value));
  // The registry only reads name, help, type and get() of what it holds.
  for (const c of metrics.collectables) registry.registerMetric(c as unknown as Metric);
  return metrics;
}

/**
 * startEventMetrics counts an archive that another writer fills (kevents export, kevents serve
 * without --mirror): it follows the archive's log from its head, so nothing already archived is
 * counted (docs/metrics.md, "Restarts"), and resolves once that starting position is read.
 */
export async function startEventMetrics(spec: StorageSpec, value: string | true, deps: { registry: Registry; logger: Logger }): Promise<EventMetricsRun> {
  if (spec.kind !== 'sqlite' && spec.kind !== 'postgres') {
    throw new UsageError(`--event-metrics counts the changes of an archive in SQLite (sqlite:PATH) or PostgreSQL (postgres://…); a ${spec.kind} store keeps no log of them`);
  }
  const metrics = await registerEventMetrics(value, deps.registry);
  const { openExportLog } = await import('./export-sinks.js');
  const log = await openExportLog(spec);
  const follower: LogFollower = followLog(log, metrics, { logger: deps.logger });
  await follower.started;
  return {
    metrics,
    async stop() {
      await follower.stop();
      await log.close();
    },
  };
}
