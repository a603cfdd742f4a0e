import type { CoreEvent } from '../api/index.js';
import { LruCache } from '../internal/index.js';
import { AGGREGATE_MESSAGE_PREFIX } from './constants.js';
import { getSpamKey } from './event-keys.js';
import type { EventNamer } from './event-name.js';
import { getEventKey } from './event-keys.js';
import { formatTime } from './time-format.js';

/** AggregatorKeyFunc returns the aggregate key (events that may be combined) and the local key (what makes them distinct). */
export type AggregatorKeyFunc = (event: CoreEvent) => [aggregateKey: string, localKey: string];

/** AggregatorMessageFunc returns the message of a combined event. */
export type AggregatorMessageFunc = (event: CoreEvent) => string;

/** aggregateByReason groups by source, object, type, reason and reporting controller/instance; messages are the local key. */
export const aggregateByReason: AggregatorKeyFunc = (e) => {
  // The spam key (source, object, type) is the prefix of the aggregate key.
  return [getSpamKey(e) + (e.reason ?? '') + (e.reportingComponent ?? '') + (e.reportingInstance ?? ''), e.message ?? ''];
};

/** combinedMessage prefixes the latest message with `(combined from similar events): `. */
export const combinedMessage: AggregatorMessageFunc = (e) => AGGREGATE_MESSAGE_PREFIX + (e.message ?? '');

interface AggregateRecord {
  localKeys: Set<string>;
  lastMs: number;
}

/** EventAggregatorOptions configure an EventAggregator. */
export interface EventAggregatorOptions {
  cacheSize: number;
  keyFunc: AggregatorKeyFunc;
  messageFunc: AggregatorMessageFunc;
  maxEvents: number;
  maxIntervalSeconds: number;
  namer: EventNamer;
}

/**
 * EventAggregator collapses many distinct messages of one reason about one
 * object: within a rolling window, from the `maxEvents`-th distinct message on,
 * it returns a new combined event keyed by the aggregate key instead.
 */
export class EventAggregator {
  private readonly cache: LruCache<string, AggregateRecord>;

  constructor(private readonly o: EventAggregatorOptions) {
    this.cache = new LruCache({ maxEntries: o.cacheSize });
  }

  /** aggregate returns the event to pass on and its correlation key. */
  aggregate(event: CoreEvent, now: number): { event: CoreEvent; key: string; combined: boolean } {
    const [aggregateKey, localKey] = this.o.keyFunc(event);
    return this.aggregateKeyed(event, now, aggregateKey, localKey, getEventKey(event));
  }

  /** aggregateKeyed is `aggregate` with the keys already computed. */
  aggregateKeyed(event: CoreEvent, now: number, aggregateKey: string, localKey: string, eventKey: string): { event: CoreEvent; key: string; combined: boolean } {
    let record = this.cache.get(aggregateKey);
    // The window rolls: each similar event restarts it.
    if (record === undefined || now - record.lastMs > this.o.maxIntervalSeconds * 1000) {
      record = { localKeys: new Set(), lastMs: now };
    }
    record.localKeys.add(localKey);
    record.lastMs = now;
    this.cache.set(aggregateKey, record);
    if (record.localKeys.size < this.o.maxEvents) return { event, key: eventKey, combined: false };
    // Forget one message so the set stays just under the threshold (Go pops an arbitrary one; this pops the oldest).
    const oldest = record.localKeys.values().next().value as string;
    record.localKeys.delete(oldest);
    const t = formatTime(now);
    const combined: CoreEvent = {
      kind: 'Event',
      apiVersion: 'v1',
      metadata: { name: this.o.namer.name(event.involvedObject.name ?? '', now, false), namespace: event.metadata.namespace ?? '' },
      involvedObject: event.involvedObject,
      reason: event.reason ?? '',
      message: this.o.messageFunc(event),
      source: event.source ?? {},
      firstTimestamp: t,
      lastTimestamp: t,
      count: 1,
      type: event.type ?? '',
      eventTime: null,
      reportingComponent: '',
      reportingInstance: '',
    };
    return { event: combined, key: aggregateKey, combined: true };
  }
}
