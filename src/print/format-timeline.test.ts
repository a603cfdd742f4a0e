import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildTimeline } from '../timeline/index.js';
import { formatTimeline } from './format-timeline.js';
import { testEvent } from '../../test/support/timeline-events.js';

describe('formatTimeline', () => {
  it('says so when nothing matched', () => {
    assert.match(formatTimeline(buildTimeline({ events: [], for: { kind: 'Pod', name: 'gone', namespace: 'prod' } }), { format: 'table' }), /no events/);
  });
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
