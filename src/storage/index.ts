export * from './errors.js';
export type * from './event-store.js';
