import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { IncidentList } from '../api/index.js';
import { collectIncidents } from '../diagnosis/index.js';
import { FakeClock } from '../internal/index.js';
import { MemoryEventStore } from '../storage/memory/index.js';
import { storeTimelineSource } from '../timeline/index.js';
import { iso, T0, testEvent } from '../timeline/test-events.js';
import { createEventsServer } from './server.js';
import type { KeventsServer } from './server.js';

const BASE = '/apis/archive.kevents.io/v1alpha1';

async function call(base: string, method: string, path: string): Promise<{ status: number; json: any }> {
  const res = await fetch(base + path, { method });
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

  void it('serves the incidents of every namespace, most recent first', async () => {
    const r = await call(base, 'GET', `${BASE}/incidents?since=${iso(0)}&until=${iso(3600)}`);
    assert.equal(r.status, 200);
    const list = r.json as IncidentList;
    assert.deepEqual(list.window, { since: iso(0), until: iso(3600) });
    assert.deepEqual(
      list.incidents.map((i) => [i.namespace, i.kind, i.root]),
      [
        ['pay', 'crash-loop', 'Pod/api-1'],
        ['shop', 'create-forbidden-quota', 'ReplicaSet/web-7d4b9c8f5'],
      ],
    );
    assert.equal(list.incidents[1]!.start.time, iso(60));
    assert.equal(list.incidents[1]!.occurrences, 5);
  });

  void it('keeps a namespaced request to its namespace', async () => {
    const r = await call(base, 'GET', `${BASE}/namespaces/shop/incidents?since=${iso(0)}`);
    assert.equal(r.status, 200);
    assert.deepEqual(
      (r.json as IncidentList).incidents.map((i) => i.namespace),
      ['shop'],
    );
  });

  const bad: [string, string, RegExp][] = [
    ['a time that is not RFC 3339', '?since=yesterday', /since: "yesterday" is not an RFC 3339 time/],
    ['a duration as since (a request is read later than it was written)', '?since=1h', /since: "1h" is not an RFC 3339 time/],
    ['a window that ends before it starts', `?since=${iso(10)}&until=${iso(0)}`, /until: must be after the start of the window/],
    ['a look-back that is not a duration', '?lookBack=forever', /lookBack: invalid duration "forever"/],
    ['a look-back past its bound', '?lookBack=8d', /lookBack: must be at most 7d/],
    ["the timeline's for", '?for=pod/x', /for: not a parameter of incidents/],
  ];
  for (const [what, query, message] of bad) {
    void it(`answers 400 with a Status for ${what}`, async () => {
      const r = await call(base, 'GET', `${BASE}/incidents${query}`);
      assert.equal(r.status, 400);
      assert.equal(r.json.kind, 'Status');
      assert.match(r.json.message, message);
    });
  }

  void it('answers 405 to a write and 404 without a reader', async () => {
    assert.equal((await call(base, 'POST', `${BASE}/incidents`)).status, 405);
    assert.equal((await call(bareBase, 'GET', `${BASE}/incidents`)).status, 404);
  });
});
