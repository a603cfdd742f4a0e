export * from './errors.js';
export * from './event-store.js';
export { activeIn, DEFAULT_HISTORY_WINDOW_SECONDS, occurrenceCursor } from './shared/index.js';
export * from './archive-store.js';
export * from './any-of.js';
export * from './search/index.js';
export type * from './export-log.js';
export type * from './lease-table.js';
