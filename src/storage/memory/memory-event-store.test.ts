import { runArchiveStoreConformance, runEventStoreConformance } from '../testing/index.js';
import { MemoryEventStore } from './index.js';

runEventStoreConformance('memory', {
  create: (env) => Promise.resolve(new MemoryEventStore(env.options)),
  destroy: (store) => store.close(),
});

runArchiveStoreConformance('memory', {
  create: (env) => Promise.resolve(new MemoryEventStore(env.options)),
  destroy: (store) => store.close(),
});
