export * from './clock.js';
export * from './lru.js';
export * from './token-bucket.js';
export * from './bounded-queue.js';
export * from './backoff.js';
export * from './logger.js';
export * from './cjs.js';
export * from './read-ahead.js';
