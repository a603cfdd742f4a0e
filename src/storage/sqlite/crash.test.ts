import { parseSearchQuery } from '../../api/index.js';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { SqliteEventStore } from './index.js';
import { storedTexts } from './texts.js';

/**
 * WRITER is the child process: 64 concurrent writers create events and print
 * each key on stdout once its create has been acknowledged, until the process is
 * killed. stdout is a pipe, which Node writes synchronously on Linux, so a
 * printed key has left the process before the next write starts.
 */
const WRITER = `
const { SqliteEventStore } = await import(${JSON.stringify(new URL('./index.ts', import.meta.url).href)});
const store = new SqliteEventStore({ path: process.argv[1] });
await store.ready();
let next = 0;
async function writer() {
  for (;;) {
    const name = 'e' + next++;
    await store.create({ metadata: { namespace: 'crash', name }, involvedObject: { kind: 'Pod', name: 'p' }, message: name }, { ttlSeconds: 3600 });
    process.stdout.write(name + '\\n');
  }
}
await Promise.all(Array.from({ length: 64 }, writer));
`;

void test('every create acknowledged before kill -9 is in the file afterwards, and in its search index', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-crash-'));
  try {
    const path = join(dir, 'events.db');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', WRITER, path], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const acked: string[] = [];
    let partial = '';
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    await new Promise<void>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', () => resolve());
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        const lines = (partial + chunk).split('\n');
        partial = lines.pop() ?? '';
        acked.push(...lines);
        if (acked.length >= 3_000 && !child.killed) child.kill('SIGKILL');
      });
    });
    assert.equal(await exited, 'SIGKILL', 'the writer was killed, not finished');
    const store = new SqliteEventStore({ path });
    try {
      await store.ready();
      const missing: string[] = [];
      for (const name of acked) {
        try {
          await store.get('crash', name);
        } catch {
          missing.push(name);
        }
      }
      assert.deepEqual(missing, [], `${missing.length} of ${acked.length} acknowledged writes lost`);
      const { items } = await store.list({ namespace: 'crash' });
      assert.ok(items.length >= acked.length);
      assert.equal(await store.currentResourceVersion(), items.length, 'revisions continue from the file');
      // Each event's message is its name: the search index holds exactly the versions the file holds.
      const sample = items.filter((_, i) => i % Math.ceil(items.length / 50) === 0);
      for (const e of sample) {
        const page = await store.search({ query: parseSearchQuery(e.metadata.name!, { nowMs: Date.now() }), namespace: 'crash', limit: 2 });
        assert.deepEqual(page.items.map((h) => h.event.metadata.name), [e.metadata.name], `${e.metadata.name} is found by its words, once`);
      }
      const indexed = new Database(path, { readonly: true });
      try {
        const count = (sql: string): number => (indexed.prepare(sql).get() as { n: number }).n;
        assert.equal(count('SELECT count(*) AS n FROM search_docs'), count('SELECT count(*) AS n FROM versions WHERE op <> 3'), 'index and data in step');
      } finally {
        indexed.close();
      }
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * REPEATER is the child process of the repeats' case: 16 writers, each updating its own event, whose message is
 * long and its own, with its count bumped, and printing the event and the count once the update is acknowledged.
 */
const REPEATER = `
const { SqliteEventStore } = await import(${JSON.stringify(new URL('./index.ts', import.meta.url).href)});
const store = new SqliteEventStore({ path: process.argv[1] });
await store.ready();
async function writer(i) {
  const name = 'r' + i;
  const message = ('word' + i + ' pulling the image failed ').repeat(200);
  await store.create({ metadata: { namespace: 'crash', name }, involvedObject: { kind: 'Pod', name: 'p' }, message, count: 1 });
  for (let count = 2; ; count++) {
    await store.guaranteedUpdate('crash', name, (e) => ({ ...e, count }));
    process.stdout.write(name + ' ' + count + '\\n');
  }
}
await Promise.all(Array.from({ length: 16 }, (_, i) => writer(i)));
`;

/** sharedIndexed tells that the search index of the file at `path` holds an entry a repeat shares (read by a reader of its WAL). */
function sharedIndexed(path: string): boolean {
  try {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      return db.prepare('SELECT 1 FROM search_docs WHERE text IS NOT NULL LIMIT 1').get() !== undefined;
    } finally {
      db.close();
    }
  } catch {
    return false;
  }
}

