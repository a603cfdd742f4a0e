import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../internal/index.js';
import type { EventStore } from '../../storage/index.js';
import { MemoryEventStore } from '../../storage/memory/index.js';
import { createEventsServer } from '../server.js';
import type { KeventsServer } from '../server.js';

const ARCHIVE = '/apis/archive.kevents.io/v1alpha1';

function event(namespace: string, name: string, pod: string, reason = 'BackOff'): string {
  return JSON.stringify({
    metadata: { name, namespace },
    involvedObject: { kind: 'Pod', name: pod, namespace },
    reason,
    message: `${reason} ${pod}`,
    type: reason === 'BackOff' ? 'Warning' : 'Normal',
    count: 1,
    firstTimestamp: '2026-06-01T00:00:00Z',
    lastTimestamp: '2026-06-01T00:00:00Z',
  });
}

async function call(base: string, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  const res = await fetch(base + path, { method, ...(body !== undefined ? { body } : {}), headers: { 'Content-Type': 'application/json', ...headers } });
  const text = await res.text();
  return { status: res.status, json: text === '' ? undefined : JSON.parse(text) };
}

const summary = (items: any[]): string[] => items.map((o) => `${o.event.namespace}/${o.event.name} ${o.countBefore}->${o.countAfter}`);

void describe('archive API (in process)', () => {
  const clock = new FakeClock(Date.parse('2026-06-01T00:00:00Z'));
  let store: MemoryEventStore;
  let server: KeventsServer;
  let base: string;
  before(async () => {
    store = new MemoryEventStore({ clock });
    server = createEventsServer({ store, clock, eventTtlSeconds: 60 });
    base = `http://127.0.0.1:${(await server.listen('127.0.0.1', 0)).port}`;
    const post = async (ns: string, body: string): Promise<void> => {
      assert.equal((await call(base, 'POST', `/api/v1/namespaces/${ns}/events`, body)).status, 201);
      await clock.advance(1000);
    };
    await post('a', event('a', 'e1', 'web-1'));
    await post('a', event('a', 'e2', 'web-2', 'Pulled'));
    await post('b', event('b', 'e3', 'web-1'));
    const patch = async (ns: string, name: string, body: object): Promise<void> => {
      const r = await call(base, 'PATCH', `/api/v1/namespaces/${ns}/events/${name}`, JSON.stringify(body), { 'Content-Type': 'application/merge-patch+json' });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      await clock.advance(1000);
    };
    await patch('a', 'e1', { count: 2, lastTimestamp: '2026-06-01T00:00:03Z' });
    await patch('a', 'e1', { metadata: { labels: { seen: 'yes' } } });
    await patch('a', 'e1', { count: 3, lastTimestamp: '2026-06-01T00:00:05Z' });
  });
  after(async () => {
    await server.close();
    await store.close();
  });

  void it('lists every observed change of local writes, in observed order, and none for metadata-only writes', async () => {
    const r = await call(base, 'GET', `${ARCHIVE}/occurrences`);
    assert.equal(r.status, 200);
    assert.equal(r.json.kind, 'OccurrenceList');
    assert.equal(r.json.apiVersion, 'archive.kevents.io/v1alpha1');
    assert.deepEqual(summary(r.json.items), ['a/e1 0->1', 'a/e2 0->1', 'b/e3 0->1', 'a/e1 1->2', 'a/e1 2->3']);
    assert.equal(r.json.items[0].observedTime, '2026-06-01T00:00:00.000000Z');
    assert.equal(r.json.items[4].lastSeen, '2026-06-01T00:00:05Z');
  });

  void it('keeps the occurrences of events the TTL has expired', async () => {
    await clock.advance(120_000);
    assert.equal((await call(base, 'GET', '/api/v1/events')).json.items.length, 0);
    assert.equal((await call(base, 'GET', `${ARCHIVE}/occurrences`)).json.items.length, 5);
  });

  const selections: [string, string, string[]][] = [
    ['one namespace', `${ARCHIVE}/namespaces/b/occurrences`, ['b/e3 0->1']],
    ['regarding.name', `${ARCHIVE}/occurrences?fieldSelector=regarding.name%3Dweb-1`, ['a/e1 0->1', 'b/e3 0->1', 'a/e1 1->2', 'a/e1 2->3']],
    ['regarding.name in a namespace', `${ARCHIVE}/namespaces/a/occurrences?fieldSelector=regarding.name%3Dweb-1,reason%3DBackOff`, ['a/e1 0->1', 'a/e1 1->2', 'a/e1 2->3']],
    ['a != term', `${ARCHIVE}/occurrences?fieldSelector=type!%3DWarning`, ['a/e2 0->1']],
    ['event.name', `${ARCHIVE}/occurrences?fieldSelector=event.name%3De3`, ['b/e3 0->1']],
    ['since (inclusive)', `${ARCHIVE}/occurrences?since=2026-06-01T00:00:03Z`, ['a/e1 1->2', 'a/e1 2->3']],
    ['until (exclusive)', `${ARCHIVE}/occurrences?until=2026-06-01T00:00:02Z`, ['a/e1 0->1', 'a/e2 0->1']],
    ['a window with microseconds', `${ARCHIVE}/occurrences?since=2026-06-01T00:00:00.000001Z&until=2026-06-01T00:00:03.5Z`, ['a/e2 0->1', 'b/e3 0->1', 'a/e1 1->2']],
  ];
  for (const [name, path, want] of selections) {
    void it(`selects by ${name}`, async () => {
      const r = await call(base, 'GET', path);
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.deepEqual(summary(r.json.items), want);
    });
  }

  void it('pages with limit and continue, and the pages add up to the whole list', async () => {
    const all: any[] = [];
    let cont = '';
    let pages = 0;
    do {
      const r = await call(base, 'GET', `${ARCHIVE}/occurrences?limit=2${cont === '' ? '' : `&continue=${cont}`}`);
      assert.equal(r.status, 200);
      assert.ok(r.json.items.length <= 2);
      all.push(...r.json.items);
      cont = r.json.metadata.continue ?? '';
      pages++;
    } while (cont !== '');
    assert.equal(pages, 3);
    assert.deepEqual(summary(all), ['a/e1 0->1', 'a/e2 0->1', 'b/e3 0->1', 'a/e1 1->2', 'a/e1 2->3']);
  });

  void it('renders a Table for kubectl', async () => {
    const r = await call(base, 'GET', `${ARCHIVE}/namespaces/b/occurrences`, undefined, { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' });
    assert.equal(r.status, 200);
    assert.equal(r.json.kind, 'Table');
    assert.deepEqual(r.json.columnDefinitions.map((c: any) => c.name), ['Observed', 'Type', 'Reason', 'Object', 'Count', 'Message', 'Cluster', 'Name']);
    assert.deepEqual(r.json.rows[0].cells.slice(1, 6), ['Warning', 'BackOff', 'pod/web-1', '0->1', 'BackOff web-1']);
    assert.equal(r.json.rows[0].object.kind, 'PartialObjectMetadata');
  });

  const bad: [string, string, string, number, RegExp][] = [
    ['a bad since', 'GET', `${ARCHIVE}/occurrences?since=yesterday`, 400, /since: invalid time "yesterday"/],
    ['until before since', 'GET', `${ARCHIVE}/occurrences?since=2026-06-01T00:00:03Z&until=2026-06-01T00:00:01Z`, 400, /until must be after since/],
    ['an unknown field', 'GET', `${ARCHIVE}/occurrences?fieldSelector=spec.x%3D1`, 400, /field label not supported: spec.x/],
    ['a malformed selector', 'GET', `${ARCHIVE}/occurrences?fieldSelector=reason`, 400, /invalid selector/],
    ['a forged continue token', 'GET', `${ARCHIVE}/occurrences?continue=bm9wZQ`, 400, /invalid continue token/],
    ['a bad limit', 'GET', `${ARCHIVE}/occurrences?limit=ten`, 400, /limit: strconv.ParseInt/],
    ['a write', 'POST', `${ARCHIVE}/namespaces/a/occurrences`, 405, /does not allow this method/],
    ['a watch', 'GET', `${ARCHIVE}/occurrences?watch=true`, 405, /does not allow this method/],
  ];
  for (const [name, method, path, code, message] of bad) {
    void it(`answers ${name} with a ${code} Status`, async () => {
      const r = await call(base, method, path, method === 'POST' ? '{}' : undefined);
      assert.equal(r.status, code);
      assert.equal(r.json.kind, 'Status');
      assert.match(r.json.message, message);
    });
  }

  void it('serves the stored events as events.archive.kevents.io: list, get and a Table with kubectl\'s event columns, never a write', async () => {
    // Events of their own: the suite's clock has run past the TTL of the ones above.
    for (const [ns, name] of [['ev', 'x1'], ['ev', 'x2'], ['ev2', 'x3']] as const) {
      assert.equal((await call(base, 'POST', `/api/v1/namespaces/${ns}/events`, event(ns, name, 'web-1'))).status, 201);
    }
    const list = await call(base, 'GET', `${ARCHIVE}/namespaces/ev/events`);
    assert.equal(list.status, 200);
    assert.deepEqual(list.json.items.map((e: any) => e.metadata.name).sort(), ['x1', 'x2']);
    const one = await call(base, 'GET', `${ARCHIVE}/namespaces/ev2/events/x3`);
    assert.equal(one.status, 200);
    assert.equal(one.json.reason, 'BackOff');
    const table = await call(base, 'GET', `${ARCHIVE}/events?fieldSelector=${encodeURIComponent('involvedObject.name=web-1')}`, undefined, { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    assert.deepEqual(table.json.columnDefinitions.filter((c: any) => c.priority === 0).map((c: any) => c.name), ['Last Seen', 'Type', 'Reason', 'Object', 'Message']);
    assert.deepEqual(table.json.rows.map((r: any) => r.object.metadata.name).sort(), ['x1', 'x2', 'x3']);
    assert.equal((await call(base, 'POST', `${ARCHIVE}/namespaces/ev/events`, event('ev', 'x9', 'web-9'))).status, 405);
    assert.equal((await call(base, 'DELETE', `${ARCHIVE}/namespaces/ev/events/x1`)).status, 405);
    assert.equal((await call(base, 'GET', '/api/v1/namespaces/ev/events/x1')).status, 200, 'a refused write wrote nothing');
    assert.equal((await call(base, 'GET', '/api/v1/namespaces/ev/events/x9')).status, 404, 'a refused create created nothing');
  });

  void it('is listed in discovery', async () => {
    const r = await call(base, 'GET', ARCHIVE);
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.json.resources.map((x: any) => [x.name, x.kind, x.namespaced, x.verbs]),
      [
        ['events', 'Event', true, ['get', 'list', 'watch']],
        ['incidents', 'Incident', true, ['get', 'list']],
        ['occurrences', 'Occurrence', true, ['list']],
      ],
    );
    const groups = await call(base, 'GET', '/apis');
    assert.ok(groups.json.groups.some((g: any) => g.name === 'archive.kevents.io'));
  });
});

void describe('archive API over a store without the capability', () => {
  void it('answers NotFound, to occurrences and to the search', async () => {
    const inner = new MemoryEventStore();
    const plain: EventStore = {
      create: (e, o) => inner.create(e, o),
      get: (ns, n) => inner.get(ns, n),
      list: (o) => inner.list(o),
      guaranteedUpdate: (ns, n, f, o) => inner.guaranteedUpdate(ns, n, f, o),
      delete: (ns, n, o) => inner.delete(ns, n, o),
      watch: (o) => inner.watch(o),
      currentResourceVersion: () => inner.currentResourceVersion(),
      oldestResourceVersion: () => inner.oldestResourceVersion(),
      ready: () => inner.ready(),
      close: () => inner.close(),
    };
    const server = createEventsServer({ store: plain });
    const base = `http://127.0.0.1:${(await server.listen('127.0.0.1', 0)).port}`;
    try {
      const r = await call(base, 'GET', `${ARCHIVE}/occurrences`);
      assert.equal(r.status, 404);
      assert.equal(r.json.reason, 'NotFound');
      const search = await call(base, 'GET', `${ARCHIVE}/search?q=x`);
      assert.equal(search.status, 404);
      assert.equal(search.json.kind, 'Status');
      assert.match(search.json.message, /keeps no archive/, 'the search says why it is not served');
      assert.equal((await call(base, 'POST', '/api/v1/namespaces/a/events', event('a', 'x', 'p'))).status, 201);
    } finally {
      await server.close();
      await plain.close();
    }
  });
});
