import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { checkCollectionDelete } from './support/collection-delete.js';
import { createBackOffs, legacyEvent, newApiEvent, request } from './support/http.js';
import { until } from './support/wait.js';

const CORE = '/api/v1/namespaces/default/events';
const EV = '/apis/events.k8s.io/v1/namespaces/default/events';

describe('kevents serve over HTTP', () => {
  let srv: ServerProcess;
  before(async () => {
    srv = await startServer();
  });
  after(async () => {
    await srv.stop();
  });

  it('answers /version, health checks and /metrics', async () => {
    const v = await request(srv.url, 'GET', '/version');
    assert.equal(v.status, 200);
    assert.equal(v.json.major, '1');
    assert.match(v.json.gitVersion, /^v1\.\d+\.\d+/);
    for (const p of ['/healthz', '/livez', '/readyz']) assert.equal((await request(srv.url, 'GET', p)).status, 200, p);
    const m = await request(srv.url, 'GET', '/metrics');
    assert.equal(m.status, 200);
    assert.match(m.text, /kevents_apiserver_request_total/);
  });

  it('stores one object and shows it through both APIs with their own field names', async () => {
    const created = await request(srv.url, 'POST', CORE, legacyEvent({ name: 'web-1.a', object: 'web-1', reason: 'BackOff', message: 'Back-off restarting failed container', type: 'Warning', count: 5, firstAgo: 600, lastAgo: 10, host: 'node-1' }));
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.metadata.resourceVersion !== undefined, true);
    assert.match(created.json.metadata.uid, /^[0-9a-f-]{36}$/);
    assert.equal(created.json.eventTime, null);
    assert.equal(created.json.reportingComponent, 'kubelet');

    const viaNew = await request(srv.url, 'GET', `${EV}/web-1.a`);
    assert.equal(viaNew.status, 200);
    assert.equal(viaNew.json.apiVersion, 'events.k8s.io/v1');
    assert.equal(viaNew.json.note, 'Back-off restarting failed container');
    assert.deepEqual(viaNew.json.regarding.name, 'web-1');
    assert.equal(viaNew.json.deprecatedCount, 5);
    assert.deepEqual(viaNew.json.deprecatedSource, { component: 'kubelet', host: 'node-1' });
    assert.equal(viaNew.json.eventTime, null);
    assert.equal(viaNew.json.metadata.resourceVersion, created.json.metadata.resourceVersion);

    const made = await request(srv.url, 'POST', EV, newApiEvent({ name: 'web-1.b', object: 'web-1', reason: 'Scheduled', action: 'Binding', note: 'Successfully assigned default/web-1 to node-1', eventAgo: 700 }));
    assert.equal(made.status, 201, made.text);
    const viaCore = await request(srv.url, 'GET', `${CORE}/web-1.b`);
    assert.equal(viaCore.json.message, 'Successfully assigned default/web-1 to node-1');
    assert.deepEqual(viaCore.json.source, {});
    assert.equal(viaCore.json.firstTimestamp, null);
    assert.equal(viaCore.json.reportingComponent, 'default-scheduler');
    assert.equal(viaCore.json.count, undefined);
  });

  it('accepts any type through core/v1 but only Normal or Warning through events.k8s.io/v1', async () => {
    const core = await request(srv.url, 'POST', CORE, legacyEvent({ name: 'odd-type', object: 'x', reason: 'R', message: 'm', type: 'Critical', firstAgo: 1, lastAgo: 1 }));
    assert.equal(core.status, 201, core.text);
    const strict = await request(srv.url, 'POST', EV, newApiEvent({ name: 'odd-type-2', object: 'x', reason: 'R', action: 'A', note: 'n', type: 'Critical', eventAgo: 1 }));
    assert.equal(strict.status, 422);
    assert.equal(strict.json.kind, 'Status');
    assert.equal(strict.json.reason, 'Invalid');
    assert.equal(strict.json.message, 'Event "odd-type-2" is invalid: type: Invalid value: "": has invalid value: Critical');
    assert.deepEqual(strict.json.details.causes, [{ reason: 'FieldValueInvalid', message: 'Invalid value: "": has invalid value: Critical', field: 'type' }]);
  });

  it('answers bad input with upstream Status objects and stores nothing', async () => {
    const before = await request(srv.url, 'GET', CORE);
    const cases: [string, Promise<Awaited<ReturnType<typeof request>>>, number, RegExp][] = [
      ['malformed JSON', request(srv.url, 'POST', CORE, '{"metadata": {'), 400, /./],
      ['oversized body', request(srv.url, 'POST', CORE, JSON.stringify({ ...legacyEvent({ name: 'big', object: 'x', reason: 'R', message: 'm', firstAgo: 1, lastAgo: 1 }), pad: 'x'.repeat(3 * 1024 * 1024) })), 413, /Request entity too large: limit is 3145728/],
      ['wrong kind', request(srv.url, 'POST', CORE, { ...legacyEvent({ name: 'k', object: 'x', reason: 'R', message: 'm', firstAgo: 1, lastAgo: 1 }), kind: 'Pod' }), 400, /./],
      ['namespace mismatch', request(srv.url, 'POST', CORE, legacyEvent({ name: 'ns', namespace: 'other', object: 'x', reason: 'R', message: 'm', firstAgo: 1, lastAgo: 1 })), 400, /^the namespace of the provided object does not match the namespace sent on the request$/],
      ['unsupported field label', request(srv.url, 'GET', `${EV}?fieldSelector=involvedObject.name%3Dx`), 400, /^field label not supported: involvedObject.name$/],
      ['bad label selector', request(srv.url, 'GET', `${CORE}?labelSelector=a%20in%20(`), 400, /./],
      ['forged continue token', request(srv.url, 'GET', `${CORE}?limit=1&continue=not*base64`), 400, /^invalid continue token: /],
      ['unknown field in Strict mode', request(srv.url, 'POST', `${CORE}?fieldValidation=Strict`, { ...legacyEvent({ name: 'strict', object: 'x', reason: 'R', message: 'm', firstAgo: 1, lastAgo: 1 }), bogus: 1 }), 400, /strict decoding error: unknown field "bogus"/],
      ['resourceVersionMatch without resourceVersion', request(srv.url, 'GET', `${CORE}?resourceVersionMatch=Exact`), 422, /^ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided$/],
      ['unknown path', request(srv.url, 'GET', '/api/v1/namespaces/default/widgets'), 404, /the server could not find the requested resource/],
      ['missing event', request(srv.url, 'GET', `${CORE}/nope`), 404, /^events "nope" not found$/],
    ];
    for (const [name, pending, code, message] of cases) {
      const r = await pending;
      assert.equal(r.status, code, `${name}: ${r.text.slice(0, 300)}`);
      assert.equal(r.json?.kind, 'Status', name);
      assert.equal(r.json.status, 'Failure', name);
      assert.equal(r.json.code, code, name);
      assert.match(r.json.message, message, name);
    }
    const afterList = await request(srv.url, 'GET', CORE);
    assert.equal(afterList.json.items.length, before.json.items.length);
  });

  it('warns about unknown fields by default and with Warn', async () => {
    const r = await request(srv.url, 'POST', CORE, { ...legacyEvent({ name: 'warned', object: 'x', reason: 'R', message: 'm', firstAgo: 1, lastAgo: 1 }), bogus: 1 });
    assert.equal(r.status, 201);
    assert.match(r.headers.get('warning') ?? '', /299 - "unknown field \\"bogus\\""/);
  });

  it('pages through a consistent snapshot with limit and continue', async () => {
    for (let i = 0; i < 7; i++) {
      const r = await request(srv.url, 'POST', '/api/v1/namespaces/paging/events', legacyEvent({ name: `p-${i}`, namespace: 'paging', object: `o${i}`, reason: 'R', message: 'm', firstAgo: 1, lastAgo: 1 }));
      assert.equal(r.status, 201);
    }
    const first = await request(srv.url, 'GET', '/api/v1/namespaces/paging/events?limit=3');
    assert.deepEqual(first.json.items.map((e: any) => e.metadata.name), ['p-0', 'p-1', 'p-2']);
    assert.equal(first.json.metadata.remainingItemCount, 4);
    // A change after the first page must not show up in later pages.
    await request(srv.url, 'DELETE', '/api/v1/namespaces/paging/events/p-4');
    await request(srv.url, 'POST', '/api/v1/namespaces/paging/events', legacyEvent({ name: 'p-9', namespace: 'paging', object: 'o9', reason: 'R', message: 'm', firstAgo: 1, lastAgo: 1 }));
    const names: string[] = first.json.items.map((e: any) => e.metadata.name);
    let token: string | undefined = first.json.metadata.continue;
    while (token !== undefined) {
      const page = await request(srv.url, 'GET', `/api/v1/namespaces/paging/events?limit=3&continue=${encodeURIComponent(token)}`);
      assert.equal(page.status, 200, page.text);
      assert.equal(page.json.metadata.resourceVersion, first.json.metadata.resourceVersion);
      names.push(...page.json.items.map((e: any) => e.metadata.name));
      token = page.json.metadata.continue;
    }
    assert.deepEqual(names, ['p-0', 'p-1', 'p-2', 'p-3', 'p-4', 'p-5', 'p-6']);
  });

  it('updates with PUT (creating on update), patches three ways and deletes', async () => {
    const put = await request(srv.url, 'PUT', `${CORE}/made-by-put`, legacyEvent({ name: 'made-by-put', object: 'x', reason: 'R', message: 'one', firstAgo: 5, lastAgo: 5 }));
    assert.equal(put.status, 201, put.text);
    const merge = await request(srv.url, 'PATCH', `${CORE}/made-by-put`, { count: 2, message: 'two' }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(merge.status, 200, merge.text);
    assert.equal(merge.json.count, 2);
    const smp = await request(srv.url, 'PATCH', `${CORE}/made-by-put`, { count: 3, lastTimestamp: '2026-01-01T00:00:00Z' }, { 'Content-Type': 'application/strategic-merge-patch+json' });
    assert.equal(smp.json.count, 3);
    const jp = await request(srv.url, 'PATCH', `${CORE}/made-by-put`, [{ op: 'replace', path: '/message', value: 'three' }], { 'Content-Type': 'application/json-patch+json' });
    assert.equal(jp.status, 200, jp.text);
    assert.equal(jp.json.message, 'three');
    assert.ok(Number(jp.json.metadata.resourceVersion) > Number(put.json.metadata.resourceVersion));
    const badType = await request(srv.url, 'PATCH', `${CORE}/made-by-put`, { count: 4 }, { 'Content-Type': 'text/plain' });
    assert.equal(badType.status, 415);
    const stale = await request(srv.url, 'PUT', `${CORE}/made-by-put`, { ...jp.json, metadata: { ...jp.json.metadata, resourceVersion: put.json.metadata.resourceVersion } });
    assert.equal(stale.status, 409);
    assert.equal(stale.json.reason, 'Conflict');
    // events.k8s.io/v1 updates may not change immutable fields.
    const evObj = (await request(srv.url, 'GET', `${EV}/web-1.b`)).json;
    const immut = await request(srv.url, 'PUT', `${EV}/web-1.b`, { ...evObj, note: 'changed' });
    assert.equal(immut.status, 422);
    assert.match(immut.json.message, /message: Invalid value: "changed": field is immutable/);
    const del = await request(srv.url, 'DELETE', `${CORE}/made-by-put`);
    assert.equal(del.status, 200);
    assert.equal(del.json.status, 'Success');
    assert.equal((await request(srv.url, 'GET', `${CORE}/made-by-put`)).status, 404);
  });

  it('deletes a collection selected by a field selector', async () => {
    for (const n of ['dc-1', 'dc-2']) {
      await request(srv.url, 'POST', '/api/v1/namespaces/dc/events', legacyEvent({ name: n, namespace: 'dc', object: 'gone', reason: 'R', message: 'm', firstAgo: 1, lastAgo: 1 }));
    }
    await request(srv.url, 'POST', '/api/v1/namespaces/dc/events', legacyEvent({ name: 'dc-3', namespace: 'dc', object: 'kept', reason: 'R', message: 'm', firstAgo: 1, lastAgo: 1 }));
    const r = await request(srv.url, 'DELETE', '/api/v1/namespaces/dc/events?fieldSelector=involvedObject.name%3Dgone');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.items.map((e: any) => e.metadata.name), ['dc-1', 'dc-2']);
    const left = await request(srv.url, 'GET', '/api/v1/namespaces/dc/events');
    assert.deepEqual(left.json.items.map((e: any) => e.metadata.name), ['dc-3']);
  });

  it('serves a server-side Table when kubectl asks for one', async () => {
    const r = await request(srv.url, 'GET', '/api/v1/namespaces/default/events', undefined, {
      Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
    });
    assert.equal(r.status, 200);
    assert.equal(r.json.kind, 'Table');
    assert.deepEqual(r.json.columnDefinitions.map((c: any) => c.name), ['Last Seen', 'Type', 'Reason', 'Object', 'Subobject', 'Source', 'Message', 'First Seen', 'Count', 'Name']);
    const row = r.json.rows.find((x: any) => x.object.metadata.name === 'web-1.a');
    assert.deepEqual(row.cells.slice(1, 4), ['Warning', 'BackOff', 'pod/web-1']);
    assert.equal(row.object.kind, 'PartialObjectMetadata');
  });
});

