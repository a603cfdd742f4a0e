import type { TimelineRow } from '../../api/timeline.js';

/** RowRun is a run of consecutive timeline rows of one event's repeats, drawn as one row. */
export interface RowRun {
  first: TimelineRow;
  last: TimelineRow;
  /** rows is how many timeline rows the run folds. */
  rows: number;
  /** count is how many occurrences they stand for. */
  count: number;
}

function sameEvent(a: TimelineRow, b: TimelineRow): boolean {
  return a.namespace === b.namespace && a.cluster === b.cluster && a.object === b.object && a.type === b.type && a.reason === b.reason && a.message === b.message;
}

/**
 * foldRuns folds each run of consecutive rows of one event's repeats (same
 * object, type, reason and message) into one, as `kevents timeline`'s table
 * does (src/timeline/format-timeline.ts; the UI imports api types only, so the
 * rule is repeated here and test/ui-logic checks the two agree).
 */
export function foldRuns(rows: readonly TimelineRow[]): RowRun[] {
  const out: RowRun[] = [];
  for (const r of rows) {
    const run = out[out.length - 1];
    if (run !== undefined && sameEvent(run.last, r)) {
      run.last = r;
      run.rows++;
      run.count += r.count;
    } else {
      out.push({ first: r, last: r, rows: 1, count: r.count });
    }
  }
  return out;
}
