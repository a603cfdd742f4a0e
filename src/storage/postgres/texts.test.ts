import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSearchQuery } from '../../api/index.js';
import type { CoreEvent } from '../../api/index.js';
import { FakeClock } from '../../internal/index.js';
import { CONFORMANCE_ENV_DEFAULTS, sampleEvent } from '../testing/index.js';
import { PostgresEventStore } from './index.js';
import { cutText, splitText, TEXT_MARK, TEXT_MIN, textOf, withText } from './texts.js';
import { POSTGRES_URL, testSchemas, unpackRows } from '../../../test/support/postgres.js';

const { admin, fresh, drop } = testSchemas('kevents_texts');

/** LONG is a message well past TEXT_MIN, with what JSON escapes (quotes, a backslash, a control character) and a surrogate pair. */
const LONG = `Back-off "restarting" failed container \\ \u0001 needle 🚀 ${'the container exited with an error while pulling the image '.repeat(400)}`;

void describe('splitText', () => {
  void it('cuts a long message out of its row and puts it back exactly; a short one stays', () => {
    const event = sampleEvent('default', 'a', { message: LONG });
    const json = JSON.stringify({ ...event, related: { kind: 'Node', name: 'n1' } });
    const split = splitText(json, LONG)!;
    assert.ok(split.stored.length < 400, 'the row keeps its other fields only');
    assert.equal(split.stored.split(TEXT_MARK).length, 2, 'one mark');
    assert.equal(split.text, JSON.stringify(LONG));
    assert.equal(withText(split.stored, split.text), json);
    assert.equal(textOf(split.stored, json), split.text);
    assert.equal(splitText(JSON.stringify(sampleEvent('default', 'a')), 'event a'), undefined, 'short');
    assert.equal(splitText(json, 'x'.repeat(TEXT_MIN)), undefined, 'a message the row does not hold');
    assert.equal(cutText('{"message":"a","b":1}', '"a"')?.stored, `{"message":${TEXT_MARK},"b":1}`);
  });
});

/** count reads one number from the store's schema. */
async function count(sql: string): Promise<number> {
  const { rows } = await admin.query<{ n: string | null }>(sql);
  return Number(rows[0]?.n ?? 0);
}

