export * from './types.js';
export * from './status.js';
