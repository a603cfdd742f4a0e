// What the builders (peers.mjs, sinks.mjs) share about output: their standard output carries
// only the JSON (or table) they print at the end, so that setup can parse it. Every child they
// run (go, mvn, javac) writes to a log file instead: Maven prints ANSI resets on standard output
// even with -q -B, and one stray byte there breaks the JSON.
import { spawnSync } from 'node:child_process';
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** logArg reads `--log FILE` (or `--log=FILE`) from argv, or gives the fallback. */
export function logArg(argv, fallback) {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--log') return String(argv[i + 1] ?? fallback);
    if (argv[i].startsWith('--log=')) return argv[i].slice('--log='.length);
  }
  return fallback;
}

/** tail gives the last lines a log got from offset on, to show with a failure. */
export function tail(path, offset = 0, lines = 15) {
  try {
    return readFileSync(path).subarray(offset).toString('utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/**
 * runLogged runs a child with its standard output and standard error appended to the log file,
 * never to the builder's own standard output. A failure throws an Error naming the command and
 * the log, with the log's last lines.
 */
export function runLogged(cmd, argv, { cwd, env, log }) {
  mkdirSync(dirname(log), { recursive: true });
  const fd = openSync(log, 'a');
  let r;
  let offset;
  try {
    writeSync(fd, `\n$ (cd ${cwd ?? process.cwd()} && ${cmd} ${argv.join(' ')})\n`);
    offset = fstatSync(fd).size;
    r = spawnSync(cmd, argv, { cwd, env, stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd);
  }
  if (r.error) throw new Error(`${cmd}: ${r.error.message} (log: ${log})`);
  if (r.status !== 0) {
    const last = tail(log, offset);
    throw new Error(`${cmd} ${argv.join(' ')} exited with ${r.status ?? r.signal}; its output is in ${log}${last === '' ? '' : `, ending:\n${last}`}`);
  }
}

/**
 * withLock runs fn while holding a directory lock, so that parallel preparers (test files, or
 * several checkouts on one machine) build a cached thing once and the others wait for it.
 */
export function withLock(dir, fn) {
  const lock = join(dir, '.lock');
  mkdirSync(dir, { recursive: true });
  const started = Date.now();
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      let holder = 0;
      try {
        holder = Number(readFileSync(join(lock, 'pid'), 'utf8'));
      } catch {
        // The holder has made the folder but not written its pid yet.
      }
      let alive = holder > 0;
      if (alive) {
        try {
          process.kill(holder, 0);
        } catch {
          alive = false;
        }
      }
      if (!alive && Date.now() - started > 2000) rmSync(lock, { recursive: true, force: true });
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
