export * from './search-store.js';
export * from './scan-search.js';
