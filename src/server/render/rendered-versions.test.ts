import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventTable } from '../../api/index.js';
import type { CoreEvent, EventApi, IncludeObject, ListMeta } from '../../api/index.js';
import type { ListedVersion } from '../../storage/index.js';
import { RenderedVersions } from './rendered-versions.js';
import { encodeFor, listFor } from '../rest/views.js';

const NOW = Date.UTC(2025, 5, 1, 12, 0, 0);

/** EVENTS cover what changes a row: ages from firstTimestamp, eventTime, series; counts; empty fields; text that JSON escapes. */
const EVENTS: CoreEvent[] = [
  {
    metadata: { name: 'web-1.17a2', namespace: 'default', uid: 'u-1', creationTimestamp: '2025-06-01T11:00:00Z', resourceVersion: '7' },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-1', apiVersion: 'v1', fieldPath: 'spec.containers{app}' },
    reason: 'BackOff',
    message: '  Back-off restarting "app" \u2028 <in pod> \n',
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: '2025-06-01T11:00:00Z',
    lastTimestamp: '2025-06-01T11:58:00Z',
    count: 12,
    type: 'Warning',
    reportingComponent: 'kubelet',
    reportingInstance: 'node-1',
  },
  {
    metadata: { name: 'sched.1', namespace: 'kube-system', labels: { b: '2', a: '1' }, annotations: { x: 'y' }, resourceVersion: '9' },
    involvedObject: { kind: 'Pod', name: '' },
    reason: 'FailedScheduling',
    message: '0/3 nodes are available',
    source: {},
    firstTimestamp: null,
    lastTimestamp: null,
    eventTime: '2025-06-01T11:59:30.123456Z',
    series: { count: 4, lastObservedTime: '2025-06-01T11:59:59.000001Z' },
    action: 'Scheduling',
    type: 'Normal',
    reportingComponent: 'default-scheduler',
    reportingInstance: 'default-scheduler-x',
  },
  {
    metadata: { name: 'bare', namespace: 'n', resourceVersion: '12' },
    involvedObject: {},
    source: { component: 'c' },
  },
];

function versions(events: CoreEvent[]): ListedVersion[] {
  // Each object() is a copy, as a store hands out.
  return events.map((e) => ({ resourceVersion: Number(e.metadata.resourceVersion), object: () => structuredClone(e) }));
}

const META: ListMeta[] = [{ resourceVersion: '12' }, { resourceVersion: '12', continue: 'abc', remainingItemCount: 0 }];

for (const maxBytes of [0, 300, 1 << 20]) {
  test(`RenderedVersions renders lists and Tables byte for byte as listFor and eventTable (bound ${maxBytes})`, () => {
    const rendered = new RenderedVersions(maxBytes);
    // Twice: the second round is served from what the first kept.
    for (let round = 0; round < 2; round++) {
      for (const api of ['v1', 'events.k8s.io/v1'] as EventApi[]) {
        for (const metadata of META) {
          for (const items of [EVENTS, [], EVENTS.slice(1)]) {
            assert.equal(rendered.list(api, versions(items), metadata).toString(), JSON.stringify(listFor(api, items, metadata)));
            for (const includeObject of ['Metadata', 'None', 'Object', ''] as IncludeObject[]) {
              const want = eventTable(items, { now: NOW + round * 61_000, includeObject, listMeta: metadata, encodeObject: (e) => encodeFor(api, e) });
              const got = rendered.table(api, versions(items), { now: NOW + round * 61_000, includeObject, listMeta: metadata });
              assert.equal(got.toString(), JSON.stringify(want), `${api} ${includeObject}`);
            }
          }
        }
      }
      assert.ok(rendered.size <= maxBytes, `holds ${rendered.size} bytes, bound ${maxBytes}`);
    }
  });
}

test('RenderedVersions decodes a version it holds no more than once', () => {
  const rendered = new RenderedVersions(1 << 20);
  let decoded = 0;
  const items = EVENTS.map((e) => ({ resourceVersion: Number(e.metadata.resourceVersion), object: () => (decoded++, structuredClone(e)) }));
  rendered.list('v1', items, {});
  rendered.list('v1', items, {});
  rendered.table('v1', items, { now: NOW, includeObject: 'Metadata', listMeta: {} });
  rendered.table('v1', items, { now: NOW, includeObject: 'Metadata', listMeta: {} });
  assert.equal(decoded, 2 * EVENTS.length, 'once for the items, once for the rows');
});

test('RenderedVersions.prepare keeps what a list or Table will read, and counts what it rendered', () => {
  for (const [as, api] of [
    [{ table: true, includeObject: 'Metadata' }, 'v1'],
    [{ table: true, includeObject: 'Object' }, 'events.k8s.io/v1'],
    [{ table: false }, 'events.k8s.io/v1'],
  ] as const) {
    const rendered = new RenderedVersions(1 << 20);
    let decoded = 0;
    const items = EVENTS.map((e) => ({ resourceVersion: Number(e.metadata.resourceVersion), object: () => (decoded++, structuredClone(e)) }));
    rendered.prepare(api, items, as);
    const prepared = rendered.misses;
    assert.equal(prepared, as.table && as.includeObject === 'Object' ? 2 * EVENTS.length : EVENTS.length);
    assert.equal(decoded, prepared);
    const got = as.table
      ? rendered.table(api, items, { now: NOW, includeObject: as.includeObject, listMeta: {} }).toString()
      : rendered.list(api, items, {}).toString();
    const want = as.table
      ? JSON.stringify(eventTable(EVENTS, { now: NOW, includeObject: as.includeObject, listMeta: {}, encodeObject: (e) => encodeFor(api, e) }))
      : JSON.stringify(listFor(api, EVENTS, {}));
    assert.equal(got, want);
    assert.equal(rendered.misses, prepared, 'the answer is spliced from what prepare kept');
    assert.equal(decoded, prepared);
  }
});

test('RenderedVersions lets the least recently used versions go past its bound, and keeps the others', () => {
  const many = Array.from({ length: 40 }, (_, i) => ({ ...EVENTS[0]!, metadata: { ...EVENTS[0]!.metadata, name: `e-${i}`, resourceVersion: String(i + 1) } }));
  const one = (i: number): ListedVersion[] => versions([many[i]!]);
  // A bound that holds about ten items.
  const probe = new RenderedVersions(1 << 20);
  probe.list('v1', one(0), {});
  const rendered = new RenderedVersions(Math.floor(probe.size * 10.5));
  for (let i = 0; i < 10; i++) rendered.list('v1', one(i), {});
  rendered.list('v1', one(0), {});
  const missed = rendered.misses;
  rendered.list('v1', one(10), {});
  rendered.list('v1', one(0), {});
  assert.equal(rendered.misses, missed + 1, 'the version used again stayed');
  rendered.list('v1', one(1), {});
  assert.equal(rendered.misses, missed + 2, 'the oldest one went');
  for (let i = 11; i < 40; i++) rendered.list('v1', one(i), {});
  assert.ok(rendered.size <= rendered.maxBytes);
  const before = rendered.misses;
  for (let i = 39; i >= 31; i--) rendered.list('v1', one(i), {});
  assert.equal(rendered.misses, before, 'the nine newest are all kept');
});
