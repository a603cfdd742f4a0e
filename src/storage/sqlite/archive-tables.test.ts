import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { FakeClock, noopLogger } from '../../internal/index.js';
import type { ArchiveWrite, EventRef } from '../archive-store.js';
import { eventOccurrenceQuery } from '../archive-store.js';
import { sampleEvent } from '../testing/index.js';
import { CHAIN_CAP, EVENT_CHAINS, completeChains } from './event-occurrences.js';
import { SqliteEventStore } from './sqlite-event-store.js';

const dir = mkdtempSync(join(tmpdir(), 'kevents-archive-tables-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** FIRST_LAYOUT is `occurrences` as files were written before counts by reason. */
const FIRST_LAYOUT = `
CREATE TABLE occurrences (id INTEGER PRIMARY KEY, observed_us INTEGER NOT NULL, namespace TEXT NOT NULL, event_name TEXT NOT NULL, regarding_name TEXT NOT NULL, body TEXT NOT NULL);
CREATE INDEX occ_time ON occurrences(observed_us, id);
`;

function body(o: { reason: string; type: string; lastSeen: string | null; observedTime: string; countBefore: number; countAfter: number }): string {
  return JSON.stringify({ event: { uid: 'u' }, ...o, regarding: { kind: 'Pod', name: 'p' } });
}

void test('a file written before the count columns gains them, filled from its rows', async () => {
  const path = join(dir, 'old.db');
  const db = new Database(path);
  db.exec(FIRST_LAYOUT);
  const insert = db.prepare('INSERT INTO occurrences (observed_us, namespace, event_name, regarding_name, body) VALUES (?, ?, ?, ?, ?)');
  const t = Date.UTC(2025, 0, 1);
  // Seen a day after it happened, and repeated 2 -> 5.
  insert.run((t + 86_400_000) * 1000, 'a', 'e1', 'p', body({ reason: 'BackOff', type: 'Warning', lastSeen: '2025-01-01T00:10:00Z', observedTime: '2025-01-02T00:00:00.000000Z', countBefore: 2, countAfter: 5 }));
  // No last-seen time: it happened when it was observed.
  insert.run((t + 1_800_000) * 1000 + 123, 'b', 'e2', 'p', body({ reason: 'Pulled', type: 'Normal', lastSeen: null, observedTime: '2025-01-01T00:30:00.000123Z', countBefore: 0, countAfter: 1 }));
  db.close();

  const store = new SqliteEventStore({ path });
  await store.ready();
  try {
    const counts = await store.countByReason({ sinceMs: t, untilMs: t + 3_600_000 });
    assert.deepEqual(
      counts.map((c) => `${c.type}/${c.reason}=${c.count}@${c.firstMs - t}`).sort(),
      ['Normal/Pulled=1@1800000', 'Warning/BackOff=3@600000'],
    );
    assert.deepEqual(await store.countByReason({ sinceMs: t, untilMs: t + 3_600_000, namespace: 'b' }).then((c) => c.map((x) => x.reason)), ['Pulled']);
    assert.equal((await store.listOccurrences({})).items.length, 2, 'the rows read as before');
  } finally {
    await store.close();
  }
});

/** openLogged opens the store of `path`, its info lines (message and fields) pushed to `lines`: what an upgrade on open says. */
async function openLogged(path: string, lines: string[]): Promise<SqliteEventStore> {
  const store = new SqliteEventStore({ path, logger: { ...noopLogger, info: (msg: string, fields?: Record<string, unknown>) => lines.push(`${msg} ${JSON.stringify(fields)}`) } });
  await store.ready();
  return store;
}

/** aboutWebOne writes event `name` about pod web-1 of `namespace`: the same object name in several namespaces, as web-1 or db-0 are in a real cluster. */
function aboutWebOne(namespace: string, name: string): ArchiveWrite {
  const object = sampleEvent(namespace, name, { involvedObject: { kind: 'Pod', namespace, name: 'web-1' } });
  return { namespace, name, decide: () => ({ action: 'write', object, occurrence: { countBefore: 0, countAfter: 1 } }) };
}

void test('a file written before occ_regarding_ns gains it on open, says so, and one namespace\'s occurrences of a name are read through it', async () => {
  const path = join(dir, 'before-regarding-ns.db');
  let store = new SqliteEventStore({ path });
  await store.ready();
  await store.applyArchiveBatch({ writes: [aboutWebOne('a', 'e1'), aboutWebOne('b', 'e2'), aboutWebOne('b', 'e3')], stamp: {} });
  await store.close();
  const db = new Database(path);
  db.exec('DROP INDEX occ_regarding_ns');
  db.close();

  const lines: string[] = [];
  store = await openLogged(path, lines);
  try {
    assert.deepEqual(lines.slice(0, 1), ['indexing the occurrences by object and namespace {"occurrences":3}']);
    assert.match(lines[1] ?? '', /^the occurrences are indexed by object and namespace \{"occurrences":3,"seconds":[\d.]+\}$/);
    const names = async (namespace?: string): Promise<string[]> =>
      (await store.listOccurrences({ ...(namespace !== undefined ? { namespace } : {}), fieldEquals: { 'regarding.name': 'web-1' } })).items.map((o) => o.event.name).sort();
    assert.deepEqual(await names('b'), ['e2', 'e3']);
    assert.deepEqual(await names('a'), ['e1']);
    assert.deepEqual(await names(), ['e1', 'e2', 'e3'], 'without a namespace, every namespace\'s');
  } finally {
    await store.close();
  }
  const check = new Database(path, { readonly: true });
  const plan = check
    .prepare("EXPLAIN QUERY PLAN SELECT id FROM occurrences INDEXED BY occ_regarding_ns WHERE regarding_hash = 1 AND namespace = 'b' AND (observed_us, id) > (0, 0) ORDER BY observed_us, id")
    .all() as { detail: string }[];
  check.close();
  assert.match(plan.map((p) => p.detail).join('\n'), /occ_regarding_ns \(regarding_hash=\? AND namespace=\? AND observed_us>\?\)/, 'a seek, with no sort');
});

void test('a file whose occurrence indexes name the id (schema 11 and before) gets them without it on open, says so, and reads the same', async () => {
  const path = join(dir, 'id-twice.db');
  let store = new SqliteEventStore({ path });
  await store.ready();
  await store.applyArchiveBatch({ writes: [aboutWebOne('a', 'e1'), aboutWebOne('b', 'e2'), aboutWebOne('b', 'e3'), aboutWebOne('a', 'e4')], stamp: {} });
  const read = async (): Promise<string[][]> => {
    const names = async (q: Parameters<typeof store.listOccurrences>[0]): Promise<string[]> => (await store.listOccurrences(q)).items.map((o) => `${o.event.namespace}/${o.event.name}`);
    return [await names({}), await names({ fieldEquals: { 'regarding.name': 'web-1' } }), await names({ namespace: 'b', fieldEquals: { 'regarding.name': 'web-1' } }), await names({ limit: 2 })];
  };
  const before = await read();
  await store.close();
  const db = new Database(path);
  db.exec(`DROP INDEX occ_time; DROP INDEX occ_regarding; DROP INDEX occ_regarding_ns;
    CREATE INDEX occ_time ON occurrences(observed_us, id);
    CREATE INDEX occ_regarding ON occurrences(regarding_hash, observed_us, id);
    CREATE INDEX occ_regarding_ns ON occurrences(regarding_hash, namespace, observed_us, id);`);
  db.close();

  const lines: string[] = [];
  store = await openLogged(path, lines);
  try {
    assert.deepEqual(lines.slice(0, 1), ['rebuilding the occurrence indexes without their id twice {"occurrences":4,"indexes":3}']);
    assert.match(lines[1] ?? '', /^the occurrence indexes are rebuilt \{"occurrences":4,"seconds":[\d.]+\}$/);
    assert.deepEqual(await read(), before);
    assert.equal(before[1]!.length, 4, 'the reads compared are not empty');
  } finally {
    await store.close();
  }
  const check = new Database(path, { readonly: true });
  const sql = check.prepare<[], { name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'occurrences' ORDER BY name").all();
  const plan = (q: string): string => (check.prepare(`EXPLAIN QUERY PLAN ${q}`).all() as { detail: string }[]).map((p) => p.detail).join('\n');
  const time = plan('SELECT id FROM occurrences INDEXED BY occ_time WHERE (observed_us, id) > (0, 0) ORDER BY observed_us, id LIMIT 5');
  const regarding = plan('SELECT id FROM occurrences INDEXED BY occ_regarding WHERE regarding_hash = 1 AND (observed_us, id) > (0, 0) ORDER BY observed_us, id LIMIT 5');
  check.close();
  assert.deepEqual(
    sql.map((r) => r.sql.replace(/^.* ON /, '')),
    ['occurrences(regarding_hash, observed_us)', 'occurrences(regarding_hash, namespace, observed_us)', 'occurrences(observed_us)'],
  );
  assert.match(time, /occ_time \(observed_us>\?\)/);
  assert.doesNotMatch(time, /TEMP B-TREE/, 'the id order is the index\'s own: no sort');
  assert.match(regarding, /occ_regarding \(regarding_hash=\? AND observed_us>\?\)/);
  assert.doesNotMatch(regarding, /TEMP B-TREE/);
});

void test('a hit\'s occurrences are read along its versions\' chain, through compaction; a chain that cannot be walked is read by the seek', async () => {
  const path = join(dir, 'chains.db');
  const clock = new FakeClock();
  const options = { path, clock, historyWindowSeconds: 60, compactIntervalMs: 1_000 };
  let store = new SqliteEventStore(options);
  await store.ready();
  const pod = { kind: 'Pod', namespace: 'a', name: 'db-0' };
  const write = (name: string, count: number): ArchiveWrite => ({
    namespace: 'a',
    name,
    decide: (current) => ({ action: 'write', object: sampleEvent('a', name, { count, involvedObject: pod }), occurrence: { countBefore: current?.count ?? 0, countAfter: count } }),
  });
  // Two events about one pod, interleaved; the first repeats across a compaction.
  for (let c = 1; c <= 3; c++) await store.applyArchiveBatch({ writes: [write('backoff', c), write(`started-${c}`, 1)], stamp: {} });
  await clock.advance(120_000);
  await store.applyArchiveBatch({ writes: [write('backoff', 4)], stamp: {} });
  const hit = async (name: string): Promise<EventRef> => {
    const read = await store.get('a', name);
    return { namespace: 'a', name, uid: read.metadata.uid!, regardingName: 'db-0', read };
  };
  const answer = async (): Promise<string[][]> => {
    const events = [await hit('backoff'), await hit('started-2')];
    const got = await store.listEventOccurrences({ events });
    const each = await Promise.all(events.map(async (e) => (await store.listOccurrences(eventOccurrenceQuery(e, {}))).items));
    assert.deepEqual(got, each);
    return got.map((os) => os.map((o) => `${o.event.name} ${o.countBefore}->${o.countAfter}`));
  };
  const expected = [['backoff 0->1', 'backoff 1->2', 'backoff 2->3', 'backoff 3->4'], ['started-2 0->1']];
  assert.deepEqual(await answer(), expected);
  const rv = Number((await store.get('a', 'backoff')).metadata.resourceVersion);
  await store.close();

  const chains = (): Map<number, number[]> => {
    const db = new Database(path, { readonly: true });
    try {
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${EVENT_CHAINS}`).all({ events: '[]', cap: CHAIN_CAP }) as { detail: string }[]).map((p) => p.detail).join('\n');
      assert.match(plan, /cur_key \(key=\?\)/, 'the current version is found by its key');
      assert.doesNotMatch(plan, /SCAN (versions|past_versions|v|p|c)\b/, 'and every version before it by its revision');
      const rows = db.prepare(EVENT_CHAINS).all({ events: JSON.stringify([[0, 'a/backoff']]), cap: CHAIN_CAP }) as { i: number; rv: number; prev: number }[];
      return completeChains(rows, new Map([[0, rv]]));
    } finally {
      db.close();
    }
  };
  const walked = chains().get(0);
  assert.equal(walked?.length, 4, 'the current version, the one it replaced (in the history window), and the two compacted into past_versions');
  assert.equal(walked[0], rv);
  const db = new Database(path);
  assert.equal((db.prepare('SELECT count(*) AS n FROM past_versions WHERE prev_rv IS NOT NULL').get() as { n: number }).n, 2);
  // A file whose past versions were kept before the column: it is added back empty on open, the chain stops there.
  db.exec('ALTER TABLE past_versions DROP COLUMN prev_rv');
  db.close();
  store = new SqliteEventStore(options);
  await store.ready();
  try {
    assert.equal(chains().get(0), undefined, 'a link that is not known ends the walk');
    assert.deepEqual(await answer(), expected, 'and the seek reads the same occurrences');
  } finally {
    await store.close();
  }
});
