import { parseSearchQuery } from '../../api/index.js';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { CLUSTER_LABEL } from '../../api/index.js';
import type { CoreEvent } from '../../api/index.js';
import { FakeClock, noopLogger } from '../../internal/index.js';
import { eventOccurrenceQuery } from '../archive-store.js';
import { isStorageError } from '../errors.js';
import type { EventStore, ListOptions } from '../event-store.js';
import { CONFORMANCE_ENV_DEFAULTS, runArchiveStoreConformance, runEventStoreConformance, runSearchConformance, sampleEvent } from '../testing/index.js';
import type { ConformanceSetup } from '../testing/index.js';
import { SqliteEventStore } from './index.js';
import { decodeObject } from '../shared/object-codec.js';
import { CURRENT, SCHEMA_VERSION, addMigrationFunctions, fillLabels, nameHash, spanSeconds } from './schema.js';
import { FIXTURES_DIR, fixture } from '../../../test/support/schema-fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'kevents-sqlite-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const paths = new WeakMap<EventStore, string>();
let n = 0;

/** fileStores is the suites' setup of stores on files named `<prefix>-N.db`, removed after each case. */
function fileStores(prefix: string): ConformanceSetup {
  return {
    create: (env) => {
      const path = join(dir, `${prefix}-${n++}.db`);
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
    settle: (store) => (store as SqliteEventStore).catchUpSearchIndex(),
    openPrevious: (env, logger, which) => {
      const path = join(dir, `${prefix}-${n++}.db`);
      copyFileSync(fixture('sqlite', SCHEMA_VERSION, which), path);
      const store = new SqliteEventStore({ path, ...env.options, logger });
      paths.set(store, path);
      return Promise.resolve(store);
    },
  };
}

runEventStoreConformance('sqlite', fileStores('store'));

void describe('SqliteEventStore on disk', () => {
  const open = (path: string, clock: FakeClock): SqliteEventStore =>
    new SqliteEventStore({ path, clock, ...CONFORMANCE_ENV_DEFAULTS });
  const rowCount = (path: string, table = 'versions'): number => {
    const db = new Database(path, { readonly: true });
    try {
      return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
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

  void it('indexes a repeated long message once, finds it at each revision of the window, and drops its entry with the last version sharing it', async () => {
    const path = join(dir, 'shared-entry.db');
    const clock = new FakeClock();
    const store = open(path, clock);
    const message = 'boom the container exited while pulling the image '.repeat(100);
    await store.create(sampleEvent('default', 'a', { count: 1, message }), { occurrence: {} });
    const rvs = [await store.currentResourceVersion()];
    for (let i = 2; i <= 4; i++) {
      await store.guaranteedUpdate('default', 'a', (e) => ({ ...e!, count: i }), { occurrence: {} });
      rvs.push(await store.currentResourceVersion());
    }
    await store.catchUpSearchIndex();
    const counts = async (q: string, resourceVersion?: number): Promise<(number | undefined)[]> =>
      (await store.search({ query: parseSearchQuery(q, { nowMs: clock.now() }), limit: 10, ...(resourceVersion !== undefined ? { resourceVersion } : {}) })).items.map((h) => h.event.count);
    const table = (sql: string): number => {
      const db = new Database(path, { readonly: true });
      try {
        return (db.prepare(sql).get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    assert.equal(table('SELECT count(*) AS n FROM search_fts'), 1, 'one entry for the four versions');
    assert.equal(table('SELECT count(*) AS n FROM search_docs'), 4);
    assert.deepEqual(await counts('pulling'), [4]);
    for (const [i, rv] of rvs.entries()) assert.deepEqual(await counts('pulling', rv), [i + 1], `the version at ${rv}`);
    await clock.advance((CONFORMANCE_ENV_DEFAULTS.historyWindowSeconds + 5) * 1000);
    await new Promise((r) => setImmediate(r));
    assert.equal(rowCount(path), 1, 'compaction removed the versions before the current one');
    assert.deepEqual(await counts('pulling'), [4], 'the current version still finds the entry its first version made');
    assert.equal(table('SELECT count(*) AS n FROM search_fts'), 1);
    await store.delete('default', 'a');
    await clock.advance((CONFORMANCE_ENV_DEFAULTS.historyWindowSeconds + 5) * 1000);
    await new Promise((r) => setImmediate(r));
    assert.equal(table('SELECT count(*) AS n FROM search_docs'), 0);
    assert.equal(table('SELECT count(*) AS n FROM search_fts'), 0, 'the entry went with the last version that shared it');
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

  for (const version of [1, 2] as const) {
    void it(`migrates a version ${version} file written with its own layout: events, history, occurrences and filters read as before`, async () => {
      const path = join(dir, `v${version}.db`);
      writeLegacyFile(path, version);
      const clock = new FakeClock(Date.UTC(2025, 0, 1, 1));
      let store = open(path, clock);
      const old = await store.get('default', 'old');
      assert.equal(old.count, 2);
      assert.equal(old.metadata.resourceVersion, '2');
      assert.deepEqual((await store.list({ fieldEquals: { 'involvedObject.name': 'pod-old' } })).items.map((e) => e.metadata.name), ['old']);
      assert.deepEqual((await store.list({ fieldEquals: { 'metadata.name': 'other' } })).items.map((e) => e.metadata.name), ['other']);
      assert.deepEqual((await store.list({ fieldEquals: { 'involvedObject.uid': 'uid-pod-other' } })).items.map((e) => e.metadata.name), ['other']);
      assert.equal((await store.list({ resourceVersion: 1, match: 'Exact' })).items[0]?.count, 1, 'the superseded version is still history');
      const legacy = (await store.listOccurrences({})).items;
      assert.deepEqual(legacy.map((o) => `${o.metadata.name} ${o.event.namespace}/${o.event.name} ${o.countBefore}->${o.countAfter} ${o.regarding.name}`), [
        'old.1 default/old 0->1 pod-old',
        'old.2 default/old 1->2 pod-old',
      ]);
      assert.equal(legacy[1]!.message, 'event old');
      const counts = await store.countByReason({ sinceMs: Date.UTC(2025, 0, 1), untilMs: Date.UTC(2025, 0, 1, 1) });
      assert.deepEqual(counts.map((c) => `${c.reason}=${c.count}`), ['Started=2']);
      // New writes get revisions (and occurrence ids) after everything the file holds.
      await store.guaranteedUpdate('default', 'old', (e) => ({ ...e!, count: 3, lastTimestamp: '2025-01-01T00:50:00Z' }), { occurrence: {} });
      const all = (await store.listOccurrences({})).items;
      assert.deepEqual(all.map((o) => `${o.metadata.name} ${o.countBefore}->${o.countAfter}`), ['old.1 0->1', 'old.2 1->2', 'old.4 2->3']);
      // The rows stored whole share their ids with versions (the migration kept them): a page's read tells them apart as list does.
      const ref = { namespace: 'default', name: 'old', uid: 'uid-default-old', regardingName: 'pod-old' };
      const page = await store.listEventOccurrences({ events: [ref, { ...ref, name: 'other', regardingName: 'pod-other' }] });
      assert.deepEqual(page, [all, []]);
      assert.deepEqual(page[0], (await store.listOccurrences(eventOccurrenceQuery(ref, {}))).items);
      await store.close();
      const check = new Database(path, { readonly: true });
      const columns = (index: string): string[] => check.prepare<[], { name: string }>(`PRAGMA index_info(${index})`).all().map((r) => r.name);
      assert.deepEqual(columns('cur_key'), ['key', 'reason', 'type', 'involved_kind']);
      assert.deepEqual(columns('hist_key'), ['key', 'rv', 'superseded_rv', 'reason', 'type', 'involved_kind']);
      assert.deepEqual(columns('cur_involved_hash'), ['involved_hash', 'key', 'reason', 'first_s', 'span_s']);
      assert.equal(check.prepare<[], { value: number }>("SELECT value FROM meta WHERE name = 'schema'").get()?.value, SCHEMA_VERSION);
      assertSpans(check);
      assert.deepEqual(check.prepare<[], { t: string }>('SELECT DISTINCT typeof(object) AS t FROM versions').all(), [{ t: 'blob' }]);
      assert.equal(check.prepare<[], { n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE name LIKE '%_v2'").get()?.n, 0);
      check.close();
      // And the migrated file opens again as it is.
      store = open(path, clock);
      assert.equal((await store.get('default', 'old')).count, 3);
      await store.close();
    });
  }

  void it('migrates a version 3 file: spans of current rows filled in, cur_involved_hash built with them, windows read as on a new file', async () => {
    const path = join(dir, 'v3.db');
    const clock = new FakeClock(Date.UTC(2025, 0, 1, 1));
    let store = open(path, clock);
    const at = (m: number): string => new Date(Date.UTC(2025, 0, 1) + m * 60_000).toISOString().replace(/\.000Z$/, 'Z');
    for (const [name, first, last] of [['early', 0, 5], ['middle', 20, 40], ['late', 50, 55]] as const) {
      await store.create(sampleEvent('default', name, { involvedObject: { kind: 'Pod', namespace: 'default', name: 'web' }, firstTimestamp: at(first), lastTimestamp: at(last) }));
    }
    await store.guaranteedUpdate('default', 'early', (e) => ({ ...e!, count: 2, lastTimestamp: at(10) }));
    await store.close();
    // Turn the file back into version 3: no span columns, the name index on (involved_hash, key), no cur_since.
    const db = new Database(path);
    db.exec('DROP INDEX cur_since');
    db.exec('DROP INDEX cur_involved_hash');
    db.exec('ALTER TABLE versions DROP COLUMN first_s');
    db.exec('ALTER TABLE versions DROP COLUMN span_s');
    db.exec('ALTER TABLE versions DROP COLUMN cluster');
    db.exec('ALTER TABLE versions DROP COLUMN labels');
    db.exec(`CREATE INDEX cur_involved_hash ON versions(involved_hash, key) WHERE ${CURRENT}`);
    db.exec("UPDATE meta SET value = 3 WHERE name = 'schema'");
    db.close();
    store = open(path, clock);
    const window = { sinceMs: Date.parse(at(8)), untilMs: Date.parse(at(30)) };
    const names = async (): Promise<string[]> =>
      (await store.list({ fieldEquals: { 'involvedObject.name': 'web' }, activeIn: window })).items.map((e) => e.metadata.name!);
    assert.deepEqual(await names(), ['early', 'middle']);
    await store.close();
    const check = new Database(path, { readonly: true });
    const columns = (index: string): string[] => check.prepare<[], { name: string }>(`PRAGMA index_info(${index})`).all().map((r) => r.name);
    assert.deepEqual(columns('cur_involved_hash'), ['involved_hash', 'key', 'reason', 'first_s', 'span_s']);
    assert.equal(check.prepare<[], { value: number }>("SELECT value FROM meta WHERE name = 'schema'").get()?.value, SCHEMA_VERSION);
    assertSpans(check);
    assert.equal(check.prepare<[], { n: number }>(`SELECT count(*) AS n FROM versions WHERE ${CURRENT} AND span_s IS NOT NULL`).get()?.n, 3);
    check.close();
  });

  void it('migrates a version 4 file: the cluster of current archived rows read from their label, which per-cluster retention then finds', async () => {
    const path = join(dir, 'v4.db');
    const clock = new FakeClock(Date.UTC(2025, 0, 1, 1));
    let store = open(path, clock);
    const labelled = (name: string, cluster: string): CoreEvent => sampleEvent('default', name, { metadata: { namespace: 'default', name, labels: { [CLUSTER_LABEL]: cluster } } });
    // A second apart: each write gets its own time-to-revision mark.
    for (const e of [labelled('east-1', 'east'), labelled('west-1', 'west'), sampleEvent('default', 'local-1')]) {
      await store.create(e);
      await clock.advance(1_000);
    }
    await store.close();
    const db = new Database(path);
    db.exec('ALTER TABLE versions DROP COLUMN cluster');
    db.exec('ALTER TABLE versions DROP COLUMN labels');
    db.exec("UPDATE meta SET value = 4 WHERE name = 'schema'");
    db.close();
    store = open(path, clock);
    await clock.advance(10_000);
    assert.deepEqual(await store.enforceRetention({ clusters: { west: clock.now() - 5_000 } }), { events: 1, occurrences: 0, more: false });
    assert.deepEqual((await store.list({})).items.map((e) => e.metadata.name), ['east-1', 'local-1']);
    await store.close();
    const check = new Database(path, { readonly: true });
    assert.deepEqual(check.prepare<[], { cluster: string | null }>(`SELECT cluster FROM versions WHERE ${CURRENT} ORDER BY rv`).all().map((r) => r.cluster), ['east', null]);
    assert.equal(check.prepare<[], { value: number }>("SELECT value FROM meta WHERE name = 'schema'").get()?.value, SCHEMA_VERSION);
    check.close();
  });

  void it('migrates a version 5 file: builds the search index in place, over current and history versions, and logs it', async () => {
    const path = join(dir, 'v5.db');
    const clock = new FakeClock(Date.UTC(2025, 0, 1, 1));
    let store = open(path, clock);
    await store.create(sampleEvent('default', 'a', { message: 'volume certs not found' }));
    const before = await store.currentResourceVersion();
    await store.guaranteedUpdate('default', 'a', (e) => ({ ...e!, message: 'volume certs mounted' }));
    await store.create(sampleEvent('default', 'b', { message: 'pulled image' }));
    await store.close();
    const db = new Database(path);
    db.exec('DROP TABLE search_fts; DROP TABLE search_docs');
    db.exec('ALTER TABLE versions DROP COLUMN labels');
    db.exec("UPDATE meta SET value = 5 WHERE name = 'schema'");
    db.close();
    const lines: string[] = [];
    const logger = { ...noopLogger, info: (msg: string, fields?: Record<string, unknown>) => lines.push(`${msg} ${JSON.stringify(fields)}`) };
    store = new SqliteEventStore({ path, clock, logger });
    await store.ready();
    const search = async (q: string, resourceVersion?: number): Promise<string[]> =>
      (await store.search({ query: parseSearchQuery(q, { nowMs: clock.now() }), limit: 10, ...(resourceVersion !== undefined ? { resourceVersion } : {}) })).items.map((h) => h.event.message!);
    assert.deepEqual(await search('certs'), ['volume certs mounted']);
    assert.deepEqual(await search('"not found"', before), ['volume certs not found'], 'the history is indexed too');
    assert.equal(lines.length, 4);
    assert.match(lines[0]!, /^the labels of stored events are read \{"versions":3,"seconds":[\d.]+,"secondsPerMillion":\d+\}$/);
    assert.equal(lines[1], 'interning the kinds, reasons and types of stored events {"versions":3}');
    assert.match(lines[2]!, /^the kinds, reasons and types of stored events are interned \{"versions":3,"seconds":[\d.]+,"secondsPerMillion":\d+\}$/);
    assert.match(lines[3]!, /^the archive's search index is built \{"versions":3,"seconds":[\d.]+,"secondsPerMillion":\d+\}$/);
    await store.create(sampleEvent('default', 'c', { message: 'written after' }));
    assert.deepEqual(await search('after'), ['written after'], 'the write path keeps it from then on');
    await store.close();
    const check = new Database(path, { readonly: true });
    assert.equal(check.prepare<[], { value: number }>("SELECT value FROM meta WHERE name = 'schema'").get()?.value, SCHEMA_VERSION);
    check.close();
  });

  void it('migrates a version 6 file: its index triggers go, its index is kept, and the write path keeps it from then on', async () => {
    const path = join(dir, 'v6.db');
    const clock = new FakeClock(Date.UTC(2025, 0, 1, 1));
    let store = open(path, clock);
    await store.create(sampleEvent('default', 'a', { message: 'volume certs not found' }));
    await store.guaranteedUpdate('default', 'a', (e) => ({ ...e!, message: 'volume certs mounted' }));
    await store.close();
    const db = new Database(path);
    // The triggers as schema 6 builds created them (they call functions only those builds register).
    db.exec(`CREATE TRIGGER search_add AFTER INSERT ON versions WHEN NEW.op <> 3 BEGIN
      INSERT INTO search_docs (docid, rv) VALUES (kevents_search_second(NEW.rv, NEW.object) * 1048576, NEW.rv);
      INSERT INTO search_fts (rowid, message) VALUES (last_insert_rowid(), kevents_search_words(NEW.rv, NEW.object, 0));
    END;
    CREATE TRIGGER search_drop AFTER DELETE ON versions WHEN OLD.op <> 3 BEGIN
      DELETE FROM search_fts WHERE rowid = (SELECT docid FROM search_docs WHERE rv = OLD.rv);
      DELETE FROM search_docs WHERE rv = OLD.rv;
    END;`);
    db.exec('ALTER TABLE versions DROP COLUMN labels');
    db.exec("UPDATE meta SET value = 6 WHERE name = 'schema'");
    db.close();
    store = open(path, clock);
    await store.ready();
    const search = async (q: string): Promise<string[]> => (await store.search({ query: parseSearchQuery(q, { nowMs: clock.now() }), limit: 10 })).items.map((h) => h.event.message!);
    assert.deepEqual(await search('certs'), ['volume certs mounted']);
    await store.create(sampleEvent('default', 'b', { message: 'written after' }));
    await store.guaranteedUpdate('default', 'a', (e) => ({ ...e!, message: 'volume certs renewed' }));
    assert.deepEqual(await search('after'), ['written after']);
    assert.deepEqual(await search('certs'), ['volume certs renewed']);
    await store.close();
    const check = new Database(path, { readonly: true });
    assert.equal(check.prepare<[], { value: number }>("SELECT value FROM meta WHERE name = 'schema'").get()?.value, SCHEMA_VERSION);
    assert.deepEqual(check.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").all(), []);
    const count = (sql: string): number => (check.prepare(sql).get() as { n: number }).n;
    assert.equal(count('SELECT count(*) AS n FROM search_docs'), count('SELECT count(*) AS n FROM versions WHERE op <> 3'), 'index and data in step');
    check.close();
  });

  void it('migrates a version 7 file: the labels of current and history rows read from their objects, which label selections then read, and logs it', async () => {
    const path = join(dir, 'v7.db');
    const clock = new FakeClock(Date.UTC(2025, 0, 1, 1));
    let store = open(path, clock);
    const labelled = (name: string, tier: string | undefined): CoreEvent => sampleEvent('default', name, { metadata: { namespace: 'default', name, ...(tier !== undefined ? { labels: { tier } } : {}) } });
    await store.create(labelled('a', 'frontend'));
    await store.create(labelled('b', 'backend'));
    await store.create(labelled('c', undefined));
    const before = await store.currentResourceVersion();
    await store.guaranteedUpdate('default', 'a', (e) => ({ ...e!, metadata: { ...e!.metadata, labels: { tier: 'backend' } } }));
    await store.close();
    const db = new Database(path);
    db.exec('ALTER TABLE versions DROP COLUMN labels');
    db.exec("UPDATE meta SET value = 7 WHERE name = 'schema'");
    db.close();
    const lines: string[] = [];
    const logger = { ...noopLogger, info: (msg: string, fields?: Record<string, unknown>) => lines.push(`${msg} ${JSON.stringify(fields)}`) };
    store = new SqliteEventStore({ path, clock, logger });
    await store.ready();
    assert.equal(lines.length, 3);
    assert.match(lines[0]!, /^the labels of stored events are read \{"versions":4,"seconds":[\d.]+,"secondsPerMillion":\d+\}$/);
    assert.equal(lines[1], 'interning the kinds, reasons and types of stored events {"versions":4}');
    assert.match(lines[2]!, /^the kinds, reasons and types of stored events are interned \{"versions":4,"seconds":[\d.]+,"secondsPerMillion":\d+\}$/);
    const names = async (options: ListOptions): Promise<string[]> => (await store.list({ ...options, predicateIsSelection: true, labelMatch: (l) => l?.tier === 'backend', predicate: (e) => e.metadata.labels?.tier === 'backend' })).items.map((e) => e.metadata.name!);
    assert.deepEqual(await names({}), ['a', 'b']);
    assert.deepEqual(await names({ resourceVersion: before, match: 'Exact' }), ['b'], 'history rows are selected by their own labels');
    await store.close();
    const check = new Database(path, { readonly: true });
    assert.deepEqual(check.prepare<[], { labels: string | null }>('SELECT labels FROM versions WHERE op <> 3 ORDER BY rv').all().map((r) => r.labels), ['{"tier":"frontend"}', '{"tier":"backend"}', null, '{"tier":"backend"}']);
    assert.equal(check.prepare<[], { value: number }>("SELECT value FROM meta WHERE name = 'schema'").get()?.value, SCHEMA_VERSION);
    check.close();
  });

  void it('migrates a version 9 file: its search index gains the shared entries\' column, its entries kept, and a repeat then shares', async () => {
    const path = join(dir, 'v9.db');
    copyFileSync(join(FIXTURES_DIR, 'sqlite-v9.db'), path);
    const columns = (db: Database.Database): string[] => db.prepare<[], { name: string }>('PRAGMA table_info(search_docs)').all().map((c) => c.name);
    const old = new Database(path, { readonly: true });
    assert.deepEqual(columns(old), ['docid', 'rv'], 'the fixture is an index without shared entries');
    const entries = old.prepare<[], { n: number }>('SELECT count(*) AS n FROM search_docs').get()!.n;
    old.close();
    const clock = new FakeClock();
    const store = new SqliteEventStore({ path, clock });
    await store.ready();
    const message = 'boom the container exited while pulling the image '.repeat(100);
    await store.create(sampleEvent('default', 'long', { count: 1, message }));
    await store.guaranteedUpdate('default', 'long', (e) => ({ ...e!, count: 2 }));
    await store.catchUpSearchIndex();
    assert.deepEqual((await store.search({ query: parseSearchQuery('pulling', { nowMs: clock.now() }), limit: 10 })).items.map((h) => h.event.count), [2]);
    await store.close();
    const check = new Database(path, { readonly: true });
    assert.deepEqual(columns(check), ['docid', 'rv', 'text']);
    assert.equal(check.prepare<[], { value: number }>("SELECT value FROM meta WHERE name = 'schema'").get()?.value, SCHEMA_VERSION);
    assert.equal(check.prepare<[], { n: number }>('SELECT count(*) AS n FROM search_docs WHERE text IS NULL').get()!.n, entries + 1, 'the entries kept, and one of the new text');
    assert.equal(check.prepare<[], { n: number }>('SELECT count(*) AS n FROM search_docs WHERE text IS NOT NULL').get()!.n, 1, 'the repeat shares it');
    check.close();
  });

  void it('migrates a version 8 file: its search index written again with keyword values whole, and logs it', async () => {
    const path = join(dir, 'v8.db');
    copyFileSync(join(FIXTURES_DIR, 'sqlite-v8.db'), path);
    const keyed = (db: Database.Database): number | undefined => db.prepare<[], { value: number }>("SELECT value FROM meta WHERE name = 'search_value_tokens'").get()?.value;
    const old = new Database(path, { readonly: true });
    assert.equal(keyed(old), undefined, 'the fixture is an index without value tokens');
    old.close();
    const lines: string[] = [];
    const logger = { ...noopLogger, info: (msg: string, fields?: Record<string, unknown>) => lines.push(`${msg} ${JSON.stringify(fields)}`) };
    const clock = new FakeClock();
    let store = new SqliteEventStore({ path, clock, logger });
    await store.ready();
    assert.equal(lines.length, 5, JSON.stringify(lines));
    // The fixture was written before cur_since, which opening it builds.
    assert.equal(lines[0], 'indexing current events by when they last happened {"events":7}');
    assert.match(lines[1]!, /^current events are indexed by when they last happened \{"events":7,"seconds":[\d.]+\}$/);
    assert.equal(lines[2], 'interning the kinds, reasons and types of stored events {"versions":10}');
    assert.match(lines[3]!, /^the kinds, reasons and types of stored events are interned \{"versions":10,"seconds":[\d.]+,"secondsPerMillion":\d+\}$/);
    assert.match(lines[4]!, /^the search index holds keyword values whole \{"versions":9,"seconds":[\d.]+,"secondsPerMillion":\d+\}$/);
    const search = async (q: string): Promise<string[]> => (await store.search({ query: parseSearchQuery(q, { nowMs: clock.now() }), limit: 10 })).items.map((h) => h.event.metadata.name!);
    assert.deepEqual(await search('node:worker-3'), ['f', 'a']);
    assert.deepEqual(await search('controller:default-scheduler'), ['b']);
    await store.create(sampleEvent('default', 'z', { source: { component: 'default-scheduler', host: 'worker-3' } }));
    assert.deepEqual(await search('controller:default-scheduler node:worker-3'), ['z'], 'the write path keeps them from then on');
    await store.close();
    store = new SqliteEventStore({ path, clock, logger });
    await store.ready();
    await store.close();
    assert.equal(lines.length, 5, 'once');
    const check = new Database(path, { readonly: true });
    assert.equal(check.prepare<[], { value: number }>("SELECT value FROM meta WHERE name = 'schema'").get()?.value, SCHEMA_VERSION);
    assert.equal(keyed(check), 1);
    const count = (sql: string): number => (check.prepare(sql).get() as { n: number }).n;
    assert.equal(count('SELECT count(*) AS n FROM search_docs'), count('SELECT count(*) AS n FROM versions WHERE op <> 3'), 'index and data in step');
    check.close();
  });

  void it('fills in the labels of a version 7 file chunk by chunk, telling its progress after each, tombstones left out', async () => {
    const path = join(dir, 'v7-chunks.db');
    const clock = new FakeClock(Date.UTC(2025, 0, 1, 1));
    const store = open(path, clock);
    for (const name of ['a', 'b', 'c', 'd', 'e']) await store.create(sampleEvent('default', name, { metadata: { namespace: 'default', name, labels: { name } } }));
    await store.delete('default', 'c');
    await store.close();
    const db = new Database(path);
    db.exec('UPDATE versions SET labels = NULL');
    addMigrationFunctions(db);
    const progress: string[] = [];
    assert.equal(db.transaction(() => fillLabels(db, (done, total) => progress.push(`${done}/${total}`), 2))(), 5);
    assert.deepEqual(progress, ['2/5', '4/5', '5/5']);
    assert.deepEqual(db.prepare<[], { labels: string | null }>('SELECT labels FROM versions WHERE op <> 3 ORDER BY rv').all().map((r) => r.labels), ['a', 'b', 'c', 'd', 'e'].map((n) => `{"name":"${n}"}`));
    db.close();
  });

  void it('indexes on open the versions a process committed and had not indexed when it ended, and logs it', async () => {
    const path = join(dir, 'lagging.db');
    const clock = new FakeClock();
    const store = new SqliteEventStore({ path, clock, searchIndexDelayMs: 3_600_000 });
    await store.create(sampleEvent('default', 'a', { message: 'indexed before the end' }));
    await store.catchUpSearchIndex();
    await store.create(sampleEvent('default', 'b', { message: 'written before the end' }));
    await store.create(sampleEvent('default', 'c', { message: 'written before the end' }));
    await store.guaranteedUpdate('default', 'a', (cur) => ({ ...cur!, message: 'updated before the end' }));
    // The file as a kill -9 leaves it: every write committed (the WAL holds them), the last three not indexed.
    const copy = join(dir, 'lagging-copy.db');
    for (const suffix of ['', '-wal']) copyFileSync(path + suffix, copy + suffix);
    await store.close();
    const indexed = (p: string): number => rowCount(p, 'search_docs');
    assert.equal(indexed(copy), 1, 'the copy holds one entry');
    const lines: string[] = [];
    const logger = { ...noopLogger, info: (msg: string, fields?: Record<string, unknown>) => lines.push(`${msg} ${JSON.stringify(fields)}`) };
    const reopened = new SqliteEventStore({ path: copy, clock, logger, searchIndexDelayMs: 3_600_000 });
    await reopened.ready();
    assert.deepEqual(lines.map((l) => l.replace(/\{.*/, '')), ['the search index caught up with the versions written before the last stop ']);
    assert.match(lines[0]!, /"versions":3,/);
    assert.equal(indexed(copy), 4, 'every version indexed before the store answers');
    const search = async (q: string): Promise<string[]> => (await reopened.search({ query: parseSearchQuery(q, { nowMs: clock.now() }), limit: 10 })).items.map((h) => h.event.metadata.name!);
    assert.deepEqual(await search('"before the end"'), ['a', 'b', 'c']);
    assert.deepEqual(await search('indexed'), [], 'the superseded text is no hit');
    await reopened.close();
  });

  void it('leaves the versions a failed catch-up of the index did not write to the scan, logs it once, and indexes them from the file later', async () => {
    const path = join(dir, 'failing-index.db');
    const clock = new FakeClock();
    const errors: string[] = [];
    const logger = { ...noopLogger, error: (msg: string) => errors.push(msg) };
    const store = new SqliteEventStore({ path, clock, logger, searchIndexDelayMs: 3_600_000 });
    await store.create(sampleEvent('default', 'a', { message: 'kept words' }));
    await store.catchUpSearchIndex();
    await store.create(sampleEvent('default', 'b', { message: 'kept words' }));
    // The index's table gone from under the writer: its catch-ups fail until it is back.
    const db = (store as unknown as { c: { db: Database.Database } }).c.db;
    const sql = (db.prepare("SELECT sql FROM sqlite_master WHERE name = 'search_fts'").get() as { sql: string }).sql;
    db.exec('DROP TABLE search_fts');
    await store.catchUpSearchIndex();
    await store.create(sampleEvent('default', 'c', { message: 'kept words' }));
    await store.catchUpSearchIndex();
    assert.deepEqual(errors, ['sqlite: the search index could not catch up; searches scan the versions written since'], 'logged once');
    db.exec(sql);
    db.exec('INSERT INTO search_fts (rowid, message) SELECT docid, \'kept words\' FROM search_docs');
    const search = async (q: string): Promise<string[]> => (await store.search({ query: parseSearchQuery(q, { nowMs: clock.now() }), limit: 10 })).items.map((h) => h.event.metadata.name!);
    assert.deepEqual(await search('kept'), ['a', 'b', 'c'], 'found by the index and the scan');
    await store.catchUpSearchIndex();
    assert.equal(rowCount(path, 'search_docs'), 3, 'the versions above the mark read back from the file, once each');
    assert.deepEqual(await search('kept'), ['a', 'b', 'c']);
    await store.close();
  });

  void it('answers the objects of a listed page as listed, whether or not events were written between the list and the reads of its objects', async () => {
    const store = open(join(dir, 'range.db'), new FakeClock());
    for (const name of ['a', 'b', 'c', 'd', 'e', 'f']) await store.create(sampleEvent('default', name, { type: name === 'd' ? 'Warning' : 'Normal' }));
    const listed = async (options: ListOptions): Promise<string[]> => {
      const page = await store.listVersions({ namespace: 'default', limit: 4, ...options });
      return page.items.map((v) => `${v.object().metadata.name}:${v.object().message}:${v.resourceVersion}`);
    };
    const still = await listed({});
    assert.deepEqual(still, ['a:event a:1', 'b:event b:2', 'c:event c:3', 'd:event d:4']);
    // Written between the list and the reads of its objects: a key inserted among the page's, one changed, one deleted.
    const page = await store.listVersions({ namespace: 'default', limit: 4 });
    const normal = await store.listVersions({ namespace: 'default', limit: 2, fieldEquals: { type: 'Normal' }, predicateIsSelection: true, predicate: (e) => e.type === 'Normal' });
    await store.create(sampleEvent('default', 'bb'));
    await store.guaranteedUpdate('default', 'b', (e) => ({ ...e!, message: 'changed' }));
    await store.delete('default', 'c');
    assert.deepEqual(page.items.map((v) => `${v.object().metadata.name}:${v.object().message}:${v.resourceVersion}`), still);
    assert.deepEqual(normal.items.map((v) => v.object().metadata.name), ['a', 'b']);
    assert.deepEqual(await listed({}), ['a:event a:1', 'b:changed:8', 'bb:event bb:7', 'd:event d:4']);
    await store.close();
  });

  void it('reads by involved object and regarding name through their hashes, and returns only the name asked for when two names share one', async () => {
    // Two names with the same nameHash.
    const [a, b] = ['pod-250176', 'pod-1254140'];
    assert.equal(nameHash(a), nameHash(b));
    const store = open(join(dir, 'hash.db'), new FakeClock());
    for (const name of [a, b]) {
      await store.create(sampleEvent('default', `e-${name}`, { involvedObject: { kind: 'Pod', namespace: 'default', name } }), { occurrence: {} });
    }
    for (const name of [a, b]) {
      assert.deepEqual((await store.list({ fieldEquals: { 'involvedObject.name': name } })).items.map((e) => e.involvedObject.name), [name]);
      assert.deepEqual((await store.listOccurrences({ fieldEquals: { 'regarding.name': name } })).items.map((o) => o.regarding.name), [name]);
    }
    await store.close();
  });

  void it("reads one event's occurrences among other events about the same object, its compacted versions' too", async () => {
    const clock = new FakeClock();
    const store = open(join(dir, 'one-event.db'), clock);
    const about = { involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-1' } };
    await store.create(sampleEvent('default', 'a', { ...about, count: 1, message: 'first' }), { occurrence: {} });
    await store.create(sampleEvent('default', 'b', { ...about, count: 1, message: 'other' }), { occurrence: {} });
    await store.create(sampleEvent('other', 'a', { involvedObject: { kind: 'Pod', namespace: 'other', name: 'web-1' }, count: 1 }), { occurrence: {} });
    await store.guaranteedUpdate('default', 'a', (e) => ({ ...e!, count: 2, message: 'second' }), { occurrence: {} });
    const oneEvent = async (): Promise<string[]> =>
      (await store.listOccurrences({ namespace: 'default', fieldEquals: { 'metadata.namespace': 'default', 'event.name': 'a', 'regarding.name': 'web-1' } })).items.map(
        (o) => `${o.event.namespace}/${o.event.name} ${o.countBefore}->${o.countAfter}`,
      );
    assert.deepEqual(await oneEvent(), ['default/a 0->1', 'default/a 1->2']);
    await store.delete('default', 'a');
    await clock.advance((CONFORMANCE_ENV_DEFAULTS.historyWindowSeconds + 5) * 1000);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(await oneEvent(), ['default/a 0->1', 'default/a 1->2'], 'the versions compaction removed are read from the past versions');
    await store.close();
  });

  void it('keeps the object of a version an occurrence describes when compaction removes the version, until retention drops the occurrence', async () => {
    const path = join(dir, 'past.db');
    const clock = new FakeClock();
    const store = open(path, clock);
    await store.create(sampleEvent('default', 'a', { count: 1, message: 'first' }), { occurrence: {} });
    await store.guaranteedUpdate('default', 'a', (e) => ({ ...e!, count: 2, message: 'second' }), { occurrence: {} });
    await store.delete('default', 'a');
    await clock.advance((CONFORMANCE_ENV_DEFAULTS.historyWindowSeconds + 5) * 1000);
    await new Promise((r) => setImmediate(r));
    assert.equal(rowCount(path), 0, 'compaction removed every version');
    const items = (await store.listOccurrences({})).items;
    assert.deepEqual(items.map((o) => `${o.event.name} ${o.countBefore}->${o.countAfter} ${o.message}`), ['a 0->1 first', 'a 1->2 second']);
    const r = await store.enforceRetention({ olderThanMs: clock.now() + 1 });
    assert.equal(r.occurrences, 2);
    const db = new Database(path, { readonly: true });
    assert.equal(db.prepare<[], { n: number }>('SELECT count(*) AS n FROM past_versions').get()?.n, 0, 'their past versions went with them');
    db.close();
    await store.close();
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

  void it('gives each page of a listing the remainingItemCount it would have alone, whatever maxCountRemaining cuts', async () => {
    const store = new SqliteEventStore({ path: join(dir, 'count-pages.db'), maxCountRemaining: 3 });
    for (let i = 0; i < 20; i++) await store.create(sampleEvent(i % 3 === 0 ? 'other' : 'default', `e${String(i).padStart(2, '0')}`));
    for (const namespace of [undefined, 'default']) {
      const total = (await store.list(namespace !== undefined ? { namespace } : {})).items.length;
      for (const limit of [1, 2, 3, 5, 7]) {
        const got: (number | undefined)[] = [];
        const want: (number | undefined)[] = [];
        let seen = 0;
        let startKey: string | undefined;
        let rv: number | undefined;
        for (;;) {
          const page = await store.list({
            limit, countRemaining: true,
            ...(namespace !== undefined ? { namespace } : {}),
            ...(startKey !== undefined ? { startKey, resourceVersion: rv!, match: 'Exact' as const } : {}),
          });
          rv ??= page.resourceVersion;
          seen += page.items.length;
          if (page.lastKey === undefined) break;
          got.push(page.remainingItemCount);
          want.push(total - seen <= 3 ? total - seen : undefined);
          startKey = page.lastKey;
        }
        assert.deepEqual(got, want, `${namespace ?? 'all namespaces'}, pages of ${limit}`);
      }
    }
    await store.close();
  });

  void it('fails every call with Unreachable after close()', async () => {
    const store = new SqliteEventStore({ path: join(dir, 'closed.db') });
    await store.close();
    await assert.rejects(store.create(sampleEvent('default', 'a')), (e) => isStorageError(e, 'Unreachable'));
    await assert.rejects(store.list({}), (e) => isStorageError(e, 'Unreachable'));
  });
});

/**
 * LEGACY_SCHEMA is the layout of schema versions 1 and 2 (version 1 had the key
 * indexes on the key alone), as those builds created it.
 */
function legacySchema(version: 1 | 2): string {
  const cur = 'superseded_rv IS NULL AND op <> 3';
  const hist = 'superseded_rv IS NOT NULL AND op <> 3';
  const keyColumns = version === 1 ? '' : ', reason, type, involved_kind';
  return `
CREATE TABLE versions (rv INTEGER PRIMARY KEY, key TEXT NOT NULL, op INTEGER NOT NULL, object TEXT NOT NULL, prev_rv INTEGER, superseded_rv INTEGER,
  expires_at INTEGER, namespace TEXT NOT NULL, name TEXT NOT NULL, involved_kind TEXT NOT NULL, involved_namespace TEXT NOT NULL,
  involved_name TEXT NOT NULL, involved_uid TEXT NOT NULL, reason TEXT NOT NULL, type TEXT NOT NULL);
CREATE ${version === 1 ? 'UNIQUE ' : ''}INDEX cur_key ON versions(key${keyColumns}) WHERE ${cur};
CREATE INDEX cur_involved_name ON versions(involved_name, key) WHERE ${cur};
CREATE INDEX cur_expiry ON versions(expires_at) WHERE ${cur} AND expires_at IS NOT NULL;
CREATE INDEX hist_key ON versions(key, rv, superseded_rv${keyColumns}) WHERE ${hist};
CREATE INDEX hist_involved_name ON versions(involved_name, key, rv, superseded_rv) WHERE ${hist};
CREATE INDEX superseded ON versions(superseded_rv) WHERE superseded_rv IS NOT NULL;
CREATE INDEX tombstones ON versions(rv) WHERE op = 3;
CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE checkpoints (at INTEGER PRIMARY KEY, rv INTEGER NOT NULL);
CREATE TABLE occurrences (id INTEGER PRIMARY KEY, observed_us INTEGER NOT NULL, namespace TEXT NOT NULL, event_name TEXT NOT NULL,
  regarding_name TEXT NOT NULL, body TEXT NOT NULL${version === 1 ? '' : ", type TEXT NOT NULL DEFAULT '', reason TEXT NOT NULL DEFAULT '', repeats INTEGER NOT NULL DEFAULT 0, seen_ms INTEGER"});
CREATE INDEX occ_time ON occurrences(observed_us, id);
CREATE INDEX occ_regarding ON occurrences(regarding_name, observed_us, id);
CREATE TABLE source_checkpoints (source TEXT PRIMARY KEY, resource_version TEXT NOT NULL, updated_at INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE write_marks (at INTEGER PRIMARY KEY, rv INTEGER NOT NULL);
${version === 1 ? '' : 'CREATE TABLE occurrence_lag (hour INTEGER PRIMARY KEY, min_us INTEGER NOT NULL, max_us INTEGER NOT NULL);'}
`;
}

/**
 * writeLegacyFile writes a store file as schema `version` builds wrote it:
 * default/old at revision 1 (count 1) replaced at revision 2 (count 2), with an
 * occurrence of each change, and default/other at revision 3 with none.
 */
/** assertSpans checks that every current row's span columns are those of its event. */
function assertSpans(db: Database.Database): void {
  const rows = db.prepare<[], { key: string; object: Buffer; first_s: number | null; span_s: number | null }>(`SELECT key, object, first_s, span_s FROM versions WHERE ${CURRENT}`).all();
  assert.ok(rows.length > 0);
  for (const row of rows) {
    const event = JSON.parse(decodeObject(row.object)) as CoreEvent;
    assert.deepEqual({ first_s: row.first_s, span_s: row.span_s }, spanSeconds(event), row.key);
  }
}

function writeLegacyFile(path: string, version: 1 | 2): void {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(legacySchema(version));
  db.prepare("INSERT INTO meta (name, value) VALUES ('schema', ?)").run(version);
  const insert = db.prepare(`INSERT INTO versions (rv, key, op, object, prev_rv, superseded_rv, namespace, name, involved_kind, involved_namespace, involved_name, involved_uid, reason, type)
    VALUES (?, ?, ?, ?, ?, ?, 'default', ?, 'Pod', 'default', ?, ?, 'Started', 'Normal')`);
  const at = (minute: number): string => `2025-01-01T00:${String(minute).padStart(2, '0')}:00Z`;
  const event = (name: string, count: number): CoreEvent =>
    sampleEvent('default', name, { count, lastTimestamp: at(10 * count), involvedObject: { kind: 'Pod', namespace: 'default', name: `pod-${name}`, uid: `uid-pod-${name}` } });
  insert.run(1, 'default/old', 1, JSON.stringify(event('old', 1)), null, 2, 'old', 'pod-old', 'uid-pod-old');
  insert.run(2, 'default/old', 2, JSON.stringify(event('old', 2)), 1, null, 'old', 'pod-old', 'uid-pod-old');
  insert.run(3, 'default/other', 1, JSON.stringify(event('other', 1)), null, null, 'other', 'pod-other', 'uid-pod-other');
  for (const [id, before, after] of [[1, 0, 1], [2, 1, 2]] as const) {
    // The body as those builds wrote it: the Occurrence without kind, apiVersion and metadata, and the event as uid and revision.
    const observedTime = `2025-01-01T00:${String(10 * after + 1).padStart(2, '0')}:00.000000Z`;
    const body = { event: { uid: 'uid-default-old', resourceVersion: String(id) }, observedTime, lastSeen: at(10 * after), countBefore: before, countAfter: after,
      regarding: { kind: 'Pod', namespace: 'default', name: 'pod-old', uid: 'uid-pod-old' }, type: 'Normal', reason: 'Started', message: 'event old' };
    const observedUs = Date.parse(observedTime) * 1000;
    if (version === 1) {
      db.prepare('INSERT INTO occurrences (id, observed_us, namespace, event_name, regarding_name, body) VALUES (?, ?, ?, ?, ?, ?)').run(id, observedUs, 'default', 'old', 'pod-old', JSON.stringify(body));
    } else {
      db.prepare('INSERT INTO occurrences (id, observed_us, namespace, event_name, regarding_name, body, type, reason, repeats, seen_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
        .run(id, observedUs, 'default', 'old', 'pod-old', JSON.stringify(body), 'Normal', 'Started', after - before, Date.parse(at(10 * after)));
    }
  }
  db.close();
}

function rvOf(e: CoreEvent): number {
  return Number(e.metadata.resourceVersion);
}

runArchiveStoreConformance('sqlite', fileStores('archive'));

runSearchConformance('sqlite', fileStores('search'));

runSearchConformance('sqlite in memory', {
  create: (env) => Promise.resolve(new SqliteEventStore({ path: ':memory:', ...env.options })),
  destroy: (store) => store.close(),
});
