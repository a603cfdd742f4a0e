export * from './postgres-event-store.js';
export * from './options.js';
export * from './export-log.js';
export * from './lease-table.js';
