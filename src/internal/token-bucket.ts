import type { Clock } from './clock.js';
import { realClock } from './clock.js';

/** TokenBucketOptions configure a TokenBucket. */
export interface TokenBucketOptions {
  /** qps is the refill rate in tokens per second; it may be fractional (1/300). */
  qps: number;
  /** burst is the bucket size, and how many tokens it starts with. */
  burst: number;
  clock?: Clock;
}

/**
 * TokenBucket is a passive rate limiter with client-go `flowcontrol`
 * semantics (x/time/rate underneath): it starts full, refills continuously at
 * `qps` up to `burst`, and `tryAccept` takes one whole token or refuses without
 * waiting. Fractional refill carries over between calls.
 */
export class TokenBucket {
  readonly qps: number;
  readonly burst: number;
  private readonly clock: Clock;
  private tokens: number;
  private last: number;

  constructor(options: TokenBucketOptions) {
    this.qps = options.qps;
    this.burst = options.burst;
    this.clock = options.clock ?? realClock;
    this.tokens = options.burst;
    this.last = this.clock.now();
  }

  /** tryAccept takes a token if one is available now. */
  tryAccept(): boolean {
    const tokens = this.refill();
    if (tokens < 1) return false;
    this.tokens = tokens - 1;
    return true;
  }

  /** available is the number of tokens (possibly fractional) the bucket holds now. */
  available(): number {
    return this.refill();
  }

  private refill(): number {
    const now = this.clock.now();
    // A clock that went backwards restarts the refill from now, as x/time/rate does.
    const elapsed = Math.max(0, now - this.last) / 1000;
    this.last = now;
    this.tokens = Math.min(this.burst, this.tokens + elapsed * this.qps);
    return this.tokens;
  }
}
