export * from './types.js';
export * from './status.js';
export * from './field-selector.js';
export * from './label-selector.js';
