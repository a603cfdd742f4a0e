import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { noopLogger } from '../../internal/index.js';
import type { ArchiveWrite } from '../archive-store.js';
import { sampleEvent } from '../testing/index.js';
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

void test('a file written before occ_regarding_ns gains it on open, says so, and one namespace\'s occurrences of a name are read through it', async () => {
  const path = join(dir, 'before-regarding-ns.db');
  let store = new SqliteEventStore({ path });
  await store.ready();
  // The same object name in two namespaces, as web-1 or db-0 are in a real cluster.
  const write = (namespace: string, name: string): ArchiveWrite => {
    const object = sampleEvent(namespace, name, { involvedObject: { kind: 'Pod', namespace, name: 'web-1' } });
    return { namespace, name, decide: () => ({ action: 'write', object, occurrence: { countBefore: 0, countAfter: 1 } }) };
  };
  await store.applyArchiveBatch({ writes: [write('a', 'e1'), write('b', 'e2'), write('b', 'e3')], stamp: {} });
  await store.close();
  const db = new Database(path);
  db.exec('DROP INDEX occ_regarding_ns');
  db.close();

  const lines: string[] = [];
  store = new SqliteEventStore({ path, logger: { ...noopLogger, info: (msg: string, fields?: Record<string, unknown>) => lines.push(`${msg} ${JSON.stringify(fields)}`) } });
  await store.ready();
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
