export * from './conformance.js';
export * from './archive-conformance.js';
export * from './export-log-conformance.js';
export * from './search-conformance.js';
