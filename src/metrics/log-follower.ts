import { ExponentialBackoff, noopLogger, realClock } from '../internal/index.js';
import type { Clock, Logger } from '../internal/index.js';
import type { ExportLog } from '../storage/index.js';
import type { EventMetrics } from './event-metrics.js';

/** DEFAULT_FOLLOW_INTERVAL_MS: the log is read 5 times a second while quiet, so a scrape is at most this much behind. */
export const DEFAULT_FOLLOW_INTERVAL_MS = 200;
/** FOLLOW_BATCH: one read of the log takes up to this many changes (one page of the mirror's commits). */
const FOLLOW_BATCH = 1_000;

/** LogFollower counts an archive's changes into the event metrics until stopped. */
export interface LogFollower {
  /** started resolves once the follower has its starting position (the log's head). */
  readonly started: Promise<void>;
  stop(): Promise<void>;
}

/**
 * followLog counts every change the archive's log gets from now on. It starts at the log's head,
 * so nothing the archive held before this process started is counted: not the archive's history,
 * not what a restarted mirror lists again (the archive skips what it already holds, so a relist
 * appends nothing), not what `kevents export` delivers again. A restart is a counter reset, which
 * Prometheus' rate() and increase() take as one; changes archived while the process was down, and
 * appended after it started (a mirror catching up), are counted once, after the restart.
 */
export function followLog(log: ExportLog, metrics: EventMetrics, o: { clock?: Clock; logger?: Logger; pollIntervalMs?: number } = {}): LogFollower {
  const clock = o.clock ?? realClock;
  const logger = o.logger ?? noopLogger;
  const interval = o.pollIntervalMs ?? DEFAULT_FOLLOW_INTERVAL_MS;
  const abort = new AbortController();
  const backoff = new ExponentialBackoff({ initialMs: 200, maxMs: 10_000, jitterFactor: 0.2 });
  let position = 0;
  let markStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const retry = async (what: string, e: unknown): Promise<void> => {
    logger.warn(`event metrics: cannot ${what}; retrying`, { error: e instanceof Error ? e.message : String(e) });
    await clock.sleep(backoff.next(), abort.signal).catch(() => undefined);
  };
  const loop = async (): Promise<void> => {
    while (!abort.signal.aborted) {
      try {
        position = await log.head();
        break;
      } catch (e) {
        await retry('read the head of the archive', e);
      }
    }
    markStarted();
    while (!abort.signal.aborted) {
      let changes;
      try {
        changes = await log.read(position, FOLLOW_BATCH);
        backoff.reset();
      } catch (e) {
        await retry('read the archive', e);
        continue;
      }
      for (const c of changes) metrics.observe(c);
      position = changes.at(-1)?.id ?? position;
      if (changes.length < FOLLOW_BATCH) await clock.sleep(interval, abort.signal).catch(() => undefined);
    }
  };
  const running = loop();
  return {
    started,
    async stop() {
      abort.abort();
      markStarted();
      await running;
    },
  };
}
