import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GO_ZERO_TIME_MS } from '../api/index.js';
import type { CoreEvent } from '../api/index.js';
import { createKubectlEventsPrinter, eventsLastSeen, formatKubectlEvents, kubectlEventsHeader, kubectlEventsRows, noEventsMessage, sortKubectlEvents } from './kubectl-events.js';
import { describeEventsSection, describeEventsTabbed } from './describe-events.js';
import { DESCRIBE_TABWRITER, formatTabbed } from './tabwriter.js';
import { BACKOFF, ev, NOW, SCALED, SCHEDULED } from '../../test/support/printer-events.js';

void test('eventsLastSeen: series, then lastTimestamp, then eventTime, else zero', () => {
  assert.equal(eventsLastSeen(SCALED), Date.parse('2024-05-01T11:59:30Z'));
  assert.equal(eventsLastSeen(BACKOFF), Date.parse('2024-05-01T11:56:49Z'));
  assert.equal(eventsLastSeen(SCHEDULED), Date.parse('2024-05-01T11:50:00Z'));
  assert.equal(eventsLastSeen(ev()), GO_ZERO_TIME_MS);
  assert.equal(
    eventsLastSeen(ev({ series: { count: 2, lastObservedTime: null }, lastTimestamp: '2024-05-01T11:00:00Z' })),
    GO_ZERO_TIME_MS,
  );
});

