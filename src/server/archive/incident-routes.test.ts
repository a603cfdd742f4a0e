import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { IncidentObjectList, Table } from '../../api/index.js';
import { collectIncidents } from '../../diagnosis/index.js';
import { FakeClock } from '../../internal/index.js';
import { MemoryEventStore } from '../../storage/memory/index.js';
import { storeTimelineSource } from '../../timeline/index.js';
import { iso, T0, testEvent } from '../../../test/support/timeline-events.js';
import { createEventsServer } from '../server.js';
import type { KeventsServer } from '../server.js';

const BASE = '/apis/archive.kevents.io/v1alpha1';

async function call(base: string, method: string, path: string, accept?: string): Promise<{ status: number; json: any }> {
  const res = await fetch(base + path, { method, ...(accept !== undefined ? { headers: { Accept: accept } } : {}) });
  const text = await res.text();
  return { status: res.status, json: text === '' ? undefined : JSON.parse(text) };
}

void describe('incidents route', () => {
  const clock = new FakeClock(T0 + 30 * 60_000);
  let server: KeventsServer;
  let bare: KeventsServer;
  let base: string;
  let bareBase: string;
  before(async () => {
    const store = new MemoryEventStore({ clock });
    server = createEventsServer({
      store,
      clock,
      incidents: (q) => collectIncidents({ source: storeTimelineSource(store, { clusters: q.clusters }), namespace: q.namespace, since: q.since, until: q.until, now: clock.now() }),
    });
    base = `http://127.0.0.1:${(await server.listen('127.0.0.1', 0)).port}`;
    bare = createEventsServer({ store: new MemoryEventStore({ clock }), clock });
    bareBase = `http://127.0.0.1:${(await bare.listen('127.0.0.1', 0)).port}`;
    await store.create(
      testEvent({
        name: 'web-7d4b9c8f5.1',
        namespace: 'shop',
        kind: 'ReplicaSet',
        object: 'web-7d4b9c8f5',
        reason: 'FailedCreate',
        type: 'Warning',
        component: 'replicaset-controller',
        message: 'Error creating: pods "web-7d4b9c8f5-x" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2',
        first: 60,
        last: 600,
        count: 5,
      }),
    );
    await store.create(testEvent({ name: 'api-1.1', namespace: 'pay', object: 'api-1', reason: 'BackOff', type: 'Warning', message: 'Back-off restarting failed container api in pod api-1_pay(u)', first: 120, last: 900, count: 8 }));
  });
  after(async () => {
    await server.close();
    await bare.close();
  });

  void it('serves the incidents of every namespace as the list kind IncidentList, most recent first', async () => {
    const r = await call(base, 'GET', `${BASE}/incidents?since=${iso(0)}&until=${iso(3600)}`);
    assert.equal(r.status, 200);
    const list = r.json as IncidentObjectList;
    assert.equal(list.kind, 'IncidentList');
    assert.equal(list.apiVersion, 'archive.kevents.io/v1alpha1');
    assert.deepEqual(list.window, { since: iso(0), until: iso(3600) });
    assert.deepEqual(
      list.items.map((i) => [i.kind, i.metadata.namespace, i.metadata.name, i.status.kind, i.status.root]),
      [
        ['Incident', 'pay', 'pod.api-1', 'crash-loop', 'Pod/api-1'],
        ['Incident', 'shop', 'replicaset.web-7d4b9c8f5', 'create-forbidden-quota', 'ReplicaSet/web-7d4b9c8f5'],
      ],
    );
    assert.equal(list.items[1]!.metadata.creationTimestamp, iso(60));
    assert.equal(list.items[1]!.status.start.time, iso(60));
    assert.equal(list.items[1]!.status.occurrences, 5);
  });

  void it('keeps a namespaced request to its namespace', async () => {
    const r = await call(base, 'GET', `${BASE}/namespaces/shop/incidents?since=${iso(0)}`);
    assert.equal(r.status, 200);
    assert.deepEqual(
      (r.json as IncidentObjectList).items.map((i) => i.status.namespace),
      ['shop'],
    );
  });

  void it('gets one incident by name, in its namespace, as an object or a one-row Table', async () => {
    const one = await call(base, 'GET', `${BASE}/namespaces/shop/incidents/replicaset.web-7d4b9c8f5`);
    assert.equal(one.status, 200);
    assert.deepEqual([one.json.kind, one.json.metadata.name, one.json.status.kind], ['Incident', 'replicaset.web-7d4b9c8f5', 'create-forbidden-quota']);
    const row = await call(base, 'GET', `${BASE}/namespaces/shop/incidents/replicaset.web-7d4b9c8f5`, 'application/json;as=Table;v=v1;g=meta.k8s.io');
    assert.deepEqual(row.json.rows.map((r: { cells: unknown[] }) => r.cells[0]), ['replicaset.web-7d4b9c8f5']);
    const elsewhere = await call(base, 'GET', `${BASE}/namespaces/pay/incidents/replicaset.web-7d4b9c8f5`);
    assert.equal(elsewhere.status, 404);
    assert.equal(elsewhere.json.message, 'incidents.archive.kevents.io "replicaset.web-7d4b9c8f5" not found');
  });

  void it('reads the last hour without a window, and the window of --field-selector window=DURATION', async () => {
    // The clock is 30 minutes past T0: the last hour holds both incidents; the last 10 minutes (from T0+20m) neither, last reported at T0+10m and T0+15m.
    const hour = await call(base, 'GET', `${BASE}/incidents`);
    assert.equal((hour.json as IncidentObjectList).window.since, iso(-30 * 60));
    assert.equal((hour.json as IncidentObjectList).items.length, 2);
    const short = await call(base, 'GET', `${BASE}/incidents?fieldSelector=${encodeURIComponent('window=10m')}`);
    assert.equal(short.status, 200);
    assert.equal((short.json as IncidentObjectList).window.since, iso(20 * 60));
    assert.deepEqual((short.json as IncidentObjectList).items, []);
    const all = await call(base, 'GET', `${BASE}/incidents?fieldSelector=${encodeURIComponent('window=all')}`);
    assert.equal((all.json as IncidentObjectList).window.since, null);
    assert.equal((all.json as IncidentObjectList).items.length, 2);
    // An incident has no labels: kubectl get incidents -l app=web lists none, -l '!app' all.
    assert.deepEqual((await call(base, 'GET', `${BASE}/incidents?labelSelector=${encodeURIComponent('app=web')}`)).json.items, []);
    assert.equal((await call(base, 'GET', `${BASE}/incidents?labelSelector=${encodeURIComponent('!app')}`)).json.items.length, 2);
    const other = await call(base, 'GET', `${BASE}/namespaces/shop/incidents?fieldSelector=${encodeURIComponent('metadata.namespace=pay')}`);
    assert.deepEqual((other.json as IncidentObjectList).items, []);
  });

  void it('answers a Table of NAME, STATUS, SINCE, ROOT and CAUSE with each row\'s metadata, as kubectl asks', async () => {
    const r = await call(base, 'GET', `${BASE}/incidents?since=${iso(0)}`, 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json');
    assert.equal(r.status, 200);
    const t = r.json as Table;
    assert.equal(t.kind, 'Table');
    assert.deepEqual(t.columnDefinitions.filter((c) => c.priority === 0).map((c) => c.name), ['Name', 'Status', 'Since', 'Root', 'Cause']);
    assert.deepEqual(t.rows.map((row) => row.cells.slice(0, 4)), [
      ['pod.api-1', 'Ongoing', '28m', 'Pod/api-1'],
      ['replicaset.web-7d4b9c8f5', 'Ongoing', '29m', 'ReplicaSet/web-7d4b9c8f5'],
    ]);
    assert.match(String(t.rows[1]!.cells[4]), /ResourceQuota "compute" would be exceeded/);
    assert.deepEqual(t.rows[0]!.object, { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'pod.api-1', namespace: 'pay', creationTimestamp: iso(120) } });
  });

  const bad: [string, string, RegExp][] = [
    ['a time that is not RFC 3339', '?since=yesterday', /since: "yesterday" is not an RFC 3339 time/],
    ['a duration as since (a request is read later than it was written)', '?since=1h', /since: "1h" is not an RFC 3339 time/],
    ['a window that ends before it starts', `?since=${iso(10)}&until=${iso(0)}`, /until: must be after the start of the window/],
    ['a look-back that is not a duration', '?lookBack=forever', /lookBack: invalid duration "forever"/],
    ['a look-back past its bound', '?lookBack=8d', /lookBack: must be at most 7d/],
    ["the timeline's for", '?for=pod/x', /for: not a parameter of incidents/],
    ['a field the selector does not know', `?fieldSelector=${encodeURIComponent('status.root=x')}`, /field label not supported: status\.root/],
    ['a window that is no duration', `?fieldSelector=${encodeURIComponent('window=a day')}`, /fieldSelector window: /],
    ['a window beside since', `?since=${iso(0)}&fieldSelector=${encodeURIComponent('window=1h')}`, /give a window or since and until, not both/],
  ];
  for (const [what, query, message] of bad) {
    void it(`answers 400 with a Status for ${what}`, async () => {
      const r = await call(base, 'GET', `${BASE}/incidents${query}`);
      assert.equal(r.status, 400);
      assert.equal(r.json.kind, 'Status');
      assert.match(r.json.message, message);
    });
  }

  void it('answers 405 to a write and a watch and 404 without a reader', async () => {
    assert.equal((await call(base, 'POST', `${BASE}/incidents`)).status, 405);
    assert.equal((await call(base, 'GET', `${BASE}/incidents?watch=true`)).status, 405);
    assert.equal((await call(bareBase, 'GET', `${BASE}/incidents`)).status, 404);
  });
});
