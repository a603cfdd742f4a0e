import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_LOOK_BACK_MS, incidentQueryParams, incidentReadSince, incidentWindow, isIncidentWindowError, parseIncidentQueryParams } from './incident-window.js';
import type { IncidentWindowParams } from './incident-window.js';

const NOW = Date.parse('2026-03-01T12:00:00.250Z');
const M = 60_000;
const H = 60 * M;

void test('incidentWindow: every reading of the parameters', () => {
  const cases: [string, IncidentWindowParams, { since?: number; until?: number; lookBack: number }][] = [
    ['nothing: an open window, the default look-back', {}, { lookBack: DEFAULT_LOOK_BACK_MS }],
    ['empty texts are not given', { since: '', sinceTime: '', until: '', lookBack: '' }, { lookBack: DEFAULT_LOOK_BACK_MS }],
    ['since: a duration back from now, to the millisecond', { since: '3m' }, { since: NOW - 3 * M, lookBack: DEFAULT_LOOK_BACK_MS }],
    ['since in days', { since: '7d' }, { since: NOW - 7 * 24 * H, lookBack: DEFAULT_LOOK_BACK_MS }],
    ['sinceTime and until', { sinceTime: '2026-03-01T11:00:00Z', until: '2026-03-01T11:30:00.5Z' }, { since: NOW - H - 250, until: NOW - 30 * M + 250, lookBack: DEFAULT_LOOK_BACK_MS }],
    ['sinceTime with an offset', { sinceTime: '2026-03-01T13:00:00+02:00' }, { since: NOW - H - 250, lookBack: DEFAULT_LOOK_BACK_MS }],
    ['lookBack 0 reads nothing before the window', { since: '1h', lookBack: '0' }, { since: NOW - H, lookBack: 0 }],
    ['lookBack in Go syntax', { since: '1h', lookBack: '1h30m' }, { since: NOW - H, lookBack: 90 * M }],
    ['lookBack at its bound', { lookBack: '7d' }, { lookBack: 7 * 24 * H }],
  ];
  for (const [name, params, want] of cases) assert.deepEqual(incidentWindow(params, NOW), want, name);
});

void test('incidentWindow: what does not read names its parameter', () => {
  const cases: [string, IncidentWindowParams, string, RegExp][] = [
    ['since and sinceTime', { since: '1h', sinceTime: '2026-03-01T11:00:00Z' }, 'sinceTime', /may not be given with since/],
    ['since not a duration', { since: 'yesterday' }, 'since', /invalid duration/],
    ['since zero', { since: '0' }, 'since', /positive duration/],
    ['sinceTime not RFC 3339', { sinceTime: '2026-03-01 11:00' }, 'sinceTime', /not an RFC 3339 time/],
    ['until not RFC 3339', { until: 'now' }, 'until', /not an RFC 3339 time/],
    ['until at the start', { sinceTime: '2026-03-01T11:00:00Z', until: '2026-03-01T11:00:00Z' }, 'until', /after the start/],
    ['until before a since duration', { since: '1h', until: '2026-03-01T10:00:00Z' }, 'until', /after the start/],
    ['lookBack not a duration', { lookBack: '-1h' }, 'lookBack', /invalid duration/],
    ['lookBack past its bound', { lookBack: '8d' }, 'lookBack', /at most 7d/],
  ];
  for (const [name, params, param, message] of cases) {
    assert.throws(
      () => incidentWindow(params, NOW),
      (e: unknown) => isIncidentWindowError(e) && e.param === param && message.test(e.message),
      name,
    );
  }
});

void test('incidentReadSince: the look-back before a window, nothing for an open one', () => {
  assert.equal(incidentReadSince({ since: NOW, lookBack: H }), NOW - H);
  assert.equal(incidentReadSince({ since: NOW, lookBack: 0 }), NOW);
  assert.equal(incidentReadSince({ lookBack: H }), undefined);
});

void test('incidentQueryParams: what the CLI and the UI send reads back as the same window', () => {
  const windows = [
    incidentWindow({ since: '3m' }, NOW),
    incidentWindow({ since: '6h', lookBack: '0' }, NOW),
    incidentWindow({ sinceTime: '2026-03-01T11:00:00.123Z', until: '2026-03-01T11:59:59.999Z', lookBack: '2h' }, NOW),
    incidentWindow({}, NOW),
  ];
  for (const w of windows) assert.deepEqual(parseIncidentQueryParams(incidentQueryParams(w)), w);
  const p = incidentQueryParams(incidentWindow({ since: '3m', lookBack: '1h' }, NOW), ['a', 'b']);
  assert.equal(p.toString(), 'since=2026-03-01T11%3A57%3A00.250Z&lookBack=3600s&cluster=a&cluster=b');
  // The default look-back is not written, so a request without it means the same.
  assert.equal(incidentQueryParams(incidentWindow({ since: '3m' }, NOW)).has('lookBack'), false);
  // A window open at its start says so: the route reads the last hour when given no start, as kubectl asks.
  assert.equal(incidentQueryParams(incidentWindow({}, NOW)).toString(), 'fieldSelector=window%3Dall');
  assert.equal(incidentQueryParams(incidentWindow({ since: '3m' }, NOW)).has('fieldSelector'), false);
});

void test('parseIncidentQueryParams: since on the wire is a time, never a duration', () => {
  assert.throws(
    () => parseIncidentQueryParams(new URLSearchParams({ since: '1h' })),
    (e: unknown) => isIncidentWindowError(e) && e.param === 'sinceTime',
  );
});
