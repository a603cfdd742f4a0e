import { parseSearchQuery } from '../src/api/index.js';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { CoreEvent } from '../src/api/index.js';
import type { EventStore } from '../src/storage/index.js';
import type { SearchCursor, SearchHit, SearchPage, SearchRequest } from '../src/storage/index.js';
import { PostgresEventStore } from '../src/storage/postgres/index.js';
import { SqliteEventStore } from '../src/storage/sqlite/index.js';
import { request } from './support/http.js';
import { POSTGRES_URL, testSchemas } from './support/postgres.js';
import { startServer } from './support/server-process.js';

/**
 * A crash mid-write leaves the archive's search index in step with its data, in
 * each backend that keeps one: `kevents serve` (the built CLI) over SQLite and
 * over PostgreSQL takes creates, and updates of what it created, from concurrent
 * clients until it is killed with SIGKILL mid-write. The store opened on the
 * archive afterwards holds every acknowledged create, finds every event it
 * holds by search (by a word every event has, and by its own name), with the
 * text it holds, and no hit is of an event it does not hold.
 */

const { fresh } = testSchemas('kevents_search_crash');
const dir = mkdtempSync(join(tmpdir(), 'kevents-search-crash-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** ACKED is how many creates the server acknowledges before it is killed. */
const ACKED = 1_500;
/** CLIENTS write at once, so that the kill lands in the middle of several writes. */
const CLIENTS = 32;

type Searchable = EventStore & { search(request: SearchRequest): Promise<SearchPage> };

function event(name: string, now: number): CoreEvent {
  const at = new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    metadata: { namespace: 'crash', name },
    involvedObject: { kind: 'Pod', namespace: 'crash', name: `pod-${name}` },
    reason: 'Written',
    type: 'Normal',
    message: `crashing ${name} first`,
    count: 1,
    firstTimestamp: at,
    lastTimestamp: at,
  };
}

/** writeUntilKilled has CLIENTS clients create events (and update every third) until ACKED creates are acknowledged, then kills the server with SIGKILL. */
async function writeUntilKilled(storage: string): Promise<string[]> {
  const srv = await startServer(['--storage', storage]);
  const acked: string[] = [];
  let next = 0;
  let killed: Promise<number | null> | undefined;
  const client = async (): Promise<void> => {
    for (;;) {
      const name = `e${next++}`;
      try {
        const created = await request(srv.url, 'POST', '/api/v1/namespaces/crash/events', event(name, Date.now()));
        if (created.status !== 201) throw new Error(`create ${name}: ${created.status} ${created.text}`);
        acked.push(name);
        if (acked.length >= ACKED) killed ??= srv.stop('SIGKILL');
        if (Number(name.slice(1)) % 3 === 0) {
          await request(srv.url, 'PATCH', `/api/v1/namespaces/crash/events/${name}`, { message: `crashing ${name} second`, count: 2 }, { 'Content-Type': 'application/merge-patch+json' });
        }
      } catch (e) {
        // Once the server is killed, every client's next request fails: that is the end of the writing.
        if (killed !== undefined) return;
        throw e;
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  await killed;
  assert.equal(srv.child.signalCode, 'SIGKILL', 'the server was killed, not stopped');
  return acked;
}

async function searchAll(store: Searchable, q: string): Promise<SearchHit[]> {
  const hits: SearchHit[] = [];
  let after: SearchCursor | undefined;
  let resourceVersion: number | undefined;
  for (;;) {
    const page = await store.search({ query: parseSearchQuery(q, { nowMs: Date.now() }), limit: 1000, ...(after !== undefined ? { after } : {}), ...(resourceVersion !== undefined ? { resourceVersion } : {}) });
    hits.push(...page.items);
    resourceVersion ??= page.resourceVersion;
    if (page.next === undefined) return hits;
    after = page.next;
  }
}

/** checkInStep compares what the store holds with what its search finds. */
async function checkInStep(store: Searchable, acked: string[]): Promise<void> {
  const { items } = await store.list({ namespace: 'crash' });
  const stored = new Map(items.map((e) => [e.metadata.name!, e]));
  const lost = acked.filter((n) => !stored.has(n));
  assert.deepEqual(lost, [], `${lost.length} of ${acked.length} acknowledged creates lost`);
  const hits = await searchAll(store, 'crashing');
  const found = hits.map((h) => h.event.metadata.name!);
  assert.equal(new Set(found).size, found.length, 'each event is one hit');
  assert.deepEqual([...found].sort(), [...stored.keys()].sort(), 'every stored event is a hit, and every hit a stored event');
  for (const h of hits) assert.equal(h.event.message, stored.get(h.event.metadata.name!)!.message, `${h.event.metadata.name} is found with the text it holds`);
  for (const [name, e] of stored) {
    const own = await store.search({ query: parseSearchQuery(name, { nowMs: Date.now() }), namespace: 'crash', limit: 2 });
    assert.deepEqual(own.items.map((h) => h.event.metadata.name), [name], `${name} is found by its name, once`);
    const stale = e.message!.endsWith('second') ? await store.search({ query: parseSearchQuery(`"${name} first"`, { nowMs: Date.now() }), limit: 1 }) : undefined;
    assert.equal(stale?.items.length ?? 0, 0, `${name}'s replaced text is no hit`);
  }
}

void describe('a crash mid-write leaves the search index in step with the data', { timeout: 240_000 }, () => {
  void it('SQLite: kevents serve killed with SIGKILL mid-write', async () => {
    const path = join(dir, 'crash.db');
    const acked = await writeUntilKilled(`sqlite:${path}`);
    const store = new SqliteEventStore({ path });
    try {
      await checkInStep(store, acked);
    } finally {
      await store.close();
    }
  });

  void it('PostgreSQL: kevents serve killed with SIGKILL mid-write', async () => {
    const schema = fresh();
    const url = new URL(POSTGRES_URL);
    url.searchParams.set('schema', schema);
    const acked = await writeUntilKilled(url.toString());
    const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema });
    try {
      await checkInStep(store, acked);
    } finally {
      await store.close();
    }
  });
});
