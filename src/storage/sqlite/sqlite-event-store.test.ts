import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { CoreEvent } from '../../api/index.js';
import { FakeClock } from '../../internal/index.js';
import { isStorageError } from '../errors.js';
import type { EventStore } from '../event-store.js';
import { CONFORMANCE_ENV_DEFAULTS, runArchiveStoreConformance, runEventStoreConformance, sampleEvent } from '../testing/index.js';
import { SqliteEventStore } from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'kevents-sqlite-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const paths = new WeakMap<EventStore, string>();
let n = 0;

runEventStoreConformance('sqlite', {
  create: (env) => {
    const path = join(dir, `store-${n++}.db`);
    const store = new SqliteEventStore({ path, ...env.options });
    paths.set(store, path);
    return Promise.resolve(store);
  },
  destroy: async (store) => {
    await store.close();
    const path = paths.get(store)!;
    for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
  },
  reopen: (closed, env) => {
    const path = paths.get(closed)!;
    const store = new SqliteEventStore({ path, ...env.options });
    paths.set(store, path);
    return Promise.resolve(store);
  },
});

void describe('SqliteEventStore on disk', () => {
  const open = (path: string, clock: FakeClock): SqliteEventStore =>
    new SqliteEventStore({ path, clock, ...CONFORMANCE_ENV_DEFAULTS });
  const rowCount = (path: string): number => {
    const db = new Database(path, { readonly: true });
    try {
      return (db.prepare('SELECT count(*) AS n FROM versions').get() as { n: number }).n;
    } finally {
      db.close();
    }
  };

  void it('compaction removes superseded rows and tombstones from the file, and the revision counter survives it', async () => {
    const path = join(dir, 'compaction.db');
    const clock = new FakeClock();
    let store = open(path, clock);
    await store.create(sampleEvent('default', 'a'));
    for (let i = 2; i <= 5; i++) await store.guaranteedUpdate('default', 'a', (e) => ({ ...e!, count: i }));
    await store.create(sampleEvent('default', 'b'));
    await store.delete('default', 'b');
    const rv = await store.currentResourceVersion();
    assert.equal(rowCount(path), 7);
    await clock.advance((CONFORMANCE_ENV_DEFAULTS.historyWindowSeconds + 5) * 1000);
    await new Promise((r) => setImmediate(r));
    assert.equal(await store.oldestResourceVersion(), rv);
    assert.equal(rowCount(path), 1, 'only the current version of a is left');
    await store.delete('default', 'a');
    await clock.advance((CONFORMANCE_ENV_DEFAULTS.historyWindowSeconds + 5) * 1000);
    await new Promise((r) => setImmediate(r));
    assert.equal(rowCount(path), 0);
    await store.close();
    store = open(path, clock);
    assert.equal(await store.currentResourceVersion(), rv + 1);
    assert.equal(rvOf(await store.create(sampleEvent('default', 'c'))), rv + 2);
    await store.close();
  });

  void it('refuses a file of another schema version with Unreachable', async () => {
    const path = join(dir, 'future.db');
    const db = new Database(path);
    db.exec('CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID');
    db.prepare("INSERT INTO meta VALUES ('schema', 99)").run();
    db.close();
    const store = new SqliteEventStore({ path });
    await assert.rejects(store.ready(), (e) => isStorageError(e, 'Unreachable') && /schema version 99/.test(e.message));
    await assert.rejects(store.get('default', 'a'), (e) => isStorageError(e, 'Unreachable'));
    await store.close();
  });

  void it('migrates a version 1 file: its key indexes are rebuilt with the filter columns, its events kept', async () => {
    const path = join(dir, 'v1.db');
    let store = new SqliteEventStore({ path });
    await store.create(sampleEvent('default', 'old'));
    await store.close();
    const db = new Database(path);
    db.exec(`DROP INDEX cur_key; DROP INDEX hist_key;
      CREATE UNIQUE INDEX cur_key ON versions(key) WHERE superseded_rv IS NULL AND op <> 3;
      CREATE INDEX hist_key ON versions(key, rv, superseded_rv) WHERE superseded_rv IS NOT NULL AND op <> 3;
      UPDATE meta SET value = 1 WHERE name = 'schema';`);
    db.close();
    store = new SqliteEventStore({ path });
    assert.equal((await store.get('default', 'old')).metadata.name, 'old');
    await store.close();
    const check = new Database(path, { readonly: true });
    const columns = (index: string): string[] => check.prepare<[], { name: string }>(`PRAGMA index_info(${index})`).all().map((r) => r.name);
    assert.deepEqual(columns('cur_key'), ['key', 'reason', 'type', 'involved_kind']);
    assert.deepEqual(columns('hist_key'), ['key', 'rv', 'superseded_rv', 'reason', 'type', 'involved_kind']);
    assert.equal(check.prepare<[], { value: number }>("SELECT value FROM meta WHERE name = 'schema'").get()?.value, 2);
    check.close();
  });

  void it('leaves remainingItemCount out when more than maxCountRemaining items follow', async () => {
    const store = new SqliteEventStore({ path: join(dir, 'count.db'), maxCountRemaining: 3 });
    for (let i = 0; i < 10; i++) await store.create(sampleEvent('default', `e${i}`));
    const first = await store.list({ limit: 2, countRemaining: true });
    assert.ok(first.lastKey !== undefined);
    assert.equal(first.remainingItemCount, undefined);
    const rest = await store.list({ limit: 7, countRemaining: true, startKey: first.lastKey, resourceVersion: first.resourceVersion, match: 'Exact' });
    assert.equal(rest.remainingItemCount, 1);
    assert.equal((await store.list({ limit: 7, countRemaining: true })).remainingItemCount, 3);
    await store.close();
  });

  void it('fails every call with Unreachable after close()', async () => {
    const store = new SqliteEventStore({ path: join(dir, 'closed.db') });
    await store.close();
    await assert.rejects(store.create(sampleEvent('default', 'a')), (e) => isStorageError(e, 'Unreachable'));
    await assert.rejects(store.list({}), (e) => isStorageError(e, 'Unreachable'));
  });
});

function rvOf(e: CoreEvent): number {
  return Number(e.metadata.resourceVersion);
}

runArchiveStoreConformance('sqlite', {
  create: (env) => {
    const path = join(dir, `archive-${n++}.db`);
    const store = new SqliteEventStore({ path, ...env.options });
    paths.set(store, path);
    return Promise.resolve(store);
  },
  destroy: async (store) => {
    await store.close();
    const path = paths.get(store)!;
    for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
  },
  reopen: (closed, env) => {
    const path = paths.get(closed)!;
    const store = new SqliteEventStore({ path, ...env.options });
    paths.set(store, path);
    return Promise.resolve(store);
  },
});
