import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { CoreEvent } from '../../api/index.js';
import type { StoreWatchEvent } from '../event-store.js';
import { sampleEvent } from '../testing/index.js';
import type { FollowerWrite, WriterLink } from './options.js';
import { SqliteEventStore } from './sqlite-event-store.js';

/**
 * A writer and its followers on one file, in one process: the link carries each
 * write as JSON (as the IPC channel of `serve --workers` does) and the writer
 * tells the followers of each commit, as the primary does, before it
 * acknowledges it. `quiet` followers are not told, to show what reads do alone.
 */
function pair(followers = 1, told = true): { path: string; writer: SqliteEventStore; followers: SqliteEventStore[]; calls: FollowerWrite[] } {
  const path = join(mkdtempSync(join(tmpdir(), 'kevents-follower-')), 'events.db');
  const list: SqliteEventStore[] = [];
  const calls: FollowerWrite[] = [];
  const writer = new SqliteEventStore({ path, onCommit: (rv, compacted) => told && list.forEach((f) => f.followCommit(rv, compacted)) });
  const link: WriterLink = {
    async call(op, args) {
      calls.push(op);
      const a = JSON.parse(JSON.stringify(args)) as [never, never, never, never, never];
      const run = (writer[op] as (...x: unknown[]) => Promise<unknown>).bind(writer);
      const value = await run(...a);
      return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
    },
  };
  for (let i = 0; i < followers; i++) list.push(new SqliteEventStore({ path, writer: link }));
  return { path, writer, followers: list, calls };
}

async function take(it: AsyncIterator<StoreWatchEvent>, n: number): Promise<StoreWatchEvent[]> {
  const out: StoreWatchEvent[] = [];
  while (out.length < n) out.push((await it.next()).value as StoreWatchEvent);
  return out;
}

const names = (items: CoreEvent[]): string[] => items.map((e) => e.metadata.name!).sort();

test('a follower starts at the newest revision of the file without reading its history', async () => {
  const { path, writer, followers } = pair(0);
  for (let i = 0; i < 50; i++) await writer.create(sampleEvent('default', `old-${i}`));
  const follower = new SqliteEventStore({ path, writer: { call: () => Promise.reject(new Error('no writes here')) } });
  followers.push(follower);
  assert.equal(await follower.currentResourceVersion(), await writer.currentResourceVersion());
  // History stays readable: a watch from an old revision replays it from the file.
  const w = follower.watch({ resourceVersion: 40 });
  const replay = await take(w[Symbol.asyncIterator](), 10);
  assert.deepEqual(
    replay.map((c) => c.object.metadata.name),
    Array.from({ length: 10 }, (_, i) => `old-${40 + i}`),
  );
  w.stop();
  await follower.close();
  await writer.close();
});

test('writes through a follower are the writer\'s, and every follower\'s watchers see them once and in order', async () => {
  const { writer, followers, calls } = pair(2);
  const [a, b] = followers as [SqliteEventStore, SqliteEventStore];
  const wa = a.watch({})[Symbol.asyncIterator]();
  const wb = b.watch({})[Symbol.asyncIterator]();
  const created = await a.create(sampleEvent('default', 'e1'));
  assert.equal(created.metadata.resourceVersion, String(await writer.currentResourceVersion()));
  // Read your write on the other follower, at once.
  assert.equal((await b.get('default', 'e1')).metadata.resourceVersion, created.metadata.resourceVersion);
  const updated = await b.guaranteedUpdate('default', 'e1', (cur) => ({ ...cur!, count: 2 }));
  assert.equal(updated.object.count, 2);
  await a.delete('default', 'e1');
  await assert.rejects(b.create({ ...sampleEvent('default', 'e2') }).then(() => b.create(sampleEvent('default', 'e2'))), (e: { code?: string }) => e.code === 'KeyExists');
  for (const w of [wa, wb]) {
    const seen = await take(w, 4);
    assert.deepEqual(
      seen.map((c) => `${c.type} ${c.object.metadata.name}`),
      ['ADDED e1', 'MODIFIED e1', 'DELETED e1', 'ADDED e2'],
    );
  }
  assert.deepEqual(calls, ['create', 'writeIfAt', 'delete', 'create', 'create']);
  for (const f of followers) await f.close();
  await writer.close();
});

test('a follower\'s update retries when another write comes between its read and its compare-and-swap', async () => {
  const { writer, followers } = pair(1);
  const f = followers[0]!;
  await writer.create(sampleEvent('default', 'race', { count: 1 }));
  let tries = 0;
  const r = await f.guaranteedUpdate('default', 'race', async (cur) => {
    tries++;
    // The first time, another writer changes the event after the follower read it.
    if (tries === 1) await writer.guaranteedUpdate('default', 'race', (c) => ({ ...c!, count: 10 }));
    return { ...cur!, count: (cur!.count ?? 0) + 1 };
  });
  assert.equal(tries, 2);
  assert.equal(r.object.count, 11);
  await f.close();
  await writer.close();
});

test('a follower\'s list is at a revision that covers every item, even before it is told of the commits', async () => {
  const { writer, followers } = pair(1, false);
  const f = followers[0]!;
  for (let i = 0; i < 5; i++) await writer.create(sampleEvent('default', `n-${i}`));
  const list = await f.list({ namespace: 'default' });
  assert.deepEqual(names(list.items), ['n-0', 'n-1', 'n-2', 'n-3', 'n-4']);
  assert.equal(list.resourceVersion, await writer.currentResourceVersion());
  // A watch from that revision sees only what comes after, once told.
  const w = f.watch({ resourceVersion: list.resourceVersion })[Symbol.asyncIterator]();
  await writer.create(sampleEvent('default', 'after'));
  f.followCommit(await writer.currentResourceVersion(), 0);
  const [next] = await take(w, 1);
  assert.equal(next!.object.metadata.name, 'after');
  await f.close();
  await writer.close();
});

test('a follower selects by values its writer interned after the follower last read them', async () => {
  const { writer, followers } = pair(1, false);
  const f = followers[0]!;
  await writer.create(sampleEvent('default', 'first', { reason: 'Pulled' }));
  const byReason = async (reason: string): Promise<string[]> =>
    names((await f.list({ fieldEquals: { reason }, predicate: (e) => e.reason === reason, predicateIsSelection: true })).items);
  assert.deepEqual(await byReason('Pulled'), ['first']);
  // Written by the writer's connection since: ids the follower's copy does not hold.
  await writer.create(sampleEvent('default', 'later', { reason: 'FailedMount', type: 'Warning', involvedObject: { kind: 'PersistentVolumeClaim', name: 'data' } }));
  assert.deepEqual(await byReason('FailedMount'), ['later']);
  assert.deepEqual(names((await f.list({ anyOf: { types: ['warning'], kinds: ['PersistentVolumeClaim'] } })).items), ['later']);
  await f.close();
  await writer.close();
});
