import type { CoreEvent } from '../api/index.js';
import { LruCache } from '../internal/index.js';
import { getEventKey } from './event-keys.js';

interface EventLog {
  count: number;
  firstTimestamp: string | null | undefined;
  name: string;
  resourceVersion: string | undefined;
}

/**
 * EventLogger is the legacy dedup stage: per correlation key it remembers the
 * event written last, so a repeat becomes a PATCH of `count`, `lastTimestamp`
 * and `message` on that same event.
 */
export class EventLogger {
  private readonly cache: LruCache<string, EventLog>;

  /** nameFor names an event seen for the first time that has no name yet (names are made only when needed). */
  constructor(
    cacheSize: number,
    private readonly nameFor?: (event: CoreEvent) => string,
  ) {
    this.cache = new LruCache({ maxEntries: cacheSize });
  }

  /** observe returns the event to write and, for a repeat, its strategic merge patch. */
  observe(event: CoreEvent, key: string): { event: CoreEvent; patch?: Record<string, unknown> } {
    const last = this.cache.get(key);
    if (last !== undefined && last.count > 0) {
      const metadata: CoreEvent['metadata'] = { name: last.name, namespace: event.metadata.namespace };
      if (event.metadata.annotations !== undefined) metadata.annotations = event.metadata.annotations;
      if (last.resourceVersion !== undefined) metadata.resourceVersion = last.resourceVersion;
      const out: CoreEvent = { ...event, metadata, firstTimestamp: last.firstTimestamp ?? null, count: last.count + 1 };
      // The two-way merge patch against the same event with count 0, lastTimestamp at the epoch and
      // no message: so count, lastTimestamp and (when there is one) message, in Go's key order.
      const patch: Record<string, unknown> = { count: out.count, lastTimestamp: out.lastTimestamp ?? null };
      if (out.message) patch.message = out.message;
      last.count = out.count ?? 0;
      last.firstTimestamp = out.firstTimestamp;
      return { event: out, patch };
    }
    if (!event.metadata.name && this.nameFor !== undefined) event.metadata.name = this.nameFor(event);
    this.cache.set(key, {
      count: event.count ?? 0,
      firstTimestamp: event.firstTimestamp,
      name: event.metadata.name ?? '',
      resourceVersion: event.metadata.resourceVersion,
    });
    return { event };
  }

  /**
   * updateState keeps the server's name, resourceVersion and firstTimestamp of a
   * written event. Writes trail observations here (the queue sits between them),
   * so a count already ahead in the cache is kept rather than set back.
   */
  updateState(server: CoreEvent): void {
    const key = getEventKey(server);
    const cached = this.cache.peek(key);
    const count = Math.max(server.count ?? 0, cached?.count ?? 0);
    this.cache.set(key, {
      count,
      firstTimestamp: server.firstTimestamp,
      name: server.metadata.name ?? '',
      resourceVersion: server.metadata.resourceVersion,
    });
  }
}
