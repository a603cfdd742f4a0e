export * from './conformance.js';
export * from './archive-conformance.js';
