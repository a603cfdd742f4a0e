import type { CommonStoreOptions } from '../shared/index.js';

/** MemoryEventStoreOptions configure a MemoryEventStore; everything is optional. */
export type MemoryEventStoreOptions = CommonStoreOptions;
