// The checks both recorders (events.k8s.io's and core/v1's) make before an event enters their pipeline, in
// client-go's order and with its log lines: a shut-down broadcaster drops the event, an object that cannot be
// referenced or a type other than Normal and Warning rejects it. And the one rule of a record call: it never throws.
import type { ObjectReference } from '../api/index.js';
import type { Logger } from '../internal/index.js';
import { isValidEventType } from './event-checks.js';
import { getReference } from './reference.js';
import type { Referent } from './types.js';
import type { RecorderCounters } from './types.js';

/** CheckedPipeline is what the checks read of a recorder's pipeline. */
export interface CheckedPipeline {
  readonly closed: boolean;
  readonly counters: RecorderCounters;
  readonly logger: Logger;
}

/** acceptedReference is the reference of the event's object, or undefined (counted, logged) when the event stops here. */
export function acceptedReference(pipeline: CheckedPipeline, reason: string, object: Referent | null | undefined): ObjectReference | undefined {
  const { counters, logger } = pipeline;
  if (pipeline.closed) {
    counters.dropped++;
    logger.error('Unable to record event (will not retry!)', { reason, err: 'broadcaster is shut down' });
    return undefined;
  }
  const ref = getReference(object);
  if (ref instanceof Error) {
    counters.rejected++;
    logger.error('Could not construct reference, will not report event', { reason, err: ref });
    return undefined;
  }
  return ref;
}

/** acceptedType tells whether the event's type is Normal or Warning; any other is counted and logged. */
export function acceptedType(pipeline: CheckedPipeline, type: unknown): type is 'Normal' | 'Warning' {
  if (isValidEventType(type)) return true;
  pipeline.counters.rejected++;
  pipeline.logger.error('Unsupported event type', { eventType: type });
  return false;
}

/** recordSafely runs one record call: the recorder never throws at its caller, an event is not worth a crash. */
export function recordSafely(logger: Logger, record: () => void): void {
  try {
    record();
  } catch (err) {
    logger.error('Unable to record event (will not retry!)', { err });
  }
}
