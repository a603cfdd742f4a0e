import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSearchQuery } from '../../api/index.js';
import { FakeClock, noopLogger } from '../../internal/index.js';
import { sampleEvent } from '../testing/index.js';
import { PostgresEventStore } from './index.js';
import type { PgClient } from './options.js';
import { SCHEMA_VERSION, applySchema } from './schema.js';
import { REASON_KEY } from './search-index.js';
import { writeFunctionSql } from './write-batch.js';
import { POSTGRES_URL, testSchemas } from '../../../test/support/postgres.js';

const { admin, fresh, drop } = testSchemas('kevents_build_index');

/** keyColumns is each rebuilt index of `schema` as PostgreSQL prints its definition, from its columns on. */
async function keyColumns(schema: string): Promise<Record<string, string>> {
  const { rows } = await admin.query<{ name: string; def: string }>(
    `SELECT c.relname AS name, pg_get_indexdef(c.oid) AS def FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relname IN ('cur_involved_name', 'hist_involved_name', 'search_time', 'search_reason', 'occ_regarding', 'occ_regarding_ns', 'occ_event') ORDER BY 1`,
    [schema],
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.def.replace(/^.* USING btree /, '').replace(/lower\(translate\(reason, [^)]*\)\)/, 'REASON_KEY')]));
}

const SCHEMA_6 = {
  cur_involved_name: '(involved_name, key) WHERE ((superseded_rv IS NULL) AND (op <> 3))',
  hist_involved_name: '(involved_name, key, rv) WHERE ((superseded_rv IS NOT NULL) AND (op <> 3))',
  occ_event: '(namespace, event_name, observed_us, id)',
  occ_regarding: '(regarding_name, observed_us, id)',
  occ_regarding_ns: '(regarding_name, namespace, observed_us, id)',
  search_reason: '(REASON_KEY, last_ms DESC, key) WHERE (op <> 3)',
  search_time: '(last_ms DESC, key) WHERE (op <> 3)',
};

const SCHEMA_7 = {
  cur_involved_name: '(hashtextextended(involved_name, (0)::bigint), key) WHERE ((superseded_rv IS NULL) AND (op <> 3))',
  hist_involved_name: '(hashtextextended(involved_name, (0)::bigint), key, rv) WHERE ((superseded_rv IS NOT NULL) AND (op <> 3))',
  occ_event: "(hashtextextended(((namespace || '/'::text) || event_name), (0)::bigint), observed_us, id)",
  occ_regarding: '(hashtextextended(regarding_name, (0)::bigint), observed_us, id)',
  occ_regarding_ns: "(hashtextextended(((regarding_name || '/'::text) || namespace), (0)::bigint), observed_us, id)",
  search_reason: '(REASON_KEY, last_ms) WHERE (op <> 3)',
  search_time: '(last_ms, key DESC) WHERE (op <> 3)',
};

/** asSchema6 gives a schema the indexes a build of schema 6 left: the search's with the key after the time, newest first, the occurrences' and the involved name's on the names. */
async function asSchema6(schema: string): Promise<void> {
  await admin.query(
    `DROP INDEX ${schema}.cur_involved_name, ${schema}.hist_involved_name;
     CREATE INDEX cur_involved_name ON ${schema}.versions (involved_name, key) WHERE superseded_rv IS NULL AND op <> 3;
     CREATE INDEX hist_involved_name ON ${schema}.versions (involved_name, key, rv) WHERE superseded_rv IS NOT NULL AND op <> 3;
     DROP INDEX ${schema}.search_time, ${schema}.search_reason, ${schema}.occ_regarding, ${schema}.occ_regarding_ns, ${schema}.occ_event;
     CREATE INDEX search_time ON ${schema}.versions (last_ms DESC, key) WHERE op <> 3;
     CREATE INDEX search_reason ON ${schema}.versions ((${REASON_KEY}), last_ms DESC, key) WHERE op <> 3;
     CREATE INDEX occ_regarding ON ${schema}.occurrences (regarding_name, observed_us, id);
     CREATE INDEX occ_regarding_ns ON ${schema}.occurrences (regarding_name, namespace, observed_us, id);
     CREATE INDEX occ_event ON ${schema}.occurrences (namespace, event_name, observed_us, id);
     UPDATE ${schema}.meta SET value = 6 WHERE name = 'schema'`,
  );
}

