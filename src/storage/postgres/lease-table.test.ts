import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isStorageError } from '../errors.js';
import { PostgresEventStore, PostgresLeaseTable } from './index.js';
import { POSTGRES_URL, testSchemas } from '../../../test/support/postgres.js';

const { fresh } = testSchemas('kevents_leases');

async function archive(): Promise<{ schema: string; table: PostgresLeaseTable; close: () => Promise<void> }> {
  const schema = fresh();
  const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, poolSize: 4 });
  await store.ready();
  const table = await PostgresLeaseTable.open({ connectionString: `${POSTGRES_URL}?schema=${schema}` });
  return {
    schema,
    table,
    close: async () => {
      await table.close();
      await store.close();
    },
  };
}

void describe('PostgresLeaseTable', () => {
  void it('opens only a schema that holds an archive', async () => {
    await assert.rejects(
      PostgresLeaseTable.open({ connectionString: POSTGRES_URL, schema: fresh() }),
      (e) => isStorageError(e, 'Unreachable') && /cannot open the leases of the archive in schema .*: schema .* holds no archive/.test((e as Error).message),
    );
  });

  void it('creates a lease once, and updates it only from the version last read', async () => {
    const a = await archive();
    try {
      assert.equal(await a.table.get('kevents', 'x'), undefined);
      const created = await a.table.create({ namespace: 'kevents', name: 'x', spec: { holderIdentity: 'one', leaseTransitions: 0 } });
      assert.deepEqual(created.spec, { holderIdentity: 'one', leaseTransitions: 0 });
      await assert.rejects(a.table.create({ namespace: 'kevents', name: 'x', spec: { holderIdentity: 'two' } }), (e) => isStorageError(e, 'KeyExists'));
      const renewed = await a.table.update({ ...created, spec: { holderIdentity: 'one', leaseTransitions: 0, renewTime: 't1' } });
      assert.notEqual(renewed.version, created.version);
      // A candidate that read the lease before the renewal loses the compare-and-swap.
      await assert.rejects(a.table.update({ ...created, spec: { holderIdentity: 'two', leaseTransitions: 1 } }), (e) => isStorageError(e, 'ResourceVersionConflicts'));
      assert.deepEqual((await a.table.get('kevents', 'x'))?.spec, renewed.spec);
      // Another name, or namespace, is another lease.
      await a.table.create({ namespace: 'other', name: 'x', spec: {} });
      assert.equal((await a.table.get('kevents', 'x'))?.spec.holderIdentity, 'one');
    } finally {
      await a.close();
    }
  });

  void it('lets exactly one of many candidates win each round of compare-and-swap', async () => {
    const a = await archive();
    const tables = await Promise.all(Array.from({ length: 6 }, () => PostgresLeaseTable.open({ connectionString: `${POSTGRES_URL}?schema=${a.schema}` })));
    try {
      const base = await a.table.create({ namespace: 'kevents', name: 'race', spec: { holderIdentity: '' } });
      for (let round = 0; round < 5; round++) {
        const current = (await a.table.get('kevents', 'race'))!;
        const outcomes = await Promise.allSettled(tables.map((t, i) => t.update({ ...current, spec: { holderIdentity: `c${i}`, round } })));
        assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1, `round ${round}: one winner`);
      }
      assert.notEqual((await a.table.get('kevents', 'race'))?.version, base.version);
    } finally {
      for (const t of tables) await t.close();
      await a.close();
    }
  });
});
