import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { parseSearchQuery } from '../../api/index.js';
import type { CoreEvent } from '../../api/index.js';
import { FakeClock } from '../../internal/index.js';
import { eventOccurrenceQuery } from '../archive-store.js';
import { CONFORMANCE_ENV_DEFAULTS, sampleEvent } from '../testing/index.js';
import { SqliteEventStore } from './index.js';
import { encodeObject } from '../shared/object-codec.js';
import { TEXT_MIN, longText, referTo, referenceOf, storedTexts } from './texts.js';
import { SCHEMA_VERSION } from './schema.js';

const dir = mkdtempSync(join(tmpdir(), 'kevents-sqlite-texts-'));
after(() => rmSync(dir, { recursive: true, force: true }));

void describe('texts: the reference that stands for a message', () => {
  void it('is taken from messages whose JSON string reaches TEXT_MIN, and put back exactly', () => {
    assert.equal(longText('x'.repeat(TEXT_MIN - 3)), undefined);
    assert.equal(longText(undefined), undefined);
    const message = 'quote " backslash \\ newline \n ' + 'é'.repeat(TEXT_MIN);
    const text = longText(message)!;
    const json = JSON.stringify({ kind: 'Event', reason: 'BackOff', message, count: 3 });
    const stored = referTo(json, text, 42)!;
    assert.ok(!stored.includes('é'), 'the message is cut out');
    const ref = referenceOf(stored)!;
    assert.equal(ref.rv, 42);
    assert.equal(stored.slice(0, ref.start) + text + stored.slice(ref.end), json);
    assert.equal(referTo(json, longText(message + '!')!, 42), undefined, 'another message is not cut');
    assert.equal(referenceOf(json), undefined);
  });
});

