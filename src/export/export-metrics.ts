import type * as PromClient from 'prom-client';
import type { Registry } from 'prom-client';
import { requireCjs } from '../internal/index.js';

/** ExportMetrics are the per-sink series of the exporter (label `sink`). */
export interface ExportMetrics {
  sent: PromClient.Counter<'sink'>;
  failed: PromClient.Counter<'sink'>;
  retried: PromClient.Counter<'sink'>;
  deadLettered: PromClient.Counter<'sink'>;
  suppressed: PromClient.Counter<'sink'>;
}

/** SinkGauges is what the gauges read of each running sink when scraped. */
export interface SinkGauges {
  sinks(): { name: string; queueDepth(): Promise<number>; oldestUndeliveredSeconds(): Promise<number> }[];
}

/** createExportMetrics registers the exporter's metrics on a registry (a private one when none is given). */
export function createExportMetrics(registry: Registry | undefined, gauges: SinkGauges): ExportMetrics {
  const prom = requireCjs('prom-client') as typeof PromClient;
  const registers = [registry ?? new prom.Registry()];
  const counter = (name: string, help: string): PromClient.Counter<'sink'> =>
    new prom.Counter({ name: `kevents_export_${name}`, help, labelNames: ['sink'], registers });
  const gauge = (name: string, help: string, read: (s: ReturnType<SinkGauges['sinks']>[number]) => Promise<number>): void => {
    new prom.Gauge({
      name: `kevents_export_${name}`,
      help,
      labelNames: ['sink'],
      registers,
      async collect() {
        this.reset();
        for (const s of gauges.sinks()) this.set({ sink: s.name }, await read(s).catch(() => Number.NaN));
      },
    });
  };
  gauge('queue_depth', 'Changes in the archive the sink has not delivered yet (counted up to 1,000,000).', (s) => s.queueDepth());
  gauge('oldest_undelivered_age_seconds', 'Age of the oldest change the sink has not delivered (0 when none waits).', (s) => s.oldestUndeliveredSeconds());
  return {
    sent: counter('sent_total', 'Records the sink acknowledged.'),
    failed: counter('failed_total', 'Delivery attempts that failed.'),
    retried: counter('retried_total', 'Delivery attempts that were retries of a failed one.'),
    deadLettered: counter('dead_lettered_total', 'Records the sink refused until their attempts ran out, kept as dead letters in the archive.'),
    suppressed: counter('suppressed_total', 'Alert messages the rate limits held back.'),
  };
}
