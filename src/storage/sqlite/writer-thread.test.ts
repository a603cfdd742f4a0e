import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { CoreEvent } from '../../api/index.js';
import { isStorageError } from '../errors.js';
import type { EventWatch, StoreWatchEvent } from '../event-store.js';
import { sampleEvent } from '../testing/index.js';
import { SqliteEventStore } from './sqlite-event-store.js';
import { Worker } from 'node:worker_threads';
import { openSqliteWithWriterThread as openBuilt, writerThreadReadiness } from './writer-thread.js';
import type { SqliteEventStoreOptions } from './options.js';
import type { StartWriter } from './writer-thread.js';

/**
 * A SQLite store with its writes on a thread of their own (`kevents serve
 * --writer-thread`): the caller's store is a follower on the file, and every
 * write crosses to the writer thread and back.
 */

/** startSource starts the writer thread's TypeScript module through tsx, as these tests run from the sources. */
const startSource: StartWriter = (data) => {
  const source = new URL('./writer-thread-main.ts', import.meta.url).href;
  return new Worker(`import('tsx/esm/api').then((api) => api.tsImport(${JSON.stringify(source)}, ${JSON.stringify(import.meta.url)}))`, { eval: true, workerData: data });
};
const openSqliteWithWriterThread = (options: SqliteEventStoreOptions): Promise<SqliteEventStore> => openBuilt(options, startSource);

