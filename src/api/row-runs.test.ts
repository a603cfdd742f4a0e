import { test } from 'node:test';
import assert from 'node:assert/strict';
import { foldRuns } from './row-runs.js';
import type { TimelineRow } from './timeline.js';

const T0 = Date.UTC(2026, 0, 1);

/** row is a timeline row of pod web-1: `B` the kubelet's BackOff, `F` its Failed "Error: ImagePullBackOff", `P` a pull, `O` another pod's BackOff. */
function row(code: string, minute: number, count = 1): TimelineRow {
  const [object, type, reason, message] =
    code === 'B'
      ? ['Pod/web-1', 'Normal', 'BackOff', 'Back-off pulling image "web:v9"']
      : code === 'F'
        ? ['Pod/web-1', 'Warning', 'Failed', 'Error: ImagePullBackOff']
        : code === 'P'
          ? ['Pod/web-1', 'Normal', 'Pulling', 'Pulling image "web:v9"']
          : ['Pod/web-2', 'Normal', 'BackOff', 'Back-off pulling image "web:v9"'];
  return { time: new Date(T0 + minute * 60_000).toISOString(), namespace: 'shop', object, type, reason, message, count, estimated: false };
}

/** runsOf folds rows given as codes, one a minute, and writes each run as code×count@first-last (minutes). */
function runsOf(codes: string, fold = true): string[] {
  const rows = [...codes].map((c, i) => row(c, i));
  return foldRuns(rows, fold).map((r) => `${codes[rows.indexOf(r.first)]}×${r.count}@${rows.indexOf(r.first)}-${rows.indexOf(r.last)}`);
}

void test('foldRuns: repeats of one event, and two events that alternate, are one run each', () => {
  const cases: [string, string, string[]][] = [
    ['nothing', '', []],
    ['one row', 'B', ['B×1@0-0']],
    ['one event repeated', 'BBBB', ['B×4@0-3']],
    ['two in turn, no return: as they are', 'BBFF', ['B×2@0-1', 'F×2@2-3']],
    ['alternating pairs', 'BFBFBFBF', ['B×4@0-6', 'F×4@1-7']],
    ['alternating, in either order within a retry', 'BFFBBFFB', ['B×4@0-7', 'F×4@1-6']],
    ['one return is enough', 'BFB', ['B×2@0-2', 'F×1@1-1']],
    ['a third event ends the alternation', 'BFBFPBFBF', ['B×2@0-2', 'F×2@1-3', 'P×1@4-4', 'B×2@5-7', 'F×2@6-8']],
    ['a third event before it', 'PBFBF', ['P×1@0-0', 'B×2@1-3', 'F×2@2-4']],
    ['another pod\'s repeats are another event', 'BOBOB', ['B×3@0-4', 'O×2@1-3']],
    ['three events in turn do not fold', 'BFPBFP', ['B×1@0-0', 'F×1@1-1', 'P×1@2-2', 'B×1@3-3', 'F×1@4-4', 'P×1@5-5']],
  ];
  for (const [name, codes, want] of cases) assert.deepEqual(runsOf(codes), want, name);
});

void test('foldRuns: without fold every row is its own run', () => {
  assert.deepEqual(runsOf('BFBB', false), ['B×1@0-0', 'F×1@1-1', 'B×1@2-2', 'B×1@3-3']);
});

void test('foldRuns: the issue\'s image back-off, 44 rows, is two runs that count every occurrence', () => {
  const rows: TimelineRow[] = [];
  for (let i = 0; i < 22; i++) rows.push(row('B', i * 1.5, i === 0 ? 2 : 1), row('F', i * 1.5, 1));
  const runs = foldRuns(rows);
  assert.equal(runs.length, 2);
  assert.deepEqual(runs.map((r) => [r.first.reason, r.rows, r.count]), [['BackOff', 22, 23], ['Failed', 22, 22]]);
  assert.equal(runs.reduce((n, r) => n + r.count, 0), rows.reduce((n, r) => n + r.count, 0));
});
