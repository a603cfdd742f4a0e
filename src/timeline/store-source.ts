import type { CoreEvent, Occurrence, OccurrenceField } from '../api/index.js';
import { eventCluster } from '../api/index.js';
import { hasArchiveReads, hasReasonCounts } from '../storage/index.js';
import type { EventStore, IndexedField, ObservedRange, OccurrenceCursor } from '../storage/index.js';
import { sourceWindow } from './timeline-source.js';
import type { ReasonCountsQuery, SourceQuery, SourceReasonCount, TimelineSource } from './timeline-source.js';

/** STORE_PAGE is the page size read from a store: large enough to amortise a query, small enough to bound memory per step. */
const STORE_PAGE = 5000;

/** StoreTimelineSourceOptions say what to report and which clusters to read. */
export interface StoreTimelineSourceOptions {
  onProgress?: (read: number) => void;
  /**
   * clusters keeps what was archived from these clusters (the events by their
   * cluster label, the history by the cluster it was stamped with), as
   * `kevents timeline --cluster` reads them through the API; empty or undefined keeps all.
   */
  clusters?: readonly string[] | undefined;
}

/**
 * storeTimelineSource reads a timeline straight from an EventStore, using its
 * indexes for one object's events, and an archive-capable store's occurrences;
 * from any other store rows are spread from counts.
 */
export function storeTimelineSource(store: EventStore, options: StoreTimelineSourceOptions = {}): TimelineSource {
  let read = 0;
  const clusters = new Set(options.clusters ?? []);
  // The storage contract indexes neither labels nor events' clusters: a predicate selects them, and
  // the occurrences of one cluster by field (which a backend may index), of several by a predicate.
  const inClusters = (cluster: string | undefined): boolean => clusters.size === 0 || clusters.has(cluster ?? '');
  const occurrenceCluster: Partial<Record<OccurrenceField, string>> = clusters.size === 1 ? { cluster: [...clusters][0]! } : {};
  return {
    async listEvents(q: SourceQuery): Promise<CoreEvent[]> {
      const fieldEquals: Partial<Record<IndexedField, string>> = {};
      if (q.kind !== undefined) fieldEquals['involvedObject.kind'] = q.kind;
      if (q.name !== undefined) fieldEquals['involvedObject.name'] = q.name;
      const predicate = (e: CoreEvent): boolean =>
        (q.kind === undefined || e.involvedObject.kind === q.kind) && (q.name === undefined || e.involvedObject.name === q.name) && inClusters(eventCluster(e));
      const activeIn = sourceWindow(q);
      const out: CoreEvent[] = [];
      let startKey: string | undefined;
      for (;;) {
        const page = await store.list({
          ...(q.namespace !== undefined ? { namespace: q.namespace } : {}),
          fieldEquals,
          predicate,
          ...(activeIn !== undefined ? { activeIn } : {}),
          ...(q.anyOf !== undefined ? { anyOf: q.anyOf } : {}),
          limit: STORE_PAGE,
          maxExamined: STORE_PAGE,
          ...(startKey !== undefined ? { startKey } : {}),
        });
        out.push(...page.items);
        read += page.items.length;
        options.onProgress?.(read);
        if (page.lastKey === undefined) return out;
        startKey = page.lastKey;
        // A server builds timelines beside other requests: each page's work is followed by theirs.
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
    async listOccurrences(q: SourceQuery): Promise<Occurrence[] | undefined> {
      if (!hasArchiveReads(store)) return undefined;
      const fieldEquals: Partial<Record<OccurrenceField, string>> = { ...occurrenceCluster };
      if (q.kind !== undefined) fieldEquals['regarding.kind'] = q.kind;
      if (q.name !== undefined) fieldEquals['regarding.name'] = q.name;
      // The store maps when things happened to when they were observed, which bounds both ends of a closed window;
      // an open one relies on changes being seen no earlier than they happened: its start bounds the read, its end cannot.
      const observed: ObservedRange | null | undefined =
        q.since !== undefined && q.until !== undefined ? await store.observedRange({ sinceMs: q.since, untilMs: q.until }) : undefined;
      if (observed === null) return [];
      const out: Occurrence[] = [];
      let after: OccurrenceCursor | undefined;
      for (;;) {
        const page = await store.listOccurrences({
          ...(q.namespace !== undefined ? { namespace: q.namespace } : {}),
          ...(q.since !== undefined ? { sinceMicros: Math.min(q.since * 1000, observed?.sinceMicros ?? Infinity) } : {}),
          ...(observed !== undefined ? { untilMicros: observed.untilMicros } : {}),
          fieldEquals,
          ...(q.anyOf !== undefined ? { anyOf: q.anyOf } : {}),
          ...(q.events !== undefined ? { events: q.events } : {}),
          ...(clusters.size > 1 ? { predicate: (o: Occurrence) => inClusters(o.cluster) } : {}),
          limit: STORE_PAGE,
          ...(after !== undefined ? { after } : {}),
        });
        out.push(...page.items);
        read += page.items.length;
        options.onProgress?.(read);
        if (page.next === undefined) return out;
        after = page.next;
      }
    },
    async countReasons(q: ReasonCountsQuery): Promise<SourceReasonCount[] | undefined> {
      // The store counts every cluster's history together: a read of some clusters builds the timeline instead.
      if (!hasReasonCounts(store) || clusters.size > 0) return undefined;
      return store.countByReason({ ...(q.namespace !== undefined ? { namespace: q.namespace } : {}), sinceMs: q.since, untilMs: q.until });
    },
  };
}
