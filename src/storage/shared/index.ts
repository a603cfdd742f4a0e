export * from './options.js';
export * from './event-json.js';
export * from './filter.js';
export * from './preconditions.js';
export * from './watch-hub.js';
export * from './ticker.js';
export * from './list-revision.js';
export * from './archive.js';
