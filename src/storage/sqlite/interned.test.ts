import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import type { CoreEvent } from '../../api/index.js';
import type { ListOptions } from '../event-store.js';
import { sampleEvent } from '../testing/index.js';
import { INTERNED_SCHEMA, NO_ID, asciiLower, internedValues } from './interned.js';
import { SCHEMA_VERSION } from './schema.js';
import { SqliteEventStore } from './sqlite-event-store.js';

const dir = mkdtempSync(join(tmpdir(), 'kevents-interned-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** byReason lists the names of a store's events of one reason, selected by the column (as `reason=` selects). */
async function byReason(store: SqliteEventStore, reason: string, more: Partial<ListOptions> = {}): Promise<string[]> {
  const list = await store.list({ fieldEquals: { reason }, predicate: (e: CoreEvent) => e.reason === reason, predicateIsSelection: true, ...more });
  return list.items.map((e) => e.metadata.name!).sort();
}

void test('a value is given an id once, the one-byte ids first, and a value no row holds has none', () => {
  const db = new Database(':memory:');
  db.exec(INTERNED_SCHEMA);
  const interned = internedValues(db);
  assert.equal(interned.id('Warning'), 1);
  assert.equal(interned.id('BackOff'), 2);
  assert.equal(interned.id('Warning'), 1);
  assert.equal(interned.find('BackOff'), 2);
  assert.equal(interned.find('Missing'), NO_ID);
  assert.equal(interned.value(2), 'BackOff');
  assert.deepEqual(interned.findNoCase('WARNING'), [1]);
  assert.deepEqual(interned.findNoCase('warnin'), []);
  assert.equal(asciiLower('ÉVÉNEMENT Kelvin'), 'ÉvÉnement kelvin', 'ASCII letters only, as SQLite folds them');
  db.close();
});

void test('a connection reads the values another connection added when it meets one it does not know', () => {
  const path = join(dir, 'two.db');
  const a = new Database(path);
  a.exec(INTERNED_SCHEMA);
  const b = new Database(path);
  internedValues(a).id('Pulled');
  assert.equal(internedValues(b).find('Pulled'), 1);
  internedValues(a).id('Killing');
  assert.equal(internedValues(b).find('Killing'), 2, 'a value added since b last read the table');
  assert.equal(internedValues(b).value(2), 'Killing');
  internedValues(a).id('KILLING');
  assert.deepEqual(internedValues(b).findNoCase('killing').sort(), [2, 3], 'a set of values is matched against the table as it is now');
  a.close();
  b.close();
});

void test('a write batch rolled back leaves no interned value behind: the next writes give its id to their own values', async () => {
  const path = join(dir, 'rollback.db');
  const store = new SqliteEventStore({ path });
  await store.ready();
  await store.create(sampleEvent('default', 'a', { reason: 'Pulled' }));
  // A write the file refuses after its run interned its new reason: the batch, and the value, are rolled back.
  const other = new Database(path);
  other.exec("CREATE TRIGGER refuse BEFORE INSERT ON versions WHEN NEW.key = 'default/refused' BEGIN SELECT RAISE(ABORT, 'refused'); END");
  await assert.rejects(store.create(sampleEvent('default', 'refused', { reason: 'Ghost' })), /refused/);
  const values = other.prepare<[], { value: string }>('SELECT value FROM interned').all().map((r) => r.value);
  assert.deepEqual(values.sort(), ['Normal', 'Pod', 'Pulled'], 'the refused write interned nothing in the file');
  other.close();
  await store.create(sampleEvent('default', 'b', { reason: 'Other' }));
  await store.create(sampleEvent('default', 'c', { reason: 'Ghost' }));
  try {
    assert.deepEqual(await byReason(store, 'Other'), ['b']);
    assert.deepEqual(await byReason(store, 'Ghost'), ['c']);
    assert.deepEqual(await byReason(store, 'Pulled'), ['a']);
    const check = new Database(path, { readonly: true });
    const rows = check.prepare<[], { name: string; reason: string }>("SELECT substr(key, 9) AS name, i.value AS reason FROM versions v JOIN interned i ON i.id = v.reason ORDER BY rv").all();
    check.close();
    assert.deepEqual(rows, [{ name: 'a', reason: 'Pulled' }, { name: 'b', reason: 'Other' }, { name: 'c', reason: 'Ghost' }]);
  } finally {
    await store.close();
  }
});

void test('selectors on interned columns: an unknown value keeps nothing, types in any case, values added since the reader last looked', async () => {
  const store = new SqliteEventStore({ path: join(dir, 'selectors.db') });
  await store.ready();
  try {
    await store.create(sampleEvent('default', 'a', { reason: 'BackOff', type: 'Warning' }));
    assert.deepEqual(await byReason(store, 'Nothing'), []);
    // Read once on the list connection, then a value it has not seen written.
    assert.deepEqual(await byReason(store, 'BackOff'), ['a']);
    await store.create(sampleEvent('default', 'b', { reason: 'Evicted', type: 'Warning', involvedObject: { kind: 'Node', name: 'n1' } }));
    assert.deepEqual(await byReason(store, 'Evicted'), ['b']);
    const anyOf = async (a: NonNullable<ListOptions['anyOf']>): Promise<string[]> => (await store.list({ anyOf: a })).items.map((e) => e.metadata.name!).sort();
    assert.deepEqual(await anyOf({ types: ['WARNING'] }), ['a', 'b'], 'types compare ignoring ASCII case');
    assert.deepEqual(await anyOf({ kinds: ['Node'] }), ['b']);
    assert.deepEqual(await anyOf({ reasons: ['Unknown'], kinds: ['Unknown'] }), []);
  } finally {
    await store.close();
  }
});

void test('a file of a later schema is refused, unread and unchanged: what a build before schema 12 does with a schema 12 file', async () => {
  const path = join(dir, 'later.db');
  const store = new SqliteEventStore({ path });
  await store.ready();
  await store.close();
  const db = new Database(path);
  db.prepare("UPDATE meta SET value = ? WHERE name = 'schema'").run(SCHEMA_VERSION + 1);
  db.close();
  const later = new SqliteEventStore({ path });
  await assert.rejects(later.ready(), new RegExp(`unsupported schema version ${SCHEMA_VERSION + 1} \\(this build reads ${SCHEMA_VERSION}\\)`));
  await later.close();
  const check = new Database(path, { readonly: true });
  assert.equal(check.prepare<[], { value: number }>("SELECT value FROM meta WHERE name = 'schema'").get()!.value, SCHEMA_VERSION + 1);
  check.close();
});
