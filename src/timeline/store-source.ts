import type { CoreEvent } from '../api/index.js';
import type { EventStore, IndexedField } from '../storage/index.js';
import type { SourceQuery, TimelineSource } from './timeline-source.js';

/** STORE_PAGE is the page size read from a store: large enough to amortise a query, small enough to bound memory per step. */
const STORE_PAGE = 5000;

/**
 * storeTimelineSource reads a timeline straight from an EventStore, using its
 * indexes for one object's events. A store keeps no occurrence history of its
 * own, so rows are spread from counts.
 */
export function storeTimelineSource(store: EventStore, options: { onProgress?: (read: number) => void } = {}): TimelineSource {
  let read = 0;
  return {
    async listEvents(q: SourceQuery): Promise<CoreEvent[]> {
      const fieldEquals: Partial<Record<IndexedField, string>> = {};
      if (q.kind !== undefined) fieldEquals['involvedObject.kind'] = q.kind;
      if (q.name !== undefined) fieldEquals['involvedObject.name'] = q.name;
      const predicate = (e: CoreEvent): boolean => (q.kind === undefined || e.involvedObject.kind === q.kind) && (q.name === undefined || e.involvedObject.name === q.name);
      const out: CoreEvent[] = [];
      let startKey: string | undefined;
      for (;;) {
        const page = await store.list({
          ...(q.namespace !== undefined ? { namespace: q.namespace } : {}),
          fieldEquals,
          predicate,
          limit: STORE_PAGE,
          ...(startKey !== undefined ? { startKey } : {}),
        });
        out.push(...page.items);
        read += page.items.length;
        options.onProgress?.(read);
        if (page.lastKey === undefined) return out;
        startKey = page.lastKey;
      }
    },
    listOccurrences(): Promise<undefined> {
      return Promise.resolve(undefined);
    },
  };
}