void describe('texts: a repeated long message in a SQLite file', () => {
  const table = (path: string, sql: string): Record<string, number | null> => {
    const db = new Database(path, { readonly: true });
    try {
      return db.prepare(sql).get() as Record<string, number | null>;
    } finally {
      db.close();
    }
  };
  const settle = async (clock: FakeClock): Promise<void> => {
    await clock.advance((CONFORMANCE_ENV_DEFAULTS.historyWindowSeconds + 5) * 1000);
    await new Promise((r) => setImmediate(r));
  };

  void it('is stored once for 40 versions, every read puts it back, and it goes with the last row referring to it', async () => {
    const path = join(dir, 'repeats.db');
    const clock = new FakeClock();
    const store = new SqliteEventStore({ path, clock, ...CONFORMANCE_ENV_DEFAULTS });
    const message = 'Back-off pulling image "registry.example/app:v1": unexpected EOF while reading layer '.repeat(2_000);
    const created = await store.create(sampleEvent('default', 'a', { count: 1, message }), { occurrence: {} });
    const first = Number(created.metadata.resourceVersion);
    const watch = store.watch({ resourceVersion: first });
    for (let i = 2; i <= 40; i++) await store.guaranteedUpdate('default', 'a', (e) => ({ ...e!, count: i }), { occurrence: {} });
    const last = await store.currentResourceVersion();

    const one = table(path, 'SELECT count(*) AS n, sum(length(json)) AS bytes FROM texts');
    assert.equal(one.n, 1, 'one text for the event');
    const rows = table(path, 'SELECT count(*) AS n, count(text_rv) AS refs, max(length(object)) AS biggest, min(text_rv) AS lo, max(text_rv) AS hi FROM versions');
    assert.deepEqual([rows.n, rows.refs, rows.lo, rows.hi], [40, 40, first, first], 'every version, the first included, refers to the text at the first revision');
    assert.ok(rows.biggest! < 400, `a version's object is its fields only (largest ${rows.biggest} bytes)`);

    assert.equal((await store.get('default', 'a')).message, message);
    assert.deepEqual((await store.list({ namespace: 'default' })).items.map((e) => [e.count, e.message === message]), [[40, true]]);
    const past = await store.list({ namespace: 'default', resourceVersion: first + 5, match: 'Exact' });
    assert.deepEqual(past.items.map((e) => [e.count, e.message === message]), [[6, true]]);
    const seen: [string, number | undefined, boolean, boolean][] = [];
    for await (const ev of watch) {
      seen.push([ev.type, ev.object.count, ev.object.message === message, ev.prevObject?.message === message]);
      if (Number(ev.object.metadata.resourceVersion) === last) break;
    }
    watch.stop();
    assert.equal(seen.length, 39);
    assert.ok(seen.every(([type, , m, p]) => type === 'MODIFIED' && m && p), 'each change and its previous object hold the message');
    const ref = { namespace: 'default', name: 'a' };
    const occurrences = await store.listOccurrences(eventOccurrenceQuery(ref, {}));
    assert.equal(occurrences.items.length, 40);
    assert.ok(occurrences.items.every((o) => o.message === message));
    await store.catchUpSearchIndex();
    const hits = await store.search({ query: parseSearchQuery('unexpected', { nowMs: clock.now() }), limit: 10 });
    assert.deepEqual(hits.items.map((h) => [h.event.count, h.event.message === message]), [[40, true]]);

    // Compaction moves the versions occurrences describe to past_versions, their references with them.
    await settle(clock);
    assert.equal(table(path, 'SELECT count(*) AS n FROM past_versions WHERE text_rv IS NOT NULL').n, 39);
    assert.equal(table(path, 'SELECT count(*) AS n FROM texts').n, 1);
    assert.ok((await store.listOccurrences(eventOccurrenceQuery(ref, {}))).items.every((o) => o.message === message), 'past versions read with the text');
    await store.delete('default', 'a');
    await settle(clock);
    assert.equal(table(path, 'SELECT count(*) AS n FROM texts').n, 1, 'the occurrences still describe versions that refer to it');
    await store.enforceRetention({ olderThanMs: clock.now() + 1 });
    assert.equal(table(path, 'SELECT count(*) AS n FROM past_versions').n, 0);
    assert.equal(table(path, 'SELECT count(*) AS n FROM texts').n, 0, 'the text went with the last row referring to it');
    await store.close();
  });

  void it('opens a schema 10 file in place: its whole copies read as before, and a repeat written since refers to a text', async () => {
    const path = join(dir, 'schema-10.db');
    const clock = new FakeClock();
    let store = new SqliteEventStore({ path, clock, ...CONFORMANCE_ENV_DEFAULTS });
    const message = 'readiness probe failed: HTTP probe failed with statuscode: 503 '.repeat(50);
    await store.create(sampleEvent('default', 'a', { count: 1, message }));
    for (let i = 2; i <= 4; i++) await store.guaranteedUpdate('default', 'a', (e) => ({ ...e!, count: i }));
    await store.close();
    // The file as schema 10 wrote it: every version its whole object, no texts, no references.
    const db = new Database(path);
    const texts = storedTexts(db);
    for (const row of db.prepare<[], { rv: number; object: Buffer }>('SELECT rv, object FROM versions').all()) {
      db.prepare('UPDATE versions SET object = ?, text_rv = NULL WHERE rv = ?').run(encodeObject(texts.json(row.object)), row.rv);
    }
    db.exec(`DROP TABLE texts; DROP INDEX versions_text; DROP INDEX past_versions_text; ALTER TABLE versions DROP COLUMN text_rv;
      ALTER TABLE past_versions DROP COLUMN text_rv; UPDATE meta SET value = 10 WHERE name = 'schema'`);
    db.close();

    store = new SqliteEventStore({ path, clock, ...CONFORMANCE_ENV_DEFAULTS });
    assert.equal((await store.get('default', 'a')).message, message);
    assert.deepEqual(table(path, 'SELECT value AS n FROM meta WHERE name = \'schema\''), { n: SCHEMA_VERSION });
    assert.deepEqual(table(path, 'SELECT count(*) AS n, count(text_rv) AS refs FROM versions'), { n: 4, refs: 0 }, 'nothing rewritten');
    for (let i = 5; i <= 6; i++) await store.guaranteedUpdate('default', 'a', (e) => ({ ...e!, count: i }));
    assert.deepEqual(table(path, 'SELECT count(*) AS n, count(text_rv) AS refs, min(text_rv) AS at FROM versions'), { n: 6, refs: 3, at: 4 }, 'the version the first repeat replaced keeps the text');
    for (let rv = 1; rv <= 6; rv++) {
      const e = (await store.list({ namespace: 'default', resourceVersion: rv, match: 'Exact' })).items[0]!;
      assert.deepEqual([e.count, e.message === message], [rv, true], `the version at ${rv}`);
    }
    await store.close();
  });

  void it('keeps a new text when the message changes, and repeats of a short message stay in their rows', async () => {
    const path = join(dir, 'changes.db');
    const clock = new FakeClock();
    const store = new SqliteEventStore({ path, clock, ...CONFORMANCE_ENV_DEFAULTS });
    const a = 'first failure, '.repeat(100);
    const b = 'second failure, '.repeat(100);
    const messages = [a, a, a, b, b, 'short', 'short', a];
    await store.create(sampleEvent('default', 'e', { count: 1, message: messages[0]! }));
    for (const [i, message] of messages.entries()) {
      if (i > 0) await store.guaranteedUpdate('default', 'e', (e) => ({ ...e!, count: i + 1, message }));
    }
    await store.create(sampleEvent('default', 'once', { message: a }));
    assert.deepEqual(table(path, 'SELECT count(*) AS n FROM texts'), { n: 2 }, 'a and b, each at its first version; the last a and the single one repeat nothing');
    assert.deepEqual(table(path, 'SELECT count(text_rv) AS n FROM versions'), { n: 5 });
    const versions = await Promise.all(
      messages.map(async (_, i) => (await store.list({ namespace: 'default', resourceVersion: i + 1, match: 'Exact' })).items[0]!),
    );
    assert.deepEqual(
      versions.map((e: CoreEvent) => e.message),
      messages,
    );
    assert.equal((await store.get('default', 'once')).message, a);
    await store.close();
  });
});

