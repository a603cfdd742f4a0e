import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CoreEvent } from '../api/index.js';
import { formatLintReport } from '../print/index.js';
import { LINT_CHECKS, lintEvents } from './lint-events.js';
import { testEvent } from '../../test/support/timeline-events.js';

function ev(patch: Partial<CoreEvent>): CoreEvent {
  return { ...testEvent({ name: 'e', object: 'web-1', reason: 'Started', message: 'Started container app', first: 0, fieldPath: 'spec.containers{app}' }), ...patch };
}

describe('LINT_CHECKS', () => {
  const cases: [string, Partial<CoreEvent>, string[]][] = [
    ['a good event', {}, []],
    ['snake_case reason', { reason: 'pod_started' }, ['reason-not-UpperCamelCase']],
    ['lowerCamel reason', { reason: 'backOff' }, ['reason-not-UpperCamelCase']],
    ['empty reason', { reason: '' }, ['reason-not-UpperCamelCase']],
    ['custom type', { type: 'Critical' }, ['type-not-Normal-or-Warning']],
    ['lower-case type', { type: 'warning' }, ['type-not-Normal-or-Warning']],
    ['long message', { message: `Started container app ${'x'.repeat(300)}` }, ['message-long']],
    ['message naming nothing', { message: 'Something went wrong' }, ['message-without-number-or-name']],
    ['message with a number only', { message: 'Retried 3 times' }, []],
    ['message naming the object', { message: 'Restarted web-1' }, []],
    ['no reporter', { source: {}, reportingComponent: '' }, ['no-reporting-controller']],
    ['reporter from the new API', { source: {}, reportingComponent: 'my-operator' }, []],
  ];
  for (const [name, patch, want] of cases) {
    it(name, () => {
      assert.deepEqual(LINT_CHECKS.filter((c) => c.breaks(ev(patch))).map((c) => c.id), want);
    });
  }
});

describe('lintEvents', () => {
  it('counts events and occurrences per check and per reporter and reason', () => {
    const report = lintEvents([
      ev({ reason: 'pod_started', count: 4 }),
      ev({ reason: 'pod_started', metadata: { name: 'e2', namespace: 'default' } }),
      ev({ type: 'Info', reason: 'Sync', message: 'ok' }),
      ev({}),
    ]);
    assert.equal(report.checked, 4);
    assert.equal(report.broken, 3);
    assert.deepEqual(report.byCheck.map((c) => [c.check, c.events, c.occurrences]), [
      ['reason-not-UpperCamelCase', 2, 5],
      ['type-not-Normal-or-Warning', 1, 1],
      ['message-long', 0, 0],
      ['message-without-number-or-name', 1, 1],
      ['no-reporting-controller', 0, 0],
    ]);
    assert.deepEqual(report.findings[0], { check: 'reason-not-UpperCamelCase', reporter: 'kubelet', reason: 'pod_started', events: 2, occurrences: 5, example: 'default/e' });
    assert.match(formatLintReport(report), /^3 of 4 events break a convention\.\n\nCHECK {4,}EVENTS {3}OCCURRENCES/);
  });
  it('prints reporters and reasons with every terminal control shown, one finding per line', () => {
    const report = lintEvents([
      ev({ reason: 'bad\x1b]0;owned\x07\x9b2J\u202eok', source: { component: 'ctl\x08\x08\x7f\nfake-line' } }),
    ]);
    const out = formatLintReport(report);
    assert.doesNotMatch(out, /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]/, JSON.stringify(out));
    assert.match(out, /ctl\^H\^H\^\?\^Jfake-line +bad\^\[\]0;owned\^G\\u009b2J\\u202eok/);
  });
});
