import type { ObjectReference } from '../api/index.js';

/** EventType is the type of an event. Only these two are recorded: `kubectl events --types` can ask for nothing else. */
export type EventType = 'Normal' | 'Warning';

/**
 * ObjectLike is any Kubernetes object (a client-node `V1Pod`, a custom
 * resource): the recorder takes its kind, apiVersion, name, namespace, uid and
 * resourceVersion, as client-go's `GetReference` does.
 */
export interface ObjectLike {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
  };
}

/** Referent is what an event is about: an object, or a reference to one. */
export type Referent = ObjectLike | ObjectReference;

/** EventInput is one call of the events.k8s.io/v1 recorder. */
export interface EventInput {
  /** regarding is the object the event is about. */
  regarding: Referent;
  /** related is a second object involved, if any. */
  related?: Referent | null;
  type: EventType;
  /** reason is UpperCamelCase, at most 128 bytes: what happened, for machines. */
  reason: string;
  /** action is UpperCamelCase, at most 128 bytes: what was done or failed. */
  action: string;
  /** note is for humans, at most 1024 bytes. */
  note?: string;
  annotations?: Record<string, string>;
}

/** LegacyEventInput is one call of the core/v1 recorder. */
export interface LegacyEventInput {
  involvedObject: Referent;
  type: EventType;
  reason: string;
  message: string;
  annotations?: Record<string, string>;
}

/** EventRecorder records events.k8s.io/v1 events. `event` never throws and never waits. */
export interface EventRecorder {
  event(input: EventInput): void;
}

/** LegacyEventRecorder records core/v1 events. `event` never throws and never waits. */
export interface LegacyEventRecorder {
  event(input: LegacyEventInput): void;
}

/**
 * RecorderCounters count what happened to recorded events since the
 * broadcaster started.
 */
export interface RecorderCounters {
  /** recorded: calls accepted into the pipeline. */
  recorded: number;
  /** rejected: calls refused before the pipeline (bad type, no reference). */
  rejected: number;
  /** aggregated: occurrences folded into an existing event (a series, a count, a combined message). */
  aggregated: number;
  /** filtered: occurrences held back by the spam filter (their count still reaches the server later). */
  filtered: number;
  /** dropped: writes refused because the queue was full or the broadcaster shut down. */
  dropped: number;
  /** written: API writes (create or patch) that succeeded. */
  written: number;
  /** retried: attempts repeated after a transient failure. */
  retried: number;
  /** failed: writes given up (final Status, or out of tries). */
  failed: number;
}

/** ShutdownOptions tune `shutdown`. */
export interface ShutdownOptions {
  /** timeoutMs is how long to wait for queued writes (0 means the broadcaster's default). */
  timeoutMs?: number;
}

/** EventBroadcaster owns the pipeline from events.k8s.io/v1 recorders to the sink. */
export interface EventBroadcaster {
  /** newRecorder returns a recorder; reportingInstance defaults to `<reportingController>-<hostname>`. */
  newRecorder(options: { reportingController: string; reportingInstance?: string }): EventRecorder;
  /** counters is a snapshot of the counters. */
  readonly counters: RecorderCounters;
  /** shutdown stops accepting events, writes what is queued and the latest series counts, and resolves by the deadline. */
  shutdown(options?: ShutdownOptions): Promise<void>;
  /** idle resolves when no write is queued or in flight (for tests and orderly hand-offs). */
  idle(): Promise<void>;
}

/** LegacyEventBroadcaster owns the pipeline from core/v1 recorders through the correlator to the sink. */
export interface LegacyEventBroadcaster {
  newRecorder(options: { source: { component: string; host?: string } }): LegacyEventRecorder;
  readonly counters: RecorderCounters;
  shutdown(options?: ShutdownOptions): Promise<void>;
  /** idle resolves when no write is queued or in flight. */
  idle(): Promise<void>;
}
