import { MemoryEventStore } from '../memory/index.js';
import type { EventStore } from '../event-store.js';
import { runSearchConformance } from '../testing/index.js';
import { scanSearch } from './scan-search.js';

/** withScan gives a store the search a scan answers, so the scan is held to the suite every backend is. */
function withScan(store: MemoryEventStore): EventStore {
  return Object.assign(store, { search: (request: Parameters<typeof scanSearch>[1]) => scanSearch(store, request) });
}

runSearchConformance('a scan over the memory store', {
  create: (env) => Promise.resolve(withScan(new MemoryEventStore(env.options))),
  destroy: (store) => store.close(),
});
