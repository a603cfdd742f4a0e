import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { FakeClock } from '../src/internal/index.js';
import type { EventWatch, StoreWatchEvent } from '../src/storage/index.js';
import { PostgresEventStore } from '../src/storage/postgres/index.js';
import { sampleEvent } from '../src/storage/testing/index.js';
import { checkCollectionDelete } from './support/collection-delete.js';
import { legacyEvent, request } from './support/http.js';
import { findKubectls, runKubectl } from './support/kubectl.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';

/** POSTGRES_URL is the machine's PostgreSQL unless KEVENTS_TEST_POSTGRES says otherwise. */
const POSTGRES_URL = process.env.KEVENTS_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:55432/test';
const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
const schemas: string[] = [];
const fresh = (): string => {
  const s = `kevents_replicas_${process.pid}_${schemas.length}`;
  schemas.push(s);
  return s;
};
after(async () => {
  for (const s of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  await admin.end();
});

function brief(e: StoreWatchEvent): string {
  return `${e.type} ${e.object.metadata.namespace}/${e.object.metadata.name}@${e.object.metadata.resourceVersion}`;
}

async function take(w: EventWatch, n: number): Promise<string[]> {
  const out: string[] = [];
  for await (const e of w) {
    out.push(brief(e));
    if (out.length === n) break;
  }
  return out;
}

void describe('two PostgresEventStore replicas over one database', () => {
  void it('every change, through either replica or from expiry, reaches the watchers of both in the same order with the same resourceVersions', { timeout: 60_000 }, async () => {
    const schema = fresh();
    const clock = new FakeClock();
    const open = (): PostgresEventStore => new PostgresEventStore({ connectionString: POSTGRES_URL, schema, clock, expiryIntervalMs: 1_000, poolSize: 4 });
    const a = open();
    const b = open();
    await Promise.all([a.ready(), b.ready()]);
    const start = await b.currentResourceVersion();
    const wa = a.watch({});
    const wb = b.watch({});
    const acked: { rv: number; line: string }[] = [];
    const note = (type: string, e: { metadata: { namespace?: string; name?: string; resourceVersion?: string } }): void => {
      acked.push({ rv: Number(e.metadata.resourceVersion), line: `${type} ${e.metadata.namespace}/${e.metadata.name}@${e.metadata.resourceVersion}` });
    };
    await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const via = i % 2 === 0 ? a : b;
        note('ADDED', await via.create(sampleEvent('default', `e${i}`), i < 10 ? { ttlSeconds: 5 } : {}));
      }),
    );
    // Updates race across replicas on one key: each is a compare-and-swap, none is lost.
    const bumps = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).guaranteedUpdate('default', 'e50', (cur) => ({ ...cur!, count: (cur!.count ?? 0) + 1 }))),
    );
    for (const r of bumps) note('MODIFIED', r.object);
    assert.equal((await a.get('default', 'e50')).count, 11);
    note('DELETED', await b.delete('default', 'e60'));
    // Both replicas sweep; each expired event is deleted once.
    await clock.advance(6_000);
    const expected = acked.sort((x, y) => x.rv - y.rv).map((x) => x.line);
    const n = expected.length + 10;
    const [seenA, seenB] = await Promise.all([take(wa, n), take(wb, n)]);
    assert.deepEqual(seenA, seenB, 'both replicas deliver the same sequence');
    assert.deepEqual(
      seenA.filter((l) => !l.startsWith('DELETED default/e') || l.startsWith('DELETED default/e60')),
      expected,
    );
    const expired = seenA.filter((l) => /^DELETED default\/e\d@/.test(l));
    assert.equal(expired.length, 10, expired.join('\n'));
    const rvs = seenA.map((l) => Number(l.slice(l.lastIndexOf('@') + 1)));
    assert.deepEqual(rvs, Array.from({ length: rvs.length }, (_, i) => start + 1 + i), 'one revision per change, no gaps');
    // A watcher on B that starts in the past replays A's writes from SQL.
    const replay = b.watch({ resourceVersion: start });
    assert.deepEqual(await take(replay, n), seenA);
    replay.stop();
    // A replica that goes away takes no acknowledged write with it.
    await a.close();
    const { items } = await b.list({ namespace: 'default' });
    assert.equal(items.length, 100 - 10 - 1);
    await b.close();
  });
});

