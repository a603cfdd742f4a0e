import type { RecorderCounters } from './types.js';

/** newCounters returns zeroed counters. */
export function newCounters(): RecorderCounters {
  return { recorded: 0, rejected: 0, aggregated: 0, filtered: 0, dropped: 0, written: 0, retried: 0, failed: 0 };
}