describe('kevents serve watch', () => {
  let srv: ServerProcess;
  before(async () => {
    srv = await startServer(['--event-ttl', '2s']);
  });
  after(async () => {
    await srv.stop();
  });

  it('replays, streams changes, and sends DELETED when the TTL expires', async () => {
    await request(srv.url, 'POST', CORE, legacyEvent({ name: 'w-1', object: 'x', reason: 'R', message: 'm', firstAgo: 1, lastAgo: 1 }));
    const controller = new AbortController();
    const res = await fetch(`${srv.url}${CORE}?watch=true&allowWatchBookmarks=true`, { signal: controller.signal });
    assert.equal(res.status, 200);
    const frames: any[] = [];
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    const next = async (): Promise<any> => {
      for (;;) {
        const nl = buf.indexOf('\n');
        if (nl >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          const f = JSON.parse(line);
          frames.push(f);
          return f;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('watch ended');
        buf += decoder.decode(value, { stream: true });
      }
    };
    const added = await next();
    assert.equal(added.type, 'ADDED');
    assert.equal(added.object.metadata.name, 'w-1');
    const bookmark = await next();
    assert.equal(bookmark.type, 'BOOKMARK');
    assert.equal(bookmark.object.metadata.annotations['k8s.io/initial-events-end'], 'true');
    await request(srv.url, 'PATCH', `${CORE}/w-1`, { count: 2 }, { 'Content-Type': 'application/merge-patch+json' });
    const modified = await next();
    assert.equal(modified.type, 'MODIFIED');
    assert.equal(modified.object.count, 2);
    const deleted = await next();
    assert.equal(deleted.type, 'DELETED');
    assert.equal(deleted.object.metadata.name, 'w-1');
    assert.ok(Number(deleted.object.metadata.resourceVersion) > Number(modified.object.metadata.resourceVersion));
    controller.abort();
  });

  it('resumes a watch from a resourceVersion without replaying older changes', async () => {
    const a = await request(srv.url, 'POST', CORE, legacyEvent({ name: 'r-1', object: 'x', reason: 'R', message: 'm', firstAgo: 1, lastAgo: 1 }));
    const b = await request(srv.url, 'POST', CORE, legacyEvent({ name: 'r-2', object: 'x', reason: 'R', message: 'm', firstAgo: 1, lastAgo: 1 }));
    const res = await fetch(`${srv.url}${CORE}?watch=1&resourceVersion=${a.json.metadata.resourceVersion}&timeoutSeconds=1`);
    const text = await res.text();
    const frames = text.trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(frames[0].type, 'ADDED');
    assert.equal(frames[0].object.metadata.name, 'r-2');
    assert.equal(frames[0].object.metadata.resourceVersion, b.json.metadata.resourceVersion);
    assert.ok(!frames.some((f) => f.object.metadata.name === 'r-1' && f.type === 'ADDED'));
  });
});

describe('kevents serve on SQLite', () => {
  it('keeps every acknowledged write across kill -9', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kevents-kill9-'));
    const storage = `sqlite:${join(dir, 'events.db')}`;
    const srv = await startServer(['--storage', storage, '--event-ttl', '0']);
    const acknowledged: string[] = [];
    let stop = false;
    const writers = Array.from({ length: 16 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const name = `k-${w}-${i}`;
        try {
          const r = await request(srv.url, 'POST', CORE, legacyEvent({ name, object: 'x', reason: 'R', message: 'm', firstAgo: 1, lastAgo: 1 }));
          if (r.status === 201) acknowledged.push(name);
        } catch {
          return;
        }
      }
    });
    // Kill once writes are flowing (a count, not a time: a loaded machine is slower), mid-stream.
    const deadline = Date.now() + 60_000;
    while (acknowledged.length < 60 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    srv.child.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    await srv.stop();
    assert.ok(acknowledged.length > 50, `only ${acknowledged.length} writes acknowledged`);
    const again = await startServer(['--storage', storage, '--event-ttl', '0']);
    try {
      const list = await request(again.url, 'GET', CORE);
      const stored = new Set(list.json.items.map((e: any) => e.metadata.name));
      const lost = acknowledged.filter((n) => !stored.has(n));
      assert.deepEqual(lost, []);
    } finally {
      await again.stop();
    }
  });

  it('deletes a collection of several pages at once, in key order, as a watcher sees it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kevents-deletecollection-'));
    const srv = await startServer(['--storage', `sqlite:${join(dir, 'events.db')}`, '--event-ttl', '0']);
    try {
      // A page's deletes share a group commit, asked in key order: a watcher sees them in that order.
      await checkCollectionDelete(srv.url, srv.url, 'many', { ordered: true });
    } finally {
      await srv.stop();
    }
  });

  it('renders the next page of a list read cold while the client reads the page before', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kevents-read-ahead-'));
    // One process: a read-ahead prepares the next page in the process that answered the page before.
    const args = ['--storage', `sqlite:${join(dir, 'events.db')}`, '--workers', '1'];
    let srv = await startServer(args);
    const TABLE = { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json' };
    const rendered = async (by: 'request' | 'read-ahead'): Promise<number> => {
      const m = await request(srv.url, 'GET', '/metrics');
      return Number(new RegExp(`^kevents_list_rendered_total\\{by="${by}"\\} (\\d+)`, 'm').exec(m.text)?.[1] ?? 0);
    };
    let first: any;
    let second: any;
    try {
      const names = Array.from({ length: 1100 }, (_, i) => `ra-${String(i).padStart(4, '0')}`);
      await createBackOffs(srv.url, CORE, names);
      // The writes rendered their rows: a server started again without the warm at startup holds none.
      await srv.stop();
      srv = await startServer([...args, '--render-cache-warm', '0']);
      // Page 1 of a Table listing is read from storage; page 2 is rendered before it is asked for.
      first = await request(srv.url, 'GET', `${CORE}?limit=500`, undefined, TABLE);
      assert.equal(first.json.rows.length, 500);
      assert.equal(await rendered('request'), 500);
      await until('the read-ahead rendered the second page', async () => (await rendered('read-ahead')) === 500, 20_000, 50);
      second = await request(srv.url, 'GET', `${CORE}?limit=500&continue=${encodeURIComponent(first.json.metadata.continue)}`, undefined, TABLE);
      assert.deepEqual(
        second.json.rows.map((r: any) => r.cells[9]),
        names.slice(500, 1000),
      );
      // The second page came from what the read-ahead rendered, and it then read the third ahead.
      await until('the read-ahead rendered the third page', async () => (await rendered('read-ahead')) === 600, 20_000, 50);
      assert.equal(await rendered('request'), 500);
      const third = await request(srv.url, 'GET', `${CORE}?limit=500&continue=${encodeURIComponent(second.json.metadata.continue)}`, undefined, TABLE);
      assert.equal(third.json.rows.length, 100);
      assert.equal(third.json.metadata.continue, undefined);
      // A page answered from the cache reads nothing ahead; neither does one that is the last.
      const ahead = await rendered('read-ahead');
      await request(srv.url, 'GET', `${CORE}?limit=500`, undefined, TABLE);
      await request(srv.url, 'GET', `${CORE}?limit=2000`);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(await rendered('read-ahead'), ahead);
      // JSON pages read ahead too (those of events.k8s.io/v1 were never rendered).
      const json = await request(srv.url, 'GET', `${EV}?limit=300`);
      assert.equal(json.json.items.length, 300);
      await until('the read-ahead rendered the next JSON page', async () => (await rendered('read-ahead')) === ahead + 300, 20_000, 50);
    } finally {
      await srv.stop();
    }
    // Rows rendered ahead are the rows a cold request renders: the same page from a server that keeps nothing.
    const cold = await startServer(['--storage', `sqlite:${join(dir, 'events.db')}`, '--workers', '1', '--render-cache-size', '0']);
    try {
      const again = await request(cold.url, 'GET', `${CORE}?limit=500&continue=${encodeURIComponent(first.json.metadata.continue)}`, undefined, TABLE);
      // The ages (cells 0 and 7) move with the clock.
      const steady = (rows: any[]): unknown[] => rows.map((r) => [r.cells.slice(1, 7), r.cells.slice(8), r.object]);
      assert.deepEqual(steady(second.json.rows), steady(again.json.rows));
    } finally {
      await cold.stop();
    }
  });
});
