import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildTimeline } from './build-timeline.js';
import { formatTimeline } from './format-timeline.js';
import { T0, iso, testEvent, testOccurrence } from '../../test/support/timeline-events.js';

const podName = 'web-5d8f7c9b4-x2x7k';
const events = [
  testEvent({ name: 'crash', namespace: 'prod', object: podName, reason: 'BackOff', type: 'Warning', message: `Back-off restarting failed container app in pod ${podName}_prod(1)`, first: 60, last: 300, count: 5, fieldPath: 'spec.containers{app}' }),
  testEvent({ name: 'sched', namespace: 'prod', object: podName, reason: 'Scheduled', component: 'default-scheduler', message: `Successfully assigned prod/${podName} to node-2`, first: 0 }),
  testEvent({ name: 'pressure', kind: 'Node', object: 'node-2', reason: 'NodeHasDiskPressure', message: 'Node node-2 status is now: NodeHasDiskPressure', first: 30 }),
  testEvent({ name: 'other-node', kind: 'Node', object: 'node-3', reason: 'NodeHasDiskPressure', first: 30 }),
  testEvent({ name: 'other-pod', namespace: 'prod', object: 'db-0', reason: 'Started', first: 10 }),
];

describe('buildTimeline', () => {
  it('orders one row per occurrence, scoped to the pod and its node, with a summary and next steps', () => {
    const t = buildTimeline({ events, for: { kind: 'Pod', name: podName, namespace: 'prod' } });
    assert.deepEqual(
      t.rows.map((r) => [r.time, r.object, r.reason, r.estimated]),
      [
        [iso(0), `Pod/${podName}`, 'Scheduled', false],
        [iso(30), 'Node/node-2', 'NodeHasDiskPressure', false],
        [iso(60), `Pod/${podName}`, 'BackOff', false],
        [iso(120), `Pod/${podName}`, 'BackOff', true],
        [iso(180), `Pod/${podName}`, 'BackOff', true],
        [iso(240), `Pod/${podName}`, 'BackOff', true],
        [iso(300), `Pod/${podName}`, 'BackOff', false],
      ],
    );
    assert.deepEqual(t.summary.window, { since: iso(0), until: iso(300) });
    assert.equal(t.summary.firstWarning?.reason, 'BackOff');
    assert.deepEqual(t.summary.reasons, [
      { reason: 'BackOff', type: 'Warning', count: 5 },
      { reason: 'Scheduled', type: 'Normal', count: 1 },
      { reason: 'NodeHasDiskPressure', type: 'Normal', count: 1 },
    ]);
    assert.deepEqual(t.summary.objects.map((o) => o.object), [`Pod/${podName}`, 'Node/node-2']);
    assert.equal(t.summary.history, 'events');
    assert.equal(t.summary.estimatedRows, 3);
    // Next steps are the failure catalogue's (src/diagnosis), which the caller composes in: none without it.
    assert.deepEqual(t.hints, []);
  });

  it('cuts rows to the window and the types asked for', () => {
    const t = buildTimeline({ events, since: T0 + 100_000, until: T0 + 300_000, types: ['warning'] });
    assert.deepEqual(t.rows.map((r) => r.time), [iso(120), iso(180), iso(240)]);
    assert.deepEqual(t.summary.window, { since: iso(100), until: iso(300) });
  });

  it('uses archive occurrences when there are some, and says so', () => {
    const crash = events[0]!;
    const occurrences = [0, 1, 2, 3, 4].map((i) => testOccurrence(crash, { at: 60 + i * i * 10, before: i, after: i + 1 }));
    const t = buildTimeline({ events: [crash], occurrences });
    assert.deepEqual(t.rows.map((r) => r.time), [iso(60), iso(70), iso(100), iso(150), iso(220)]);
    assert.equal(t.summary.history, 'occurrences');
    assert.equal(t.summary.estimatedRows, 0);
  });

  it('says so when nothing matched', () => {
    const t = buildTimeline({ events: [], for: { kind: 'Pod', name: 'gone', namespace: 'prod' } });
    assert.deepEqual(t.summary.window, { since: null, until: null });
    assert.equal(t.summary.firstWarning, null);
    assert.match(formatTimeline(t, { format: 'table' }), /no events/);
  });
});

describe('formatTimeline', () => {
  const t = buildTimeline({
    events: [testEvent({ name: 'a', object: 'p', reason: 'Failed', type: 'Warning', message: 'bad | "quoted", value\nsecond line \x1b[31m', first: 0 })],
  });
  it('quotes CSV fields as RFC 4180 does, terminal escapes shown', () => {
    assert.equal(
      formatTimeline(t, { format: 'csv' }),
      'time,namespace,object,type,reason,message,count,estimated,earliest,latest\r\n2025-01-01T00:00:00Z,default,Pod/p,Warning,Failed,"bad | ""quoted"", value\nsecond line ^[[31m",1,false,,\r\n',
    );
  });
  it('escapes pipes, line breaks and terminal escapes in markdown cells', () => {
    assert.match(formatTimeline(t, { format: 'markdown' }), /\| bad \\\| "quoted", value second line \^\\\[\\\[31m \|/);
  });
  it('keeps links, images and formulas in event text inert in markdown and CSV', () => {
    const evil = buildTimeline({
      events: [
        testEvent({ name: 'l', object: 'p`x', reason: 'Failed', type: 'Warning', message: 'see [docs](https://evil.example) ![](https://tracker.example/p.png) <b>x</b>', first: 0 }),
        testEvent({ name: 'f', object: 'q', reason: '=HYPERLINK("https://evil.example")', type: 'Warning', message: '@SUM(A1)', first: 1 }),
      ],
    });
    const md = formatTimeline(evil, { format: 'markdown' });
    assert.ok(!md.includes('[docs](') && !md.includes('![') && !md.includes('<b>'), md);
    assert.match(md, /see \\\[docs\\\]\(https:\/\/evil\.example\) !\\\[\\\]\(https:\/\/tracker\.example\/p\.png\) \\<b\\>x\\<\/b\\>/);
    assert.match(md, /``Pod\/p`x``/);
    const csv = formatTimeline(evil, { format: 'csv' });
    assert.match(csv, /,"'=HYPERLINK\(""https:\/\/evil\.example""\)",'@SUM\(A1\),/);
  });
  it("shows a next step's reason, event text, with its controls escaped", () => {
    const out = formatTimeline({ ...t, hints: [{ reason: 'Bad\x1b[31mReason', command: 'kubectl get nodes', why: 'w' }] }, { format: 'table' });
    assert.match(out, /^ {2}Bad\^\[\[31mReason: w$/m);
    assert.ok(!out.includes('\x1b'), out);
  });
  it('prints the documented JSON shape', () => {
    const json = JSON.parse(formatTimeline(t, { format: 'json' })) as Record<string, unknown>;
    assert.deepEqual(Object.keys(json), ['summary', 'rows', 'hints']);
    assert.deepEqual(Object.keys((json.rows as object[])[0]!), ['time', 'namespace', 'object', 'type', 'reason', 'message', 'count', 'estimated']);
  });
  it('colours Warning rows only through the style it is given', () => {
    const coloured = formatTimeline(t, { format: 'table', style: { warning: (s) => `<w>${s}</w>`, dim: (s) => s, bold: (s) => s } });
    assert.match(coloured, /<w>Warning {3}<\/w>/);
    assert.doesNotMatch(formatTimeline(t, { format: 'table' }), /<w>|\x1b\[/);
  });
});
