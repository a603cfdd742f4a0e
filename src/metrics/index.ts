/**
 * The metrics module: an archive's changes as Prometheus series (docs/metrics.md), counted
 * decompressed (every repeat), under bounded labels and a hard series cap.
 */
export { createEventMetrics, DEFAULT_MAX_SERIES, DEFAULT_IDLE_AFTER_MS, type EventMetrics, type EventMetricsOptions } from './event-metrics.js';
export { followLog, DEFAULT_FOLLOW_INTERVAL_MS, type LogFollower } from './log-follower.js';
export { DEFAULT_EVENT_LABELS, EVENT_LABEL_NAMES, occurrencesOf, type EventLabel } from './event-labels.js';
export { CAICLOUD_LABELS } from './caicloud-compat.js';
export type { Collectable } from './collectable.js';
export type { CountedChange } from './counted-change.js';