void describe('PostgresEventStore texts', () => {
  void it('stores a long message once for the versions and occurrences that repeat it, and every read gives it whole', async () => {
    const schema = fresh();
    const clock = new FakeClock(Date.UTC(2025, 0, 1));
    const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, clock });
    const short = new PostgresEventStore({ connectionString: POSTGRES_URL, schema: fresh(), clock });
    try {
      const watch = store.watch({});
      const changes = watch[Symbol.asyncIterator]();
      const event = (count: number, message = LONG): CoreEvent => sampleEvent('default', 'a', { count, message, related: { kind: 'Node', name: 'n1' } });
      await store.create(event(1), { occurrence: {} });
      // The same writes with a short message: what a row that keeps its message decodes to, field order included.
      await short.create(event(1, 'm'), { occurrence: {} });
      for (let n = 2; n <= 10; n++) {
        await clock.advance(1_000);
        await store.guaranteedUpdate('default', 'a', (cur) => ({ ...cur!, count: n }), { occurrence: {} });
        await short.guaranteedUpdate('default', 'a', (cur) => ({ ...cur!, count: n }), { occurrence: {} });
      }
      assert.equal(await count(`SELECT count(*) AS n FROM ${schema}.texts`), 1, 'one text for ten versions and ten occurrences');
      assert.equal(await count(`SELECT count(*) AS n FROM ${schema}.versions WHERE text_rv IS NOT NULL`), 10);
      assert.equal(await count(`SELECT count(*) AS n FROM ${schema}.occurrences WHERE text_rv IS NOT NULL`), 10);
      assert.ok((await count(`SELECT max(octet_length(object_z)) AS n FROM ${schema}.versions`)) < 400);
      assert.ok((await count(`SELECT max(octet_length(body_z)) AS n FROM ${schema}.occurrences`)) < 400);
      assert.ok((await store.archiveBytes()) < LONG.length + 10 * 800, 'the size counter counts the text once');

      assert.equal((await store.get('default', 'a')).message, LONG);
      assert.deepEqual((await store.list({})).items.map((e) => e.message), [LONG]);
      const occurrences = (await store.listOccurrences({})).items;
      const expected = (await short.listOccurrences({})).items;
      assert.equal(occurrences.length, 10);
      assert.deepEqual(
        occurrences.map((o) => JSON.stringify({ ...o, message: 'm' })),
        expected.map((o) => JSON.stringify(o)),
        'the same occurrences, in the same field order',
      );
      assert.ok(occurrences.every((o) => o.message === LONG));
      const [perEvent] = await store.listEventOccurrences({ events: [{ namespace: 'default', name: 'a', regardingName: 'pod-a' }] });
      assert.deepEqual(perEvent?.map((o) => o.message === LONG), Array(10).fill(true));
      const page = await store.search({ query: parseSearchQuery('needle', { nowMs: clock.now() }), limit: 10 });
      assert.deepEqual(page.items.map((h) => [h.event.count, h.event.message === LONG]), [[10, true]]);
      const [first, second] = [await changes.next(), await changes.next()];
      assert.equal(first.done === false && first.value.object.message, LONG);
      assert.equal(second.done === false && second.value.object.message, LONG);
      assert.equal(second.done === false && second.value.prevObject?.message, LONG, 'the previous object too');
      watch.stop();

      // A changed message is a new text; the old one stays while its versions and occurrences refer to it.
      await store.guaranteedUpdate('default', 'a', (cur) => ({ ...cur!, count: 11, message: `${LONG}, again` }), { occurrence: {} });
      assert.equal(await count(`SELECT count(*) AS n FROM ${schema}.texts`), 2);
      const deleted = await store.delete('default', 'a');
      assert.equal(deleted.message, `${LONG}, again`);
      assert.equal(await count(`SELECT count(*) AS n FROM ${schema}.texts`), 2, 'the tombstone refers to its text');
    } finally {
      await short.close();
      await store.close();
      await drop(schema);
    }
  });

  void it('reads rows that hold their own copy, as schema 4 wrote them, and a repeat of such a row starts a text', async () => {
    const schema = fresh();
    const clock = new FakeClock(Date.UTC(2025, 0, 1));
    let store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, clock });
    try {
      await store.create(sampleEvent('default', 'a', { message: LONG }), { occurrence: {} });
      await store.guaranteedUpdate('default', 'a', (cur) => ({ ...cur!, count: 2 }), { occurrence: {} });
      await store.close();
      // The rows as an earlier build stored them: each with its message, no text, unpacked.
      await unpackRows(admin, schema);
      await admin.query(
        `UPDATE ${schema}.versions v SET object = replace(v.object, chr(1), t.json), text_rv = NULL FROM ${schema}.texts t WHERE t.rv = v.text_rv; ` +
          `UPDATE ${schema}.occurrences o SET body = replace(o.body, chr(1), t.json), text_rv = NULL FROM ${schema}.texts t WHERE t.rv = o.text_rv; ` +
          `DELETE FROM ${schema}.texts; UPDATE ${schema}.meta SET value = 4 WHERE name = 'schema'`,
      );
      assert.equal(await count(`SELECT count(*) AS n FROM ${schema}.versions WHERE object LIKE '%needle%'`), 2);
      store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, clock });
      assert.equal((await store.get('default', 'a')).message, LONG);
      assert.deepEqual((await store.listOccurrences({})).items.map((o) => [o.countAfter, o.message === LONG]), [[1, true], [2, true]]);
      await store.guaranteedUpdate('default', 'a', (cur) => ({ ...cur!, count: 3 }), { occurrence: {} });
      await store.guaranteedUpdate('default', 'a', (cur) => ({ ...cur!, count: 4 }), { occurrence: {} });
      assert.equal(await count(`SELECT count(*) AS n FROM ${schema}.texts`), 1, 'the first repeat after the upgrade stores the text, the next refers to it');
      assert.deepEqual((await store.listOccurrences({})).items.map((o) => [o.countAfter, o.message === LONG]), [[1, true], [2, true], [3, true], [4, true]]);
      const page = await store.search({ query: parseSearchQuery('needle', { nowMs: clock.now() }), limit: 10, resourceVersion: 2 });
      assert.deepEqual(page.items.map((h) => [h.event.count, h.event.message === LONG]), [[2, true]], 'a version of before, read at its revision');
    } finally {
      await store.close();
      await drop(schema);
    }
  });

  void it('drops a text once no version nor occurrence refers to it: after compaction and after retention', async () => {
    const schema = fresh();
    const clock = new FakeClock(Date.UTC(2025, 0, 1));
    const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, clock, ...CONFORMANCE_ENV_DEFAULTS });
    const texts = (): Promise<number> => count(`SELECT count(*) AS n FROM ${schema}.texts`);
    try {
      const t0 = clock.now();
      await store.create(sampleEvent('default', 'a', { message: LONG }), { occurrence: {} });
      await clock.advance(10_000);
      const updated = await store.guaranteedUpdate('default', 'a', (cur) => ({ ...cur!, count: 2, message: `${LONG} 2` }), { occurrence: {} });
      assert.equal(await texts(), 2);
      // A compaction records a checkpoint of the revision it sees, and compacts up to a checkpoint older than the
      // window: the first version is purged only once a checkpoint at or past the update exists. Compactions run on
      // the store's ticker, when they get to run: on a loaded machine one kicked before the update may record its
      // checkpoint after it, or not, so the clock moves a tick at a time until one has.
      const checkpointed = async (): Promise<boolean> =>
        (await count(`SELECT count(*) AS n FROM ${schema}.checkpoints WHERE rv >= ${Number(updated.object.metadata?.resourceVersion)}`)) > 0;
      for (let i = 0; i < 600 && !(await checkpointed()); i++) {
        await clock.advance(CONFORMANCE_ENV_DEFAULTS.compactIntervalMs);
        await store.oldestResourceVersion();
      }
      assert.ok(await checkpointed(), 'a compaction recorded a checkpoint of the update');
      // Past the history window the first version is purged; its occurrence still holds the first text.
      await clock.advance((CONFORMANCE_ENV_DEFAULTS.historyWindowSeconds + 5) * 1000);
      // The purge runs after the compaction, on its own; on a loaded machine it can take seconds.
      for (let i = 0; i < 600 && (await count(`SELECT count(*) AS n FROM ${schema}.versions`)) > 1; i++) {
        await clock.advance(CONFORMANCE_ENV_DEFAULTS.compactIntervalMs);
        await store.oldestResourceVersion();
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(await count(`SELECT count(*) AS n FROM ${schema}.versions`), 1, 'the superseded version is purged');
      assert.equal(await texts(), 2, 'the first occurrence keeps the first text');
      assert.equal((await store.listOccurrences({})).items[0]?.message, LONG);
      const before = await store.archiveBytes();
      // Retention drops the first occurrence: its text goes, and its length off the size counter.
      assert.deepEqual(await store.enforceRetention({ olderThanMs: t0 + 5_000 }), { events: 0, occurrences: 1, more: false });
      assert.equal(await texts(), 1, 'the current version keeps the second text');
      assert.ok(before - (await store.archiveBytes()) > LONG.length);
      assert.equal((await store.get('default', 'a')).message, `${LONG} 2`);
    } finally {
      await store.close();
      await drop(schema);
    }
  });
});
