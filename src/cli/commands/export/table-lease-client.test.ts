import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLeaderElector } from '../../../cluster/index.js';
import type { LeaderElector } from '../../../cluster/index.js';
import type { LeaseTable } from '../../../storage/index.js';
import { PostgresEventStore, PostgresLeaseTable } from '../../../storage/postgres/index.js';
import { POSTGRES_URL, testSchemas } from '../../../../test/support/postgres.js';
import { tableLeaseClient } from './table-lease-client.js';

const { fresh } = testSchemas('kevents_table_lease');
const TIMINGS = { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 300 };

async function until(what: string, fn: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(50);
  }
}

void describe('tableLeaseClient', () => {
  void it("runs client-go's election over an archive's lease table: one leader, and the next one once it lets go", async () => {
    const schema = fresh();
    const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, poolSize: 4 });
    await store.ready();
    const tables = await Promise.all([0, 1, 2].map(() => PostgresLeaseTable.open({ connectionString: `${POSTGRES_URL}?schema=${schema}` })));
    const leading = new Set<number>();
    const campaigns = tables.map(() => new AbortController());
    const electors: LeaderElector[] = tables.map((t, i) =>
      createLeaderElector(
        { client: tableLeaseClient(t), namespace: 'kevents', name: 'kevents-export', identity: `replica-${i}`, ...TIMINGS, releaseOnCancel: true },
        { onStartedLeading: () => leading.add(i), onStoppedLeading: () => leading.delete(i) },
      ),
    );
    const runs = electors.map((e, i) => e.run(campaigns[i]!.signal));
    try {
      let overlap = 0;
      const watch = setInterval(() => (overlap = Math.max(overlap, leading.size)), 10);
      const leaders: number[] = [];
      for (let k = 0; k < 2; k++) {
        await until(`leader ${k + 1}`, () => leading.size === 1 && !leaders.includes([...leading][0]!));
        const leader = [...leading][0]!;
        leaders.push(leader);
        // The others still campaigning see it as the holder and stand by.
        await until('the others observe the leader', () => electors.every((e, i) => campaigns[i]!.signal.aborted || e.leader() === `replica-${leader}`));
        campaigns[leader]!.abort();
        await runs[leader];

      }
      clearInterval(watch);
      assert.equal(overlap, 1, 'never two leaders at once');
      await until('the third replica leads', () => leading.size === 1);
    } finally {
      for (const c of campaigns) c.abort();
      await Promise.all(runs);
      for (const t of tables) await t.close();
      await store.close();
    }
  });

  void it('gives up a request the database does not answer when the elector abandons it', async () => {
    const hanging: LeaseTable = { get: () => new Promise(() => {}), create: () => new Promise(() => {}), update: () => new Promise(() => {}), close: () => Promise.resolve() };
    const client = tableLeaseClient(hanging);
    const abandon = new AbortController();
    const got = client.get('kevents', 'x', abandon.signal);
    abandon.abort();
    await assert.rejects(got, /the database did not answer in time/);
  });
});
