import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { legacyEvent, request } from './support/http.js';
import { startMirror, stopMirror } from './support/mirror-process.js';
import type { MirrorProcess } from './support/mirror-process.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';

/**
 * A PostgreSQL archive, end to end: a source `kevents serve`, then `kevents
 * mirror --to postgres://…` and `kevents serve --storage postgres://… --mirror`
 * archiving it, and the archived events and occurrences read back through the
 * Kubernetes API and the archive API of a server over the same schema.
 */

/** POSTGRES_URL is the machine's PostgreSQL unless KEVENTS_TEST_POSTGRES says otherwise. */
const POSTGRES_URL = process.env.KEVENTS_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:55432/test';
const CORE = '/api/v1/namespaces/default/events';
const OCCURRENCES = '/apis/archive.kevents.io/v1alpha1/namespaces/default/occurrences';

const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
const schemas: string[] = [];
const fresh = (): string => {
  const s = `kevents_pgmirror_${process.pid}_${schemas.length}`;
  schemas.push(s);
  return s;
};
const storage = (schema: string): string => `${POSTGRES_URL}${POSTGRES_URL.includes('?') ? '&' : '?'}schema=${schema}`;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(what: string, fn: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(200);
  }
}

async function createAt(base: string, name: string, object: string): Promise<void> {
  const r = await request(base, 'POST', CORE, legacyEvent({ name, object, reason: 'BackOff', message: 'Back-off restarting failed container', type: 'Warning', firstAgo: 60, lastAgo: 60 }));
  assert.equal(r.status, 201, r.text);
}

async function bump(base: string, name: string, count: number): Promise<void> {
  const r = await request(base, 'PATCH', `${CORE}/${name}`, { count, lastTimestamp: new Date(Date.now() + count * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') }, {
    'Content-Type': 'application/merge-patch+json',
  });
  assert.equal(r.status, 200, r.text);
}

async function eventNames(base: string): Promise<string[]> {
  const r = await request(base, 'GET', CORE);
  assert.equal(r.status, 200, r.text);
  return (r.json.items as { metadata: { name: string } }[]).map((e) => e.metadata.name).sort();
}

/** history is each archived change of one event, as `cluster before->after`. */
async function history(base: string, name: string): Promise<string[]> {
  const r = await request(base, 'GET', `${OCCURRENCES}?fieldSelector=event.name=${name}`);
  assert.equal(r.status, 200, r.text);
  return (r.json.items as { cluster?: string; countBefore: number; countAfter: number }[]).map((o) => `${o.cluster ?? ''} ${o.countBefore}->${o.countAfter}`);
}

void describe('a PostgreSQL archive fed by the mirror', { timeout: 120_000 }, () => {
  const running: { servers: ServerProcess[]; mirrors: MirrorProcess[] } = { servers: [], mirrors: [] };
  after(async () => {
    for (const m of running.mirrors) await stopMirror(m, 'SIGKILL');
    for (const s of running.servers) await s.stop();
    for (const s of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
    await admin.end();
  });

  void it('kevents mirror --to postgres:// archives events and each observed change, with its checkpoint; a server over the schema serves both', async () => {
    const source = await startServer(['--storage', 'memory:']);
    running.servers.push(source);
    await createAt(source.url, 'a', 'web-1');
    await createAt(source.url, 'b', 'web-2');
    await bump(source.url, 'a', 2);
    const schema = fresh();
    const mirror = await startMirror(source.url, storage(schema));
    running.mirrors.push(mirror);
    const archive = await startServer(['--storage', storage(schema), '--event-ttl', '0']);
    running.servers.push(archive);
    await until('the listed events are archived', async () => (await eventNames(archive.url)).join() === 'a,b');
    // Changes after the list arrive through the watch, each as an occurrence.
    await bump(source.url, 'a', 3);
    await createAt(source.url, 'c', 'web-3');
    await until('the watched changes are archived', async () => (await history(archive.url, 'a')).length === 2 && (await eventNames(archive.url)).length === 3);
    assert.deepEqual(await history(archive.url, 'a'), ['lab 0->2', 'lab 2->3']);
    assert.deepEqual(await history(archive.url, 'c'), ['lab 0->1']);
    assert.equal((await request(archive.url, 'GET', `${CORE}/a`)).json.count, 3);
    const table = await request(archive.url, 'GET', OCCURRENCES, undefined, { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    assert.equal(table.status, 200, table.text);
    assert.equal(table.json.rows.length, 4);
    const { rows } = await admin.query<{ resource_version: string }>(`SELECT resource_version FROM ${schema}.source_checkpoints WHERE source = 'lab'`);
    assert.ok(rows.length === 1 && Number(rows[0]!.resource_version) > 0, 'the checkpoint is in the database');
    await stopMirror(mirror, 'SIGTERM');
    assert.equal(mirror.child.exitCode, 0, mirror.output());
  });

  void it('kevents serve --storage postgres:// --mirror URL archives into its own store and serves what it archived', async () => {
    const source = await startServer(['--storage', 'memory:']);
    running.servers.push(source);
    await createAt(source.url, 'x', 'db-0');
    const server = await startServer(['--storage', storage(fresh()), '--event-ttl', '0', '--mirror', source.url, '--cluster', 'east']);
    running.servers.push(server);
    await until('the listed event is archived', async () => (await eventNames(server.url)).join() === 'x');
    await bump(source.url, 'x', 5);
    await until('the bump is archived', async () => (await history(server.url, 'x')).length === 2);
    assert.deepEqual(await history(server.url, 'x'), ['east 0->1', 'east 1->5']);
    const ready = await request(server.url, 'GET', '/readyz?verbose');
    assert.equal(ready.status, 200, ready.text);
  });
});