void describe('texts: other connections to the file', () => {
  void it('a follower (`serve --workers`) writes repeats through its writer and reads, lists and watches the message back', async () => {
    const path = join(dir, 'follower.db');
    const followers: SqliteEventStore[] = [];
    const writer = new SqliteEventStore({ path, onCommit: (rv, compacted) => followers.forEach((f) => f.followCommit(rv, compacted)) });
    await writer.ready();
    const follower = new SqliteEventStore({
      path,
      writer: {
        async call(op, args) {
          // Through JSON, as the IPC channel carries them.
          const run = (writer[op] as (...x: unknown[]) => Promise<unknown>).bind(writer);
          const value = await run(...(JSON.parse(JSON.stringify(args)) as unknown[]));
          return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
        },
      },
    });
    followers.push(follower);
    const message = 'MountVolume.SetUp failed for volume "config": configmap "app-config" not found '.repeat(40);
    const first = Number((await follower.create(sampleEvent('default', 'f', { count: 1, message }))).metadata.resourceVersion);
    const watch = follower.watch({ resourceVersion: first });
    for (let i = 2; i <= 5; i++) await follower.guaranteedUpdate('default', 'f', (e) => ({ ...e!, count: i }));
    const it = watch[Symbol.asyncIterator]();
    for (let i = 2; i <= 5; i++) {
      const ev = (await it.next()).value as { object: CoreEvent; prevObject?: CoreEvent };
      assert.deepEqual([ev.object.count, ev.object.message === message, ev.prevObject?.message === message], [i, true, true]);
    }
    watch.stop();
    assert.equal((await follower.get('default', 'f')).message, message);
    assert.equal((await follower.list({ namespace: 'default', resourceVersion: first + 1, match: 'Exact' })).items[0]?.message, message);
    await follower.close();
    await writer.close();
    assert.deepEqual(
      (() => {
        const db = new Database(path, { readonly: true });
        try {
          return db.prepare('SELECT count(*) AS texts, (SELECT count(text_rv) FROM versions) AS refs FROM texts').get();
        } finally {
          db.close();
        }
      })(),
      { texts: 1, refs: 5 },
    );
  });

  void it('--max-size retires the oldest repeated events and drops their texts with them', async () => {
    const path = join(dir, 'max-size.db');
    const clock = new FakeClock();
    const store = new SqliteEventStore({ path, clock, ...CONFORMANCE_ENV_DEFAULTS });
    // Messages that do not compress, so each text is pages of the file.
    const noise = (seed: number): string => {
      let x = seed + 1;
      let out = '';
      while (out.length < 10_000) out += ((x = (Math.imul(x, 1_664_525) + 1_013_904_223) >>> 0) >>> 8).toString(36);
      return out;
    };
    for (let n = 0; n < 100; n++) {
      await store.create(sampleEvent('default', `big-${n}`, { count: 1, message: noise(n) }), { occurrence: {} });
      for (let i = 2; i <= 3; i++) await store.guaranteedUpdate('default', `big-${n}`, (e) => ({ ...e!, count: i }), { occurrence: {} });
    }
    const db = new Database(path, { readonly: true });
    const count = (sql: string): number => (db.prepare(sql).get() as { n: number }).n;
    try {
      assert.equal(count('SELECT count(*) AS n FROM texts'), 100);
      const used = (): number => (db.pragma('page_count', { simple: true }) as number) - (db.pragma('freelist_count', { simple: true }) as number);
      const pageSize = db.pragma('page_size', { simple: true }) as number;
      const before = used() * pageSize;
      let more = true;
      while (more) ({ more } = await store.enforceRetention({ maxBytes: Math.floor(before * 0.6) }));
      const left = count('SELECT count(*) AS n FROM versions WHERE superseded_rv IS NULL AND op <> 3');
      assert.ok(left > 0 && left < 100, `some events retired (${left} left)`);
      assert.equal(count('SELECT count(*) AS n FROM texts'), left, 'a text for each event left, none for those retired');
      assert.ok(used() * pageSize <= Math.floor(before * 0.6));
      for (const e of (await store.list({ namespace: 'default' })).items) assert.equal(e.message, noise(Number(e.metadata.name!.slice('big-'.length))));
    } finally {
      db.close();
    }
    await store.close();
  });
});
