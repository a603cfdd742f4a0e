import type { CoreEvent } from '../api/index.js';
import type { Clock, Logger } from '../internal/index.js';
import { createConsoleLogger, realClock } from '../internal/index.js';
import { MAX_QUEUED_EVENTS, MAX_THROTTLED_RETRIES_PER_TRY, MAX_TRIES_PER_EVENT, RETRY_SLEEP_MS, SHUTDOWN_TIMEOUT_MS } from './constants.js';
import { Correlator, type CorrelatorOptions } from './correlator.js';
import { newCounters } from './counters.js';
import { drainWithDeadline } from './event-broadcaster.js';
import { FieldWarner } from './event-checks.js';
import { EventNamer } from './event-name.js';
import type { CoreEventSink } from './event-sink.js';
import { createLegacyEventRecorder, type LegacyPipeline } from './legacy-recorder.js';
import { writeWithRetries } from './retry.js';
import type { LegacyEventBroadcaster, LegacyEventRecorder, RecorderCounters, ShutdownOptions } from './types.js';
import { writeEvent } from './write-event.js';
import { WriteQueue } from './write-queue.js';

/** LegacyEventBroadcasterOptions configure createLegacyEventBroadcaster; a zero or missing value means the default. */
export interface LegacyEventBroadcasterOptions {
  sink: CoreEventSink;
  clock?: Clock;
  logger?: Logger;
  /** queueSize bounds the write queue (default 1000). */
  queueSize?: number;
  /** maxTries per write (default 12). */
  maxTries?: number;
  /** retrySleepMs between tries; the first sleep is a random fraction of it (default 10 s). */
  retrySleepMs?: number;
  /** shutdownTimeoutMs is shutdown's default deadline (default 10 s). */
  shutdownTimeoutMs?: number;
  /** correlator tunes aggregation and the spam filter (its clock defaults to `clock`). */
  correlator?: CorrelatorOptions;
  /** random feeds the first retry's sleep (default Math.random). */
  random?: () => number;
}

interface QueuedWrite {
  event: CoreEvent;
  patch?: Record<string, unknown>;
}

/**
 * createLegacyEventBroadcaster starts a core/v1 pipeline with client-go
 * tools/record semantics: correlator (aggregation, dedup count, spam filter),
 * then one writer in order, PATCH for repeats and create otherwise. One writer
 * keeps a repeat's PATCH behind the create it patches, as in client-go.
 */
export function createLegacyEventBroadcaster(options: LegacyEventBroadcasterOptions): LegacyEventBroadcaster {
  const clock = options.clock ?? realClock;
  const logger = options.logger ?? createConsoleLogger();
  const maxTries = options.maxTries || MAX_TRIES_PER_EVENT;
  const retrySleepMs = options.retrySleepMs || RETRY_SLEEP_MS;
  const shutdownTimeoutMs = options.shutdownTimeoutMs || SHUTDOWN_TIMEOUT_MS;
  const random = options.random ?? Math.random;
  const sink = options.sink;
  const counters = newCounters();
  const namer = new EventNamer();
  const correlator = new Correlator({ clock, namer, ...options.correlator });
  let closed = false;
  let shutdownPromise: Promise<void> | undefined;

  const queue = new WriteQueue<QueuedWrite>({
    capacity: options.queueSize || MAX_QUEUED_EVENTS,
    workers: 1,
    process: (item, signal) =>
      writeWithRetries({
        attempt: (s) =>
          writeEvent(
            {
              event: item.event,
              ...(item.patch !== undefined && (item.event.count ?? 0) > 1 ? { patch: item.patch } : {}),
              isSeries: false,
              onWritten: (server) => correlator.updateState(server),
            },
            { writer: sink.coreV1, counters, logger, signal: s },
          ),
        maxTries,
        maxThrottled: MAX_THROTTLED_RETRIES_PER_TRY,
        // The first sleep is a random fraction so that clients do not retry in step after an outage.
        delayFor: (tries) => (tries === 1 ? retrySleepMs * random() : retrySleepMs),
        clock,
        signal,
        counters,
        logger,
        describe: () => ({ namespace: item.event.metadata.namespace, name: item.event.metadata.name, reason: item.event.reason }),
      }),
  });

  const pipeline: LegacyPipeline = {
    get closed() {
      return closed;
    },
    counters,
    logger,
    warner: new FieldWarner(logger),
    now: () => clock.now(),
    submit(event) {
      const result = correlator.correlate(event);
      if (result.repeat) counters.aggregated++;
      if (result.skip) {
        counters.filtered++;
        return;
      }
      const item: QueuedWrite = { event: result.event };
      if (result.patch !== undefined) item.patch = result.patch;
      if (queue.offer(item)) return;
      counters.dropped++;
      logger.error('Unable to record event: too many queued events, dropped event', {
        namespace: event.metadata.namespace,
        name: result.event.metadata.name,
        reason: event.reason,
      });
    },
  };

  return {
    newRecorder({ source }): LegacyEventRecorder {
      return createLegacyEventRecorder(pipeline, source);
    },
    get counters(): RecorderCounters {
      return { ...counters };
    },
    shutdown(so: ShutdownOptions = {}): Promise<void> {
      shutdownPromise ??= (async () => {
        closed = true;
        await drainWithDeadline(queue, clock, so.timeoutMs || shutdownTimeoutMs, counters, logger);
      })();
      return shutdownPromise;
    },
    idle: () => queue.idle(),
  };
}
