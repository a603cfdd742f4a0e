import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  cutText,
  incidentsAnswer,
  isCut,
  jsonBytes,
  keepWithin,
  resolveIncidents,
  resolveOccurrenceMessages,
  resolveTimeline,
  shareOccurrenceMessages,
  timelineAnswer,
} from './answer-text.js';
import type { Incident, IncidentList } from './incident.js';
import type { Occurrence } from './occurrence.js';
import type { Timeline, TimelineRow } from './timeline.js';

function occurrence(event: string, rv: number, message: string | undefined): Occurrence {
  const o: Occurrence = {
    metadata: { name: `${event}.${rv}`, namespace: 'ns' },
    event: { name: event, namespace: 'ns', uid: `uid-${event}`, resourceVersion: String(rv) },
    observedTime: '2025-01-01T00:00:00.000000Z',
    lastSeen: '2025-01-01T00:00:00Z',
    countBefore: rv - 1,
    countAfter: rv,
    regarding: { kind: 'Pod', name: event },
  };
  if (message !== undefined) o.message = message;
  return o;
}

function row(object: string, reason: string, message: string, time = '2025-01-01T00:00:00Z'): TimelineRow {
  return { time, namespace: 'ns', object, type: 'Warning', reason, message, count: 1, estimated: false };
}

test('cutText leaves short texts and cuts long ones with the count of characters left out', () => {
  assert.equal(cutText('short', 10), 'short');
  assert.equal(cutText('abcdefghij', 10), 'abcdefghij');
  assert.equal(cutText('abcdefghijkl', 10), 'abcdefghij… [2 more characters]');
  assert.equal(cutText('abcdefghijk', 10), 'abcdefghij… [1 more character]');
  assert.ok(isCut(cutText('x'.repeat(5000))));
  assert.ok(!isCut('x'.repeat(5000)));
  // A surrogate pair is never split; the count is of characters, not UTF-16 units.
  const astral = `${'a'.repeat(9)}😀😀`;
  assert.equal(cutText(astral, 10), `${'a'.repeat(9)}… [2 more characters]`);
  // The same text cut again (the rows of one event) is the same string.
  const long = 'y'.repeat(10_000);
  assert.equal(cutText(long), cutText(long));
});


test('keepWithin keeps what fits, and always the first item', () => {
  assert.equal(keepWithin([10, 10, 10], 100), 3);
  assert.equal(keepWithin([10, 10, 10], 22), 2);
  assert.equal(keepWithin([500, 10], 100), 1);
  assert.equal(keepWithin([], 10), 0);
});

test('shareOccurrenceMessages sends each event text once and resolveOccurrenceMessages gives it back', () => {
  const big = 'boom '.repeat(20_000);
  const other = 'other '.repeat(300);
  const changed = 'changed '.repeat(300);
  const items = [occurrence('a', 1, big), occurrence('b', 2, other), occurrence('a', 3, big), occurrence('a', 4, changed), occurrence('a', 5, changed), occurrence('b', 6, other), occurrence('b', 7, 'short'), occurrence('b', 8, 'short')];
  const shared = shareOccurrenceMessages(items);
  assert.deepEqual(
    shared.map((o) => [o.message === undefined ? null : o.message.slice(0, 7), o.messageOf ?? null]),
    [
      ['boom bo', null],
      ['other o', null],
      [null, '1'],
      ['changed', null],
      [null, '4'],
      [null, '2'],
      // A short text (every ordinary message) is repeated, never referred to.
      ['short', null],
      ['short', null],
    ],
  );
  // The input is not changed.
  assert.equal(items[2]!.message, big);
  assert.ok(jsonBytes(shared) < jsonBytes(items) / 1.9);
  const back = structuredClone(shared);
  resolveOccurrenceMessages(back);
  assert.deepEqual(back, items);
});