void test('repeats of long messages acknowledged before kill -9 are in the file afterwards, each version found by search at its revision', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-crash-'));
  try {
    const path = join(dir, 'events.db');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', REPEATER, path], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const acked = new Map<string, number>();
    let lines = 0;
    let waiting = false;
    let partial = '';
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    await new Promise<void>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', () => resolve());
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        const got = (partial + chunk).split('\n');
        partial = got.pop() ?? '';
        for (const line of got) {
          const [name, count] = line.split(' ');
          acked.set(name!, Number(count));
          lines++;
        }
        if (lines >= 800 && !child.killed && !waiting) {
          // The kill comes once the index holds a shared entry: its catch-up lags the writes by a bounded time, and on
          // a loaded machine 800 acknowledgements can all come before the first repeat is indexed.
          waiting = true;
          void (async () => {
            for (let i = 0; i < 600 && !child.killed && child.exitCode === null && !sharedIndexed(path); i++) await new Promise((r) => setTimeout(r, 50));
            if (!child.killed) child.kill('SIGKILL');
          })();
        }
      });
    });
    assert.equal(await exited, 'SIGKILL', 'the writer was killed, not finished');
    const store = new SqliteEventStore({ path });
    try {
      await store.ready();
      for (const [name, count] of acked) assert.ok(((await store.get('crash', name)).count ?? 0) >= count, `${name}: count ${count} acknowledged`);
      const search = async (q: string, resourceVersion?: number): Promise<string[]> =>
        (await store.search({ query: parseSearchQuery(q, { nowMs: Date.now() }), namespace: 'crash', limit: 100, ...(resourceVersion !== undefined ? { resourceVersion } : {}) })).items.map(
          (h) => `${h.event.metadata.name} ${h.event.count}`,
        );
      assert.equal((await search('pulling')).length, 16, 'every event is found by a word of its message');
      const db = new Database(path, { readonly: true });
      let versions: { rv: number; key: string; count: number }[];
      try {
        const count = (sql: string): number => (db.prepare(sql).get() as { n: number }).n;
        assert.equal(count('SELECT count(*) AS n FROM search_docs'), count('SELECT count(*) AS n FROM versions WHERE op <> 3'), 'index and data in step');
        assert.ok(count('SELECT count(*) AS n FROM search_docs WHERE text IS NOT NULL') > 0, 'repeats share their entries');
        assert.equal(count('SELECT count(*) AS n FROM search_docs s WHERE text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM search_docs r WHERE r.docid = s.text AND r.text IS NULL)'), 0, 'every shared entry is there');
        const repeated = 'SELECT key FROM versions GROUP BY key HAVING count(*) > 1';
        assert.equal(count('SELECT count(*) AS n FROM texts'), count(`SELECT count(*) AS n FROM (${repeated})`), 'each repeated message stored once');
        assert.equal(count(`SELECT count(*) AS n FROM versions WHERE text_rv IS NULL AND key IN (${repeated})`), 0, 'every version of a repeated message refers to its text');
        assert.equal(count('SELECT count(*) AS n FROM versions v WHERE text_rv IS NOT NULL AND NOT EXISTS (SELECT 1 FROM texts t WHERE t.rv = v.text_rv)'), 0, 'every text referred to is there');
        const texts = storedTexts(db);
        versions = db
          .prepare<[], { rv: number; key: string; object: Buffer }>('SELECT rv, key, object FROM versions WHERE op <> 3 ORDER BY rv')
          .all()
          .map((v) => ({ rv: v.rv, key: v.key, count: (JSON.parse(texts.json(v.object)) as { count: number }).count }));
      } finally {
        db.close();
      }
      // A sample of the versions, each at its own revision: the version of its event that revision sees.
      const sample = versions.filter((_, i) => i % Math.ceil(versions.length / 40) === 0);
      for (const v of sample) {
        const name = v.key.slice('crash/'.length);
        const word = `word${name.slice(1)}`;
        const hits = await search(word, v.rv);
        assert.deepEqual(hits, [`${name} ${v.count}`], `${v.key} at ${v.rv}`);
      }
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** REBUILDER is the child process: it opens the store, printing each log line on stdout, until it is killed. */
const REBUILDER = `
const { SqliteEventStore } = await import(${JSON.stringify(new URL('./index.ts', import.meta.url).href)});
const say = (msg) => process.stdout.write(msg + '\\n');
const store = new SqliteEventStore({ path: process.argv[1], logger: { debug() {}, info: say, warn() {}, error() {} } });
await store.ready();
say('opened');
await new Promise(() => {});
`;

/** openKilledAt opens the store of `path` in a child process and kills it (-9) as it logs a line starting with `line`, before the open finishes. */
async function openKilledAt(path: string, line: string): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', REBUILDER, path], { stdio: ['ignore', 'pipe', 'inherit'] });
  const said: string[] = [];
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    said.push(...chunk.split('\n').filter((l) => l !== ''));
    if (said.some((l) => l.startsWith(line)) && !child.killed) child.kill('SIGKILL');
  });
  assert.equal(await exited, 'SIGKILL');
  assert.ok(!said.includes('opened'), `killed before the open finished (${said.join('; ')})`);
}

