import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** ServerMetrics are the Prometheus metrics `kevents serve` exposes at /metrics. */
export interface ServerMetrics {
  registry: Registry;
  requests: Counter<'verb' | 'resource' | 'code'>;
  requestDuration: Histogram<'verb' | 'resource'>;
  watchers: Gauge;
  watchEvents: Counter<'type'>;
}

/** createServerMetrics makes a fresh registry (one per server, so tests can run several). */
export function createServerMetrics(): ServerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'kevents_' });
  return {
    registry,
    requests: new Counter({
      name: 'kevents_apiserver_request_total',
      help: 'Requests served, by verb, resource and HTTP code (like apiserver_request_total).',
      labelNames: ['verb', 'resource', 'code'],
      registers: [registry],
    }),
    requestDuration: new Histogram({
      name: 'kevents_apiserver_request_duration_seconds',
      help: 'Time to answer a request (watches: until the headers are sent).',
      labelNames: ['verb', 'resource'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    watchers: new Gauge({ name: 'kevents_watchers', help: 'Open watch streams.', registers: [registry] }),
    watchEvents: new Counter({
      name: 'kevents_watch_events_sent_total',
      help: 'Watch frames sent, by type.',
      labelNames: ['type'],
      registers: [registry],
    }),
  };
}
