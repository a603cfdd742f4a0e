import type { CoreEvent } from '../api/index.js';
import type { Clock } from '../internal/index.js';
import { LruCache, TokenBucket } from '../internal/index.js';

/** SpamKeyFunc returns the key whose token bucket an event draws from. */
export type SpamKeyFunc = (event: CoreEvent) => string;

/** SpamFilterOptions configure a SpamFilter. */
export interface SpamFilterOptions {
  cacheSize: number;
  burst: number;
  qps: number;
  clock: Clock;
  keyFunc: SpamKeyFunc;
}

/**
 * SpamFilter is client-go's EventSourceObjectSpamFilter: a token bucket per
 * source, object and type (LRU-bounded). An event without a token is skipped.
 */
export class SpamFilter {
  private readonly cache: LruCache<string, TokenBucket>;

  constructor(private readonly o: SpamFilterOptions) {
    this.cache = new LruCache({ maxEntries: o.cacheSize });
  }

  /** skip tells whether to hold the event back. */
  skip(event: CoreEvent): boolean {
    return this.skipKey(this.o.keyFunc(event));
  }

  /** skipKey is `skip` with the spam key already computed. */
  skipKey(key: string): boolean {
    let bucket = this.cache.get(key);
    if (bucket === undefined) {
      bucket = new TokenBucket({ qps: this.o.qps, burst: this.o.burst, clock: this.o.clock });
      this.cache.set(key, bucket);
    }
    return !bucket.tryAccept();
  }
}
