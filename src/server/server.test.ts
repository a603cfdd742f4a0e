import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { FakeClock } from '../internal/index.js';
import { MemoryEventStore } from '../storage/memory/index.js';
import { createEventsServer } from './server.js';
import type { KeventsServer } from './server.js';

function event(name: string, message = 'm'): string {
  return JSON.stringify({
    metadata: { name, namespace: 'default' },
    involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
    reason: 'R',
    message,
    type: 'Normal',
  });
}

async function post(base: string, body: string): Promise<any> {
  const res = await fetch(`${base}/api/v1/namespaces/default/events`, { method: 'POST', body, headers: { 'Content-Type': 'application/json' } });
  assert.equal(res.status, 201);
  return res.json();
}

/** frames reads a whole (ending) watch stream as frames. */
async function frames(url: string): Promise<any[]> {
  const res = await fetch(url);
  assert.equal(res.status, 200);
  const text = await res.text();
  return text.trim().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
}

describe('events server (in process)', () => {
  const clock = new FakeClock(Date.parse('2026-06-01T00:00:00Z'));
  let store: MemoryEventStore;
  let server: KeventsServer;
  let base: string;
  before(async () => {
    store = new MemoryEventStore({ clock, historyWindowSeconds: 60, compactIntervalMs: 10_000 });
    server = createEventsServer({ store, clock, eventTtlSeconds: 0 });
    const addr = await server.listen('127.0.0.1', 0);
    base = `http://127.0.0.1:${addr.port}`;
  });
  after(async () => {
    await server.close();
    await store.close();
  });

  it('answers a watch from a compacted resourceVersion with one 410 ERROR frame', async () => {
    const first = await post(base, event('old-1'));
    await post(base, event('old-2'));
    await clock.advance(5 * 60_000);
    await post(base, event('new-1'));
    const got = await frames(`${base}/api/v1/namespaces/default/events?watch=true&resourceVersion=${first.metadata.resourceVersion}`);
    assert.equal(got.length, 1);
    assert.deepEqual(got[0], {
      type: 'ERROR',
      object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'The resourceVersion for the provided watch is too old.', reason: 'Expired', code: 410 },
    });
    const list = await fetch(`${base}/api/v1/namespaces/default/events?resourceVersion=${first.metadata.resourceVersion}&resourceVersionMatch=Exact`);
    assert.equal(list.status, 410);
    assert.equal(((await list.json()) as any).message, 'The resourceVersion for the provided list is too old.');
  });

  it('answers sendInitialEvents with a resourceVersion from the future with a 504 ERROR frame', async () => {
    const got = await frames(`${base}/api/v1/namespaces/default/events?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=99999`);
    assert.equal(got.length, 1);
    assert.equal(got[0].type, 'ERROR');
    assert.equal(got[0].object.code, 504);
    assert.match(got[0].object.message, /^Timeout: Too large resource version: 99999, current: \d+$/);
  });

  it('answers a list at a resourceVersion from the future with 504', async () => {
    const res = await fetch(`${base}/api/v1/namespaces/default/events?resourceVersion=99999&resourceVersionMatch=NotOlderThan`);
    assert.equal(res.status, 504);
    const body = (await res.json()) as any;
    assert.equal(body.reason, 'Timeout');
    assert.equal(body.details.causes[0].reason, 'ResourceVersionTooLarge');
  });

  it('cuts a watcher that does not read, destroying its connection, instead of buffering without bound', async () => {
    const rv = (await post(base, event('slow-start'))).metadata.resourceVersion as string;
    const received: Buffer[] = [];
    let closed = false;
    let response: http.IncomingMessage | undefined;
    const req = http.get(`${base}/api/v1/namespaces/default/events?watch=true&resourceVersion=${rv}`, (res) => {
      res.pause(); // a client that stops reading
      res.on('close', () => (closed = true));
      res.on('error', () => {});
      res.on('data', (d: Buffer) => received.push(d));
      response = res;
    });
    req.on('error', () => (closed = true));
    const big = 'x'.repeat(1000);
    for (let i = 0; i < 12_000; i++) await post(base, event(`slow-${i}`, big));
    response?.resume();
    for (let i = 0; i < 100 && !closed; i++) await new Promise((r) => setTimeout(r, 100));
    const text = Buffer.concat(received).toString();
    const frames = text.split('\n').filter((l) => l.startsWith('{"type":"ADDED"')).length;
    assert.ok(closed, `the watch was not cut after ${frames} frames`);
    assert.ok(frames < 12_000, 'the slow watcher got everything: nothing was bounded');
    // Its socket was destroyed, not ended: what it had not read was dropped with it, and the body never finished.
    assert.equal(response?.complete, false, 'the watch was ended cleanly: its unsent bytes stayed buffered until the client read them');
    req.destroy();
  });
});
