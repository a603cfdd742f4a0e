import type { Clock, TimerHandle } from '../../internal/index.js';

/** Ticker runs a background task every `intervalMs` on a Clock until stopped; it never keeps the process alive. */
export class Ticker {
  private handle: TimerHandle | undefined;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly intervalMs: number,
    private readonly task: () => void,
  ) {
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    if (this.handle !== undefined) this.clock.clearTimeout(this.handle);
    this.handle = undefined;
  }

  private arm(): void {
    if (this.stopped) return;
    this.handle = this.clock.setTimeout(
      () => {
        this.handle = undefined;
        try {
          this.task();
        } finally {
          this.arm();
        }
      },
      this.intervalMs,
      { unref: true },
    );
  }
}
