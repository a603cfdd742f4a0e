import type { TimelineRow } from './timeline.js';

/**
 * The fold rule of a timeline's table, one implementation for `kevents
 * timeline` (src/print/format-timeline.ts) and the web UI's object panel.
 */

/** RowRun is the repeats of one event drawn as one row: its first and last rows, how many rows it folds and how many occurrences they stand for. */
export interface RowRun {
  first: TimelineRow;
  last: TimelineRow;
  rows: number;
  count: number;
}

function sameEvent(a: TimelineRow, b: TimelineRow): boolean {
  return a.namespace === b.namespace && a.cluster === b.cluster && a.object === b.object && a.type === b.type && a.reason === b.reason && a.message === b.message;
}

function merge(into: RowRun, run: RowRun): void {
  into.last = run.last;
  into.rows += run.rows;
  into.count += run.count;
}

/**
 * foldRuns folds each run of consecutive rows of one event's repeats (same
 * object, type, reason and message) into one, and two events whose runs
 * alternate (the kubelet's `BackOff` and `Failed` `Error: ImagePullBackOff`,
 * written at each retry) into one run each, the earlier first: their rows
 * interleave only with each other, so `x18 over 31m` each says all of them.
 * A third event between them ends the alternation. Without `fold`, each row is its own run.
 */
export function foldRuns(rows: readonly TimelineRow[], fold = true): RowRun[] {
  const simple: RowRun[] = [];
  for (const r of rows) {
    const run = simple[simple.length - 1];
    if (fold && run !== undefined && sameEvent(run.last, r)) merge(run, { first: r, last: r, rows: 1, count: r.count });
    else simple.push({ first: r, last: r, rows: 1, count: r.count });
  }
  if (!fold) return simple;
  const out: RowRun[] = [];
  let i = 0;
  while (i < simple.length) {
    // Runs i, i+1, i+2, … alternate while each is of the event two before it: at least one return (three runs) to fold.
    let end = i + 2;
    while (end < simple.length && sameEvent(simple[end]!.first, simple[end - 2]!.first)) end++;
    if (end - i < 3) {
      out.push(simple[i]!);
      i++;
      continue;
    }
    const x = { ...simple[i]! };
    const y = { ...simple[i + 1]! };
    for (let j = i + 2; j < end; j++) merge((j - i) % 2 === 0 ? x : y, simple[j]!);
    out.push(x, y);
    i = end;
  }
  return out;
}
