import type { Clock, Logger } from '../internal/index.js';
import type { RecorderCounters } from './types.js';

/** AttemptResult is what one write attempt reports: done (written or given up), or retry. */
export type AttemptResult = { retry: false } | { retry: true; retryAfterMs?: number };

/** RetryOptions configure writeWithRetries. */
export interface RetryOptions {
  attempt: (signal: AbortSignal) => Promise<AttemptResult>;
  maxTries: number;
  /** maxThrottled is how many answers with Retry-After in a row one try waits out before it fails. */
  maxThrottled: number;
  /** delayFor returns the sleep before retry number `tries` (1-based). */
  delayFor: (tries: number) => number;
  clock: Clock;
  signal: AbortSignal;
  counters: RecorderCounters;
  logger: Logger;
  describe: () => Record<string, unknown>;
}

function sleepUnref(clock: Clock, ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clock.clearTimeout(handle);
      resolve(false);
    };
    // Unref: a pending retry alone does not keep a process alive; `shutdown` does.
    const handle = clock.setTimeout(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      },
      ms,
      { unref: true },
    );
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * writeWithRetries runs `attempt` up to `maxTries` times, sleeping `delayFor`
 * between tries. An answer with Retry-After is waited out as the server asks
 * and does not use up a try, up to `maxThrottled` times in a row: client-go's
 * REST client retries those beneath its recorder, so a server that sheds load
 * for longer than twelve Retry-After waits loses no events. It resolves, never
 * rejects.
 */
export async function writeWithRetries(o: RetryOptions): Promise<void> {
  let tries = 0;
  let throttled = 0;
  for (;;) {
    const result = await o.attempt(o.signal);
    if (!result.retry) return;
    let delay: number;
    if (result.retryAfterMs !== undefined && throttled < o.maxThrottled) {
      throttled++;
      delay = result.retryAfterMs;
    } else {
      if (result.retryAfterMs !== undefined) o.logger.error('Unable to write event (the server is still busy; may retry after sleeping)', { ...o.describe(), retryAfterWaits: throttled });
      throttled = 0;
      tries++;
      if (tries >= o.maxTries) {
        o.counters.failed++;
        o.logger.error('Unable to write event (retry limit exceeded!)', o.describe());
        return;
      }
      delay = o.delayFor(tries);
    }
    if (!(await sleepUnref(o.clock, delay, o.signal))) {
      o.counters.failed++;
      o.logger.error('Unable to write event (broadcaster is shut down)', o.describe());
      return;
    }
    o.counters.retried++;
  }
}