test('a search hit seeds its occurrences: a repeat of the hit text refers to the hit event', () => {
  const same = 'same '.repeat(300);
  const items = [occurrence('a', 1, same), occurrence('a', 2, same)];
  const shared = shareOccurrenceMessages(items, { resourceVersion: '9', message: same });
  assert.deepEqual(shared.map((o) => o.messageOf ?? null), ['9', '9']);
  const back = structuredClone(shared);
  resolveOccurrenceMessages(back, { resourceVersion: '9', message: same });
  assert.deepEqual(back, items);
  // A reference the answer cannot resolve is left as it is, never given another text.
  const orphan = [{ ...occurrence('a', 2, undefined), messageOf: '1' }];
  resolveOccurrenceMessages(orphan);
  assert.equal(orphan[0]!.message, undefined);
  assert.equal(orphan[0]!.messageOf, '1');
});

test('timelineAnswer refers repeated rows to the first, bounds the rows and says how many it left out', () => {
  const big = 'z'.repeat(100_000);
  const failed = 'x'.repeat(2000);
  const rows = [row('Pod/a', 'BackOff', big), row('Pod/a', 'Failed', failed), ...Array.from({ length: 98 }, (_, i) => row('Pod/a', i % 2 === 0 ? 'BackOff' : 'Failed', i % 2 === 0 ? big : failed))];
  const t: Timeline = {
    summary: { window: { since: null, until: null }, firstWarning: null, reasons: [], objects: [], rows: 100, occurrences: 100, estimatedRows: 0, undated: 0, history: 'occurrences' },
    rows,
    hints: [],
  };
  const whole = timelineAnswer(t);
  assert.equal(whole.rows.length, 100);
  assert.equal(whole.rowsLeftOut, undefined);
  assert.ok(jsonBytes(whole) < 2 * big.length, `${jsonBytes(whole)} bytes`);
  assert.deepEqual(whole.rows.slice(0, 4).map((r) => r.messageOf ?? null), [null, null, 0, 1]);
  assert.deepEqual(resolveTimeline(structuredClone(whole)).rows, rows);

  // Every row a text of its own: the bound leaves the later ones out and counts them.
  const distinct: Timeline = { ...t, rows: rows.map((r, i) => ({ ...r, message: `${i}`.padStart(50_000, '.') })) };
  const cut = timelineAnswer(distinct, 1_000_000);
  assert.ok(jsonBytes(cut) <= 1_000_000, `${jsonBytes(cut)} bytes`);
  assert.equal(cut.rows.length + (cut.rowsLeftOut ?? 0), 100);
  assert.ok(cut.rowsLeftOut! > 0);
  assert.deepEqual(cut.rows, distinct.rows.slice(0, cut.rows.length));
});

test('incidentsAnswer shares evidence texts, then gives up the oldest evidence, then the oldest incidents', () => {
  const incident = (root: string, message: string, n: number): Incident => ({
    kind: 'other',
    cause: 'c',
    facts: {},
    namespace: 'ns',
    root,
    objects: [root],
    start: { time: '2025-01-01T00:00:00Z', estimated: false },
    lastSeen: '2025-01-01T00:00:00Z',
    ongoing: true,
    occurrences: n,
    hints: [],
    evidence: Array.from({ length: n }, () => row(root, 'BackOff', message)),
  });
  const repeated: IncidentList = { window: { since: null, until: null }, incidents: [incident('Pod/a', 'm'.repeat(2000), 100)] };
  const shared = incidentsAnswer(repeated);
  assert.equal(shared.incidents[0]!.evidence.filter((r) => r.messageOf === 0).length, 99);
  assert.deepEqual(resolveIncidents(structuredClone(shared)), repeated);

  const many: IncidentList = {
    window: { since: null, until: null },
    incidents: Array.from({ length: 40 }, (_, i) => ({ ...incident(`Pod/p${i}`, 'x', 0), evidence: Array.from({ length: 10 }, (_, j) => row(`Pod/p${i}`, `R${j}`, `${i}-${j}`.padEnd(2000, '.'))) })),
  };
  const bounded = incidentsAnswer(many, 200_000);
  assert.ok(jsonBytes(bounded) <= 200_000, `${jsonBytes(bounded)} bytes`);
  // The most recent (first) keep their evidence; the oldest gave it up and say how much.
  assert.equal(bounded.incidents[0]!.evidence.length, 10);
  const last = bounded.incidents[bounded.incidents.length - 1]!;
  assert.equal(last.evidence.length, 0);
  assert.equal(last.evidenceLeftOut, 10);
  assert.equal(bounded.incidents.length + (bounded.incidentsLeftOut ?? 0), 40);
});
