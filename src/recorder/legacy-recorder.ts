import type { CoreEvent } from '../api/index.js';
import type { Logger } from '../internal/index.js';
import type { FieldWarner } from './event-checks.js';
import { acceptedReference, acceptedType, recordSafely } from './record-checks.js';
import { formatTime } from './time-format.js';
import type { LegacyEventInput, LegacyEventRecorder, RecorderCounters } from './types.js';

/** LegacyPipeline is the side of the legacy broadcaster a recorder feeds. */
export interface LegacyPipeline {
  readonly closed: boolean;
  readonly counters: RecorderCounters;
  readonly logger: Logger;
  readonly warner: FieldWarner;
  now(): number;
  /** submit hands one event to the correlator. */
  submit(event: CoreEvent): void;
}

/**
 * createLegacyEventRecorder returns a core/v1 recorder (client-go tools/record):
 * events carry `source`, first/last timestamps and `count`, no eventTime, and
 * reportingComponent/reportingInstance copied from the source.
 */
export function createLegacyEventRecorder(pipeline: LegacyPipeline, source: { component: string; host?: string }): LegacyEventRecorder {
  const src = source.host ? { component: source.component, host: source.host } : { component: source.component };
  return {
    event(input: LegacyEventInput): void {
      recordSafely(pipeline.logger, () => {
        const ref = acceptedReference(pipeline, input.reason, input.involvedObject);
        if (ref === undefined || !acceptedType(pipeline, input.type)) return;
        const message = input.message ?? '';
        pipeline.warner.check({ reason: input.reason, note: message, noteField: 'message' });
        pipeline.counters.recorded++;
        const now = pipeline.now();
        const t = formatTime(now);
        // The name is made by the correlator, and only for an event it has not seen: repeats keep the first name.
        const metadata: CoreEvent['metadata'] = { name: '', namespace: ref.namespace || 'default' };
        if (input.annotations !== undefined) metadata.annotations = { ...input.annotations };
        pipeline.submit({
          kind: 'Event',
          apiVersion: 'v1',
          metadata,
          involvedObject: ref,
          reason: input.reason,
          message,
          source: src,
          firstTimestamp: t,
          lastTimestamp: t,
          count: 1,
          type: input.type,
          eventTime: null,
          reportingComponent: src.component,
          reportingInstance: source.host ?? '',
        });
      });
    },
  };
}
