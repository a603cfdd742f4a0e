export * from './sqlite-event-store.js';
export * from './page-objects.js';
export * from './options.js';
export * from './export-log.js';
export * from './follower-writes.js';
export * from './writer-thread.js';
