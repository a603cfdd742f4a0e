import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createTabWriter,
  DESCRIBE_TABWRITER,
  formatTabbed,
  formatTable,
  KUBECTL_TABWRITER,
  printTableAsKubectl,
  type TabWriterSettings,
} from './tabwriter.js';
import type { Table, TableColumnDefinition } from '../api/index.js';

function settings(minwidth: number, tabwidth: number, padding: number, padchar: string, flags: Partial<TabWriterSettings> = {}): TabWriterSettings {
  return { minwidth, tabwidth, padding, padchar, ...flags };
}

// Cases and expected outputs of Go's text/tabwriter test suite.
const GO_CASES: [string, TabWriterSettings, string, string][] = [
  ['empty', settings(8, 0, 1, '.'), '', ''],
  ['newlines only', settings(8, 0, 1, '.'), '\n\n\n', '\n\n\n'],
  ['no tabs', settings(8, 0, 1, '.'), 'a\nb\nc', 'a\nb\nc'],
  ['lone tab on last line', settings(8, 0, 1, '.'), '\t', ''],
  ['lone tab, align right', settings(8, 0, 1, '.', { alignRight: true }), '\t', ''],
  ['5', settings(8, 0, 1, '.'), '*\t*', '*.......*'],
  ['5b', settings(8, 0, 1, '.'), '*\t*\n', '*.......*\n'],
  ['5c', settings(8, 0, 1, '.'), '*\t*\t', '*.......*'],
  ['5c debug', settings(8, 0, 1, '.', { debug: true }), '*\t*\t', '*.......|*'],
  ['5d', settings(8, 0, 1, '.', { alignRight: true }), '*\t*\t', '.......**'],
  ['6', settings(8, 0, 1, '.'), '\t\n', '........\n'],
  ['7b', settings(8, 0, 1, ' '), 'b) foo\tbar', 'b) foo  bar'],
  ['7c', settings(8, 0, 1, '.'), 'c) foo\tbar\t', 'c) foo..bar'],
  ['7e', settings(8, 0, 1, '.'), 'e) foo\tbar\t\n', 'e) foo..bar.....\n'],
  ['8', settings(8, 0, 1, '*'), 'Hello, world!\n', 'Hello, world!\n'],
  ['9a', settings(1, 0, 0, '.'), '1\t2\t3\t4\n11\t222\t3333\t44444\n', '1.2..3...4\n11222333344444\n'],
  ['9c form feed flushes', settings(1, 0, 0, '.'), '1\t2\t3\t4\f11\t222\t3333\t44444\n', '1234\n11222333344444\n'],
  [
    '9c debug',
    settings(1, 0, 0, '.', { debug: true }),
    '1\t2\t3\t4\f11\t222\t3333\t44444\n',
    '1|2|3|4\n---\n11|222|3333|44444\n',
  ],
  ['10a', settings(5, 0, 0, '.'), '1\t2\t3\t4\n', '1....2....3....4\n'],
  ['10b', settings(5, 0, 0, '.'), '1\t2\t3\t4\t\n', '1....2....3....4....\n'],
  [
    '11 runes',
    settings(8, 0, 1, '.'),
    '本\tb\tc\naa\t本本本\tcccc\tddddd\naaa\tbbbb\n',
    '本.......b.......c\naa......本本本.....cccc....ddddd\naaa.....bbbb\n',
  ],
  [
    '12a',
    settings(8, 0, 1, ' ', { alignRight: true }),
    'a\tè\tc\t\naa\tèèè\tcccc\tddddd\t\naaa\tèèèè\t\n',
    '       a       è       c\n      aa     èèè    cccc   ddddd\n     aaa    èèèè\n',
  ],
  ['12b', settings(2, 0, 0, ' '), 'a\tb\tc\naa\tbbb\tcccc\naaa\tbbbb\n', 'a  b  c\naa bbbcccc\naaabbbb\n'],
  [
    '13a',
    settings(4, 0, 1, '-'),
    '4444\t日本語\t22\t1\t333\n999999999\t22\n7\t22\n\t\t\t88888888\n\n666666\t666666\t666666\t4444\n1\t1\t999999999\t0000000000\n',
    '4444------日本語-22--1---333\n999999999-22\n7---------22\n------------------88888888\n\n666666-666666-666666----4444\n1------1------999999999-0000000000\n',
  ],
  [
    '13b',
    settings(4, 0, 3, '.'),
    '4444\t333\t22\t1\t333\n999999999\t22\n7\t22\n\t\t\t88888888\n\n666666\t666666\t666666\t4444\n1\t1\t999999999\t0000000000\n',
    '4444........333...22...1...333\n999999999...22\n7...........22\n....................88888888\n\n666666...666666...666666......4444\n1........1........999999999...0000000000\n',
  ],
  [
    '13c tabs',
    settings(8, 8, 1, '\t'),
    '4444\t333\t22\t1\t333\n999999999\t22\n7\t22\n\t\t\t88888888\n\n666666\t666666\t666666\t4444\n1\t1\t999999999\t0000000000\n',
    '4444\t\t333\t22\t1\t333\n999999999\t22\n7\t\t22\n\t\t\t\t88888888\n\n666666\t666666\t666666\t\t4444\n1\t1\t999999999\t0000000000\n',
  ],
  [
    '14 align right',
    settings(1, 0, 2, ' ', { alignRight: true }),
    '.0\t.3\t2.4\t-5.1\t\n23.0\t12345678.9\t2.4\t-989.4\t\n5.1\t12.0\t2.4\t-7.0\t\n.0\t0.0\t332.0\t8908.0\t\n.0\t-.3\t456.4\t22.1\t\n.0\t1.2\t44.4\t-13.3\t\t',
    '    .0          .3    2.4    -5.1\n  23.0  12345678.9    2.4  -989.4\n   5.1        12.0    2.4    -7.0\n    .0         0.0  332.0  8908.0\n    .0         -.3  456.4    22.1\n    .0         1.2   44.4   -13.3',
  ],
  ['15a', settings(4, 0, 0, '.'), 'a\t\tb', 'a.......b'],
  ['15b htabs are kept', settings(4, 0, 0, '.', { discardEmptyColumns: true }), 'a\t\tb', 'a.......b'],
  ['15c', settings(4, 0, 0, '.', { discardEmptyColumns: true }), 'a\v\vb', 'a...b'],
  ['15d', settings(4, 0, 0, '.', { alignRight: true, discardEmptyColumns: true }), 'a\v\vb', '...ab'],
  [
    '16b',
    settings(100, 100, 0, '\t', { discardEmptyColumns: true }),
    'a\vb\v\vd\na\vb\v\vd\ve\na\na\vb\vc\vd\na\vb\vc\vd\ve\n',
    'a\tb\td\na\tb\td\te\na\na\tb\tc\td\na\tb\tc\td\te\n',
  ],
  [
    '16c debug',
    settings(100, 100, 0, '\t', { discardEmptyColumns: true, debug: true }),
    'a\tb\t\td\na\tb\t\td\te\na\na\tb\tc\td\na\tb\tc\td\te\n',
    'a\t|b\t|\t|d\na\t|b\t|\t|d\t|e\na\na\t|b\t|c\t|d\na\t|b\t|c\t|d\t|e\n',
  ],
];

