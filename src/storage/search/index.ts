export * from './search-query.js';
export * from './search-text.js';
export * from './search-words.js';
export * from './search-marks.js';
export * from './search-store.js';
export * from './scan-search.js';
