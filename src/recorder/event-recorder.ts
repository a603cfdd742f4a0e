import type { EventsV1Event, ObjectReference } from '../api/index.js';
import type { Logger } from '../internal/index.js';
import type { FieldWarner } from './event-checks.js';
import type { EventNamer } from './event-name.js';
import { acceptedReference, acceptedType, recordSafely } from './record-checks.js';
import { getReference, referenceKey } from './reference.js';
import { formatMicroTime } from './time-format.js';
import type { EventInput, EventRecorder, RecorderCounters } from './types.js';

/** RecorderPipeline is the side of the broadcaster a recorder feeds. */
export interface RecorderPipeline {
  readonly closed: boolean;
  readonly counters: RecorderCounters;
  readonly logger: Logger;
  readonly warner: FieldWarner;
  readonly namer: EventNamer;
  now(): number;
  /** repeat counts an occurrence of a known key; false means the key is new. */
  repeat(key: string, now: number): boolean;
  /** first records the first occurrence of a key. */
  first(key: string, now: number, event: EventsV1Event): void;
}

/**
 * isomorphicKey is client-go's eventKey: type, action, reason, reporting
 * controller and instance, and the whole regarding and related references.
 * The note is not part of it: two events differing only in note are one series.
 */
export function isomorphicKey(
  head: string,
  type: string,
  action: string,
  reason: string,
  regarding: ObjectReference,
  related: ObjectReference | undefined,
): string {
  return `${type}\u0001${action}\u0001${reason}\u0001${head}\u0001${referenceKey(regarding)}\u0001${referenceKey(related)}`;
}

function sameRef(a: ObjectReference | undefined, b: ObjectReference | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return (
    a.kind === b.kind &&
    a.namespace === b.namespace &&
    a.name === b.name &&
    a.uid === b.uid &&
    a.apiVersion === b.apiVersion &&
    a.resourceVersion === b.resourceVersion &&
    a.fieldPath === b.fieldPath
  );
}

/**
 * KeyMemo remembers the key of the previous call. A call site that repeats an
 * event reuses the same key string, whose hash the engine has already computed,
 * instead of building and hashing a new one.
 */
class KeyMemo {
  private key = '';
  private type = '';
  private action = '';
  private reason = '';
  private regarding: ObjectReference | undefined;
  private related: ObjectReference | undefined;

  constructor(private readonly head: string) {}

  keyFor(type: string, action: string, reason: string, regarding: ObjectReference, related: ObjectReference | undefined): string {
    if (
      this.regarding !== undefined &&
      type === this.type &&
      action === this.action &&
      reason === this.reason &&
      sameRef(regarding, this.regarding) &&
      sameRef(related, this.related)
    ) {
      return this.key;
    }
    this.key = isomorphicKey(this.head, type, action, reason, regarding, related);
    this.type = type;
    this.action = action;
    this.reason = reason;
    this.regarding = regarding;
    this.related = related;
    return this.key;
  }
}

/** createEventRecorder returns an events.k8s.io/v1 recorder feeding `pipeline`. */
export function createEventRecorder(pipeline: RecorderPipeline, reportingController: string, reportingInstance: string): EventRecorder {
  const memo = new KeyMemo(`${reportingController}\u0001${reportingInstance}`);
  return {
    event(input: EventInput): void {
      recordSafely(pipeline.logger, () => {
        const regarding = acceptedReference(pipeline, input.reason, input.regarding);
        if (regarding === undefined) return;
        let related: ObjectReference | undefined;
        if (input.related !== undefined && input.related !== null) {
          const r = getReference(input.related);
          if (r instanceof Error) pipeline.logger.debug('Could not construct reference', { err: r });
          else related = r;
        }
        if (!acceptedType(pipeline, input.type)) return;
        const note = input.note ?? '';
        pipeline.warner.check({ reason: input.reason, action: input.action, note, noteField: 'note' });
        pipeline.counters.recorded++;
        const now = pipeline.now();
        const key = memo.keyFor(input.type, input.action, input.reason, regarding, related);
        if (!pipeline.repeat(key, now)) pipeline.first(key, now, makeEvent(pipeline, input, regarding, related, note, now, reportingController, reportingInstance));
      });
    },
  };
}

/** makeEvent builds a first occurrence as client-go's makeEvent: no series, no deprecated fields. */
function makeEvent(
  pipeline: RecorderPipeline,
  input: EventInput,
  regarding: ObjectReference,
  related: ObjectReference | undefined,
  note: string,
  now: number,
  reportingController: string,
  reportingInstance: string,
): EventsV1Event {
  const metadata: EventsV1Event['metadata'] = {
    name: pipeline.namer.name(regarding.name ?? '', now),
    namespace: regarding.namespace || 'default',
  };
  if (input.annotations !== undefined) metadata.annotations = { ...input.annotations };
  const event: EventsV1Event = {
    kind: 'Event',
    apiVersion: 'events.k8s.io/v1',
    metadata,
    eventTime: formatMicroTime(now),
    reportingController,
    reportingInstance,
  };
  if (input.action) event.action = input.action;
  if (input.reason) event.reason = input.reason;
  event.regarding = regarding;
  if (related !== undefined) event.related = related;
  if (note) event.note = note;
  event.type = input.type;
  return event;
}
