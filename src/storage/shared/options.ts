import { noopLogger, realClock } from '../../internal/index.js';
import type { Clock, Logger } from '../../internal/index.js';

/** DEFAULT_HISTORY_WINDOW_SECONDS keeps 75 minutes of history: more than the default 1 h event TTL, so a watch can resume across it. */
export const DEFAULT_HISTORY_WINDOW_SECONDS = 75 * 60;
/** DEFAULT_COMPACT_INTERVAL_MS: history is trimmed once a minute; the window is a floor, not an exact age. */
export const DEFAULT_COMPACT_INTERVAL_MS = 60_000;
/** DEFAULT_EXPIRY_INTERVAL_MS: expired events are deleted within a second of their deadline. */
export const DEFAULT_EXPIRY_INTERVAL_MS = 1_000;
/** DEFAULT_WATCH_BUFFER_SIZE: a watcher may lag 1,000 changes (5 s at 200 events/s) before it is ended. */
export const DEFAULT_WATCH_BUFFER_SIZE = 1_000;

/**
 * DEFAULT_MAX_COUNT_REMAINING bounds the work of counting what a page leaves
 * (`remainingItemCount`): with more left than this it is left out. Counting is a
 * scan of the rest; in SQLite it steps over index entries at about 150 ms per
 * million, so the cap keeps it to a few milliseconds, a small share of a page of 500.
 */
export const DEFAULT_MAX_COUNT_REMAINING = 10_000;

/** CommonStoreOptions are the options every backend takes; a zero or missing value means the default. */
export interface CommonStoreOptions {
  /** clock drives TTL expiry, history compaction and their timers. */
  clock?: Clock;
  logger?: Logger;
  /** historyWindowSeconds is the least age of history kept for watches and exact lists to resume from. */
  historyWindowSeconds?: number;
  /** compactIntervalMs is how often history older than the window is dropped. */
  compactIntervalMs?: number;
  /** expiryIntervalMs is how often expired events are looked for. */
  expiryIntervalMs?: number;
  /** watchBufferSize is how many undelivered changes a watcher may hold before it is ended with WatcherTooSlow. */
  watchBufferSize?: number;
}

/** ResolvedCommonOptions are CommonStoreOptions with every default filled in. */
export type ResolvedCommonOptions = Required<CommonStoreOptions>;

/** resolveCommonOptions fills in the defaults of CommonStoreOptions. */
export function resolveCommonOptions(o: CommonStoreOptions): ResolvedCommonOptions {
  return {
    clock: o.clock ?? realClock,
    logger: o.logger ?? noopLogger,
    historyWindowSeconds: positive(o.historyWindowSeconds) ?? DEFAULT_HISTORY_WINDOW_SECONDS,
    compactIntervalMs: positive(o.compactIntervalMs) ?? DEFAULT_COMPACT_INTERVAL_MS,
    expiryIntervalMs: positive(o.expiryIntervalMs) ?? DEFAULT_EXPIRY_INTERVAL_MS,
    watchBufferSize: positive(o.watchBufferSize) ?? DEFAULT_WATCH_BUFFER_SIZE,
  };
}

function positive(n: number | undefined): number | undefined {
  return n !== undefined && n > 0 ? n : undefined;
}
