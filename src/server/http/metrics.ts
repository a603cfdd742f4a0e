import type { Metric, Registry } from 'prom-client';

/**
 * The server's own metrics are plain counters kept here, not prom-client
 * objects: prom-client (with the OpenTelemetry API it requires) takes about
 * 250 ms to load, more than the rest of the server, so it is loaded only when
 * /metrics is first scraped (or a caller asks for the registry). What was
 * counted before that is not lost: the registry reads these values when it renders.
 */

type Labels<L extends string> = Record<L, string>;

/** MetricValue is one sample in prom-client's collect shape. */
interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

/** Collectable is what prom-client's Registry reads from a registered metric. */
interface Collectable {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  aggregator: 'sum';
  get(): { name: string; help: string; type: string; aggregator: 'sum'; values: MetricValue[] };
}

/** LabelledCounter counts by label set (label values joined as the key: they never contain a NUL). */
export class LabelledCounter<L extends string> implements Collectable {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  private readonly values = new Map<string, { labels: Labels<L>; value: number }>();

  constructor(readonly name: string, readonly help: string, private readonly labelNames: readonly L[]) {}

  /** inc adds `by` (default 1) to the counter of `labels`. */
  inc(labels: Labels<L>, by = 1): void {
    const key = this.labelNames.map((n) => labels[n]).join('\0');
    const cur = this.values.get(key);
    if (cur !== undefined) cur.value += by;
    else this.values.set(key, { labels: { ...labels }, value: by });
  }

  get(): ReturnType<Collectable['get']> {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: [...this.values.values()].map((v) => ({ labels: v.labels, value: v.value })) };
  }
}

/** SimpleGauge is a gauge without labels. */
export class SimpleGauge implements Collectable {
  readonly type = 'gauge';
  readonly aggregator = 'sum';
  private value = 0;

  constructor(readonly name: string, readonly help: string) {}

  inc(): void {
    this.value++;
  }

  dec(): void {
    this.value--;
  }

  get(): ReturnType<Collectable['get']> {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: [{ labels: {}, value: this.value }] };
  }
}

/** LabelledHistogram is a cumulative histogram by label set, rendered like prom-client's. */
export class LabelledHistogram<L extends string> implements Collectable {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, { labels: Labels<L>; buckets: number[]; sum: number; count: number }>();

  constructor(readonly name: string, readonly help: string, private readonly labelNames: readonly L[], private readonly upperBounds: readonly number[]) {}

  /** observe records one value for `labels`. */
  observe(labels: Labels<L>, value: number): void {
    const key = this.labelNames.map((n) => labels[n]).join('\0');
    let s = this.series.get(key);
    if (s === undefined) {
      s = { labels: { ...labels }, buckets: this.upperBounds.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    const i = this.upperBounds.findIndex((b) => value <= b);
    if (i >= 0) s.buckets[i]!++;
    s.sum += value;
    s.count++;
  }

  get(): ReturnType<Collectable['get']> {
    const values: MetricValue[] = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.upperBounds.forEach((le, i) => {
        cumulative += s.buckets[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/** HistogramSnapshot is a cumulative histogram another part of the process keeps: each bucket's count (then the count past the last bound), the sum and the count. */
export interface HistogramSnapshot {
  counts: number[];
  sum: number;
  count: number;
}

/** SnapshotHistogram renders a histogram kept elsewhere (a store's), read at each scrape; nothing while `read` has none. */
export class SnapshotHistogram implements Collectable {
  readonly type = 'histogram';
  readonly aggregator = 'sum';

  constructor(readonly name: string, readonly help: string, private readonly upperBounds: readonly number[], private readonly read: () => HistogramSnapshot | undefined) {}

  get(): ReturnType<Collectable['get']> {
    const s = this.read();
    const values: MetricValue[] = [];
    if (s !== undefined) {
      let cumulative = 0;
      this.upperBounds.forEach((le, i) => {
        cumulative += s.counts[i] ?? 0;
        values.push({ metricName: `${this.name}_bucket`, labels: { le }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf' }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: {}, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: {}, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/** ServerMetrics are the Prometheus metrics `kevents serve` exposes at /metrics. */
export interface ServerMetrics {
  requests: LabelledCounter<'verb' | 'resource' | 'code'>;
  requestDuration: LabelledHistogram<'verb' | 'resource'>;
  watchers: SimpleGauge;
  watchEvents: LabelledCounter<'type'>;
  /** listRendered counts the versions a list rendered from storage rather than from the render cache, by who rendered them. */
  listRendered: LabelledCounter<'by'>;
  /** register adds a metric kept elsewhere (the store's) to those rendered, without loading prom-client before a scrape. */
  register(metric: SnapshotHistogram): void;
  /**
   * registry loads prom-client on first use and resolves with the registry that
   * renders these metrics and the process's default ones; others (the mirror's)
   * may register there too.
   */
  registry(): Promise<Registry>;
}

/** createServerMetrics makes a fresh set of metrics (one per server, so tests can run several). */
export function createServerMetrics(): ServerMetrics {
  const own = {
    requests: new LabelledCounter(
      'kevents_apiserver_request_total',
      'Requests served, by verb, resource and HTTP code (like apiserver_request_total).',
      ['verb', 'resource', 'code'] as const,
    ),
    requestDuration: new LabelledHistogram(
      'kevents_apiserver_request_duration_seconds',
      'Time to answer a request (watches: until the headers are sent).',
      ['verb', 'resource'] as const,
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    ),
    watchers: new SimpleGauge('kevents_watchers', 'Open watch streams.'),
    watchEvents: new LabelledCounter('kevents_watch_events_sent_total', 'Watch frames sent, by type.', ['type'] as const),
    listRendered: new LabelledCounter(
      'kevents_list_rendered_total',
      'List items and Table rows rendered from storage because the render cache did not hold them, by who rendered them: the request, a read-ahead of the next page, the warm at startup, or a write (the row of the version it stored, rendered after its answer).',
      ['by'] as const,
    ),
  };
  let loading: Promise<Registry> | undefined;
  const others: Collectable[] = [];
  return {
    ...own,
    register(metric) {
      // Before the registry loads, it takes the metric as it loads; after, the metric joins it.
      if (loading === undefined) others.push(metric);
      else void loading.then((registry) => registry.registerMetric(metric as unknown as Metric));
    },
    registry() {
      loading ??= import('prom-client').then(({ Registry, collectDefaultMetrics }) => {
        const registry = new Registry();
        collectDefaultMetrics({ register: registry, prefix: 'kevents_' });
        // The registry only reads name, help, type and get() of what it holds.
        for (const m of [...Object.values(own), ...others]) registry.registerMetric(m as unknown as Metric);
        return registry;
      });
      return loading;
    },
  };
}