/** fill writes events whose last times tie within a millisecond, so the key orders them, and what a search of them answers. */
async function fill(schema: string, clock: FakeClock): Promise<(s: PostgresEventStore) => Promise<string>> {
  const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, clock });
  try {
    for (let i = 0; i < 12; i++) {
      const namespace = `ns-${i % 3}`;
      const over = { reason: i % 2 === 0 ? 'BackOff' : 'Pulled', message: `needle ${i}`, involvedObject: { kind: 'Pod', namespace, name: `web-${i % 2}` } };
      await store.create(sampleEvent(namespace, `e-${(i * 7) % 12}`, over), { occurrence: {} });
      if (i % 3 === 0) await store.guaranteedUpdate(namespace, `e-${(i * 7) % 12}`, (cur) => ({ ...cur!, count: 2 }), { occurrence: {} });
      if (i % 4 === 3) await clock.advance(1_000);
    }
  } finally {
    await store.close();
  }
  return async (s) => {
    const pages: unknown[] = [];
    for (const text of ['needle', 'reason:BackOff', 'reason:BackOff needle', '']) {
      // Pages of 2 walk the ties of one millisecond across their ends.
      let after: Awaited<ReturnType<PostgresEventStore['search']>>['next'];
      do {
        const page = await s.search({ query: parseSearchQuery(text, { nowMs: clock.now() }), limit: 2, ...(after !== undefined ? { after } : {}) });
        pages.push(page.items.map((h) => `${h.event.metadata.namespace}/${h.event.metadata.name}`));
        after = page.next;
      } while (after !== undefined);
    }
    // And the occurrences of an object, of an object in one namespace, of an event, of a search page's events.
    for (const q of [{ 'regarding.name': 'web-0' }, { 'regarding.name': 'web-1', 'metadata.namespace': 'ns-1' }, { 'metadata.namespace': 'ns-0', 'event.name': 'e-0' }]) {
      let after: Awaited<ReturnType<PostgresEventStore['listOccurrences']>>['next'];
      do {
        const page = await s.listOccurrences({ fieldEquals: q, limit: 2, ...(after !== undefined ? { after } : {}) });
        pages.push(page.items.map((o) => `${o.event.namespace}/${o.event.name}:${o.countAfter}`));
        after = page.next;
      } while (after !== undefined);
    }
    // And the lists of an object's events, now and at a revision before the updates (the history's index).
    for (const at of [undefined, 5]) {
      let startKey: string | undefined;
      do {
        const page = await s.list({ fieldEquals: { 'involvedObject.name': 'web-1' }, limit: 2, ...(at !== undefined ? { resourceVersion: at, match: 'Exact' as const } : {}), ...(startKey !== undefined ? { startKey } : {}) });
        pages.push(page.items.map((e) => `${e.metadata.namespace}/${e.metadata.name}:${e.count}`));
        startKey = page.lastKey;
      } while (startKey !== undefined);
    }
    pages.push((await s.listEventOccurrences({ events: [{ namespace: 'ns-0', name: 'e-0' }, { namespace: 'ns-1', name: 'e-7' }] })).map((os) => os.map((o) => o.countAfter)));
    return JSON.stringify(pages);
  };
}

