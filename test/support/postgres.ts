import { after } from 'node:test';
import pg from 'pg';
import { decodeObject } from '../../src/storage/shared/object-codec.js';

/** POSTGRES_URL is the test database: the machine's PostgreSQL (scripts/setup.mjs) unless KEVENTS_TEST_POSTGRES says otherwise. */
export const POSTGRES_URL = process.env.KEVENTS_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:55432/test';

/**
 * unpackRows stores the packed rows of a schema (`src/storage/postgres/packed-rows.ts`) as text, as a build before
 * schema 6 stored them, for the tests that make a schema of an earlier version out of one this build wrote.
 */
export async function unpackRows(admin: pg.Pool, schema: string): Promise<void> {
  for (const [table, key, text, packed] of [['versions', 'rv', 'object', 'object_z'], ['occurrences', 'id', 'body', 'body_z']] as const) {
    const { rows } = await admin.query<{ k: string; z: Buffer }>(`SELECT ${key} AS k, ${packed} AS z FROM ${schema}.${table} WHERE ${packed} IS NOT NULL`);
    for (const r of rows) await admin.query(`UPDATE ${schema}.${table} SET ${text} = $2, ${packed} = NULL WHERE ${key} = $1`, [r.k, decodeObject(r.z)]);
  }
}

/** TestSchemas hands out schema names no other test uses, and drops them. */
export interface TestSchemas {
  /** admin is a pool for the tests' own queries (and the drops). */
  admin: pg.Pool;
  fresh: () => string;
  drop: (schema: string) => Promise<void>;
}

/**
 * testSchemas gives one test file fresh schemas named `PREFIX_PID_N` in the
 * test database; whatever the tests did not drop themselves is dropped after
 * the file's tests, and the pool is closed.
 */
export function testSchemas(prefix: string): TestSchemas {
  const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
  const made = new Set<string>();
  let n = 0;
  const drop = async (schema: string): Promise<void> => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    made.delete(schema);
  };
  after(async () => {
    for (const s of made) await drop(s);
    await admin.end();
  });
  return {
    admin,
    drop,
    fresh: () => {
      const s = `${prefix}_${process.pid}_${n++}`;
      made.add(s);
      return s;
    },
  };
}
