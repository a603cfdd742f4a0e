import { parseSearchQuery } from '../../api/index.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { CLUSTER_LABEL } from '../../api/index.js';
import type { CoreEvent } from '../../api/index.js';
import { FakeClock, noopLogger } from '../../internal/index.js';
import { isStorageError } from '../errors.js';
import type { ArchiveWrite, OccurrenceCursor } from '../archive-store.js';
import type { EventStore } from '../event-store.js';
import type { ConformanceSetup } from '../testing/index.js';
import { runArchiveStoreConformance, runEventStoreConformance, runSearchConformance, sampleEvent } from '../testing/index.js';
import { PostgresEventStore } from './index.js';
import { ArchiveQueries } from './archive-tables.js';
import { ListQueries } from './list-query.js';
import { matchesFilter } from '../shared/index.js';
import type { PgPool } from './index.js';
import { POSTGRES_URL, testSchemas, unpackRows } from '../../../test/support/postgres.js';
import { fixture, loadPostgresFixture } from '../../../test/support/schema-fixtures.js';
import { SCHEMA_VERSION } from './schema.js';

const { admin, fresh, drop } = testSchemas('kevents_test');

/** withFreshStore runs `fn` on a store of a schema of its own, closed and dropped after, whatever `fn` does. */
async function withFreshStore(fn: (store: PostgresEventStore, schema: string) => Promise<void>): Promise<void> {
  const schema = fresh();
  const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema });
  try {
    await fn(store, schema);
  } finally {
    await store.close();
    await drop(schema);
  }
}
const schemas = new WeakMap<EventStore, string>();

const setup: ConformanceSetup = {
  create: (env) => {
    const schema = fresh();
    const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, poolSize: 4, ...env.options });
    schemas.set(store, schema);
    return Promise.resolve(store);
  },
  destroy: async (store) => {
    await store.close();
    await drop(schemas.get(store)!);
  },
  reopen: (closed, env) => {
    const schema = schemas.get(closed)!;
    const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, poolSize: 4, ...env.options });
    schemas.set(store, schema);
    return Promise.resolve(store);
  },
  openPrevious: async (env, logger, which) => {
    const schema = fresh();
    await loadPostgresFixture(admin, fixture('postgres', SCHEMA_VERSION, which), schema);
    const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, poolSize: 4, ...env.options, logger });
    schemas.set(store, schema);
    return store;
  },
};
runEventStoreConformance('postgres', setup);
runArchiveStoreConformance('postgres', setup);
runSearchConformance('postgres', setup);

