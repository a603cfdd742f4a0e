export { createEventsServer, DEFAULT_EVENT_TTL_SECONDS } from './server.js';
export type { KeventsServer, ServerOptions } from './server.js';
