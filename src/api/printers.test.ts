import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EVENT_TABLE_COLUMNS, eventInterval, eventTable, eventTableCells, formatEventSource, goTrimSpace } from './printers.js';
import { goSort } from './go-sort.js';
import type { CoreEvent } from './types.js';
import { BACKOFF, ev, NOW, SCALED, SCHEDULED } from '../../test/support/printer-events.js';

void test('EVENT_TABLE_COLUMNS match kube-apiserver eventColumnDefinitions', () => {
  assert.deepEqual(
    EVENT_TABLE_COLUMNS.map((c) => [c.name, c.type, c.format, c.priority]),
    [
      ['Last Seen', 'string', '', 0],
      ['Type', 'string', '', 0],
      ['Reason', 'string', '', 0],
      ['Object', 'string', '', 0],
      ['Subobject', 'string', '', 1],
      ['Source', 'string', '', 1],
      ['Message', 'string', '', 0],
      ['First Seen', 'string', '', 1],
      ['Count', 'string', '', 1],
      ['Name', 'string', 'name', 1],
    ],
  );
  assert.equal(EVENT_TABLE_COLUMNS[0]!.description, 'The time at which the most recent occurrence of this event was recorded.');
  assert.equal(EVENT_TABLE_COLUMNS[3]!.description, 'The object that this event is about.');
  assert.match(EVENT_TABLE_COLUMNS[4]!.description, /^If referring to a piece of an object instead of an entire object/);
  assert.match(EVENT_TABLE_COLUMNS[9]!.description, /^Name must be unique within a namespace\. .*names#names$/);
});

void test('eventTableCells: Last Seen, First Seen and Count fallbacks', () => {
  const T = (ago: number) => new Date(NOW - ago * 1000).toISOString().replace('.000Z', 'Z');
  const MT = (ago: number) => new Date(NOW - ago * 1000).toISOString().replace('Z', '000Z');
  const cases: [string, Partial<CoreEvent>, [string, string, number]][] = [
    ['all timestamps', { firstTimestamp: T(600), lastTimestamp: T(180), count: 5 }, ['3m', '10m', 5]],
    ['no lastTimestamp: Last Seen is First Seen', { firstTimestamp: T(600), count: 1 }, ['10m', '10m', 1]],
    ['no firstTimestamp: First Seen from eventTime', { eventTime: MT(90), lastTimestamp: T(30), count: 2 }, ['30s', '90s', 2]],
    ['firstTimestamp wins over eventTime', { eventTime: MT(90), firstTimestamp: T(600) }, ['10m', '10m', 1]],
    ['only eventTime', { eventTime: MT(300) }, ['5m', '5m', 1]],
    ['no timestamps at all', {}, ['<unknown>', '<unknown>', 1]],
    ['zero time counts as unset', { firstTimestamp: '0001-01-01T00:00:00Z', lastTimestamp: null }, ['<unknown>', '<unknown>', 1]],
    ['count 0 without series shows 1', { lastTimestamp: T(10), count: 0 }, ['10s', '<unknown>', 1]],
    [
      'series overrides Last Seen and Count',
      { eventTime: MT(600), lastTimestamp: T(300), count: 7, series: { count: 3, lastObservedTime: MT(20) } },
      ['20s', '10m', 3],
    ],
    ['series without lastObservedTime', { eventTime: MT(600), series: { count: 2, lastObservedTime: null } }, ['<unknown>', '10m', 2]],
    ['null series is no series', { firstTimestamp: T(60), count: 0, series: null }, ['60s', '60s', 1]],
  ];
  for (const [name, over, [last, first, count]] of cases) {
    const cells = eventTableCells(ev(over), NOW);
    assert.deepEqual([cells[0], cells[7], cells[8]], [last, first, count], name);
  }
});

void test('eventTableCells: row layout, Object lower-cased, message trimmed', () => {
  assert.deepEqual(eventTableCells(BACKOFF, NOW), [
    '3m11s',
    'Warning',
    'BackOff',
    'pod/web-1',
    'spec.containers{app}',
    'kubelet, node-1',
    'Back-off restarting failed container',
    '10m',
    12,
    'web-1.b',
  ]);
  const objects: [Partial<CoreEvent['involvedObject']>, string][] = [
    [{ kind: 'Pod', name: 'web-1' }, 'pod/web-1'],
    [{ kind: 'ReplicaSet', name: '' }, 'replicaset'],
    [{ kind: 'Node' }, 'node'],
    [{ name: 'x' }, '/x'],
    [{ kind: 'İΣ', name: 'x' }, 'iσ/x'],
    [{ kind: 'CronJob', name: 'Nightly' }, 'cronjob/Nightly'],
    [{ kind: 'KİND', name: 'x' }, 'kind/x'],
  ];
  for (const [ref, want] of objects) assert.equal(eventTableCells(ev({ involvedObject: ref }), NOW)[3], want);
});

void test('formatEventSource: component and host with reporting fallbacks', () => {
  const cases: [Partial<CoreEvent>, string][] = [
    [{ source: { component: 'kubelet', host: 'node-1' } }, 'kubelet, node-1'],
    [{ source: { component: 'kubelet' } }, 'kubelet'],
    [{ reportingComponent: 'default-scheduler', reportingInstance: 'default-scheduler-node-0' }, 'default-scheduler, default-scheduler-node-0'],
    [{ source: { component: 'kubelet' }, reportingComponent: 'rc', reportingInstance: 'ri' }, 'kubelet, ri'],
    [{ source: { host: 'node-1' }, reportingComponent: 'rc' }, 'rc, node-1'],
    [{ source: { host: 'node-1' } }, ', node-1'],
    [{}, ''],
  ];
  for (const [over, want] of cases) assert.equal(formatEventSource(ev(over)), want, JSON.stringify(over));
});

void test('goTrimSpace trims what Go trims', () => {
  assert.equal(goTrimSpace(' \t\n\v\f\r msg \u0085\u00a0\u3000'), 'msg');
  assert.equal(goTrimSpace('\ufeffmsg\ufeff'), '\ufeffmsg\ufeff');
  assert.equal(goTrimSpace('a \n b'), 'a \n b');
  // Each of Go's spaces alone at either end, and characters near them that are not spaces.
  const spaces = '\t\n\v\f\r \u0085\u00a0\u1680\u2000\u2005\u200a\u2028\u2029\u202f\u205f\u3000';
  for (const c of spaces) {
    assert.equal(goTrimSpace(`${c}m`), 'm', `U+${c.charCodeAt(0).toString(16)} first`);
    assert.equal(goTrimSpace(`m${c}`), 'm', `U+${c.charCodeAt(0).toString(16)} last`);
  }
  for (const c of '\u0000\u001f!\u0084\u0086\u00a1\u167f\u1681\u200b\u2027\u202e\u3001\ufeff') assert.equal(goTrimSpace(`${c}m${c}`), `${c}m${c}`);
  assert.equal(goTrimSpace(''), '');
});

void test('eventTable: metadata from the list, all columns, row objects per includeObject', () => {
  const listMeta = { resourceVersion: '42', continue: 'tok', remainingItemCount: 3, selfLink: '/x' };
  const t = eventTable([BACKOFF], { now: NOW, listMeta });
  assert.equal(t.kind, 'Table');
  assert.equal(t.apiVersion, 'meta.k8s.io/v1');
  assert.deepEqual(t.metadata, { resourceVersion: '42', continue: 'tok', remainingItemCount: 3 });
  assert.deepEqual(t.columnDefinitions, EVENT_TABLE_COLUMNS);
  assert.deepEqual(t.rows[0]!.cells, eventTableCells(BACKOFF, NOW));
  assert.deepEqual(t.rows[0]!.object, {
    kind: 'PartialObjectMetadata',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { name: 'web-1.b', namespace: 'default' },
  });
  assert.deepEqual(eventTable([BACKOFF], { now: NOW, includeObject: 'Metadata' }).rows[0]!.object, t.rows[0]!.object);
  assert.equal(eventTable([BACKOFF], { now: NOW, includeObject: 'None' }).rows[0]!.object, null);
  assert.equal(eventTable([BACKOFF], { now: NOW, includeObject: 'Object' }).rows[0]!.object, BACKOFF);
  const encoded = eventTable([BACKOFF], { now: NOW, includeObject: 'Object', encodeObject: (e) => ({ note: e.message }) });
  assert.deepEqual(encoded.rows[0]!.object, { note: BACKOFF.message });
  assert.deepEqual(eventTable([], { now: NOW }).metadata, {});
  assert.deepEqual(eventTable([], { now: NOW, listMeta: { remainingItemCount: 0 } }).metadata, { remainingItemCount: 0 });
});

void test('eventTable keeps storage order', () => {
  const t = eventTable([SCALED, BACKOFF, SCHEDULED], { now: NOW });
  assert.deepEqual(
    t.rows.map((r) => r.cells[9]),
    ['web.c', 'web-1.b', 'web-1.a'],
  );
});

void test('eventInterval: describe and kubectl events age rules', () => {
  const cases: [string, CoreEvent, string][] = [
    ['singleton from eventTime', SCHEDULED, '10m'],
    ['count > 1', BACKOFF, '3m11s (x12 over 10m)'],
    ['series', SCALED, '30s (x2 over 5m)'],
    ['eventTime preferred over firstTimestamp', ev({ eventTime: '2024-05-01T11:59:00.000000Z', firstTimestamp: '2024-05-01T11:00:00Z' }), '60s'],
    ['count 1 shows first only', ev({ firstTimestamp: '2024-05-01T11:00:00Z', lastTimestamp: '2024-05-01T11:30:00Z', count: 1 }), '60m'],
    ['count > 1 without lastTimestamp', ev({ firstTimestamp: '2024-05-01T11:50:00Z', count: 2 }), '<unknown> (x2 over 10m)'],
    ['nothing set', ev(), '<unknown>'],
  ];
  for (const [name, e, want] of cases) assert.equal(eventInterval(e, NOW), want, name);
});

void test('goSort sorts like any sort, and keeps ties in order up to 12 elements', () => {
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const shapes: ((i: number, n: number) => number)[] = [
    () => rand(1000),
    () => rand(3),
    (i) => i,
    (i, n) => n - i,
    (i) => (i % 2 === 0 ? i : -i),
    () => 5,
  ];
  for (const n of [0, 1, 2, 12, 13, 49, 50, 51, 100, 257, 1000]) {
    for (const shape of shapes) {
      const items = Array.from({ length: n }, (_, i) => ({ k: shape(i, n), i }));
      const sorted = [...items];
      goSort(sorted, (a, b) => a.k < b.k);
      assert.deepEqual(
        sorted.map((x) => x.k),
        items.map((x) => x.k).sort((a, b) => a - b),
        `n=${n}`,
      );
      assert.deepEqual(
        [...sorted].sort((a, b) => a.i - b.i),
        items,
        `permutation n=${n}`,
      );
      if (n <= 12) assert.deepEqual(sorted, [...items].sort((a, b) => a.k - b.k || a.i - b.i), `stable n=${n}`);
    }
  }
});

void test('goSort follows Go pdqsort on ties beyond 12 elements (hand-traced)', () => {
  // Keys [1, 0 × 12]: partition swaps the pivot (index 6) to the front, then
  // insertion sort moves the single 1 to the end. Element 6 thus overtakes 1–5.
  const items = Array.from({ length: 13 }, (_, i) => ({ k: i === 0 ? 1 : 0, i }));
  goSort(items, (a, b) => a.k < b.k);
  assert.deepEqual(
    items.map((x) => x.i),
    [6, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 0],
  );
});
