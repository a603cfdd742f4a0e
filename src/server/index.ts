export { createEventsServer, DEFAULT_EVENT_TTL_SECONDS } from './server.js';
export type { KeventsServer, ServerOptions, RequestGate, TlsPair } from './server.js';
export { KNOWN_KINDS, type KnownKind } from './discovery.js';
export type { ReadinessCheck } from './server.js';
export { parseTimelineQuery, type TimelineQuery, type TimelineReader } from './timeline-routes.js';
