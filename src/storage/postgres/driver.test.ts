import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createPool, pgFailure } from './driver.js';
import { POSTGRES_URL } from '../../../test/support/postgres.js';

void describe('createPool', () => {
  void it('survives a connection that drops while checked out between two queries, and the next query says Unreachable', async () => {
    const pool = await createPool(POSTGRES_URL, 2, () => undefined);
    const admin = await createPool(POSTGRES_URL, 1, () => undefined);
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown): void => {
      uncaught.push(e);
    };
    process.on('uncaughtException', onUncaught);
    try {
      const held = await pool.connect();
      const { rows } = await held.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      // The server ends the held connection while no query of its holder runs (as a restart of the server does).
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.deepEqual(uncaught, []);
      const next = await held.query('SELECT 1').then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(next !== undefined, 'a query on the dropped connection fails');
      assert.equal(pgFailure(next).code, 'Unreachable', pgFailure(next).message);
      held.release(true);
      // The pool goes on with a new connection.
      assert.equal((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one, 1);
    } finally {
      process.off('uncaughtException', onUncaught);
      await pool.end();
      await admin.end();
    }
  });
});
