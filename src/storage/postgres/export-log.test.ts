import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FakeClock } from '../../internal/index.js';
import { isStorageError } from '../errors.js';
import { runExportLogConformance, sampleEvent } from '../testing/index.js';
import { PostgresEventStore, PostgresExportLog } from './index.js';
import { POSTGRES_URL, testSchemas } from '../../../test/support/postgres.js';

const { admin, fresh, drop } = testSchemas('kevents_exportlog');

runExportLogConformance('postgres', {
  create: async () => {
    const schema = fresh();
    const open = async (): Promise<PostgresEventStore> => {
      const s = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, poolSize: 4 });
      await s.ready();
      return s;
    };
    const store = await open();
    const stores = [store];
    const logs: PostgresExportLog[] = [];
    return {
      store,
      // The schema rides in the URL, as `kevents export --from postgres://…?schema=` passes it.
      openLog: async (now) => {
        const log = await PostgresExportLog.open({ connectionString: `${POSTGRES_URL}?schema=${schema}`, now });
        logs.push(log);
        return log;
      },
      replica: async () => {
        const s = await open();
        stores.push(s);
        return s;
      },
      destroy: async () => {
        for (const l of logs) await l.close();
        for (const s of stores) await s.close();
        await drop(schema);
      },
    };
  },
});

void describe('PostgresExportLog', () => {
  void it('opens only a schema that holds an archive, and only a reachable server', async () => {
    const schema = fresh();
    await assert.rejects(
      PostgresExportLog.open({ connectionString: POSTGRES_URL, schema }),
      (e) => isStorageError(e, 'Unreachable') && /holds no archive \(start kevents serve/.test((e as Error).message),
    );
    const { rows } = await admin.query<{ t: string | null }>('SELECT to_regnamespace($1) AS t', [schema]);
    assert.equal(rows[0]?.t, null, 'a failed open creates nothing');
    await assert.rejects(PostgresExportLog.open({ connectionString: 'postgres://postgres@127.0.0.1:1/test', schema }), (e) => isStorageError(e, 'Unreachable'));
  });

  void it('adds its tables and index to an archive an earlier build set up', async () => {
    const schema = fresh();
    const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, poolSize: 2 });
    await store.create(sampleEvent('ns', 'a'), { occurrence: {} });
    await admin.query(`DROP TABLE ${schema}.export_positions, ${schema}.export_dead_letters; DROP INDEX ${schema}.occ_id`);
    const log = await PostgresExportLog.open({ connectionString: POSTGRES_URL, schema });
    assert.equal((await log.read(0, 10)).length, 1);
    await log.commit('s', { position: 1 });
    const { rows } = await admin.query<{ n: string }>(`SELECT count(*) AS n FROM pg_indexes WHERE schemaname = $1 AND indexname = 'occ_id'`, [schema]);
    assert.equal(Number(rows[0]?.n), 1);
    // The store's own setup leaves them as they are.
    const again = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, poolSize: 2 });
    await again.ready();
    assert.equal((await log.getPosition('s'))?.position, 1);
    await again.close();
    await log.close();
    await store.close();
    await drop(schema);
  });

  void it('reads a change whose version left the watch history with the fields its occurrence carries, and the live version of a later one', async () => {
    const schema = fresh();
    const clock = new FakeClock();
    const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, poolSize: 2, clock, historyWindowSeconds: 60, compactIntervalMs: 1_000 });
    const labels = { metadata: { namespace: 'ns', name: 'a', uid: 'uid-ns-a', labels: { team: 'x' } } };
    await store.create(sampleEvent('ns', 'a', { ...labels, count: 1 }), { occurrence: {} });
    await store.guaranteedUpdate('ns', 'a', (cur) => ({ ...cur!, count: 2, message: 'again' }), { occurrence: {} });
    const log = await PostgresExportLog.open({ connectionString: POSTGRES_URL, schema });
    assert.deepEqual((await log.read(0, 10)).map((c) => c.event?.metadata.labels), [{ team: 'x' }, { team: 'x' }]);
    await clock.advance(65_000);
    assert.ok((await store.oldestResourceVersion()) >= 2, 'the first version left the history');
    // The purge that follows compaction runs on its own; wait for the superseded version to go.
    const deadline = Date.now() + 20_000;
    let changes = await log.read(0, 10);
    while (changes[0]?.event !== undefined) {
      assert.ok(Date.now() < deadline, 'the superseded version is purged');
      await sleep(50);
      changes = await log.read(0, 10);
    }
    const [old, live] = changes;
    assert.equal(old!.id, 1);
    assert.deepEqual([old!.occurrence.event.uid, old!.occurrence.regarding.name, old!.occurrence.reason, old!.occurrence.countAfter], ['uid-ns-a', 'pod-a', 'Started', 1]);
    assert.equal(live!.event?.message, 'again', 'the current version stays');
    assert.deepEqual(live!.event?.metadata.labels, { team: 'x' });
    await log.close();
    await store.close();
    await drop(schema);
  });
});
