/**
 * The timeline's output: a stable shape, documented in docs/cli.md, printed as is
 * by `kevents timeline -o json`. Fields are only ever added.
 */

/** TimelineRow is one occurrence of an event, in time order. */
export interface TimelineRow {
  /** time is when it happened (RFC 3339, UTC): the event's own last-seen time after the change. */
  time: string;
  namespace: string;
  /** object is `Kind/name` of the event's involved object. */
  object: string;
  type: string;
  reason: string;
  message: string;
  /** count is how many repeats of the event this row stands for (usually 1). */
  count: number;
  /** estimated rows were spread between an event's first and last time from its count alone. */
  estimated: boolean;
}

/** TimelineEventRef is an event of the summary (the first Warning). */
export interface TimelineEventRef {
  time: string;
  namespace: string;
  object: string;
  reason: string;
  message: string;
}

/** TimelineSummary says what the rows show. */
export interface TimelineSummary {
  /** window is the time range asked for, else the range of the rows (null when there are none). */
  window: { since: string | null; until: string | null };
  /** firstWarning is the earliest Warning in the window: usually the cause. */
  firstWarning: TimelineEventRef | null;
  /** reasons are the reasons seen, most frequent first, counted in occurrences. */
  reasons: { reason: string; type: string; count: number }[];
  /** objects are the objects involved, in order of their first row. */
  objects: { namespace: string; object: string; count: number }[];
  /** rows and occurrences: how many rows, and how many occurrences they stand for. */
  rows: number;
  occurrences: number;
  /** estimatedRows are rows spread from counts because no occurrence history was available. */
  estimatedRows: number;
  /** history says where the rows come from: `occurrences` when the archive held the history of an event with rows, else `events` (counts only). */
  history: 'occurrences' | 'events';
}

/** TimelineHint is one next step: a concrete command and why to run it. */
export interface TimelineHint {
  /** reason is the event reason (or condition, e.g. `OOMKilled`) the hint answers. */
  reason: string;
  command: string;
  why: string;
}

/** Timeline is the whole result: `{ summary, rows, hints }`. */
export interface Timeline {
  summary: TimelineSummary;
  rows: TimelineRow[];
  hints: TimelineHint[];
}
