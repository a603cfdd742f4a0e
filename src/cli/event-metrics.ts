import { readFile } from 'node:fs/promises';
import type { Metric, Registry } from 'prom-client';
import { ConfigError, ConfigReader, fieldsOf, isConfigError, readRule } from '../export/index.js';
import type { Rule } from '../export/index.js';
import type { Logger } from '../internal/index.js';
import { createEventMetrics, DEFAULT_EVENT_LABELS, EVENT_LABEL_NAMES, followLog } from '../metrics/index.js';
import type { EventLabel, EventMetrics, EventMetricsOptions, LogFollower } from '../metrics/index.js';
import type { ExportLog } from '../storage/index.js';
import { CliError, UsageError } from './errors.js';
import { openExportLog } from './export-sinks.js';
import type { StorageSpec } from './storage-spec.js';

/** EventMetricsRun is the event metrics of a running command, counting its archive's changes. */
export interface EventMetricsRun {
  metrics: EventMetrics;
  stop(): Promise<void>;
}

/**
 * parseEventMetricsConfig reads an event metrics config (docs/metrics.md): `labels`, `match` and
 * `drop` rules in the routes' rule language, `maxSeries`, `idleAfter` and `compatibility`. Every
 * mistake is reported with its line and column.
 */
export function parseEventMetricsConfig(text: string, file = 'config'): EventMetricsOptions {
  const r = new ConfigReader(text);
  if (r.issues.length > 0) throw new ConfigError(file, r.issues);
  const o = r.object([], r.root ?? {}, ['labels', 'match', 'drop', 'maxSeries', 'idleAfter', 'compatibility']) ?? {};
  const options: EventMetricsOptions = {};
  if (o.labels !== undefined) {
    const labels: EventLabel[] = [];
    r.list(['labels'], o.labels).forEach((v, i) => {
      const l = r.string(['labels', i], v, { required: true, oneOf: EVENT_LABEL_NAMES });
      if (l === undefined) return;
      if (labels.includes(l as EventLabel)) r.fail(['labels', i], `${l} is listed twice`);
      else labels.push(l as EventLabel);
    });
    options.labels = labels;
  }
  const rules = (key: 'match' | 'drop'): Rule[] =>
    r.list([key], o[key]).flatMap((v, i) => {
      const rule = readRule(r, [key, i], v);
      return rule === undefined ? [] : [rule];
    });
  const match = rules('match');
  const drop = rules('drop');
  // As in a route: a change a drop rule matches is not counted; with match rules, only what one matches is.
  if (match.length > 0 || drop.length > 0) {
    options.filter = (c) => {
      // A mirror's change has no place in the log yet; the rules read none of those fields.
      const f = fieldsOf({ id: 0, observedMicros: 0, ...c });
      return !drop.some((rule) => rule.test(f)) && (match.length === 0 || match.some((rule) => rule.test(f)));
    };
  }
  const maxSeries = r.integer(['maxSeries'], o.maxSeries, { min: 1, max: 10_000_000 });
  if (maxSeries !== undefined) options.maxSeries = maxSeries;
  const idle = r.duration(['idleAfter'], o.idleAfter);
  if (idle !== undefined) options.idleAfterMs = idle;
  if (o.compatibility !== undefined) {
    r.list(['compatibility'], o.compatibility).forEach((v, i) => {
      if (r.string(['compatibility', i], v, { required: true, oneOf: ['caicloud'] }) === 'caicloud') options.caicloud = true;
    });
  }
  if (r.issues.length > 0) throw new ConfigError(file, r.issues);
  return options;
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
  try {
    return parseEventMetricsConfig(text, value);
  } catch (e) {
    if (isConfigError(e)) throw new CliError(`invalid event metrics config:\n${e.message}`, { cause: e });
    throw e;
  }
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
  let log: ExportLog;
  try {
    log = await openExportLog(spec);
  } catch (e) {
    throw new CliError((e as Error).message, { cause: e });
  }
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
