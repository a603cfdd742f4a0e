import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { legacyEvent, request } from './support/http.js';
import { stopMirror, waitForMirror, waitForReadinessBanner } from './support/mirror-process.js';
import type { MirrorProcess } from './support/mirror-process.js';
import { startOwnPostgres } from './support/own-postgres.js';
import type { OwnPostgres } from './support/own-postgres.js';
import { CLI, startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { until } from './support/wait.js';

/**
 * The archive's database password never in a process's argv: `kevents serve`,
 * `kevents mirror` and `kevents export` log in to a PostgreSQL server that asks
 * their role for its password (SCRAM), given by --storage-password-file, by
 * PGPASSWORD or by a PGPASSFILE entry, and what /proc/PID/cmdline of each
 * process holds is checked for it. The server is the test's own: the shared
 * test server trusts every loopback login, so a wrong password would pass there.
 */

const ROLE = 'kevents_archiver';
// URL syntax and a space in it: what reaches the driver must be the password as written.
const PASSWORD = `pw ${randomBytes(9).toString('base64url')}@:/%41`;
const CORE = '/api/v1/namespaces/default/events';

const cmdline = (pid: number | undefined): string => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');

async function createAndList(base: string, name: string): Promise<void> {
  const r = await request(base, 'POST', CORE, legacyEvent({ name, object: `web-${name}`, reason: 'BackOff', message: 'Back-off restarting failed container', type: 'Warning', firstAgo: 5, lastAgo: 5 }));
  assert.equal(r.status, 201, r.text);
  const list = await request(base, 'GET', CORE);
  assert.equal(list.status, 200, list.text);
  assert.ok((list.json.items as { metadata: { name: string } }[]).some((e) => e.metadata.name === name), list.text);
}

void describe('the PostgreSQL password, kept out of argv', { timeout: 180_000 }, () => {
  let db: OwnPostgres;
  let url: string;
  const dir = mkdtempSync(join(tmpdir(), 'kevents-pg-password-'));
  const passwordFile = join(dir, 'password');
  // No ~/.pgpass of the machine's user answers for the role unless a case says so.
  const noPgpass = { PGPASSFILE: join(dir, 'no-pgpass'), PGPASSWORD: undefined };
  const servers: ServerProcess[] = [];
  const mirrors: MirrorProcess[] = [];

  before(async () => {
    // The superuser logs in as before; every other role must give its password.
    db = await startOwnPostgres({ hba: 'local all postgres trust\nhost all postgres 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n' });
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASSWORD.replace(/'/g, "''")}'`);
      await admin.query(`CREATE DATABASE archive OWNER ${ROLE}`);
    } finally {
      await admin.end();
    }
    const port = new URL(db.url).port;
    url = `postgres://${ROLE}@127.0.0.1:${port}/archive`;
    // As a Secret mounted in a pod holds it when made with --from-file of `echo PASSWORD > file`.
    writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  });
  after(async () => {
    for (const m of mirrors) await stopMirror(m, 'SIGKILL');
    for (const s of servers) await s.stop('SIGKILL');
    await db?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const serve = async (args: string[], env: NodeJS.ProcessEnv): Promise<ServerProcess> => {
    const s = await startServer(['--storage', url, ...args], { ...noPgpass, ...env });
    servers.push(s);
    return s;
  };

  void it('without a password the role cannot log in (the server checks it): one line says how to give it', async () => {
    await assert.rejects(serve([], {}), (e: Error) => {
      assert.match(e.message, /kevents serve exited with 1: /);
      assert.match(e.message, /the database asks for a password: give it with --storage-password-file FILE, PGPASSWORD or a PGPASSFILE \(~\/\.pgpass\) entry\)\n$/);
      assert.doesNotMatch(e.message, /internal error|\n {4}at /);
      return true;
    });
    const wrong = join(dir, 'wrong');
    writeFileSync(wrong, 'not the password\n');
    await assert.rejects(serve(['--storage-password-file', wrong], {}), /exited with 1: .*password authentication failed for user "kevents_archiver"/s);
  });

  void it('kevents serve --storage-password-file: the password is in no argument, and the server creates and lists', async () => {
    const s = await serve(['--storage-password-file', passwordFile], {});
    assert.ok(!cmdline(s.child.pid).includes(PASSWORD), cmdline(s.child.pid));
    assert.match(cmdline(s.child.pid), /--storage postgres:\/\/kevents_archiver@127\.0\.0\.1:\d+\/archive --storage-password-file /);
    await createAndList(s.url, 'from-file');
    assert.doesNotMatch(s.stderr(), /warning|password/i, s.stderr());
    await s.stop();
  });

  void it('kevents serve with PGPASSWORD: the password is in no argument, and the server creates and lists', async () => {
    const s = await serve([], { PGPASSWORD: PASSWORD });
    assert.ok(!cmdline(s.child.pid).includes(PASSWORD), cmdline(s.child.pid));
    await createAndList(s.url, 'from-env');
    await s.stop();
  });

  void it('kevents serve with a PGPASSFILE entry (the driver reads it, as libpq does)', async () => {
    const pgpass = join(dir, 'pgpass');
    const escaped = PASSWORD.replace(/\\/g, '\\\\').replace(/:/g, '\\:');
    writeFileSync(pgpass, `# host:port:database:user:password\n127.0.0.1:${new URL(url).port}:archive:${ROLE}:${escaped}\n`, { mode: 0o600 });
    const s = await serve([], { PGPASSFILE: pgpass });
    assert.ok(!cmdline(s.child.pid).includes(PASSWORD), cmdline(s.child.pid));
    await createAndList(s.url, 'from-pgpass');
    await s.stop();
  });

  void it('a password in the URL still works, with a one-line warning that names the safer ways', async () => {
    const withPassword = new URL(url);
    withPassword.password = encodeURIComponent(PASSWORD);
    const s = await startServer(['--storage', withPassword.href], noPgpass);
    servers.push(s);
    await createAndList(s.url, 'from-url');
    const warnings = s.stderr().split('\n').filter((l) => /visible in process listings/.test(l));
    assert.deepEqual(warnings, [
      'warning: the password in the --storage URL is visible in process listings; give it with --storage-password-file FILE, PGPASSWORD or a PGPASSFILE (~/.pgpass) entry instead',
    ]);
    await s.stop();
  });

  void it('kevents mirror --storage-password-file archives into the database, and kevents export reads it, the password in neither argv', async () => {
    const source = await startServer(['--storage', 'memory:']);
    servers.push(source);
    await createAndList(source.url, 'mirrored');
    const spawnCli = (args: string[]): ReturnType<typeof spawn> =>
      spawn(process.execPath, ['--enable-source-maps', CLI, ...args, '--storage-password-file', passwordFile, '--listen', '127.0.0.1:0'], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, ...noPgpass },
      });
    const m = await waitForMirror(spawnCli(['mirror', '--source', source.url, '--to', url, '--cluster', 'lab']));
    mirrors.push(m);
    assert.ok(!cmdline(m.child.pid).includes(PASSWORD), cmdline(m.child.pid));
    const reader = await serve(['--storage-password-file', passwordFile], {});
    await until('the mirror archived the event', async () => {
      const r = await request(reader.url, 'GET', `${CORE}/mirrored`);
      return r.status === 200;
    });
    const e = await waitForReadinessBanner(spawnCli(['export', '--from', url, '--event-metrics']), 'kevents export');
    mirrors.push(e);
    assert.ok(!cmdline(e.child.pid).includes(PASSWORD), cmdline(e.child.pid));
    assert.equal((await fetch(`${e.metricsUrl}/readyz`)).status, 200);
    assert.doesNotMatch(m.output() + e.output(), /visible in process listings/);
  });
});
