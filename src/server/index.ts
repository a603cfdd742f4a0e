export { createEventsServer, DEFAULT_EVENT_TTL_SECONDS } from './server.js';
export type { KeventsServer, ServerOptions, RequestGate, ServerTls, TlsPair } from './server.js';
export { KNOWN_KINDS, type KnownKind } from './discovery/discovery.js';
export { DEFAULT_RENDER_CACHE_MIB } from './render/rendered-versions.js';
export { DEFAULT_RENDER_CACHE_WARM_MS } from './render/render-warm.js';
export { SnapshotHistogram, createServerMetrics } from './http/metrics.js';
export type { ReadinessCheck } from './server.js';
export { parseTimelineQuery, type TimelineQuery, type TimelineReader } from './archive/timeline-routes.js';
export { parseIncidentQuery, type IncidentQuery, type IncidentReader } from './archive/incident-routes.js';
export {
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_HEADER_BYTES,
  DEFAULT_READ_HEADER_TIMEOUT_MS,
  DEFAULT_READ_TIMEOUT_MS,
  type ConnectionLimits,
} from './http/connection-limits.js';
