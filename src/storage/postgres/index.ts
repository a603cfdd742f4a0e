export * from './postgres-event-store.js';
export * from './options.js';
