export * from './conformance.js';
export * from './archive-conformance.js';
export * from './export-log-conformance.js';
export * from './search-conformance.js';
export * from './conformance-write.js';
export * from './conformance-list.js';
export * from './conformance-watch.js';
