import { hostname as osHostname } from 'node:os';
import type { EventsV1Event } from '../api/index.js';
import type { Clock, Logger, TimerHandle } from '../internal/index.js';
import { createConsoleLogger, jitter, realClock } from '../internal/index.js';
import {
  MAX_LRU_CACHE_ENTRIES,
  MAX_QUEUED_EVENTS,
  MAX_THROTTLED_RETRIES_PER_TRY,
  MAX_TRIES_PER_EVENT,
  RECORD_WORKERS,
  RETRY_JITTER_FACTOR,
  RETRY_SLEEP_MS,
  SERIES_FINISH_MS,
  SERIES_REFRESH_MS,
  SHUTDOWN_TIMEOUT_MS,
} from './constants.js';
import { newCounters } from './counters.js';
import { FieldWarner } from './event-checks.js';
import { EventNamer } from './event-name.js';
import { createEventRecorder, type RecorderPipeline } from './event-recorder.js';
import type { EventsV1EventSink } from './event-sink.js';
import { writeWithRetries } from './retry.js';
import { MISS, SeriesCache, seriesSnapshot, type SeriesEntry } from './series-cache.js';
import type { EventBroadcaster, EventRecorder, RecorderCounters, ShutdownOptions } from './types.js';
import { writeEvent } from './write-event.js';
import { WriteQueue } from './write-queue.js';

/** EventBroadcasterOptions configure createEventBroadcaster; a zero or missing value means the default. */
export interface EventBroadcasterOptions {
  sink: EventsV1EventSink;
  clock?: Clock;
  logger?: Logger;
  /** hostname completes the default reportingInstance (default os.hostname()). */
  hostname?: string;
  /** queueSize bounds the write queue (default 1000). */
  queueSize?: number;
  /** workers write in parallel (default 8). */
  workers?: number;
  /** maxTries per write (default 12). */
  maxTries?: number;
  /** retrySleepMs is the base sleep between tries, jittered by up to 25% (default 10 s). */
  retrySleepMs?: number;
  /** refreshIntervalMs re-writes ongoing series (default 30 min). */
  refreshIntervalMs?: number;
  /** finishAfterMs ends a series after this much silence (default 6 min); the check runs at this interval too. */
  finishAfterMs?: number;
  /** cacheSize bounds the series cache (default 4096). */
  cacheSize?: number;
  /** shutdownTimeoutMs is shutdown's default deadline (default 10 s). */
  shutdownTimeoutMs?: number;
  /** random feeds the retry jitter (default Math.random). */
  random?: () => number;
}

type Resolved = Required<EventBroadcasterOptions>;

/** withEventBroadcasterDefaults fills in every option left zero or missing. */
export function withEventBroadcasterDefaults(o: EventBroadcasterOptions): Resolved {
  return {
    sink: o.sink,
    clock: o.clock ?? realClock,
    logger: o.logger ?? createConsoleLogger(),
    hostname: o.hostname || osHostname(),
    queueSize: o.queueSize || MAX_QUEUED_EVENTS,
    workers: o.workers || RECORD_WORKERS,
    maxTries: o.maxTries || MAX_TRIES_PER_EVENT,
    retrySleepMs: o.retrySleepMs || RETRY_SLEEP_MS,
    refreshIntervalMs: o.refreshIntervalMs || SERIES_REFRESH_MS,
    finishAfterMs: o.finishAfterMs || SERIES_FINISH_MS,
    cacheSize: o.cacheSize || MAX_LRU_CACHE_ENTRIES,
    shutdownTimeoutMs: o.shutdownTimeoutMs || SHUTDOWN_TIMEOUT_MS,
    random: o.random ?? Math.random,
  };
}

interface QueuedWrite {
  event: EventsV1Event;
}

/**
 * createEventBroadcaster starts an events.k8s.io/v1 pipeline with client-go
 * tools/events semantics: series per isomorphic key, a bounded queue drained by
 * workers, retries, a 30-minute refresh and a 6-minute finish of series.
 */