void test('kill -9 while the occurrence indexes are rebuilt leaves a file with the old ones or the new ones, which opens and reads every occurrence', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-crash-'));
  try {
    const path = join(dir, 'events.db');
    const store = new SqliteEventStore({ path });
    await store.ready();
    await store.close();
    // Occurrences enough for the rebuild to take a while, with the indexes as schema 11 and before wrote them.
    const OCCURRENCES = 300_000;
    const db = new Database(path);
    db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${OCCURRENCES})
      INSERT INTO occurrences (id, observed_us, namespace, regarding_hash, type, reason, count_before, count_after, body)
      SELECT i, 1700000000000000 + (i * 7919) % 1000003, 'ns-' || (i % 13), i % 977, 'Normal', 'Pulled', 0, 1, '{}' FROM n;
      DROP INDEX occ_time; DROP INDEX occ_regarding; DROP INDEX occ_regarding_ns;
      CREATE INDEX occ_time ON occurrences(observed_us, id);
      CREATE INDEX occ_regarding ON occurrences(regarding_hash, observed_us, id);
      CREATE INDEX occ_regarding_ns ON occurrences(regarding_hash, namespace, observed_us, id);`);
    db.close();

    await openKilledAt(path, 'rebuilding the occurrence indexes');

    const forms = (): string[] => {
      const check = new Database(path, { readonly: true });
      try {
        return check.prepare<[], { sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'index' AND name LIKE 'occ_%' ORDER BY name").all().map((r) => r.sql.replace(/^.* ON /, ''));
      } finally {
        check.close();
      }
    };
    const old = ['occurrences(regarding_hash, observed_us, id)', 'occurrences(regarding_hash, namespace, observed_us, id)', 'occurrences(observed_us, id)'];
    const rebuilt = ['occurrences(regarding_hash, observed_us)', 'occurrences(regarding_hash, namespace, observed_us)', 'occurrences(observed_us)'];
    const afterKill = forms();
    assert.ok([old, rebuilt].some((f) => JSON.stringify(f) === JSON.stringify(afterKill)), `all old or all rebuilt, not ${JSON.stringify(afterKill)}`);

    const reopened = new SqliteEventStore({ path });
    try {
      await reopened.ready();
      assert.deepEqual(forms(), rebuilt);
      const check = new Database(path, { readonly: true });
      const counts = ['occ_time', 'occ_regarding', 'occ_regarding_ns'].map((i) => check.prepare<[], { n: number }>(`SELECT count(*) AS n FROM occurrences INDEXED BY ${i}`).get()!.n);
      check.close();
      assert.deepEqual(counts, [OCCURRENCES, OCCURRENCES, OCCURRENCES]);
    } finally {
      await reopened.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * asSchema11 turns a file of this build into the layout schema 11 wrote: the interned columns hold their values,
 * as TEXT, the indexes as they were, and no table of interned values.
 */
function asSchema11(db: Database.Database): void {
  const interned: Record<string, string[]> = { versions: ['involved_kind', 'reason', 'type'], occurrences: ['namespace', 'type', 'reason'] };
  for (const [table, columns] of Object.entries(interned)) {
    const create = db.prepare<[string], { sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(table)!.sql;
    const indexes = db.prepare<[string], { name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL").all(table);
    for (const i of indexes) db.exec(`DROP INDEX ${i.name}`);
    db.exec(`ALTER TABLE ${table} RENAME TO ${table}_12`);
    db.exec(columns.reduce((sql, c) => sql.replace(new RegExp(`\\b${c} INTEGER NOT NULL`), `${c} TEXT NOT NULL`), create));
    const all = db.prepare<[], { name: string }>(`PRAGMA table_info(${table})`).all().map((c) => c.name);
    const select = all.map((c) => (columns.includes(c) ? `(SELECT value FROM interned WHERE id = ${c})` : c));
    db.exec(`INSERT INTO ${table} (${all.join(', ')}) SELECT ${select.join(', ')} FROM ${table}_12; DROP TABLE ${table}_12`);
    for (const i of indexes) db.exec(i.sql);
  }
  db.exec("DROP TABLE interned; UPDATE meta SET value = 11 WHERE name = 'schema'");
}

void test('kill -9 while the interned columns are migrated leaves schema 11 or 12 whole, which opens and holds every value', { timeout: 180_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-crash-'));
  try {
    const path = join(dir, 'events.db');
    const store = new SqliteEventStore({ path });
    await store.ready();
    await store.create({ metadata: { namespace: 'crash', name: 'e0' }, involvedObject: { kind: 'Pod', name: 'p' }, reason: 'Pulled', type: 'Normal', message: 'e0' });
    await store.close();
    // Versions and occurrences enough for the copy to take a while, in schema 11's layout, the index in step with them.
    const ROWS = 200_000;
    const db = new Database(path);
    asSchema11(db);
    db.exec(`WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i <= ${ROWS})
      INSERT INTO versions (rv, key, op, object, involved_kind, involved_hash, reason, type, first_s, span_s)
      SELECT i, 'crash/e' || i, 1, (SELECT object FROM versions WHERE rv = 1), 'Kind' || (i % 6), i % 977, 'Reason' || (i % 19),
        CASE WHEN i % 5 = 0 THEN 'Warning' ELSE 'Normal' END, 1700000000 + i, 0 FROM n;
      WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i <= ${ROWS})
      INSERT INTO occurrences (id, observed_us, namespace, regarding_hash, type, reason, count_before, count_after)
      SELECT i, 1700000000000000 + i, 'ns-' || (i % 41), i % 977, CASE WHEN i % 5 = 0 THEN 'Warning' ELSE 'Normal' END, 'Reason' || (i % 19), 0, 1 FROM n;
      UPDATE meta SET value = (SELECT max(rv) FROM versions) WHERE name = 'search_indexed_rv';`);
    const summary = (d: Database.Database, value: (c: string) => string): string[] => [
      ...d.prepare<[], { s: string }>(`SELECT a || ' ' || count(*) AS s FROM (SELECT ${value('involved_kind')} || '/' || ${value('reason')} || '/' || ${value('type')} AS a FROM versions) GROUP BY a ORDER BY a`).all(),
      ...d.prepare<[], { s: string }>(`SELECT a || ' ' || count(*) AS s FROM (SELECT ${value('namespace')} || '/' || ${value('reason')} || '/' || ${value('type')} AS a FROM occurrences) GROUP BY a ORDER BY a`).all(),
    ].map((r) => r.s);
    const before = summary(db, (c) => c);
    db.close();

    await openKilledAt(path, 'interning the kinds');

    const check = (): { schema: number; values: string[] } => {
      const d = new Database(path, { readonly: true });
      try {
        const schema = d.prepare<[], { value: number }>("SELECT value FROM meta WHERE name = 'schema'").get()!.value;
        return { schema, values: summary(d, (c) => (schema === 11 ? c : `(SELECT value FROM interned WHERE id = ${c})`)) };
      } finally {
        d.close();
      }
    };
    const afterKill = check();
    assert.ok([11, 12].includes(afterKill.schema), `schema ${afterKill.schema}`);
    assert.deepEqual(afterKill.values, before, `schema ${afterKill.schema} holds every value`);

    const reopened = new SqliteEventStore({ path });
    try {
      await reopened.ready();
      assert.deepEqual(check(), { schema: 12, values: before });
      // The rows were written by SQL, their objects all e0's: the column alone selects them.
      const reason7 = await reopened.list({ fieldEquals: { reason: 'Reason7' }, predicate: () => true, predicateIsSelection: true, limit: 3 });
      const first = Array.from({ length: ROWS }, (_, k) => k + 2).filter((i) => i % 19 === 7).map((i) => `e${i}`).sort().slice(0, 3);
      assert.deepEqual(reason7.items.map((e) => `e${e.metadata.resourceVersion}`), first, 'a list selects by an interned column, in key order');
      const d = new Database(path, { readonly: true });
      const counts = ['cur_key', 'cur_involved_hash', 'cur_since'].map((i) => d.prepare<[], { n: number }>(`SELECT count(*) AS n FROM versions INDEXED BY ${i} WHERE superseded_rv IS NULL AND op <> 3`).get()!.n);
      d.close();
      assert.deepEqual(counts, [ROWS + 1, ROWS + 1, ROWS + 1], 'every current version in each index');
    } finally {
      await reopened.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