void describe('PostgresEventStore', () => {
  void it('accepts a pg Pool the caller owns, and leaves it open on close', async () => {
    const schema = fresh();
    const pool: PgPool = new pg.Pool({ connectionString: POSTGRES_URL, max: 3 });
    const store = new PostgresEventStore({ pool, schema });
    await store.create(sampleEvent('default', 'a'));
    await store.close();
    const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.versions`);
    assert.equal(Number(rows[0]!.n), 1);
    await pool.end();
    await drop(schema);
  });

  void it('fails every call with Unreachable when the server cannot be reached, and after close()', async () => {
    const down = new PostgresEventStore({ connectionString: 'postgres://postgres@127.0.0.1:1/test', schema: fresh() });
    await assert.rejects(down.ready(), (e) => isStorageError(e, 'Unreachable'));
    await assert.rejects(down.get('default', 'a'), (e) => isStorageError(e, 'Unreachable'));
    await down.close();
    const schema = fresh();
    const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema });
    await store.ready();
    await store.close();
    await assert.rejects(store.create(sampleEvent('default', 'a')), (e) => isStorageError(e, 'Unreachable'));
    await assert.rejects(store.list({}), (e) => isStorageError(e, 'Unreachable'));
    await drop(schema);
  });

  void it('refuses a schema name that is not a plain identifier, and a database of another schema version', async () => {
    const bad = new PostgresEventStore({ connectionString: POSTGRES_URL, schema: 'x; DROP TABLE y' });
    await assert.rejects(bad.ready(), (e) => isStorageError(e, 'Unreachable') && /invalid schema name/.test(e.message));
    await bad.close();
    const schema = fresh();
    await admin.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.meta (name text PRIMARY KEY, value bigint NOT NULL); INSERT INTO ${schema}.meta VALUES ('schema', 99)`);
    const future = new PostgresEventStore({ connectionString: POSTGRES_URL, schema });
    await assert.rejects(future.ready(), (e) => isStorageError(e, 'Unreachable') && /schema version 99/.test(e.message));
    await future.close();
    await drop(schema);
  });

  void it('migrates a version 1 schema on open: the archive tables appear and the size counter starts at the live events', async () => {
    const schema = fresh();
    const v1 = new PostgresEventStore({ connectionString: POSTGRES_URL, schema });
    await v1.create(sampleEvent('default', 'a', { message: 'x'.repeat(100) }));
    await v1.create(sampleEvent('default', 'b'));
    await v1.close();
    await unpackRows(admin, schema);
    // What a version 1 database lacks.
    await admin.query(
      `DROP TABLE ${schema}.occurrences, ${schema}.source_checkpoints, ${schema}.write_marks, ${schema}.occurrence_lag; ` +
        `DELETE FROM ${schema}.meta WHERE name = 'bytes'; UPDATE ${schema}.meta SET value = 1 WHERE name = 'schema'; ` +
        `CREATE INDEX cur_type ON ${schema}.versions (type, key) WHERE superseded_rv IS NULL AND op <> 3`,
    );
    const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema });
    const { rows } = await admin.query<{ n: string }>(`SELECT sum(char_length(object)) AS n FROM ${schema}.versions WHERE superseded_rv IS NULL AND op <> 3`);
    assert.equal(await store.archiveBytes(), Number(rows[0]!.n));
    assert.equal((await store.get('default', 'a')).message, 'x'.repeat(100));
    await store.applyArchiveBatch({
      writes: [{ namespace: 'default', name: 'c', decide: () => ({ action: 'write', object: sampleEvent('default', 'c'), occurrence: { countBefore: 0, countAfter: 1 } }) }],
      checkpoint: { source: 's', resourceVersion: '7' },
      stamp: {},
    });
    assert.equal((await store.getCheckpoint('s'))?.resourceVersion, '7');
    assert.deepEqual((await store.listOccurrences({})).items.map((o) => o.event.name), ['c']);
    const [v] = (await admin.query<{ value: string }>(`SELECT value FROM ${schema}.meta WHERE name = 'schema'`)).rows;
    assert.equal(v!.value, String(SCHEMA_VERSION));
    const idx = await admin.query(`SELECT 1 FROM pg_indexes WHERE schemaname = $1 AND indexname = 'cur_type'`, [schema]);
    assert.equal(idx.rows.length, 0, 'the field indexes of version 1 are dropped');
    await store.close();
    await drop(schema);
  });

  void it('migrates a version 2 schema on open: the cluster of current archived events and of occurrences read from what they store', async () => {
    const schema = fresh();
    const clock = new FakeClock(Date.UTC(2025, 0, 1, 1));
    let store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, clock });
    const labelled = (name: string, cluster: string): CoreEvent => sampleEvent('default', name, { metadata: { namespace: 'default', name, labels: { [CLUSTER_LABEL]: cluster } } });
    // A second apart: each batch gets its own time-to-revision mark.
    for (const [name, cluster] of [['east-1', 'east'], ['west-1', 'west']] as const) {
      await store.applyArchiveBatch({
        writes: [{ namespace: 'default', name, decide: () => ({ action: 'write', object: labelled(name, cluster), occurrence: { countBefore: 0, countAfter: 1 } }) }],
        stamp: { cluster },
      });
      await clock.advance(1_000);
    }
    await store.close();
    await unpackRows(admin, schema);
    await admin.query(
      `ALTER TABLE ${schema}.versions DROP COLUMN cluster; ALTER TABLE ${schema}.occurrences DROP COLUMN cluster; UPDATE ${schema}.meta SET value = 2 WHERE name = 'schema'`,
    );
    store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, clock });
    await clock.advance(10_000);
    assert.deepEqual(await store.enforceRetention({ clusters: { west: clock.now() - 5_000 } }), { events: 1, occurrences: 1, more: false });
    assert.deepEqual((await store.list({})).items.map((e) => e.metadata.name), ['east-1']);
    assert.deepEqual((await store.listOccurrences({})).items.map((o) => `${o.cluster}/${o.event.name}`), ['east/east-1']);
    const { rows } = await admin.query<{ cluster: string }>(`SELECT cluster FROM ${schema}.versions WHERE superseded_rv IS NULL AND op <> 3`);
    assert.deepEqual(rows, [{ cluster: 'east' }]);
    await store.close();
    await drop(schema);
  });

  void it('migrates a version 3 schema on open: builds the search index in place, over current and history versions, and logs it', async () => {
    const schema = fresh();
    const clock = new FakeClock();
    let store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, clock });
    await store.create(sampleEvent('default', 'a', { message: 'volume certs not found' }));
    const before = await store.currentResourceVersion();
    await store.guaranteedUpdate('default', 'a', (cur) => ({ ...cur!, message: 'volume certs mounted' }));
    await store.create(sampleEvent('default', 'b', { message: 'pulled image' }));
    await store.delete('default', 'b');
    await store.close();
    await unpackRows(admin, schema);
    // What a version 3 database lacks.
    await admin.query(
      `DROP INDEX ${schema}.search_words, ${schema}.search_time; ALTER TABLE ${schema}.versions DROP COLUMN search, DROP COLUMN last_ms; ` +
        `UPDATE ${schema}.meta SET value = 3 WHERE name = 'schema'`,
    );
    const lines: string[] = [];
    const logger = { ...noopLogger, info: (msg: string, fields?: Record<string, unknown>) => lines.push(`${msg} ${JSON.stringify(fields)}`) };
    store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, clock, logger });
    const search = async (q: string, resourceVersion?: number): Promise<string[]> =>
      (await store.search({ query: parseSearchQuery(q, { nowMs: clock.now() }), limit: 10, ...(resourceVersion !== undefined ? { resourceVersion } : {}) })).items.map((h) => h.event.message!);
    assert.deepEqual(await search('certs'), ['volume certs mounted']);
    assert.deepEqual(await search('"not found"', before), ['volume certs not found'], 'the history is indexed too');
    assert.deepEqual(await search('pulled'), [], 'a deleted event is no hit');
    // Dropping last_ms dropped cur_key, which holds it: the key-only index a version 3 database has is widened too;
    // and search_time, search_reason and cur_since, which a version 3 database lacks, are built.
    assert.equal(lines.length, 8, lines.join('\n'));
    assert.match(lines[1]!, /^building the current-key index/);
    assert.match(lines[2]!, /^indexing the versions by time \{"versions":4\}$/);
    assert.match(lines[3]!, /^the versions are indexed by time \{"versions":4,"seconds":[\d.]+\}$/);
    assert.match(lines[4]!, /^indexing the versions by reason and time \{"versions":4\}$/);
    assert.match(lines[5]!, /^the versions are indexed by reason and time \{"versions":4,"seconds":[\d.]+\}$/);
    assert.match(lines[6]!, /^indexing the versions by when current ones last happened \{"versions":4\}$/);
    assert.match(lines[7]!, /^the versions are indexed by when current ones last happened \{"versions":4,"seconds":[\d.]+\}$/);
    assert.match(lines[0]!, /^the archive's search index is built \{"versions":3,"seconds":[\d.]+,"secondsPerMillion":\d+\}$/);
    const [v] = (await admin.query<{ value: string }>(`SELECT value FROM ${schema}.meta WHERE name = 'schema'`)).rows;
    assert.equal(v!.value, String(SCHEMA_VERSION));
    await store.create(sampleEvent('default', 'c', { message: 'written after' }));
    assert.deepEqual(await search('after'), ['written after'], 'the write path keeps it from then on');
    await store.close();
    await drop(schema);
  });

  void it('gains occ_regarding_ns and occ_event on open when an older build wrote the schema, says so, and reads one namespace\'s occurrences of a name, and one event\'s, through them', async () => {
    const schema = fresh();
    let store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema });
    // The same object name in two namespaces, as web-1 or db-0 are in a real cluster.
    const write = (namespace: string, name: string): ArchiveWrite => {
      const object = sampleEvent(namespace, name, { involvedObject: { kind: 'Pod', namespace, name: 'web-1' } });
      return { namespace, name, decide: () => ({ action: 'write', object, occurrence: { countBefore: 0, countAfter: 1 } }) };
    };
    await store.applyArchiveBatch({ writes: [write('a', 'e1'), write('b', 'e2'), write('b', 'e3'), write('c', 'e4')], stamp: {} });
    await store.close();
    await admin.query(`DROP INDEX ${schema}.occ_regarding_ns; DROP INDEX ${schema}.occ_event`);
    const lines: string[] = [];
    const logger = { ...noopLogger, info: (msg: string, fields?: Record<string, unknown>) => lines.push(`${msg} ${JSON.stringify(fields)}`) };
    store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, logger });
    try {
      await store.ready();
      assert.deepEqual([lines[0], lines[2]], ['indexing the occurrences by object and namespace {"occurrences":4}', 'indexing the occurrences by event {"occurrences":4}']);
      assert.match(lines[1] ?? '', /^the occurrences are indexed by object and namespace \{"occurrences":4,"seconds":[\d.]+\}$/);
      assert.match(lines[3] ?? '', /^the occurrences are indexed by event \{"occurrences":4,"seconds":[\d.]+\}$/);
      const names = async (namespace?: string, limit?: number): Promise<string[]> => {
        const out: string[] = [];
        let after: OccurrenceCursor | undefined;
        for (;;) {
          const page = await store.listOccurrences({
            ...(namespace !== undefined ? { namespace } : {}),
            fieldEquals: { 'regarding.name': 'web-1' },
            ...(limit !== undefined ? { limit } : {}),
            ...(after !== undefined ? { after } : {}),
          });
          out.push(...page.items.map((o) => o.event.name));
          if (page.next === undefined) return out;
          after = page.next;
        }
      };
      assert.deepEqual(await names('b'), ['e2', 'e3']);
      assert.deepEqual(await names('b', 1), ['e2', 'e3'], 'page by page');
      assert.deepEqual(await names('a'), ['e1']);
      assert.deepEqual(await names(), ['e1', 'e2', 'e3', 'e4'], 'without a namespace, every namespace\'s');
      const client = await admin.connect();
      try {
        await client.query('SET enable_seqscan = off');
        const queries = new ArchiveQueries(schema);
        // One object's occurrences in one namespace; one event's, and a search page's hits' occurrences in one statement.
        for (const [q, index] of [
          [queries.page({ namespace: 'b', fieldEquals: { 'regarding.name': 'web-1' } }, { observedMicros: 0, id: 0 }, 10), 'occ_regarding_ns'],
          [queries.page({ namespace: 'b', fieldEquals: { 'regarding.name': 'web-1', 'metadata.namespace': 'b', 'event.name': 'e2' } }, { observedMicros: 0, id: 0 }, 10), 'occ_event'],
          [queries.firstOfEvents([{ index: 0, event: { namespace: 'b', name: 'e2', regardingName: 'web-1' } }], 10), 'occ_event'],
        ] as const) {
          const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${q.text}`, q.values);
          const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
          assert.match(plan, new RegExp(`Index Scan using ${index} `), plan);
          assert.doesNotMatch(plan, /Sort/, `a seek, with no sort: ${plan}`);
        }
        const [hits] = await store.listEventOccurrences({ events: [{ namespace: 'b', name: 'e3', regardingName: 'web-1' }] });
        assert.deepEqual(hits?.map((o) => o.event.name), ['e3']);
      } finally {
        client.release();
      }
    } finally {
      await store.close();
      await drop(schema);
    }
  });

  void it('reads the occurrences of some events (events, incidents\' failures) through occ_event, a seek of each from the position\'s time', () =>
    withFreshStore(async (store, schema) => {
      const writes: ArchiveWrite[] = [];
      for (let i = 0; i < 400; i++) {
        const object = sampleEvent(`ns-${i % 4}`, `e${i}`, { involvedObject: { kind: 'Pod', namespace: `ns-${i % 4}`, name: `web-${i % 10}` } });
        writes.push({ namespace: `ns-${i % 4}`, name: `e${i}`, decide: () => ({ action: 'write', object, occurrence: { countBefore: 0, countAfter: 1 } }) });
      }
      await store.applyArchiveBatch({ writes, stamp: {} });
      await admin.query(`ANALYZE ${schema}.occurrences`);
      const events = [{ namespace: 'ns-1', name: 'e1' }, { namespace: 'ns-2', name: 'e302' }];
      const q = new ArchiveQueries(schema).page({ events, anyOf: { types: ['normal'] } }, { observedMicros: 0, id: 0 }, 10);
      const plan = (await admin.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${q.text}`, q.values)).rows.map((r) => r['QUERY PLAN']).join('\n');
      // The event's hash is the seek; its namespace and name are tested on the rows (two events may share a hash).
      assert.match(plan, /Index Scan using occ_event on occurrences[^\n]*\n\s*Index Cond: \(\(hashtextextended\([^\n]*k\.k_namespace[^\n]*k\.k_name[^\n]* AND \(observed_us >= /, plan);
      const listed = await store.listOccurrences({ events: [...events, events[0]!, { namespace: 'ns-3', name: 'e1' }] });
      assert.deepEqual(listed.items.map((o) => `${o.event.namespace}/${o.event.name}`), ['ns-1/e1', 'ns-2/e302']);
    }));

  void it('widens a cur_key that holds the key alone on open, in place: anyOf then chooses rows on the index alone', async () => {
    const schema = fresh();
    let store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema });
    for (let i = 0; i < 30; i++) {
      await store.create(sampleEvent(`ns-${i % 3}`, `e-${i}`, i % 10 === 0 ? { type: 'Warning', reason: 'BackOff' } : i % 10 === 5 ? { involvedObject: { kind: 'ReplicaSet', namespace: `ns-${i % 3}`, name: `rs-${i}` } } : {}));
    }
    await store.close();
    // What a database built before CUR_KEY_INCLUDES has.
    await admin.query(`DROP INDEX ${schema}.cur_key; CREATE UNIQUE INDEX cur_key ON ${schema}.versions (key) WHERE superseded_rv IS NULL AND op <> 3`);
    const lines: string[] = [];
    const logger = { ...noopLogger, info: (msg: string) => lines.push(msg) };
    store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, logger });
    const listed = await store.list({ anyOf: { types: ['warning'], kinds: ['ReplicaSet'] }, limit: 4 });
    assert.deepEqual(listed.items.map((e) => e.metadata.name), ['e-0', 'e-15', 'e-10', 'e-25']);
    const rest = await store.list({ anyOf: { types: ['warning'], kinds: ['ReplicaSet'] }, startKey: listed.lastKey!, resourceVersion: listed.resourceVersion, match: 'Exact' });
    assert.deepEqual(rest.items.map((e) => e.metadata.name), ['e-20', 'e-5'], 'the pages after the first read at their revision');
    assert.deepEqual(lines.filter((l) => /current-key index/.test(l)).length, 1, lines.join('\n'));
    const [index] = (await admin.query<{ def: string }>(`SELECT indexdef AS def FROM pg_indexes WHERE schemaname = $1 AND indexname = 'cur_key'`, [schema])).rows;
    assert.match(index!.def, /\(key\) INCLUDE \(rv, type, reason, involved_kind, last_ms\)/);
    await store.close();
    // A second open finds it wide and builds nothing.
    lines.length = 0;
    store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, logger });
    await store.ready();
    assert.deepEqual(lines.filter((l) => /current-key index/.test(l)), []);
    // Index only: the columns anyOf tests are on cur_key, so no row is read from the table to be tested.
    const client = await admin.connect();
    const q = new ListQueries(schema).rows({ at: undefined, high: undefined, fieldEquals: {}, anyOf: { types: ['warning'], reasons: ['FailedCreate'], kinds: ['ReplicaSet'] }, activeIn: { sinceMs: 0, alwaysReasons: ['Scheduled'] } }, '', 10);
    const explain = async (): Promise<string> => {
      // A table this small is cheaper to scan whole: the plan that the index allows is asked for.
      await client.query('SET enable_seqscan = off; SET enable_bitmapscan = off');
      const plan = (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${q.text}`, q.values)).rows.map((r) => r['QUERY PLAN']).join('\n');
      await client.query('RESET enable_seqscan; RESET enable_bitmapscan');
      return plan;
    };
    const plan = await explain();
    assert.match(plan, /Index Only Scan using cur_key/);
    assert.match(plan, /Filter: .*last_ms >= /, 'the window\'s start is tested on the index too');
    client.release();
    await store.close();
    await drop(schema);
  });

  void it('lists an object\'s events by its name\'s hash, now through cur_involved_name and at a revision through hist_involved_name too, in key order', () =>
    withFreshStore(async (store, schema) => {
      for (let i = 0; i < 200; i++) {
        await store.create(sampleEvent(`ns-${i % 4}`, `e-${String(i).padStart(3, '0')}`, { involvedObject: { kind: 'Pod', namespace: `ns-${i % 4}`, name: `web-${i % 20}` } }));
      }
      const before = await store.list({ limit: 1 });
      for (let i = 0; i < 200; i += 40) await store.guaranteedUpdate(`ns-${i % 4}`, `e-${String(i).padStart(3, '0')}`, (cur) => ({ ...cur!, count: 2 }));
      await admin.query(`ANALYZE ${schema}.versions`);
      const named = (items: CoreEvent[]): string[] => items.map((e) => `${e.metadata.namespace}/${e.metadata.name}:${e.count}`);
      assert.deepEqual(named((await store.list({ fieldEquals: { 'involvedObject.name': 'web-0' } })).items), ['ns-0/e-000:2', 'ns-0/e-020:1', 'ns-0/e-040:2', 'ns-0/e-060:1', 'ns-0/e-080:2', 'ns-0/e-100:1', 'ns-0/e-120:2', 'ns-0/e-140:1', 'ns-0/e-160:2', 'ns-0/e-180:1']);
      const old = await store.list({ fieldEquals: { 'involvedObject.name': 'web-0' }, resourceVersion: before.resourceVersion, match: 'Exact', limit: 3 });
      assert.deepEqual(named(old.items), ['ns-0/e-000:1', 'ns-0/e-020:1', 'ns-0/e-040:1'], 'the versions replaced since, as they were');
      assert.deepEqual((await store.list({ fieldEquals: { 'involvedObject.name': 'web-00' } })).items, [], 'another name, none');
      const client = await admin.connect();
      try {
        await client.query('SET enable_seqscan = off; SET enable_bitmapscan = off');
        const lists = new ListQueries(schema);
        const now = lists.rows({ at: undefined, high: undefined, fieldEquals: { 'involvedObject.name': 'web-0' }, anyOf: undefined, activeIn: undefined }, '', 10);
        const plan = (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${now.text}`, now.values)).rows.map((r) => r['QUERY PLAN']).join('\n');
        // The hash is the seek, in key order from the start; the name itself is compared on the rows (two names may share a hash).
        assert.match(plan, /Index Scan using cur_involved_name on versions v [^\n]*\s+Index Cond: \(\(hashtextextended\(involved_name, '0'::bigint\) = '-?\d+'::bigint\) AND \(key > ''::text\)\)\s+Filter: \(involved_name = 'web-0'::text\)/, plan);
        assert.doesNotMatch(plan, /Sort/, plan);
        // The store prepares this statement once per connection (`named`): its generic plan seeks the hash of the parameter.
        await client.query(`PREPARE by_name AS ${now.text}`);
        const generic = (await client.query<{ 'QUERY PLAN': string }>(`SET plan_cache_mode = force_generic_plan; EXPLAIN EXECUTE by_name('', 10, 'web-0')`)) as unknown as { rows: { 'QUERY PLAN': string }[] }[];
        const genericPlan = generic[1]!.rows.map((r) => r['QUERY PLAN']).join('\n');
        assert.match(genericPlan, /Index Scan using cur_involved_name on versions v [^\n]*\s+Index Cond: \(\(hashtextextended\(involved_name, '0'::bigint\) = hashtextextended\(\$3, '0'::bigint\)\) AND \(key > \$1\)\)\s+Filter: \(involved_name = \$3\)/, genericPlan);
        const at = lists.rows({ at: 5, high: undefined, fieldEquals: { 'involvedObject.name': 'web-0' }, anyOf: undefined, activeIn: undefined }, '', 10);
        const atPlan = (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${at.text}`, at.values)).rows.map((r) => r['QUERY PLAN']).join('\n');
        assert.match(atPlan, /Index Scan using cur_involved_name/, atPlan);
        assert.match(atPlan, /Index Scan using hist_involved_name on versions v_1 [^\n]*\s+Index Cond: \(\(hashtextextended\(involved_name, '0'::bigint\) = '-?\d+'::bigint\) AND \(key > ''::text\)/, atPlan);
      } finally {
        await client.query('RESET enable_seqscan; RESET enable_bitmapscan; RESET plan_cache_mode; DEALLOCATE ALL');
        client.release();
      }
    }));

  void it('reads a window\'s failures as an index-only range of cur_since, which an open builds where a schema lacks it, and logs it', async () => {
    const schema = fresh();
    const at = (s: number): string => new Date(Date.UTC(2025, 0, 1) + s * 1000).toISOString().replace('.000Z', 'Z');
    let store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema });
    for (let i = 0; i < 30; i++) {
      await store.create(sampleEvent(`ns-${i % 3}`, `e-${i}`, { firstTimestamp: at(i * 10), lastTimestamp: at(i * 10 + 5), ...(i % 5 === 0 ? { type: 'Warning', reason: 'BackOff' } : {}) }));
    }
    await store.close();
    // What a database built before cur_since has.
    await admin.query(`DROP INDEX ${schema}.cur_since`);
    const lines: string[] = [];
    const logger = { ...noopLogger, info: (msg: string) => lines.push(msg) };
    store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, logger });
    const window = { sinceMs: Date.parse(at(100)), untilMs: Date.parse(at(260)) };
    const failures = { types: ['warning'] };
    const names = async (limit?: number): Promise<string[]> => {
      const out: string[] = [];
      let startKey: string | undefined;
      do {
        const page = await store.list({ activeIn: window, anyOf: failures, ...(limit !== undefined ? { limit } : {}), ...(startKey !== undefined ? { startKey } : {}) });
        out.push(...page.items.map((e) => e.metadata.name!));
        startKey = page.lastKey;
      } while (startKey !== undefined);
      return out;
    };
    assert.deepEqual(await names(), ['e-15', 'e-10', 'e-25', 'e-20']);
    assert.deepEqual(await names(1), ['e-15', 'e-10', 'e-25', 'e-20'], 'pages of 1');
    assert.deepEqual(lines.filter((l) => /when current ones last happened/.test(l)).length, 2, lines.join('\n'));
    const client = await admin.connect();
    const q = new ListQueries(schema).pageSince({ at: undefined, high: 'ns-10', fieldEquals: { reason: 'BackOff' }, anyOf: failures, activeIn: window }, 'ns-0/', 10)!;
    await client.query('SET enable_seqscan = off; SET enable_bitmapscan = off');
    const plan = (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${q.text}`, q.values)).rows.map((r) => r['QUERY PLAN']).join('\n');
    await client.query('RESET enable_seqscan; RESET enable_bitmapscan');
    assert.match(plan, /Index Only Scan using cur_since/, plan);
    assert.match(plan, /Index Cond: \(+COALESCE\(NULLIF\(last_ms/, plan);
    // The window's rows are chosen once for the pages of a read, on the index alone; the pages read theirs by revision.
    const keys = new ListQueries(schema).sinceKeys({ at: undefined, high: undefined, fieldEquals: {}, anyOf: failures, activeIn: window }, '')!;
    const objects = new ListQueries(schema).objects([1, 2]);
    const plans: string[] = [];
    for (const q of [keys, objects]) {
      await client.query('SET enable_seqscan = off; SET enable_bitmapscan = off');
      plans.push((await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${q.text}`, q.values)).rows.map((r) => r['QUERY PLAN']).join('\n'));
      await client.query('RESET enable_seqscan; RESET enable_bitmapscan');
    }
    client.release();
    assert.match(plans[0]!, /Index Only Scan using cur_since/, plans[0]);
    assert.match(plans[1]!, /Index Scan using versions_pkey on versions v .*\n\s+Index Cond: \(rv = ANY/, plans[1]);
    // A write between two pages of a read: the rows are chosen again, as a page read alone would choose them.
    const first = await store.list({ activeIn: window, anyOf: failures, limit: 1 });
    assert.deepEqual(first.items.map((e) => e.metadata.name), ['e-15']);
    await store.create(sampleEvent('ns-1', 'e-11', { type: 'Warning', firstTimestamp: at(200), lastTimestamp: at(205) }));
    await store.delete('ns-2', 'e-20');
    const rest: string[] = [];
    for (let startKey = first.lastKey; startKey !== undefined; ) {
      const page = await store.list({ activeIn: window, anyOf: failures, limit: 1, startKey });
      rest.push(...page.items.map((e) => e.metadata.name!));
      startKey = page.lastKey;
    }
    assert.deepEqual(rest, ['e-10', 'e-11', 'e-25']);
    assert.equal(new ListQueries(schema).pageSince({ at: undefined, high: undefined, fieldEquals: {}, anyOf: failures, activeIn: { ...window, alwaysReasons: ['Scheduled'] } }, '', 10), undefined, 'a reason kept whenever is no range of time');
    assert.equal(new ListQueries(schema).pageSince({ at: 5, high: undefined, fieldEquals: {}, anyOf: failures, activeIn: window }, '', 10), undefined, 'a snapshot reads history too');
    await store.close();
    await drop(schema);
  });

  void it('bounds an anyOf list by its window\'s start in SQL, keeping what the window keeps: no time, and the reasons kept whenever', async () => {
    const schema = fresh();
    const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema });
    const at = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');
    const T = Date.UTC(2026, 0, 1);
    const warning = (name: string, extra: Partial<CoreEvent>): CoreEvent => sampleEvent('default', name, { type: 'Warning', reason: 'BackOff', ...extra });
    for (const e of [
      warning('old', { firstTimestamp: at(T - 7_200_000), lastTimestamp: at(T - 3_600_000) }),
      warning('ending-in', { firstTimestamp: at(T - 7_200_000), lastTimestamp: at(T + 60_000) }),
      warning('in', { firstTimestamp: at(T + 60_000), lastTimestamp: at(T + 60_000) }),
      warning('no-time', {}),
      warning('event-time', { eventTime: `${at(T + 120_000).slice(0, -1)}.000000Z` }),
      sampleEvent('default', 'scheduled-old', { reason: 'Scheduled', involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' }, firstTimestamp: at(T - 86_400_000), lastTimestamp: at(T - 86_400_000) }),
      sampleEvent('default', 'normal-in', { firstTimestamp: at(T + 60_000), lastTimestamp: at(T + 60_000) }),
    ]) {
      await store.create(e);
    }
    const activeIn = { sinceMs: T, untilMs: T + 3_600_000, alwaysReasons: ['Scheduled'] };
    const anyOf = { types: ['Warning'], reasons: ['Scheduled'] };
    const names = (items: CoreEvent[]): string[] => items.map((e) => e.metadata.name!).sort();
    const bounded = await store.list({ anyOf, activeIn });
    assert.deepEqual(names(bounded.items), ['ending-in', 'event-time', 'in', 'no-time', 'scheduled-old']);
    // The same as the window and anyOf tested on every decoded event.
    const all = await store.list({});
    assert.deepEqual(names(bounded.items), names(all.items.filter((e) => matchesFilter(e, { anyOf, activeIn }))));
    await store.close();
    await drop(schema);
  });

  void it('archive batches through two replicas: each sees the other\'s occurrences and checkpoints, and a key written through the other is decided against', async () => {
    const schema = fresh();
    const [a, b] = [0, 1].map(() => new PostgresEventStore({ connectionString: POSTGRES_URL, schema, poolSize: 4 }));
    const bump = (name: string): ArchiveWrite => ({
      namespace: 'ns',
      name,
      decide: (cur) => {
        const count = (cur?.count ?? 0) + 1;
        return { action: 'write', object: sampleEvent('ns', name, { count }), occurrence: { countBefore: count - 1, countAfter: count } };
      },
    });
    // Concurrent batches over the same keys from two replicas: each decision sees the other's committed writes, none is lost.
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a! : b!).applyArchiveBatch({ writes: [bump('x'), bump('y')], checkpoint: { source: `s${i % 2}`, resourceVersion: String(i) }, stamp: {} })),
    );
    assert.equal((await a!.get('ns', 'x')).count, 20);
    assert.equal((await b!.get('ns', 'y')).count, 20);
    const occ = (await b!.listOccurrences({ fieldEquals: { 'event.name': 'x' } })).items;
    assert.deepEqual(occ.map((o) => o.countAfter).sort((p, q) => p - q), Array.from({ length: 20 }, (_, i) => i + 1));
    await a!.applyArchiveBatch({ writes: [], checkpoint: { source: 's0', resourceVersion: '99' }, stamp: {} });
    assert.equal((await b!.getCheckpoint('s0'))?.resourceVersion, '99');
    await Promise.all([a!.close(), b!.close()]);
    await drop(schema);
  });

  void it('two stores over one schema: writes through either reach the watchers of both, in revision order, with the same revisions', async () => {
    const schema = fresh();
    const [a, b] = [0, 1].map(() => new PostgresEventStore({ connectionString: POSTGRES_URL, schema, poolSize: 4 }));
    await Promise.all([a!.ready(), b!.ready()]);
    const wa = a!.watch({});
    const wb = b!.watch({});
    const writes: Promise<CoreEvent>[] = [];
    for (let i = 0; i < 200; i++) writes.push((i % 2 === 0 ? a! : b!).create(sampleEvent('default', `e${i}`)));
    const written = await Promise.all(writes);
    const expected = written.map((e) => Number(e.metadata.resourceVersion)).sort((x, y) => x - y);
    const seen = async (w: ReturnType<EventStore['watch']>): Promise<number[]> => {
      const out: number[] = [];
      for await (const e of w) {
        out.push(Number(e.object.metadata.resourceVersion));
        if (out.length === expected.length) break;
      }
      return out;
    };
    const [ra, rb] = await Promise.all([seen(wa), seen(wb)]);
    assert.deepEqual(ra, expected);
    assert.deepEqual(rb, expected);
    assert.deepEqual(expected, Array.from({ length: 200 }, (_, i) => expected[0]! + i), 'revisions have no gaps');
    await Promise.all([a!.close(), b!.close()]);
    await drop(schema);
  });

  void it('replays history older than the watch cache from SQL, with filters, then goes live', async () => {
    const schema = fresh();
    const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, watchCacheSize: 8 });
    const start = await store.currentResourceVersion();
    for (let i = 0; i < 3000; i++) {
      const e = sampleEvent(i % 2 === 0 ? 'a' : 'b', `e${i}`);
      await store.create(e);
    }
    const w = store.watch({ resourceVersion: start, namespace: 'a' });
    const it2 = w[Symbol.asyncIterator]();
    const got: string[] = [];
    while (got.length < 1500) {
      const r = await it2.next();
      assert.equal(r.done, false);
      got.push(r.value.object.metadata.name!);
    }
    assert.deepEqual(got, Array.from({ length: 1500 }, (_, i) => `e${2 * i}`));
    await store.create(sampleEvent('a', 'live'));
    const r = await it2.next();
    assert.equal(r.done, false);
    assert.equal(r.value.object.metadata.name, 'live');
    w.stop();
    await store.close();
    await drop(schema);
  });
});
