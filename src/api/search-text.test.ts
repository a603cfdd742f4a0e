import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CLUSTER_LABEL } from './cluster.js';
import type { CoreEvent } from './types.js';
import { parseSearchQuery } from './search-query.js';
import { NO_TIME_MS, createSearchMatcher, searchFieldValue, searchTimeMs } from './search-text.js';
import { searchWords } from './search-words.js';

const NOW = Date.UTC(2025, 5, 1, 12);

/** kubelet is a core/v1 event as the kubelet writes it. */
const kubelet: CoreEvent = {
  metadata: { namespace: 'shop', name: 'checkout-db-0.17f1', labels: { [CLUSTER_LABEL]: 'prod-eu' } },
  involvedObject: { kind: 'Pod', namespace: 'shop', name: 'checkout-db-0' },
  reason: 'FailedMount',
  message: 'MountVolume.SetUp failed for volume "certs" : secret "checkout-tls" not found',
  source: { component: 'kubelet', host: 'worker-3' },
  type: 'Warning',
  lastTimestamp: '2025-06-01T11:30:00Z',
  firstTimestamp: '2025-06-01T11:00:00Z',
};

/** scheduler is an events.k8s.io event as stored: reporting fields, no source. */
const scheduler: CoreEvent = {
  metadata: { namespace: 'shop', name: 'web-7d9.18a2' },
  involvedObject: { kind: 'Pod', namespace: 'shop', name: 'web-7d9' },
  reason: 'FailedScheduling',
  message: '0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.',
  reportingComponent: 'default-scheduler',
  reportingInstance: 'default-scheduler-control-plane',
  type: 'Warning',
  eventTime: '2025-06-01T11:45:00.123456Z',
};

void describe('searchWords', () => {
  const cases: [string, string[]][] = [
    ['', []],
    ['Back-off restarting failed container', ['back', 'off', 'restarting', 'failed', 'container']],
    ['MountVolume.SetUp "certs" : x509:', ['mountvolume', 'setup', 'certs', 'x509']],
    ['snake_case/path-0.1', ['snake', 'case', 'path', '0', '1']],
    ['Überprüfung fehlgeschlagen', ['überprüfung', 'fehlgeschlagen']],
    ['日本語 text', ['日本語', 'text']],
    ['\u001b[31mred', ['31mred']],
  ];
  for (const [text, want] of cases) void it(JSON.stringify(text), () => assert.deepEqual(searchWords(text), want));
});

void describe('searchFieldValue', () => {
  const cases: [CoreEvent, Parameters<typeof searchFieldValue>[1], string][] = [
    [kubelet, 'controller', 'kubelet'],
    [kubelet, 'node', 'worker-3'],
    [kubelet, 'cluster', 'prod-eu'],
    [kubelet, 'ns', 'shop'],
    [scheduler, 'controller', 'default-scheduler'],
    [scheduler, 'node', 'default-scheduler-control-plane'],
    [scheduler, 'cluster', ''],
  ];
  for (const [e, field, want] of cases) void it(`${e.reason} ${field}`, () => assert.equal(searchFieldValue(e, field), want));
});

void describe('searchTimeMs', () => {
  void it('is the last time, from the eventTime when there is no other', () => {
    assert.equal(searchTimeMs(kubelet), Date.parse('2025-06-01T11:30:00Z'));
    assert.equal(searchTimeMs(scheduler), Date.parse('2025-06-01T11:45:00.123Z'));
    assert.equal(searchTimeMs({ metadata: {}, involvedObject: {} }), NO_TIME_MS);
  });
});

void describe('createSearchMatcher', () => {
  // [query, event, the fields matched or undefined for no match]
  const cases: [string, CoreEvent, string[] | undefined][] = [
    ['', kubelet, []],
    ['certs', kubelet, ['message']],
    ['CERTS', kubelet, ['message']],
    ['cert', kubelet, undefined],
    ['"secret checkout tls"', kubelet, ['message']],
    ['"tls secret"', kubelet, undefined],
    ['checkout-tls', kubelet, ['message']],
    ['checkout-db', kubelet, ['name']],
    ['failedmount', kubelet, ['reason']],
    ['shop', kubelet, ['ns']],
    ['pod', kubelet, ['kind']],
    ['kubelet', kubelet, ['controller']],
    ['worker', kubelet, ['node']],
    ['prod', kubelet, undefined],
    ['certs mountvolume', kubelet, ['message']],
    ['certs missing', kubelet, undefined],
    ['certs -tls', kubelet, undefined],
    ['certs -"tls secret"', kubelet, ['message']],
    ['-nothing', kubelet, []],
    ['"3 insufficient cpu"', scheduler, ['message']],
    ['reason:failedmount', kubelet, ['reason']],
    ['reason:Failed*', kubelet, ['reason']],
    ['reason:Failed', kubelet, undefined],
    ['-reason:FailedMount', kubelet, undefined],
    ['-reason:Failed*', scheduler, undefined],
    ['-reason:BackOff', scheduler, []],
    ['type:warning', kubelet, ['type']],
    ['type:normal', kubelet, undefined],
    ['ns:shop', kubelet, ['ns']],
    ['ns:sho*', kubelet, ['ns']],
    ['ns:kube-system', kubelet, undefined],
    ['kind:pod', kubelet, ['kind']],
    ['kind:Node', kubelet, undefined],
    ['name:checkout-db-0', kubelet, ['name']],
    ['name:checkout-db-*', kubelet, ['name']],
    ['name:checkout-db', kubelet, undefined],
    ['name:"checkout-db-*"', kubelet, undefined],
    ['node:worker-3', kubelet, ['node']],
    ['node:default-scheduler-control-plane', scheduler, ['node']],
    ['controller:default-scheduler', scheduler, ['controller']],
    ['controller:kubelet', kubelet, ['controller']],
    ['cluster:prod-eu', kubelet, ['cluster']],
    ['cluster:prod*', scheduler, undefined],
    ['certs reason:FailedMount node:worker-3', kubelet, ['message', 'reason', 'node']],
    ['since:2025-06-01T11:30:00Z', kubelet, []],
    ['since:2025-06-01T11:30:00.001Z', kubelet, undefined],
    ['until:2025-06-01T11:30:00Z', kubelet, undefined],
    ['until:2025-06-01T11:30:00.001Z', kubelet, []],
    ['since:1h', kubelet, []],
    ['since:20m', kubelet, undefined],
  ];
  for (const [q, e, want] of cases) {
    void it(`${JSON.stringify(q)} on ${e.reason}`, () => assert.deepEqual(createSearchMatcher(parseSearchQuery(q, { nowMs: NOW })).matches(e), want));
  }
});