/** postgresSpec is the --storage value for one schema of the test database. */
function postgresSpec(schema: string): string {
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('schema', schema);
  return url.toString();
}

void describe('two kevents serve replicas over one PostgreSQL', () => {
  let a: ServerProcess | undefined;
  let b: ServerProcess | undefined;
  let unsupported: string | undefined;
  const kubectl = findKubectls().at(-1);
  before(async () => {
    const spec = postgresSpec(fresh());
    try {
      a = await startServer(['--storage', spec]);
      b = await startServer(['--storage', spec]);
    } catch (e) {
      // Until the CLI knows postgres:// there is nothing to run against.
      if (/unsupported --storage/.test(String(e))) unsupported = 'kevents serve does not accept --storage postgres:// yet';
      else throw e;
    }
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
  });

  void it('a deletecollection of several pages through one replica deletes each event once, in key order, as the other replica\'s watchers see it', { timeout: 120_000 }, async (t) => {
    if (unsupported !== undefined) {
      t.skip(unsupported);
      return;
    }
    await checkCollectionDelete(a!.url, b!.url, 'dc', { ordered: true });
  });

  void it('a write through one replica reaches watchers on the other in order with the same resourceVersions; kubectl sees the same events on both', { timeout: 60_000 }, async (t) => {
    if (unsupported !== undefined) {
      t.skip(unsupported);
      return;
    }
    const list = await request(b!.url, 'GET', '/api/v1/namespaces/default/events');
    assert.equal(list.status, 200, list.text);
    const n = 20;
    const ac = new AbortController();
    const res = await fetch(`${b!.url}/api/v1/namespaces/default/events?watch=true&resourceVersion=${list.json.metadata.resourceVersion}`, { signal: ac.signal });
    const frames = readFrames(res, n + 1);
    const acked: string[] = [];
    for (let i = 0; i < n; i++) {
      const r = await request(a!.url, 'POST', '/api/v1/namespaces/default/events', legacyEvent({ name: `web-${i}.x`, object: `web-${i}`, reason: 'Started', message: `started ${i}`, firstAgo: 60, lastAgo: 60 }));
      assert.equal(r.status, 201, r.text);
      acked.push(`ADDED ${r.json.metadata.name}@${r.json.metadata.resourceVersion}`);
    }
    const patched = await request(a!.url, 'PATCH', '/api/v1/namespaces/default/events/web-3.x', { count: 2 }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(patched.status, 200, patched.text);
    acked.push(`MODIFIED web-3.x@${patched.json.metadata.resourceVersion}`);
    assert.deepEqual(await frames, acked);
    ac.abort();
    if (kubectl === undefined) {
      t.diagnostic('no kubectl on this machine: the kubectl half is not run');
      return;
    }
    const columns = ['get', 'events', '-n', 'default', '--sort-by=.metadata.name', '-o', 'custom-columns=NAME:.metadata.name,RV:.metadata.resourceVersion,COUNT:.count'];
    const viaA = await runKubectl(kubectl, a!.url, columns);
    const viaB = await runKubectl(kubectl, b!.url, columns);
    assert.equal(viaA.code, 0, viaA.stderr);
    assert.equal(viaB.stdout, viaA.stdout);
    assert.equal(viaB.stdout.trim().split('\n').length, n + 1);
    // A replica killed outright takes no acknowledged write with it.
    await a!.stop('SIGKILL');
    const afterKill = await runKubectl(kubectl, b!.url, columns);
    assert.equal(afterKill.stdout, viaA.stdout);
  });
});

/** readFrames reads `n` watch frames (one JSON object a line) and renders each as `TYPE name@rv`. */
async function readFrames(res: Response, n: number): Promise<string[]> {
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const out: string[] = [];
  let buf = '';
  while (out.length < n) {
    const { done, value } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      if (line === '') continue;
      const f = JSON.parse(line) as { type: string; object: { metadata: { name: string; resourceVersion: string } } };
      out.push(`${f.type} ${f.object.metadata.name}@${f.object.metadata.resourceVersion}`);
    }
  }
  return out;
}
