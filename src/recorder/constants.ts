/** MAX_QUEUED_EVENTS bounds the write queue so a stuck API server costs memory only up to here (client-go maxQueuedEvents). */
export const MAX_QUEUED_EVENTS = 1000;

/** MAX_TRIES_PER_EVENT gives a write about two minutes of retries through an API server outage (client-go maxTriesPerEvent). */
export const MAX_TRIES_PER_EVENT = 12;

/**
 * MAX_THROTTLED_RETRIES_PER_TRY: an answer with Retry-After (429, or a 5xx that says when) is retried
 * as asked up to 10 times before it counts as one failed try, as client-go's REST client (maxRetries 10)
 * does beneath its recorder; otherwise twelve one-second waits would give up on a server busy for 12 s.
 */
export const MAX_THROTTLED_RETRIES_PER_TRY = 10;

/** RETRY_SLEEP_MS spaces retries so that many clients do not hammer a recovering server (client-go defaultSleepDuration). */
export const RETRY_SLEEP_MS = 10_000;

/** RETRY_JITTER_FACTOR spreads the events.k8s.io retries over 10–12.5 s so clients do not retry in step (wait.Jitter(10s, 0.25)). */
export const RETRY_JITTER_FACTOR = 0.25;

/** RECORD_WORKERS lets one slow write not hold up the others (client-go tools/events recordWorkers). */
export const RECORD_WORKERS = 8;

/** SERIES_REFRESH_MS re-writes ongoing series so the server's count and TTL (1 h) stay fresh (client-go refreshTime). */
export const SERIES_REFRESH_MS = 30 * 60_000;

/** SERIES_FINISH_MS ends a series after this much silence and writes its final count (client-go finishTime). */
export const SERIES_FINISH_MS = 6 * 60_000;

/** MAX_LRU_CACHE_ENTRIES bounds every per-key cache, so memory stays flat however many objects emit (client-go maxLruCacheEntries). */
export const MAX_LRU_CACHE_ENTRIES = 4096;

/** AGGREGATE_MAX_EVENTS: from this many distinct messages per reason and object, they collapse into one event (defaultAggregateMaxEvents). */
export const AGGREGATE_MAX_EVENTS = 10;

/** AGGREGATE_INTERVAL_SECONDS is the rolling window in which distinct messages are counted toward aggregation (defaultAggregateIntervalInSeconds). */
export const AGGREGATE_INTERVAL_SECONDS = 600;

/** SPAM_BURST lets 25 events per source, object and type through at once before rate limiting (defaultSpamBurst). */
export const SPAM_BURST = 25;

/** SPAM_QPS refills one token per 5 minutes per source, object and type, so a flapping object cannot flood the server (defaultSpamQPS). */
export const SPAM_QPS = 1 / 300;

/** SHUTDOWN_TIMEOUT_MS caps how long shutdown waits for queued writes, so a dead server cannot hang process exit. */
export const SHUTDOWN_TIMEOUT_MS = 10_000;

/** REASON_MAX_BYTES is the server's limit on `reason` (ReasonLengthLimit). */
export const REASON_MAX_BYTES = 128;

/** ACTION_MAX_BYTES is the server's limit on `action` (ActionLengthLimit). */
export const ACTION_MAX_BYTES = 128;

/** NOTE_MAX_BYTES is the server's limit on `note`/`message` of new-style events (NoteLengthLimit). */
export const NOTE_MAX_BYTES = 1024;

/** AGGREGATE_MESSAGE_PREFIX marks an event that stands for many distinct messages (EventAggregatorByReasonMessageFunc). */
export const AGGREGATE_MESSAGE_PREFIX = '(combined from similar events): ';

/** WARNED_KEYS_MAX bounds the memory of which field problems were already logged, so a bad call site warns once, not per call. */
export const WARNED_KEYS_MAX = 256;
