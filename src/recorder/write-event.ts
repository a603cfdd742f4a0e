import type { CoreEvent, EventsV1Event } from '../api/index.js';
import type { Logger } from '../internal/index.js';
import type { EventWriter } from './event-sink.js';
import type { AttemptResult } from './retry.js';
import type { RecorderCounters } from './types.js';
import { classifyWriteError, isNotFoundAnswer } from './write-error.js';

/** WriteContext is what one write attempt needs besides the event. */
export interface WriteContext<T> {
  writer: EventWriter<T>;
  counters: RecorderCounters;
  logger: Logger;
  signal: AbortSignal;
}

/** WriteRequest says how to write one event: PATCH first when `patch` is set, else create. */
export interface WriteRequest<T extends CoreEvent | EventsV1Event> {
  event: T;
  patch?: object;
  /** isSeries makes AlreadyExists retryable (client-go tools/events). */
  isSeries: boolean;
  /** onWritten receives the server's copy (the legacy correlator keeps its name and resourceVersion). */
  onWritten?: (server: T) => void;
}

function describe(event: CoreEvent | EventsV1Event): Record<string, unknown> {
  return { namespace: event.metadata.namespace, name: event.metadata.name, reason: event.reason };
}

/**
 * writeEvent is one attempt of client-go's recordEvent: PATCH when updating, and
 * create under the same name (resourceVersion cleared) when there is nothing to
 * patch (404) or nothing was written yet.
 */
export async function writeEvent<T extends CoreEvent | EventsV1Event>(req: WriteRequest<T>, ctx: WriteContext<T>): Promise<AttemptResult> {
  const { event } = req;
  const namespace = event.metadata.namespace ?? '';
  const name = event.metadata.name ?? '';
  try {
    let written: T | undefined;
    if (req.patch !== undefined) {
      try {
        written = await ctx.writer.patch(namespace, name, req.patch, { signal: ctx.signal });
      } catch (e) {
        if (!isNotFoundAnswer(e)) throw e;
      }
    }
    if (written === undefined) {
      const body = { ...event, metadata: { ...event.metadata } };
      delete body.metadata.resourceVersion;
      written = await ctx.writer.create(namespace, body, { signal: ctx.signal });
    }
    ctx.counters.written++;
    req.onWritten?.(written);
    return { retry: false };
  } catch (err) {
    const c = classifyWriteError(err, req.isSeries);
    if (c.retry) {
      if (c.retryAfterMs !== undefined) {
        // Load shedding (429, or a 5xx that says when): routine under pressure, waited out as asked.
        ctx.logger.debug('Server asked to write the event later', { ...describe(event), retryAfterMs: c.retryAfterMs, err });
        return { retry: true, retryAfterMs: c.retryAfterMs };
      }
      ctx.logger.error('Unable to write event (may retry after sleeping)', { ...describe(event), err });
      return { retry: true };
    }
    ctx.counters.failed++;
    const log = c.quiet ? ctx.logger.debug.bind(ctx.logger) : ctx.logger.error.bind(ctx.logger);
    log('Server rejected event (will not retry!)', { ...describe(event), err });
    return { retry: false };
  }
}
