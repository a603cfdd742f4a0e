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

/** keyColumns is how many key columns each search order index of `schema` holds. */
async function keyColumns(schema: string): Promise<Record<string, number>> {
  const { rows } = await admin.query<{ name: string; keys: number }>(
    `SELECT c.relname AS name, i.indnkeyatts AS keys FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relname IN ('search_time', 'search_reason') ORDER BY 1`,
    [schema],
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.keys]));
}

/** asSchema6 gives a schema the search order indexes a build of schema 6 left: each with the key after the time, newest first. */
async function asSchema6(schema: string): Promise<void> {
  await admin.query(
    `DROP INDEX ${schema}.search_time, ${schema}.search_reason;
     CREATE INDEX search_time ON ${schema}.versions (last_ms DESC, key) WHERE op <> 3;
     CREATE INDEX search_reason ON ${schema}.versions ((${REASON_KEY}), last_ms DESC, key) WHERE op <> 3;
     UPDATE ${schema}.meta SET value = 6 WHERE name = 'schema'`,
  );
}

/** fill writes events whose last times tie within a millisecond, so the key orders them, and what a search of them answers. */
async function fill(schema: string, clock: FakeClock): Promise<(s: PostgresEventStore) => Promise<string>> {
  const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, clock });
  try {
    for (let i = 0; i < 12; i++) {
      await store.create(sampleEvent(`ns-${i % 3}`, `e-${(i * 7) % 12}`, { reason: i % 2 === 0 ? 'BackOff' : 'Pulled', message: `needle ${i}` }), { occurrence: {} });
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
  assert.deepEqual(await keyColumns(schema), { search_reason: 3, search_time: 2 });
  return { schema, clock, reads, before };
}

test('a schema 6 archive gets its search order indexes without the key on open, says so, and every search answers as before', async () => {
  const { schema, clock, reads, before } = await schema6Archive();
  const lines: string[] = [];
  const logger = { ...noopLogger, info: (msg: string, fields?: Record<string, unknown>) => lines.push(`${msg} ${JSON.stringify(fields)}`) };
  const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, clock, logger });
  try {
    assert.equal(await reads(store), before);
    assert.deepEqual(await keyColumns(schema), { search_reason: 2, search_time: 1 });
    assert.deepEqual(
      lines.map((l) => l.replace(/"seconds":[\d.]+/, '"seconds":S')),
      [
        `rebuilding the index search_time in its smaller form (once, in place) {"schema":"${schema}","keys":"2 → 1"}`,
        'indexing the versions by time {"versions":12}',
        'the versions are indexed by time {"versions":12,"seconds":S}',
        `rebuilding the index search_reason in its smaller form (once, in place) {"schema":"${schema}","keys":"3 → 2"}`,
        'indexing the versions by reason and time {"versions":12}',
        'the versions are indexed by reason and time {"versions":12,"seconds":S}',
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
  assert.deepEqual(await keyColumns(schema), { search_reason: 3, search_time: 2 }, 'the old indexes, whole');
  const [v] = (await admin.query<{ value: string }>(`SELECT value FROM ${schema}.meta WHERE name = 'schema'`)).rows;
  assert.equal(v!.value, '6');
  const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, clock });
  try {
    assert.equal(await reads(store), before);
    assert.deepEqual(await keyColumns(schema), { search_reason: 2, search_time: 1 });
  } finally {
    await store.close();
    await drop(schema);
  }
});
