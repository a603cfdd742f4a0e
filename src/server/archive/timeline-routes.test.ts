import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Timeline } from '../../api/index.js';
import { newBadRequest } from '../../api/index.js';
import { FakeClock } from '../../internal/index.js';
import { MemoryEventStore } from '../../storage/memory/index.js';
import { createEventsServer } from '../server.js';
import type { KeventsServer } from '../server.js';
import type { TimelineQuery } from './timeline-routes.js';

const BASE = '/apis/archive.kevents.io/v1alpha1';

const EMPTY: Timeline = {
  summary: { window: { since: null, until: null }, firstWarning: null, reasons: [], objects: [], rows: 0, occurrences: 0, estimatedRows: 0, undated: 0, history: 'events' },
  rows: [],
  hints: [],
};

async function call(base: string, method: string, path: string): Promise<{ status: number; json: any }> {
  const res = await fetch(base + path, { method });
  const text = await res.text();
  return { status: res.status, json: text === '' ? undefined : JSON.parse(text) };
}

void describe('timeline route', () => {
  const clock = new FakeClock(Date.parse('2026-06-01T00:00:00Z'));
  const asked: TimelineQuery[] = [];
  let server: KeventsServer;
  let bare: KeventsServer;
  let base: string;
  let bareBase: string;
  before(async () => {
    server = createEventsServer({
      store: new MemoryEventStore({ clock }),
      clock,
      timeline: (q) => {
        asked.push(q);
        if (q.for === 'nonsense') return Promise.reject(newBadRequest('for: --for must be in resource/name form'));
        return Promise.resolve(EMPTY);
      },
    });
    base = `http://127.0.0.1:${(await server.listen('127.0.0.1', 0)).port}`;
    bare = createEventsServer({ store: new MemoryEventStore({ clock }), clock });
    bareBase = `http://127.0.0.1:${(await bare.listen('127.0.0.1', 0)).port}`;
  });
  after(async () => {
    await server.close();
    await bare.close();
  });

  void it('hands the reader the namespace, object, window and types, and serves its document as JSON', async () => {
    const r = await call(base, 'GET', `${BASE}/namespaces/shop/timeline?for=pod/web-1&since=2026-06-01T00:00:00Z&until=2026-06-01T01:00:00.5Z&types=Warning,normal`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, EMPTY);
    assert.deepEqual(asked.at(-1), { namespace: 'shop', for: 'pod/web-1', since: Date.parse('2026-06-01T00:00:00Z'), until: Date.parse('2026-06-01T01:00:00.500Z'), types: ['Warning', 'normal'] });
    assert.equal((await call(base, 'GET', `${BASE}/timeline`)).status, 200);
    assert.deepEqual(asked.at(-1), { namespace: undefined, since: undefined, until: undefined });
  });

  void it('hands the reader the clusters asked for, repeated or comma-separated, once each', async () => {
    assert.equal((await call(base, 'GET', `${BASE}/timeline?cluster=prod&cluster=staging,prod&cluster=`)).status, 200);
    assert.deepEqual(asked.at(-1), { namespace: undefined, since: undefined, until: undefined, clusters: ['prod', 'staging'] });
    assert.equal((await call(base, 'GET', `${BASE}/timeline?cluster=`)).status, 200);
    assert.deepEqual(asked.at(-1), { namespace: undefined, since: undefined, until: undefined });
  });

  const bad: [string, string, RegExp][] = [
    ['a time that is not RFC 3339', '?since=yesterday', /since: invalid time "yesterday"/],
    ['a window that ends before it starts', '?since=2026-06-01T01:00:00Z&until=2026-06-01T00:00:00Z', /until must be after since/],
    ['a type other than Normal or Warning', '?types=Info', /valid types are Normal or Warning/],
    ['an object the reader refuses', '?for=nonsense', /resource\/name form/],
  ];
  for (const [what, query, message] of bad) {
    void it(`answers 400 with a Status for ${what}`, async () => {
      const r = await call(base, 'GET', `${BASE}/timeline${query}`);
      assert.equal(r.status, 400);
      assert.equal(r.json.kind, 'Status');
      assert.match(r.json.message, message);
    });
  }

  void it('refuses writes, and is NotFound on a server composed without a reader', async () => {
    assert.equal((await call(base, 'POST', `${BASE}/timeline`)).status, 405);
    assert.equal((await call(bareBase, 'GET', `${BASE}/timeline`)).status, 404);
  });
});
