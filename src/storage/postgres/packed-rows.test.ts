import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSearchQuery } from '../../api/index.js';
import { FakeClock } from '../../internal/index.js';
import { sampleEvent } from '../testing/index.js';
import { PostgresEventStore } from './index.js';
import { bodyOf, objectOf, packText, storedOf } from './packed-rows.js';
import { SCHEMA_VERSION } from './schema.js';
import { TEXT_MARK } from './texts.js';
import { POSTGRES_URL, testSchemas, unpackRows } from '../../../test/support/postgres.js';

const { admin, fresh, drop } = testSchemas('kevents_packed');

/** unpack is what SQL's decode(…, 'base64') gives the reader back: the packed bytes. */
const unpack = (packed: string): Buffer => Buffer.from(packed, 'base64');

const EVENT =
  '{"kind":"Event","apiVersion":"v1","metadata":{"namespace":"team-27","name":"catalog-cron.17a2b3c4d5e6f7a","uid":"802d7c57-0089-43a3-84bd-83441aabe1f6",' +
  '"creationTimestamp":"2025-05-25T11:00:03Z"},"involvedObject":{"kind":"ReplicaSet","namespace":"team-27","name":"catalog-cron","apiVersion":"apps/v1"},' +
  '"reason":"SuccessfulCreate","message":"Created pod: catalog-cron-2849d73eb-438a9","source":{"component":"replicaset-controller"},"count":1,"type":"Normal"}';

test('a packed object reads as its text, in a third of the bytes', () => {
  const packed = unpack(packText(EVENT));
  assert.ok(packed.length * 2 < Buffer.byteLength(EVENT), `${packed.length} bytes packed of ${Buffer.byteLength(EVENT)}`);
  assert.equal(objectOf({ object: null, object_z: packed, object_text: null }), EVENT);
  assert.equal(storedOf({ object: null, object_z: packed }), EVENT);
});

test('a row written before packing reads its text column, and a left join miss reads as none', () => {
  assert.equal(objectOf({ object: EVENT, object_z: null, object_text: null }), EVENT);
  assert.equal(objectOf({ object: EVENT }), EVENT);
  assert.equal(objectOf({ object: null, object_z: null, object_text: null }), null);
  assert.equal(bodyOf({ body: '{"a":1}', body_z: null }), '{"a":1}');
});

test('a packed row that refers to a text gets its message back in the place of the mark, and keeps the mark as stored', () => {
  const message = JSON.stringify(`long ${'x'.repeat(300)} "quoted" \u00e9\u{1f600}`);
  const stored = EVENT.replace('"Created pod: catalog-cron-2849d73eb-438a9"', TEXT_MARK);
  const packed = unpack(packText(stored));
  assert.equal(objectOf({ object: null, object_z: packed, object_text: message }), EVENT.replace('"Created pod: catalog-cron-2849d73eb-438a9"', message));
  assert.equal(storedOf({ object: null, object_z: packed }), stored);
});

test('bodies and texts of every kind of character survive packing', () => {
  for (const text of ['', '{}', '{"message":"\\u0000 \\ud800 tab\\t"}', `{"m":"${'ab'.repeat(5000)}"}`, '{"m":"日本語 \u{1f600} e\u0301"}']) {
    assert.equal(bodyOf({ body: null, body_z: unpack(packText(text)) }), text);
  }
});

/** count reads one number from the test database. */
async function count(sql: string): Promise<number> {
  const { rows } = await admin.query<{ n: string | null }>(sql);
  return Number(rows[0]?.n ?? 0);
}

/** asSchema5 turns a schema's rows and layout into what a build of schema 5 left: text in `object` and `body`, no packed columns. */
async function asSchema5(schema: string): Promise<void> {
  await unpackRows(admin, schema);
  for (const [table, text, packed] of [['versions', 'object', 'object_z'], ['occurrences', 'body', 'body_z']] as const) {
    await admin.query(`ALTER TABLE ${schema}.${table} DROP COLUMN ${packed}, ALTER COLUMN ${text} SET NOT NULL`);
  }
  await admin.query(`UPDATE ${schema}.meta SET value = 5 WHERE name = 'schema'`);
}

test('a schema 5 archive opens in place: its rows read as before, byte for byte, and later writes are packed beside them', async () => {
  const schema = fresh();
  const clock = new FakeClock(Date.UTC(2025, 0, 1));
  let store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, clock });
  const reads = async (s: PostgresEventStore): Promise<string> =>
    JSON.stringify([
      await s.list({}),
      await s.get('default', 'long'),
      await s.listOccurrences({}),
      await s.search({ query: parseSearchQuery('needle', { nowMs: clock.now() }), limit: 10 }),
      await s.listEventOccurrences({ events: [{ namespace: 'default', name: 'long' }] }),
    ]);
  try {
    const long = `needle ${'a long message that repeats '.repeat(20)}`;
    await store.create(sampleEvent('default', 'a', { message: 'needle short' }), { occurrence: {} });
    await store.create(sampleEvent('default', 'long', { message: long }), { occurrence: {} });
    await clock.advance(1_000);
    await store.guaranteedUpdate('default', 'long', (cur) => ({ ...cur!, count: 2 }), { occurrence: {} });
    const before = await reads(store);
    await store.close();
    await asSchema5(schema);
    assert.equal(await count(`SELECT count(*) AS n FROM ${schema}.versions WHERE object IS NULL`), 0);

    store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, clock });
    assert.equal(await reads(store), before, 'the rows of schema 5 read as they did');
    assert.equal(await count(`SELECT value AS n FROM ${schema}.meta WHERE name = 'schema'`), SCHEMA_VERSION);
    await clock.advance(1_000);
    await store.guaranteedUpdate('default', 'long', (cur) => ({ ...cur!, count: 3 }), { occurrence: {} });
    await store.create(sampleEvent('default', 'b', { message: 'needle new' }), { occurrence: {} });
    assert.equal(await count(`SELECT count(*) AS n FROM ${schema}.versions WHERE object_z IS NOT NULL AND object IS NULL`), 2, 'the new versions are packed');
    assert.equal(await count(`SELECT count(*) AS n FROM ${schema}.occurrences WHERE body_z IS NOT NULL AND body IS NULL`), 2, 'and their occurrences');
    const occurrences = (await store.listOccurrences({})).items;
    assert.deepEqual(occurrences.map((o) => [o.event.name, o.countAfter, o.message === long]), [['a', 1, false], ['long', 1, true], ['long', 2, true], ['long', 3, true], ['b', 1, false]]);
    assert.deepEqual((await store.list({})).items.map((e) => [e.metadata.name, e.count]), [['a', 1], ['b', 1], ['long', 3]]);
    const page = await store.search({ query: parseSearchQuery('needle', { nowMs: clock.now() }), limit: 10 });
    assert.deepEqual(page.items.map((h) => h.event.metadata.name).sort(), ['a', 'b', 'long']);
  } finally {
    await store.close();
    await drop(schema);
  }
});
