export * from './types.js';
export * from './status.js';
export * from './field-selector.js';
export * from './label-selector.js';
export * from './names.js';
export * from './object-meta.js';
export * from './validation.js';
