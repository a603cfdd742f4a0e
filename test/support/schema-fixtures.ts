/**
 * The archives the migration case of the search conformance suite opens: the
 * suite's archive (`writeSearchArchive`) as each schema version of each
 * persistent backend stored it, in test/fixtures/archive/: `sqlite-vN.db` (the
 * file) and `postgres-vN.sql` (pg_dump of the schema, its name written
 * SCHEMA_PLACEHOLDER). A backend's case opens the fixture of the version before
 * its SCHEMA_VERSION, so that a new version is tested against the archives of
 * the one it replaces without anything to write: the current version's
 * fixtures are recorded while it is current.
 *
 * Record the current version's fixtures (PostgreSQL on POSTGRES_URL, pg_dump on the PATH):
 *   node --import tsx test/support/schema-fixtures.ts   (`--only=postgres` or `--only=sqlite`: one backend's)
 * `--before-search` records instead the layouts before the search index (SQLite schema 5,
 * PostgreSQL 3), which differed from 6 and 4 only by the index: how sqlite-v5.db and
 * postgres-v3.sql were made.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { FakeClock } from '../../src/internal/index.js';
import { writeSearchArchive } from '../../src/storage/testing/index.js';
import { PostgresEventStore } from '../../src/storage/postgres/index.js';
import { SCHEMA_VERSION as PG_SCHEMA_VERSION } from '../../src/storage/postgres/schema.js';
import { SqliteEventStore } from '../../src/storage/sqlite/index.js';
import { SCHEMA_VERSION as SQLITE_SCHEMA_VERSION } from '../../src/storage/sqlite/schema.js';
import { POSTGRES_URL } from './postgres.js';

/** FIXTURES_DIR holds the recorded archives. */
export const FIXTURES_DIR = fileURLToPath(new URL('../fixtures/archive/', import.meta.url));

/** SCHEMA_PLACEHOLDER stands for the schema's name in a PostgreSQL fixture. */
export const SCHEMA_PLACEHOLDER = 'kevents_schema_fixture';

/**
 * previousFixture is the path of a backend's newest fixture older than
 * `current`: the version before it when that one was recorded while current,
 * else the newest before it that was. It throws, saying how to record one,
 * when there is none.
 */
export function previousFixture(backend: 'sqlite' | 'postgres', current: number): string {
  const ext = backend === 'sqlite' ? 'db' : 'sql';
  for (let v = current - 1; v > 0; v--) {
    const path = join(FIXTURES_DIR, `${backend}-v${v}.${ext}`);
    if (existsSync(path)) return path;
  }
  throw new Error(`no ${backend} archive of a schema before ${current} in ${FIXTURES_DIR}: record one with the build of that version (test/support/schema-fixtures.ts)`);
}

/** UNINDEXED_VERSION is each backend's last schema version before the search index. */
export const UNINDEXED_VERSION = { sqlite: 5, postgres: 3 } as const;

/** fixture is the path of a backend's fixture: the newest older than `current` (`previous`), or of the last version before the search index. */
export function fixture(backend: 'sqlite' | 'postgres', current: number, which: 'previous' | 'unindexed'): string {
  if (which === 'previous') return previousFixture(backend, current);
  return join(FIXTURES_DIR, `${backend}-v${UNINDEXED_VERSION[backend]}.${backend === 'sqlite' ? 'db' : 'sql'}`);
}

/** loadPostgresFixture creates `schema` from a PostgreSQL fixture, on one connection of `pool`. */
export async function loadPostgresFixture(pool: pg.Pool, fixture: string, schema: string): Promise<void> {
  const sql = readFileSync(fixture, 'utf8').replaceAll(SCHEMA_PLACEHOLDER, schema);
  const client = await pool.connect();
  try {
    await client.query(sql);
  } finally {
    client.release();
  }
}

async function recordSqlite(dir: string, beforeSearch: boolean): Promise<void> {
  const path = join(dir, 'archive.db');
  const store = new SqliteEventStore({ path, clock: new FakeClock() });
  await writeSearchArchive(store, new FakeClock().now());
  await store.close();
  const db = new Database(path);
  let version = SQLITE_SCHEMA_VERSION;
  if (beforeSearch) {
    db.exec('DROP TRIGGER search_add; DROP TRIGGER search_drop; DROP TABLE search_fts; DROP TABLE search_docs');
    version = UNINDEXED_VERSION.sqlite;
    db.prepare("UPDATE meta SET value = ? WHERE name = 'schema'").run(version);
  }
  db.pragma('journal_mode = DELETE');
  db.exec('VACUUM');
  db.close();
  copyFileSync(path, join(FIXTURES_DIR, `sqlite-v${version}.db`));
  console.log(`sqlite-v${version}.db`);
}

async function recordPostgres(beforeSearch: boolean): Promise<void> {
  const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
  const s = SCHEMA_PLACEHOLDER;
  try {
    await admin.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
    const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema: s, clock: new FakeClock() });
    await writeSearchArchive(store, new FakeClock().now());
    await store.close();
    let version = PG_SCHEMA_VERSION;
    if (beforeSearch) {
      version = UNINDEXED_VERSION.postgres;
      await admin.query(`DROP INDEX ${s}.search_words, ${s}.search_time; ALTER TABLE ${s}.versions DROP COLUMN search, DROP COLUMN last_ms; UPDATE ${s}.meta SET value = ${version} WHERE name = 'schema'`);
    }
    const url = new URL(POSTGRES_URL);
    const dump = execFileSync('pg_dump', ['--schema', s, '--inserts', '--no-owner', '--no-privileges', '--no-comments', url.toString()], { encoding: 'utf8' });
    // The fixture loads on a pooled connection as one simple query: no psql meta-command (\restrict), and the session's search_path left as it was.
    const sql = dump.replace(/^SELECT pg_catalog\.set_config\('search_path'.*\n/m, '').replace(/^\\.*\n/gm, '');
    writeFileSync(join(FIXTURES_DIR, `postgres-v${version}.sql`), sql);
    console.log(`postgres-v${version}.sql`);
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`).catch(() => undefined);
    await admin.end();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const beforeSearch = process.argv.includes('--before-search');
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
  const dir = mkdtempSync(join(tmpdir(), 'kevents-fixtures-'));
  try {
    if (only !== 'postgres') await recordSqlite(dir, beforeSearch);
    if (only !== 'sqlite') await recordPostgres(beforeSearch);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