void test('tabwriter reproduces Go text/tabwriter, however the input is chunked', () => {
  for (const [name, s, src, want] of GO_CASES) {
    assert.equal(formatTabbed(src, s), want, `${name} (all at once)`);
    let out = '';
    const w = createTabWriter(s, (c) => (out += c));
    for (const ch of src) w.write(ch);
    w.flush();
    assert.equal(out, want, `${name} (char by char)`);
  }
});

void test('tabwriter with rememberWidths keeps columns across flushes (liggitt/tabwriter)', () => {
  let out = '';
  const w = createTabWriter(KUBECTL_TABWRITER, (c) => (out += c));
  w.write('First\tMiddle\tLast\n');
  w.write('a\tbb\tccc\n');
  w.write('ddd\teeeeeeeeeeeeee\tf\n');
  w.flush();
  w.write('g\th\ti\n');
  w.flush();
  w.write('j\t\t\n');
  w.flush();
  w.write('\tk\t\n');
  w.flush();
  w.write('\t\tl\n');
  w.flush();
  w.write('mmmmmmmmmmmmmmm\tnnn\tooo\n');
  w.flush();
  assert.equal(
    out,
    'First   Middle           Last\n' +
      'a       bb               ccc\n' +
      'ddd     eeeeeeeeeeeeee   f\n' +
      'g       h                i\n' +
      'j                        \n' +
      '        k                \n' +
      '                         l\n' +
      'mmmmmmmmmmmmmmm   nnn              ooo\n',
  );
  assert.deepEqual(w.rememberedWidths(), [18, 17]);
  out = '';
  w.setRememberedWidths([]);
  w.write('sssss\tt\tu\n');
  w.flush();
  assert.equal(out, 'sssss   t     u\n');
  assert.deepEqual(w.rememberedWidths(), [8, 6]);
  out = '';
  w.setRememberedWidths([10, 5, 5]);
  w.write('v\tw\tx\n');
  w.flush();
  assert.equal(out, 'v         w     x\n');
});

void test('a line without tabs flushes, so blocks on either side align independently', () => {
  assert.equal(
    formatTabbed('a\tb\nlonger text\nccccccccc\td\n', DESCRIBE_TABWRITER),
    'a  b\nlonger text\nccccccccc  d\n',
  );
});

void test('formatTable joins cells and aligns with kubectl settings by default', () => {
  assert.equal(
    formatTable([
      ['NAME', 'AGE'],
      ['a', '5m'],
      ['much-longer-name', '10d'],
    ]),
    'NAME               AGE\na                  5m\nmuch-longer-name   10d\n',
  );
  assert.equal(formatTable([['x', 'y']], DESCRIBE_TABWRITER), 'x  y\n');
});

function col(name: string, priority = 0): TableColumnDefinition {
  return { name, type: 'string', format: '', description: '', priority };
}

