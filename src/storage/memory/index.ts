export * from './memory-event-store.js';
export type * from './options.js';
