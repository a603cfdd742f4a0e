export type { Timeline, TimelineCause, TimelineEventRef, TimelineHint, TimelineRow, TimelineSummary } from '../api/index.js';
export { buildTimeline, formatTimelineTime, timelineEntries, timelineRow, type TimelineEntries, type TimelineExplainer, type TimelineExplanation, type TimelineInput } from './build-timeline.js';
export {
  collectTimeline,
  countReasons,
  type CollectTimelineOptions,
  type CountReasonsOptions,
  type ReasonCountsQuery,
  type SourceQuery,
  type SourceReasonCount,
  sourceWindow,
  type TimelineSource,
} from './timeline-source.js';
export { decompressEvent, eventEntries, MAX_SPREAD_ROWS, spreadEntries, type EventEntries, type OccurrenceEntry } from './occurrence-rows.js';
export { inScope, objectKey, SCHEDULED_REASON, scheduledNode, scopeObjects, type ObjectScope, type OwnerLink } from './scope.js';
export { BUILTIN_KINDS, ForParseError, isNamespacedKind, parseForArgument, resolveKind, type KindInfo, type ObjectRef } from './kinds.js';
export { storeTimelineSource } from './store-source.js';