function table(columns: TableColumnDefinition[], rows: { cells: unknown[]; object?: unknown }[]): Table {
  return { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: {}, columnDefinitions: columns, rows };
}

const meta = (namespace: string) => ({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { namespace } });

const EVENTS = table(
  [col('Last Seen'), col('Type'), col('Reason'), col('Object'), col('Subobject', 1), col('Message'), col('Count', 1)],
  [
    { cells: ['5m', 'Normal', 'Scheduled', 'pod/web-1', '', 'Successfully assigned default/web-1 to node-1', 1], object: meta('default') },
    { cells: ['<unknown>', 'Warning', 'BackOff', 'pod/web-1', 'spec.containers{app}', 'Back-off', 12], object: meta('kube-system') },
  ],
);

void test('printTableAsKubectl: default columns, upper-cased headers', () => {
  assert.equal(
    printTableAsKubectl(EVENTS),
    'LAST SEEN   TYPE      REASON      OBJECT      MESSAGE\n' +
      '5m          Normal    Scheduled   pod/web-1   Successfully assigned default/web-1 to node-1\n' +
      '<unknown>   Warning   BackOff     pod/web-1   Back-off\n',
  );
});

void test('printTableAsKubectl: -o wide shows priority columns and prints numbers', () => {
  assert.equal(
    printTableAsKubectl(EVENTS, { wide: true }),
    'LAST SEEN   TYPE      REASON      OBJECT      SUBOBJECT              MESSAGE                                         COUNT\n' +
      '5m          Normal    Scheduled   pod/web-1                          Successfully assigned default/web-1 to node-1   1\n' +
      '<unknown>   Warning   BackOff     pod/web-1   spec.containers{app}   Back-off                                        12\n',
  );
});

void test('printTableAsKubectl: -A puts NAMESPACE first, from the row object; none without an object', () => {
  const t = table([col('Name'), col('Age')], [
    { cells: ['a', '1s'], object: meta('default') },
    { cells: ['b', '2s'], object: null },
    { cells: ['c', '3s'], object: { kind: 'Event', apiVersion: 'v1' } },
  ]);
  assert.equal(
    printTableAsKubectl(t, { withNamespace: true }),
    'NAMESPACE   NAME   AGE\ndefault     a      1s\n            b      2s\n            c      3s\n',
  );
});

void test('printTableAsKubectl: --no-headers, and an empty table prints nothing', () => {
  assert.equal(printTableAsKubectl(EVENTS, { noHeaders: true }).split('\n')[0], '5m          Normal    Scheduled   pod/web-1   Successfully assigned default/web-1 to node-1');
  assert.equal(printTableAsKubectl(table([col('Name')], [])), '');
  assert.equal(printTableAsKubectl(table([col('Name')], []), { noHeaders: true }), '');
});

void test('printTableAsKubectl: cells are cut at line breaks, escaped, null is empty, extra cells dropped', () => {
  const t = table([col('A'), col('B'), col('C')], [
    { cells: ['line1\nline2', '\x1b[31mred', null, 'extra'] },
    { cells: ['cr\rhere', 'form\ffeed', true] },
    { cells: [1.5, 1e6 + 0.5, { b: 1, a: ['x', 'y'] }] },
  ]);
  assert.equal(
    printTableAsKubectl(t),
    'A          B               C\n' +
      'line1...   ^[[31mred       \n' +
      'cr...      form...         true\n' +
      '1.5        1.0000005e+06   map[a:[x y] b:1]\n',
  );
});

void test('printTableAsKubectl: from 1.37 column widths are measured in bytes up front', () => {
  const t = table([col('A'), col('B')], [{ cells: ['ééééé', 'x'] }]);
  assert.equal(printTableAsKubectl(t, { kubectlMinor: 36 }), 'A       B\nééééé   x\n');
  assert.equal(printTableAsKubectl(t, { kubectlMinor: 37 }), 'A            B\nééééé        x\n');
  // Without headers the first row carries the padding; the widest cell itself needs none.
  const t2 = table([col('A'), col('B')], [{ cells: ['a', 'x'] }, { cells: ['ééééé', 'y'] }]);
  assert.equal(printTableAsKubectl(t2, { kubectlMinor: 36, noHeaders: true }), 'a       x\nééééé   y\n');
  assert.equal(printTableAsKubectl(t2, { kubectlMinor: 37, noHeaders: true }), 'a            x\nééééé        y\n');
});

void test('printTableAsKubectl: from 1.37 widths hold across the flush every 100 rows', () => {
  const rows = Array.from({ length: 150 }, (_, i) => ({ cells: [i === 120 ? 'a-much-longer-name' : `n${i}`, 'x'] }));
  const t = table([col('Name'), col('Age')], rows);
  const lines = printTableAsKubectl(t, { kubectlMinor: 37 }).split('\n');
  assert.equal(lines[0], 'NAME                 AGE');
  assert.equal(lines[1], 'n0                   x');
  assert.equal(lines[121], 'a-much-longer-name   x');
  const before = printTableAsKubectl(t, { kubectlMinor: 36 }).split('\n');
  assert.deepEqual(before, lines);
});
