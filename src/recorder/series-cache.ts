import type { EventsV1Event } from '../api/index.js';
import { LruCache } from '../internal/index.js';
import { formatMicroTime } from './time-format.js';

/** SeriesEntry is the cached state of one isomorphic events.k8s.io/v1 event. */
export interface SeriesEntry {
  /** event is the first occurrence as created (no series). */
  event: EventsV1Event;
  eventTimeMs: number;
  /** count is 1 for a singleton, else the series count. */
  count: number;
  lastObservedMs: number;
  /** version changes on every occurrence, so a flush can tell whether the entry moved under it. */
  version: number;
  /** queuedCount is the series count last handed to a write. */
  queuedCount: number;
}

/** seriesSnapshot is the event to write for an entry: the first occurrence plus its current series. */
export function seriesSnapshot(entry: SeriesEntry): EventsV1Event {
  if (entry.count < 2) return { ...entry.event };
  return { ...entry.event, series: { count: entry.count, lastObservedTime: formatMicroTime(entry.lastObservedMs) } };
}

/** MISS is what `observe` returns for a key it has not seen. */
export const MISS: unique symbol = Symbol('miss');

/** SeriesCacheOptions configure a SeriesCache. */
export interface SeriesCacheOptions {
  maxEntries: number;
  /** onEvict receives a series pushed out by the bound while its latest count is unwritten. */
  onEvictUnwritten: (entry: SeriesEntry) => void;
}

/**
 * SeriesCache implements client-go tools/events' series rule per isomorphic key:
 * the first occurrence is created; the second starts a series and is written
 * at once; later ones only count in memory until the periodic flushes. It is an
 * LRU so memory stays bounded however many objects emit.
 */
export class SeriesCache {
  private readonly cache: LruCache<string, SeriesEntry>;

  constructor(options: SeriesCacheOptions) {
    this.cache = new LruCache<string, SeriesEntry>({
      maxEntries: options.maxEntries,
      onEvict: (_key, entry) => {
        if (entry.count >= 2 && entry.count > entry.queuedCount) options.onEvictUnwritten(entry);
      },
    });
  }

  get size(): number {
    return this.cache.size;
  }

  /**
   * observe counts one occurrence of a known key and returns the event to write,
   * or undefined when the occurrence is only counted. It returns MISS for an
   * unknown key: the caller builds the event and calls `insert`.
   */
  observe(key: string, now: number): EventsV1Event | undefined | typeof MISS {
    const entry = this.cache.get(key);
    if (entry === undefined) return MISS;
    entry.version++;
    entry.lastObservedMs = now;
    if (entry.count >= 2) {
      entry.count++;
      return undefined;
    }
    entry.count = 2;
    entry.queuedCount = 2;
    return seriesSnapshot(entry);
  }

  /** insert caches the first occurrence of a key and returns the event to create. */
  insert(key: string, now: number, event: EventsV1Event): EventsV1Event {
    this.cache.set(key, { event, eventTimeMs: now, count: 1, lastObservedMs: now, version: 0, queuedCount: 0 });
    return { ...event };
  }

  /** entries lists [key, entry] pairs, least recently used first. */
  entries(): [string, SeriesEntry][] {
    return [...this.cache.entries()];
  }

  peek(key: string): SeriesEntry | undefined {
    return this.cache.peek(key);
  }

  /** deleteIfUnchanged removes an entry unless an occurrence arrived since `version`. */
  deleteIfUnchanged(key: string, version: number): boolean {
    const entry = this.cache.peek(key);
    if (entry === undefined || entry.version !== version) return false;
    return this.cache.delete(key);
  }
}
