/** TimerHandle identifies a timer set with `Clock.setTimeout`. */
export type TimerHandle = object;

/** TimerOptions tune one timer. */
export interface TimerOptions {
  /** unref lets the process exit while this timer is pending (background loops use it). */
  unref?: boolean;
}

/**
 * Clock is time as the rest of kevents sees it. Code that waits or reads the time
 * takes a Clock, so tests drive minutes of behaviour without sleeping.
 */
export interface Clock {
  /** now is the current time in milliseconds since the Unix epoch. */
  now(): number;
  setTimeout(fn: () => void, ms: number, options?: TimerOptions): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
  /** sleep resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error('aborted', { cause: reason });
}

function sleepOn(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      clock.clearTimeout(handle);
      reject(abortReason(signal!));
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** realClock is the wall clock and Node's timers. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms, options) {
    const t = setTimeout(fn, Math.max(0, ms));
    if (options?.unref === true) t.unref();
    return t;
  },
  clearTimeout(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
  sleep(ms, signal) {
    return sleepOn(realClock, ms, signal);
  },
};

interface FakeTimer {
  due: number;
  seq: number;
  fn: () => void;
}

/** FAKE_CLOCK_START is where a FakeClock starts by default: a fixed instant, so outputs are stable. */
export const FAKE_CLOCK_START = Date.UTC(2025, 0, 1, 0, 0, 0);

/** flushMicrotasks resolves once every microtask queued so far (and those they queue) has run. */
export function flushMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * FakeClock is a Clock for tests: time moves only through `advance`, which fires
 * due timers in order and lets the async work they start settle before moving on.
 */
export class FakeClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly timers = new Map<object, FakeTimer>();

  constructor(start: number = FAKE_CLOCK_START) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const handle = {};
    this.timers.set(handle, { due: this.current + Math.max(0, ms), seq: this.seq++, fn });
    return handle;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }

  /** pending is the number of timers not yet fired or cleared. */
  get pending(): number {
    return this.timers.size;
  }

  /** nextDue is the due time of the earliest pending timer, or undefined. */
  nextDue(): number | undefined {
    return this.earliest()?.[1].due;
  }

  /**
   * advance moves time forward by `ms`, firing every timer that falls due on the
   * way (in due order, ties in the order they were set), and settles microtasks
   * after each, so timers set by those callbacks within the window fire too.
   */
  async advance(ms: number): Promise<void> {
    const target = this.current + Math.max(0, ms);
    await flushMicrotasks();
    for (;;) {
      const next = this.earliest();
      if (next === undefined || next[1].due > target) break;
      this.timers.delete(next[0]);
      this.current = Math.max(this.current, next[1].due);
      next[1].fn();
      await flushMicrotasks();
    }
    this.current = target;
    await flushMicrotasks();
  }

  /** set jumps to an absolute time without firing timers (for setting up a scene). */
  set(ms: number): void {
    this.current = ms;
  }

  private earliest(): [object, FakeTimer] | undefined {
    let best: [object, FakeTimer] | undefined;
    for (const entry of this.timers) {
      const t = entry[1];
      if (best === undefined || t.due < best[1].due || (t.due === best[1].due && t.seq < best[1].seq)) best = entry;
    }
    return best;
  }
}
