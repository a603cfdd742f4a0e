import type { Registry } from 'prom-client';
import { noopLogger, realClock } from '../internal/index.js';
import type { Clock, Logger } from '../internal/index.js';
import type { ExportLog } from '../storage/index.js';
import type { ExportConfig } from './config.js';
import { createExportMetrics } from './export-metrics.js';
import type { ExportMetrics } from './export-metrics.js';
import { SinkRunner } from './sink-runner.js';
import type { EventExplainer, ExportSink } from './types.js';

/** DEFAULT_POLL_INTERVAL_MS: an idle sink looks for new changes 5 times a second, well inside a 1 s delivery target. */
export const DEFAULT_POLL_INTERVAL_MS = 200;

/** ExporterOptions configure an exporter; zero values mean the defaults. */
export interface ExporterOptions {
  log: ExportLog;
  config: ExportConfig;
  clock?: Clock;
  logger?: Logger;
  /** registry receives the per-sink metrics. */
  registry?: Registry;
  env?: Record<string, string | undefined>;
  pollIntervalMs?: number;
  /** explain gives the alert policy's messages their `cause` (none without it). */
  explain?: EventExplainer;
}

/** Exporter delivers an archive's changes to the configured sinks until stopped. */
export interface Exporter {
  /** start begins every sink's loop (each resumes at its position in the archive). */
  start(): void;
  stop(): Promise<void>;
  /** reload replaces the config: every sink stops after its delivery in flight and resumes at its position under the new config. */
  reload(config: ExportConfig): Promise<void>;
  readiness(): { ready: boolean; message: string };
  readonly metrics: ExportMetrics;
}

/**
 * createExporter builds the sinks of a config (an error here, such as a missing
 * secret, is the config's, reported before anything starts) and returns the
 * exporter that runs them.
 */
export function createExporter(options: ExporterOptions): Exporter {
  let runners: SinkRunner[] = [];
  const metrics = createExportMetrics(options.registry, { sinks: () => runners });
  const clock = options.clock ?? realClock;
  const logger = options.logger ?? noopLogger;
  const build = (config: ExportConfig): SinkRunner[] => {
    const sinks: ExportSink[] = [];
    try {
      return config.sinks.map((cfg) => {
        const sink = cfg.sinkType.create(cfg.options, { logger, env: options.env ?? process.env });
        sinks.push(sink);
        return new SinkRunner({
          config: cfg,
          sink,
          route: config.route,
          log: options.log,
          metrics,
          clock,
          logger,
          pollIntervalMs: options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
          ...(options.explain !== undefined ? { explain: options.explain } : {}),
        });
      });
    } catch (e) {
      for (const s of sinks) void s.close().catch(() => undefined);
      throw e;
    }
  };
  runners = build(options.config);
  let started = false;
  return {
    metrics,
    start() {
      started = true;
      for (const r of runners) r.start();
    },
    async stop() {
      started = false;
      await Promise.all(runners.map((r) => r.stop()));
    },
    async reload(config) {
      const next = build(config);
      await Promise.all(runners.map((r) => r.stop()));
      runners = next;
      if (started) for (const r of runners) r.start();
    },
    readiness() {
      const failing = runners.map((r) => r.readiness()).filter((r) => !r.ready);
      return failing.length === 0 ? { ready: true, message: 'ok' } : { ready: false, message: failing.map((f) => f.message).join('; ') };
    },
  };
}
