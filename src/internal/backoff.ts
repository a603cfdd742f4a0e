/**
 * jitter returns a duration in [base, base + maxFactor·base), like apimachinery's
 * `wait.Jitter`: a maxFactor of 0 or less means 1.
 */
export function jitter(base: number, maxFactor: number, random: () => number = Math.random): number {
  const factor = maxFactor <= 0 ? 1 : maxFactor;
  return base + random() * factor * base;
}

/** ExponentialBackoffOptions configure an ExponentialBackoff (zero values mean default). */
export interface ExponentialBackoffOptions {
  /** initialMs is the first delay (default 1000). */
  initialMs?: number;
  /** factor multiplies the delay after each step (default 2). */
  factor?: number;
  /** maxMs caps the delay (default 30000). */
  maxMs?: number;
  /** jitterFactor adds up to this fraction of each delay (default 0: none). */
  jitterFactor?: number;
  random?: () => number;
}

/** ExponentialBackoff yields growing delays for repeated failures; `reset` after a success. */
export class ExponentialBackoff {
  private readonly initial: number;
  private readonly factor: number;
  private readonly max: number;
  private readonly jitterFactor: number;
  private readonly random: () => number;
  private current: number;

  constructor(options: ExponentialBackoffOptions = {}) {
    this.initial = options.initialMs || 1000;
    this.factor = options.factor || 2;
    this.max = options.maxMs || 30_000;
    this.jitterFactor = options.jitterFactor || 0;
    this.random = options.random ?? Math.random;
    this.current = this.initial;
  }

  /** next returns the delay to wait now and grows the following one. */
  next(): number {
    const base = Math.min(this.current, this.max);
    this.current = Math.min(this.current * this.factor, this.max);
    return this.jitterFactor > 0 ? jitter(base, this.jitterFactor, this.random) : base;
  }

  reset(): void {
    this.current = this.initial;
  }
}
