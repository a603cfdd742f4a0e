import type { CoreEvent, EventsV1Event } from '../api/index.js';

/** WriteOptions go with every sink call. */
export interface WriteOptions {
  /** signal aborts the request when the broadcaster's shutdown deadline passes. */
  signal?: AbortSignal;
}

/**
 * EventWriter writes events of one API. A call fails by throwing: an error that
 * carries a `Status` (`{ status: { kind: 'Status', code, … } }`) is the server's
 * answer; an error named `RequestConstructionError` is a request that could never
 * succeed; anything else counts as a transport failure and is retried.
 */
export interface EventWriter<T> {
  create(namespace: string, event: T, options?: WriteOptions): Promise<T>;
  update(namespace: string, event: T, options?: WriteOptions): Promise<T>;
  /** patch sends a strategic merge patch. */
  patch(namespace: string, name: string, patch: object, options?: WriteOptions): Promise<T>;
}

/**
 * EventSink is where recorders write: one writer per Event API. It is declared
 * here, by its consumer; the events REST client of kevents satisfies it, and so
 * can any fake. A broadcaster uses only the half of its API.
 */
export interface EventSink {
  coreV1: EventWriter<CoreEvent>;
  eventsV1: EventWriter<EventsV1Event>;
}

/** CoreEventSink is the part of an EventSink the legacy (core/v1) broadcaster needs. */
export type CoreEventSink = Pick<EventSink, 'coreV1'>;

/** EventsV1EventSink is the part of an EventSink the events.k8s.io/v1 broadcaster needs. */
export type EventsV1EventSink = Pick<EventSink, 'eventsV1'>;
