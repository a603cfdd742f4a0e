/**
 * The timeline's output: a stable shape, documented in docs/cli.md, printed as is
 * by `kevents timeline -o json` and served to the web UI by `kevents serve`
 * (GET /apis/archive.kevents.io/v1alpha1/[namespaces/NS/]timeline). Fields are
 * only ever added.
 */

/** TimelineRow is one occurrence of an event, in time order. */
export interface TimelineRow {
  /**
   * time is when it happened (RFC 3339, UTC): a time the event states (its first
   * time, or its last-seen time after a recorded change), or, on an estimated
   * row, a point between `earliest` and `latest`.
   */
  time: string;
  namespace: string;
  /**
   * cluster names the cluster the event was archived from (the event's
   * `archive.kevents.io/cluster` label, `kevents mirror --cluster`); absent for
   * events written locally, so a timeline of one unnamed source reads as before.
   */
  cluster?: string;
  /** object is `Kind/name` of the event's involved object. */
  object: string;
  type: string;
  reason: string;
  /** message is the event's message; "" where `messageOf` refers to an earlier row's. */
  message: string;
  /**
   * messageOf is the index, in the same list of rows, of an earlier row of the same object and reason whose
   * message this one repeats: the text is sent once an answer (`resolveRowMessages` gives it back).
   */
  messageOf?: number;
  /** count is how many repeats of the event this row stands for (usually 1). */
  count: number;
  /**
   * estimated rows stand for repeats the data counts but gives no time for (those
   * a change folded, or a count with no history): their time is spread between
   * the known times around them, never a time the data gives.
   */
  estimated: boolean;
  /**
   * earliest and latest, on estimated rows only, are the known times the row's
   * repeats happened between (inclusive); null where the data gives no bound.
   */
  earliest?: string | null;
  latest?: string | null;
}

/** TimelineEventRef is an event of the summary (the first Warning). */
export interface TimelineEventRef {
  time: string;
  /** estimated: the event's first time is not known, `time` is the earliest the data allows (see TimelineRow). */
  estimated: boolean;
  namespace: string;
  object: string;
  reason: string;
  message: string;
}

/** TimelineCause is what went wrong, as the failure catalogue states it (src/diagnosis). */
export interface TimelineCause {
  /** kind is the failure kind's id (`create-forbidden-quota`, …, `other`). */
  kind: string;
  /** text is the cause in one sentence, on one line. */
  text: string;
  /** root is `Kind/name` of the incident's root. */
  root: string;
  /** namespace is the root's namespace ("" for a Node), in `causes`, where incidents of several namespaces are listed. */
  namespace?: string;
}

/** TimelineSummary says what the rows show. */
export interface TimelineSummary {
  /**
   * cause is the incident the rows show, stated in one sentence, where the
   * timeline was built with the catalogue (`kevents timeline`, `kevents serve`);
   * null when its events show no failure or several incidents (see `causes`), absent when it was not asked.
   */
  cause?: TimelineCause | null;
  /**
   * causes are the cause of each incident the rows show, most recent first,
   * where a timeline of no one object (a namespace's, or `-A`) shows several:
   * one cause for unrelated incidents would be wrong for all but one. Absent otherwise.
   */
  causes?: TimelineCause[];
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
  /** estimatedRows are the rows whose time is estimated (see TimelineRow.estimated). */
  estimatedRows: number;
  /** undated are occurrences of events that carry no time at all, so no row can place them (they are not in `occurrences`). */
  undated: number;
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
  /**
   * rowsLeftOut counts the latest rows an answer's byte bound left out (`--max-answer-bytes`); the summary
   * speaks of them all. Ask again from the last row's time (`since`) to read on. Absent when none were.
   */
  rowsLeftOut?: number;
  hints: TimelineHint[];
}
