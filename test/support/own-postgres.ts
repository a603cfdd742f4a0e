import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from './ports.js';
import { sleep } from './wait.js';
import { alive } from './processes.js';

/**
 * OwnPostgres is a PostgreSQL server of one test's own, on its own data directory and loopback port,
 * that the test may crash: the shared test server (scripts/setup.mjs) serves other tests at the same time.
 */
export interface OwnPostgres {
  /** url is `postgres://postgres@127.0.0.1:PORT/postgres`. */
  url: string;
  /** pid is the postmaster's process id while it runs. */
  pid(): number;
  /** kill sends SIGKILL to the postmaster (a crash, not a shutdown) and waits until it is gone. */
  kill(): Promise<void>;
  /** restart starts the server again on its data directory (crash recovery) and waits until it takes queries. */
  restart(): Promise<void>;
  /** stop shuts the server down and removes its data directory. */
  stop(): Promise<void>;
  /** log is the server's log so far. */
  log(): string;
}

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** postgresBin finds the newest installed PostgreSQL's bin directory, as scripts/setup.mjs does. */
function postgresBin(): string {
  const base = '/usr/lib/postgresql';
  const majors = existsSync(base) ? readdirSync(base).filter((v) => existsSync(join(base, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a)) : [];
  if (majors[0] === undefined) throw new Error('PostgreSQL is not installed (apt-get install postgresql)');
  return join(base, majors[0], 'bin');
}

/** asServerUser runs a PostgreSQL program, as the postgres user when the tests run as root (PostgreSQL refuses to run as root). */
function asServerUser(bin: string, args: string[]): { status: number | null; out: string } {
  const [cmd, argv] = isRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  const r = spawnSync(cmd, argv, { encoding: 'utf8', cwd: '/' });
  return { status: r.status, out: `${r.stderr ?? ''}${r.stdout ?? ''}` };
}


/** OwnPostgresOptions shape a test's own server. */
export interface OwnPostgresOptions {
  /** hba replaces the server's pg_hba.conf (default: trust, loopback only), e.g. to make some roles log in with a password. */
  hba?: string;
}

/**
 * startOwnPostgres runs initdb into a fresh directory and starts a PostgreSQL server on a free port of
 * 127.0.0.1 (trust authentication unless `hba` says otherwise, loopback only). The directory is removed by `stop()`.
 */
export async function startOwnPostgres(options: OwnPostgresOptions = {}): Promise<OwnPostgres> {
  const bin = postgresBin();
  const dir = mkdtempSync(join(tmpdir(), 'kevents-own-postgres-'));
  const data = join(dir, 'data');
  if (isRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const init = asServerUser(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync']);
  if (init.status !== 0) throw new Error(`initdb failed: ${init.out}`);
  writeFileSync(join(data, 'pg_hba.conf'), options.hba ?? 'local all all trust\nhost all all 127.0.0.1/32 trust\n');
  const [port] = await freePorts(1);
  const logFile = join(dir, 'server.log');
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200`;
  let pid = 0;
  const start = async (): Promise<void> => {
    // After a crash the killed postmaster's backends notice its death and exit on their own, shortly;
    // until then a new postmaster refuses the shared memory they still hold.
    for (let attempt = 0; ; attempt++) {
      const r = asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-l', logFile, '-o', opts, '-w', '-t', '60', 'start']);
      if (r.status === 0) break;
      if (attempt >= 30) throw new Error(`PostgreSQL did not start: ${r.out}\n${readFileSync(logFile, 'utf8').split('\n').slice(-10).join('\n')}`);
      await sleep(500);
    }
    pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    pid: () => pid,
    async kill() {
      process.kill(pid, 'SIGKILL');
      while (alive(pid)) await sleep(50);
    },
    restart: start,
    stop() {
      if (alive(pid)) asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
      rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    },
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
  };
}