const dir = mkdtempSync(join(tmpdir(), 'kevents-writer-thread-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = (): string => join(dir, `events-${n++}.db`);

async function take(w: EventWatch, count: number): Promise<StoreWatchEvent[]> {
  const it = w[Symbol.asyncIterator]();
  const out: StoreWatchEvent[] = [];
  while (out.length < count) {
    const r = await it.next();
    if (r.done === true) break;
    out.push(r.value);
  }
  return out;
}

const rv = (e: CoreEvent): number => Number(e.metadata.resourceVersion);

test('concurrent creates get distinct revisions in one order, which a watch and a list see at once', async () => {
  const store = await openSqliteWithWriterThread({ path: fresh() });
  try {
    const w = store.watch({ namespace: 'default' });
    const created = await Promise.all(Array.from({ length: 500 }, (_, i) => store.create(sampleEvent('default', `e-${i}`))));
    const revisions = created.map(rv).sort((a, b) => a - b);
    assert.equal(new Set(revisions).size, 500);
    assert.equal(revisions[499]! - revisions[0]!, 499, 'no revision is skipped or used twice');
    // Acknowledged means visible: the list and the watch already have every one.
    const list = await store.list({ namespace: 'default' });
    assert.equal(list.items.length, 500);
    assert.ok(list.resourceVersion >= revisions[499]!);
    const seen = await take(w, 500);
    assert.deepEqual(
      seen.map((c) => rv(c.object)),
      revisions,
    );
    assert.ok(seen.every((c) => c.type === 'ADDED'));
    w.stop();
  } finally {
    await store.close();
  }
});

test('updates, deletes and their errors cross the thread as a store in one thread has them', async () => {
  const store = await openSqliteWithWriterThread({ path: fresh() });
  try {
    const w = store.watch({});
    const e1 = await store.create(sampleEvent('default', 'e1'));
    await assert.rejects(store.create(sampleEvent('default', 'e1')), (e) => isStorageError(e, 'KeyExists') && e.key === 'default/e1' && e.currentResourceVersion === rv(e1));
    const updated = await store.guaranteedUpdate('default', 'e1', (cur) => ({ ...cur!, count: (cur!.count ?? 0) + 1 }));
    assert.equal(updated.object.count, 2);
    assert.ok(rv(updated.object) > rv(e1));
    assert.equal((await store.get('default', 'e1')).count, 2);
    await assert.rejects(
      store.guaranteedUpdate('default', 'e1', (cur) => cur!, { preconditions: { resourceVersion: String(rv(e1)) } }),
      (e) => isStorageError(e, 'ResourceVersionConflicts') && /Precondition failed/.test(e.message),
    );
    const deleted = await store.delete('default', 'e1');
    assert.equal(deleted.count, 2);
    await assert.rejects(store.get('default', 'e1'), (e) => isStorageError(e, 'KeyNotFound'));
    await assert.rejects(store.delete('default', 'e1'), (e) => isStorageError(e, 'KeyNotFound'));
    assert.deepEqual(
      (await take(w, 3)).map((c) => `${c.type} ${c.object.metadata.name} ${c.object.count}`),
      ['ADDED e1 1', 'MODIFIED e1 2', 'DELETED e1 2'],
    );
    w.stop();
  } finally {
    await store.close();
  }
});

test('expiry runs in the writer thread, and its deletions reach the watchers', async () => {
  const store = await openSqliteWithWriterThread({ path: fresh(), expiryIntervalMs: 100 });
  try {
    const w = store.watch({});
    await store.create(sampleEvent('default', 'short'), { ttlSeconds: 1 });
    await store.create(sampleEvent('default', 'long'), { ttlSeconds: 3600 });
    // No timing asserted: the deletion comes once the second has passed, and the watch waits for it.
    const seen = await take(w, 3);
    assert.deepEqual(
      seen.map((c) => `${c.type} ${c.object.metadata.name}`),
      ['ADDED short', 'ADDED long', 'DELETED short'],
    );
    assert.deepEqual(
      (await store.list({})).items.map((e) => e.metadata.name),
      ['long'],
    );
    w.stop();
  } finally {
    await store.close();
  }
});

test('closing ends the writer thread after its last commit; the file then opens in one thread with every write', async () => {
  const path = fresh();
  const store = await openSqliteWithWriterThread({ path });
  const created = await Promise.all(Array.from({ length: 100 }, (_, i) => store.create(sampleEvent('ns', `c-${i}`))));
  await store.close();
  await assert.rejects(store.create(sampleEvent('ns', 'late')), (e) => isStorageError(e));
  const again = new SqliteEventStore({ path });
  try {
    const list = await again.list({ namespace: 'ns' });
    assert.equal(list.items.length, 100);
    assert.equal(list.resourceVersion, Math.max(...created.map(rv)));
  } finally {
    await again.close();
  }
});

test('writes still on their way when the store closes are committed before the thread ends', async () => {
  const path = fresh();
  const store = await openSqliteWithWriterThread({ path });
  await store.create(sampleEvent('ns', 'first'));
  // Not awaited: some are still gathering in this thread, some in the writer's queue, when close is called.
  const late = Array.from({ length: 60 }, (_, i) => store.create(sampleEvent('ns', `late-${i}`)));
  await store.close();
  const settled = await Promise.allSettled(late);
  assert.deepEqual(
    settled.filter((r) => r.status === 'rejected'),
    [],
  );
  const again = new SqliteEventStore({ path });
  try {
    assert.equal((await again.list({ namespace: 'ns' })).items.length, 61);
  } finally {
    await again.close();
  }
});

test('a file SQLite cannot open is refused with the message a store in one thread gives', async () => {
  const path = join(dir, 'not-a-database.db');
  writeFileSync(path, 'this is not a SQLite file, and long enough to have a header to read\n'.repeat(20));
  const inline = new SqliteEventStore({ path });
  const expected = await inline.ready().then(
    () => assert.fail('opened'),
    (e: Error) => e.message,
  );
  await inline.close();
  await assert.rejects(openSqliteWithWriterThread({ path }), (e) => isStorageError(e, 'Unreachable') && e.message === expected);
});

test('a writer thread keeps time by the real clock', async () => {
  const fake = { now: () => 0, setTimeout: () => ({}), clearTimeout: () => {}, sleep: () => Promise.resolve() };
  await assert.rejects(openSqliteWithWriterThread({ path: fresh(), clock: fake }), /real clock/);
});

test('a writer thread that ends unasked refuses every write from then on, and says so to /readyz', async () => {
  const store = await openSqliteWithWriterThread({ path: fresh() });
  try {
    await store.create(sampleEvent('default', 'before'));
    assert.deepEqual(writerThreadReadiness(store), { ready: true, message: 'ok' });
    // As if the thread had crashed: end it from outside.
    await (store as unknown as { thread: { worker: { terminate(): Promise<number> } } }).thread.worker.terminate();
    await assert.rejects(store.create(sampleEvent('default', 'after')), (e) => isStorageError(e, 'Unreachable') && /writer thread stopped/.test(e.message));
    const readiness = writerThreadReadiness(store);
    assert.equal(readiness.ready, false);
    assert.match(readiness.message, /the SQLite writer thread stopped/);
    // Reads go on: the file is read on this thread.
    assert.equal((await store.get('default', 'before')).metadata.name, 'before');
  } finally {
    await store.close();
  }
  assert.deepEqual(writerThreadReadiness(new Map()), { ready: true, message: 'ok' });
});

test('a write whose arguments cannot cross to the thread fails alone, and the writes sent with it are done', async () => {
  const store = await openSqliteWithWriterThread({ path: fresh() });
  try {
    const neighbours = Array.from({ length: 3 }, (_, i) => store.create(sampleEvent('default', `n-${i}`)));
    const batch = { writes: [{ key: 'default/x', decide: () => undefined }] } as unknown as Parameters<SqliteEventStore['applyArchiveBatch']>[0];
    await assert.rejects(store.applyArchiveBatch(batch), (e) => isStorageError(e, 'Internal') && /cannot send applyArchiveBatch to the SQLite writer thread/.test(e.message));
    assert.equal((await Promise.all(neighbours)).length, 3);
    assert.equal((await store.list({ namespace: 'default' })).items.length, 3);
  } finally {
    await store.close();
  }
});