/** schema6Archive is a fresh schema as a build of schema 6 left it after `fill`, with what its searches answered then. */
async function schema6Archive(): Promise<{ schema: string; clock: FakeClock; reads: (s: PostgresEventStore) => Promise<string>; before: string }> {
  const schema = fresh();
  const clock = new FakeClock(Date.UTC(2025, 0, 1));
  const reads = await fill(schema, clock);
  const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, clock });
  const before = await reads(store);
  await store.close();
  await asSchema6(schema);
  assert.deepEqual(await keyColumns(schema), SCHEMA_6);
  return { schema, clock, reads, before };
}

test('a schema 6 archive gets its search order indexes without the key on open, says so, and every search answers as before', async () => {
  const { schema, clock, reads, before } = await schema6Archive();
  const lines: string[] = [];
  const logger = { ...noopLogger, info: (msg: string, fields?: Record<string, unknown>) => lines.push(`${msg} ${JSON.stringify(fields)}`) };
  const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, clock, logger });
  try {
    assert.equal(await reads(store), before);
    assert.deepEqual(await keyColumns(schema), SCHEMA_7);
    assert.deepEqual(
      lines.map((l) => l.replace(/"seconds":[\d.]+/, '"seconds":S')),
      [
        ...([['cur_involved_name', 'involved_name (current)', 3], ['hist_involved_name', 'involved_name (replaced)', 4]] as const).flatMap(([name, by, n]) => [
          `rebuilding the index ${name} in its smaller form (once, in place) {"schema":"${schema}","keys":"${n - 1} → ${n - 1}"}`,
          `indexing the versions by ${by} {"versions":16}`,
          `the versions are indexed by ${by} {"versions":16,"seconds":S}`,
        ]),
        ...([['occ_regarding', 'object', 3, 3], ['occ_regarding_ns', 'object and namespace', 4, 3], ['occ_event', 'event', 4, 3]] as const).flatMap(([name, by, from, to]) => [
          `rebuilding the index ${name} in its smaller form (once, in place) {"schema":"${schema}","keys":"${from} → ${to}"}`,
          `indexing the occurrences by ${by} {"occurrences":16}`,
          `the occurrences are indexed by ${by} {"occurrences":16,"seconds":S}`,
        ]),
        ...([['search_time', 'time', 2, 2], ['search_reason', 'reason and time', 3, 2]] as const).flatMap(([name, by, from, to]) => [
          `rebuilding the index ${name} in its smaller form (once, in place) {"schema":"${schema}","keys":"${from} → ${to}"}`,
          `indexing the versions by ${by} {"versions":16}`,
          `the versions are indexed by ${by} {"versions":16,"seconds":S}`,
        ]),
      ],
    );
    const [v] = (await admin.query<{ value: string }>(`SELECT value FROM ${schema}.meta WHERE name = 'schema'`)).rows;
    assert.equal(Number(v!.value), SCHEMA_VERSION);
  } finally {
    await store.close();
    await drop(schema);
  }
});

test('a connection lost while the indexes are rebuilt leaves schema 6 whole, which the next open brings to 7', async () => {
  const { schema, clock, reads, before } = await schema6Archive();
  // The process dies after search_time is rebuilt, before search_reason is: its connection drops mid-transaction.
  const client = await admin.connect();
  const dying: PgClient = {
    query: ((text: string, values?: unknown[]) => {
      if (text.startsWith('CREATE INDEX search_reason')) {
        client.release(true);
        return Promise.reject(new Error('killed'));
      }
      return client.query(text, values);
    }) as PgClient['query'],
  } as PgClient;
  await assert.rejects(applySchema(dying, schema, writeFunctionSql(schema), noopLogger), /killed/);
  assert.deepEqual(await keyColumns(schema), SCHEMA_6, 'the old indexes, whole');
  const [v] = (await admin.query<{ value: string }>(`SELECT value FROM ${schema}.meta WHERE name = 'schema'`)).rows;
  assert.equal(v!.value, '6');
  const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, clock });
  try {
    assert.equal(await reads(store), before);
    assert.deepEqual(await keyColumns(schema), SCHEMA_7);
  } finally {
    await store.close();
    await drop(schema);
  }
});