export function createEventBroadcaster(options: EventBroadcasterOptions): EventBroadcaster {
  const o = withEventBroadcasterDefaults(options);
  const counters = newCounters();
  const { clock, logger, sink } = o;
  let closed = false;
  let shutdownPromise: Promise<void> | undefined;
  const timers = new Set<TimerHandle>();

  const queue: WriteQueue<QueuedWrite> = new WriteQueue<QueuedWrite>({
    capacity: o.queueSize,
    workers: o.workers,
    process: (item, signal) =>
      writeWithRetries({
        attempt: (s) => writeEvent({ event: item.event, patch: patchFor(item.event), isSeries: !!item.event.series }, ctxFor(s)),
        maxTries: o.maxTries,
        maxThrottled: MAX_THROTTLED_RETRIES_PER_TRY,
        delayFor: () => jitter(o.retrySleepMs, RETRY_JITTER_FACTOR, o.random),
        clock,
        signal,
        counters,
        logger,
        describe: () => ({ namespace: item.event.metadata.namespace, name: item.event.metadata.name, reason: item.event.reason }),
      }),
  });

  const ctxFor = (signal: AbortSignal) => ({ writer: sink.eventsV1, counters, logger, signal });

  // A series write patches only `series`: the two-way merge patch between the event without and with it.
  const patchFor = (event: EventsV1Event): object | undefined => (event.series ? { series: event.series } : undefined);

  const enqueue = (event: EventsV1Event): void => {
    if (queue.offer({ event })) return;
    counters.dropped++;
    logger.error('Unable to record event: too many queued events, dropped event', {
      namespace: event.metadata.namespace,
      name: event.metadata.name,
      reason: event.reason,
    });
  };

  const cache = new SeriesCache({
    maxEntries: o.cacheSize,
    onEvictUnwritten: (entry) => {
      entry.queuedCount = entry.count;
      enqueue(seriesSnapshot(entry));
    },
  });

  const pipeline: RecorderPipeline = {
    get closed() {
      return closed;
    },
    counters,
    logger,
    warner: new FieldWarner(logger),
    namer: new EventNamer(),
    now: () => clock.now(),
    repeat(key, now) {
      const write = cache.observe(key, now);
      if (write === MISS) return false;
      counters.aggregated++;
      if (write !== undefined) enqueue(write);
      return true;
    },
    first(key, now, event) {
      enqueue(cache.insert(key, now, event));
    },
  };

  const directWrite = async (entry: SeriesEntry): Promise<boolean> => {
    const event = seriesSnapshot(entry);
    const result = await writeEvent({ event, patch: patchFor(event), isSeries: true }, ctxFor(queue.signal));
    return !result.retry;
  };

  // refreshExistingEventSeries: every series is re-written, which also renews its TTL on the server.
  const refresh = async (): Promise<void> => {
    for (const [, entry] of cache.entries()) {
      if (entry.count < 2 || closed) continue;
      entry.queuedCount = entry.count;
      await directWrite(entry);
    }
  };

  // finishSeries: a series silent for finishAfterMs gets its final count written and leaves the cache; a
  // singleton leaves without a write. An entry that saw an occurrence meanwhile stays.
  const finish = async (): Promise<void> => {
    const limit = clock.now() - o.finishAfterMs;
    for (const [key, entry] of cache.entries()) {
      if (closed) return;
      const version = entry.version;
      if (entry.count >= 2) {
        if (!(entry.lastObservedMs < limit)) continue;
        entry.queuedCount = entry.count;
        if (!(await directWrite(entry))) continue;
      } else if (!(entry.eventTimeMs < limit)) {
        continue;
      }
      cache.deleteIfUnchanged(key, version);
    }
  };

  // Flushes in progress, so that idle() also waits for the writes of refresh and finish.
  const flushes = new Set<Promise<void>>();

  // wait.Until: run now, then again `period` after each run ends.
  const every = (period: number, fn: () => Promise<void>): void => {
    const run = (): void => {
      if (closed) return;
      const p = fn().catch((err: unknown) => logger.error('Event series flush failed', { err }));
      flushes.add(p);
      void p.finally(() => {
        flushes.delete(p);
        if (closed) return;
        const h = clock.setTimeout(
          () => {
            timers.delete(h);
            run();
          },
          period,
          { unref: true },
        );
        timers.add(h);
      });
    };
    run();
  };
  every(o.refreshIntervalMs, refresh);
  every(o.finishAfterMs, finish);

  const shutdown = (so: ShutdownOptions = {}): Promise<void> => {
    shutdownPromise ??= (async () => {
      closed = true;
      for (const h of timers) clock.clearTimeout(h);
      timers.clear();
      // Counts kept only in memory would die with the process: write each series' latest count.
      for (const [, entry] of cache.entries()) {
        if (entry.count >= 2 && entry.count > entry.queuedCount) {
          entry.queuedCount = entry.count;
          enqueue(seriesSnapshot(entry));
        }
      }
      await drainWithDeadline(queue, clock, so.timeoutMs || o.shutdownTimeoutMs, counters, logger);
    })();
    return shutdownPromise;
  };

  return {
    newRecorder({ reportingController, reportingInstance }): EventRecorder {
      return createEventRecorder(pipeline, reportingController, reportingInstance || `${reportingController}-${o.hostname}`);
    },
    get counters(): RecorderCounters {
      return { ...counters };
    },
    shutdown,
    async idle(): Promise<void> {
      while (flushes.size > 0 || queue.pending > 0) {
        await Promise.all([...flushes]);
        await queue.idle();
      }
    },
  };
}

/** drainWithDeadline lets queued writes finish, aborting whatever is left at the deadline. */
export async function drainWithDeadline<T>(
  queue: WriteQueue<T>,
  clock: Clock,
  timeoutMs: number,
  counters: RecorderCounters,
  logger: Logger,
): Promise<void> {
  let timer: TimerHandle | undefined;
  const deadline = new Promise<'deadline'>((resolve) => {
    timer = clock.setTimeout(() => resolve('deadline'), timeoutMs);
  });
  const outcome = await Promise.race([queue.close().then(() => 'drained' as const), deadline]);
  if (timer !== undefined) clock.clearTimeout(timer);
  if (outcome === 'deadline') {
    const lost = queue.abort();
    counters.dropped += lost;
    logger.error('Event broadcaster shut down before its queue drained', { dropped: lost });
  }
}
