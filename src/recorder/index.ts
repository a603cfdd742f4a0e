export type {
  EventBroadcaster,
  EventInput,
  EventRecorder,
  EventType,
  LegacyEventBroadcaster,
  LegacyEventInput,
  LegacyEventRecorder,
  ObjectLike,
  RecorderCounters,
  Referent,
  ShutdownOptions,
} from './types.js';
export type { CoreEventSink, EventSink, EventWriter, EventsV1EventSink, WriteOptions } from './event-sink.js';
export { createEventBroadcaster, type EventBroadcasterOptions } from './event-broadcaster.js';
export { createLegacyEventBroadcaster, type LegacyEventBroadcasterOptions } from './legacy-broadcaster.js';
export type { CorrelatorOptions } from './correlator.js';
export type { AggregatorKeyFunc, AggregatorMessageFunc } from './aggregator.js';
export type { SpamKeyFunc } from './spam-filter.js';
export { FakeRecorder, type FakeRecorderOptions, type RecordedEvent } from './fake-recorder.js';
export { checkEventFields, isValidEventType, type FieldProblem } from './event-checks.js';
export { getReference } from './reference.js';
export * from './constants.js';
export { MemoryEventSink, type Fault, type SinkCall } from './memory-sink.js';