void test('kubectl events: sorted rows, Kind keeps its case, text escaped and trimmed', () => {
  assert.deepEqual(kubectlEventsHeader(), ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
  assert.deepEqual(kubectlEventsHeader(true), ['NAMESPACE', 'LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
  assert.deepEqual(kubectlEventsRows([SCALED, BACKOFF, SCHEDULED], { now: NOW }), [
    ['10m', 'Normal', 'Scheduled', 'Pod/web-1', 'Successfully assigned default/web-1 to node-1'],
    ['3m11s (x12 over 10m)', 'Warning', 'BackOff', 'Pod/web-1', 'Back-off restarting failed container'],
    ['30s (x2 over 5m)', 'Normal', 'ScalingReplicaSet', 'Deployment/web', 'Scaled up replica set web-abc to 2'],
  ]);
  const evil = ev({
    type: 'Normal\x1b[2J',
    reason: 'R\r',
    involvedObject: { kind: 'Pod\x1b', name: 'x\x1b]0;t' },
    message: ' \x1b[31mred\rx \r',
    metadata: { name: 'n', namespace: 'ns\x1b' },
  });
  assert.deepEqual(kubectlEventsRows([evil], { now: NOW, allNamespaces: true }), [
    ['ns^[', '<unknown>', 'Normal^[[2J', 'R\\r', 'Pod^[/x^[]0;t', '^[[31mred\\rx'],
  ]);
});

void test('kubectl events sort: unset times first, microseconds count, ties keep order up to 12', () => {
  const at = (name: string, over: Partial<CoreEvent>) => ev({ metadata: { name }, ...over });
  const items = [
    at('series-late', { series: { count: 2, lastObservedTime: '2024-05-01T11:00:00.000002Z' }, lastTimestamp: '2024-05-01T09:00:00Z' }),
    at('series-early', { series: { count: 2, lastObservedTime: '2024-05-01T11:00:00.000001Z' } }),
    at('last', { lastTimestamp: '2024-05-01T10:00:00Z', eventTime: '2024-05-01T11:30:00.000000Z' }),
    at('unset-1', {}),
    at('event-time', { eventTime: '2024-05-01T10:30:00.000000Z' }),
    at('unset-2', {}),
  ];
  assert.deepEqual(
    sortKubectlEvents(items).map((e) => e.metadata.name),
    ['unset-1', 'unset-2', 'last', 'event-time', 'series-early', 'series-late'],
  );
});

void test('formatKubectlEvents: kubectl output byte for byte', () => {
  assert.equal(
    formatKubectlEvents([SCALED, BACKOFF, SCHEDULED], { now: NOW }),
    'LAST SEEN              TYPE      REASON              OBJECT           MESSAGE\n' +
      '10m                    Normal    Scheduled           Pod/web-1        Successfully assigned default/web-1 to node-1\n' +
      '3m11s (x12 over 10m)   Warning   BackOff             Pod/web-1        Back-off restarting failed container\n' +
      '30s (x2 over 5m)       Normal    ScalingReplicaSet   Deployment/web   Scaled up replica set web-abc to 2\n',
  );
  assert.equal(
    formatKubectlEvents([SCALED, BACKOFF, SCHEDULED], { now: NOW, allNamespaces: true }),
    'NAMESPACE   LAST SEEN              TYPE      REASON              OBJECT           MESSAGE\n' +
      'default     10m                    Normal    Scheduled           Pod/web-1        Successfully assigned default/web-1 to node-1\n' +
      'default     3m11s (x12 over 10m)   Warning   BackOff             Pod/web-1        Back-off restarting failed container\n' +
      'apps        30s (x2 over 5m)       Normal    ScalingReplicaSet   Deployment/web   Scaled up replica set web-abc to 2\n',
  );
  assert.equal(
    formatKubectlEvents([SCHEDULED], { now: NOW, noHeaders: true }),
    '10m   Normal   Scheduled   Pod/web-1   Successfully assigned default/web-1 to node-1\n',
  );
  assert.equal(formatKubectlEvents([], { now: NOW }), '');
  assert.equal(noEventsMessage('default'), 'No events found in default namespace.\n');
  assert.equal(noEventsMessage('default', true), 'No events found.\n');
});

void test('kubectl events --watch printer: header once, columns only ever widen', () => {
  let out = '';
  const p = createKubectlEventsPrinter({ output: (s) => (out += s) });
  p.print([SCHEDULED], NOW);
  p.print([BACKOFF], NOW);
  assert.equal(
    out,
    'LAST SEEN   TYPE     REASON      OBJECT      MESSAGE\n' +
      '10m         Normal   Scheduled   Pod/web-1   Successfully assigned default/web-1 to node-1\n' +
      '3m11s (x12 over 10m)   Warning   BackOff     Pod/web-1   Back-off restarting failed container\n',
  );
});

void test('describeEventsSection: kubectl describe Events section byte for byte', () => {
  const want =
    'Events:\n' +
    '  Type     Reason             Age                   From                   Message\n' +
    '  ----     ------             ----                  ----                   -------\n' +
    '  Normal   ScalingReplicaSet  30s (x2 over 5m)      deployment-controller  Scaled up replica set web-abc to 2\n' +
    '  Normal   Scheduled          10m                   default-scheduler      Successfully assigned default/web-1 to node-1\n' +
    '  Warning  BackOff            3m11s (x12 over 10m)  kubelet                spec.containers{app}: Back-off restarting failed container\n';
  // Sorted by lastTimestamp only: the two events without one come first, in list order.
  assert.equal(describeEventsSection([SCALED, BACKOFF, SCHEDULED], { now: NOW }), want);
  assert.equal(describeEventsSection([SCALED, BACKOFF, SCHEDULED], { now: NOW, kubectlMinor: 35 }), want);
  assert.equal(
    describeEventsSection([BACKOFF], { now: NOW, kubectlMinor: 34 }),
    'Events:\n' +
      '  Type     Reason   Age                   From     Message\n' +
      '  ----     ------   ----                  ----     -------\n' +
      '  Warning  BackOff  3m11s (x12 over 10m)  kubelet  Back-off restarting failed container\n',
  );
});

void test('describeEventsSection: <none>, escaping, and the raw tabbed text', () => {
  assert.equal(describeEventsSection([], { now: NOW }), 'Events:  <none>\n');
  assert.equal(describeEventsTabbed([], { now: NOW }), 'Events:\t<none>\n');
  // Inside a whole describe, <none> aligns with the lines above it (no flush precedes it).
  assert.equal(
    formatTabbed(`Node-Selectors:\t<none>\n${describeEventsTabbed([], { now: NOW })}`, DESCRIBE_TABWRITER),
    'Node-Selectors:  <none>\nEvents:          <none>\n',
  );
  const evil = ev({ type: 'Normal', reason: 'X\x1b[2J', message: 'a\rb', lastTimestamp: '2024-05-01T11:59:00Z', source: { component: 'c' } });
  assert.equal(
    describeEventsTabbed([evil], { now: NOW }),
    'Events:\n  Type\tReason\tAge\tFrom\tMessage\n  ----\t------\t----\t----\t-------\n  Normal\tX^[[2J\t<unknown>\tc\ta\\rb\n',
  );
});
