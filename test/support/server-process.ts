import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** CLI is the built kevents command the end-to-end tests run, as users do. */
export const CLI = fileURLToPath(new URL('../../dist/bin/kevents.js', import.meta.url));

/** ServerProcess is a `kevents serve` child process. */
export interface ServerProcess {
  url: string;
  port: number;
  child: ChildProcess;
  stderr: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** startServer runs `kevents serve` on a free loopback port and waits until it listens. */
export async function startServer(args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<ServerProcess> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first`);
  const child = spawn(process.execPath, ['--enable-source-maps', CLI, 'serve', '--listen', '127.0.0.1:0', ...withDefaultStorage(args)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kevents serve did not start: ${err}`)), 20_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (https?:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`kevents serve exited with ${code}: ${err}`));
    });
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    url,
    port: Number(new URL(url).port),
    child,
    stderr: () => err,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * withDefaultStorage gives a server the memory store unless told otherwise. With
 * KEVENTS_TEST_WORKERS=N in the environment, every server the suites start runs
 * `--workers N` over a SQLite file instead (the same suites, against workers);
 * with KEVENTS_TEST_WRITER_THREAD=1, `--writer-thread` over a SQLite file.
 */
function withDefaultStorage(args: string[]): string[] {
  const workers = process.env.KEVENTS_TEST_WORKERS;
  const threaded = process.env.KEVENTS_TEST_WRITER_THREAD === '1';
  const storage = args.findIndex((a) => a === '--storage' || a.startsWith('--storage='));
  const asked = (workers !== undefined && workers !== '') || threaded;
  // A mirror decides its writes where the file is written: --writer-thread refuses it.
  const excluded = args.some((a) => a.startsWith('--workers') || a === '--writer-thread') || (threaded && args.some((a) => a.startsWith('--mirror')));
  if (!asked || excluded) {
    return storage >= 0 ? args : [...args, '--storage', 'memory:'];
  }
  const given = storage < 0 ? undefined : args[storage] === '--storage' ? args[storage + 1] : args[storage]!.slice('--storage='.length);
  if (given !== undefined && given !== 'memory:' && !given.startsWith('sqlite:')) return args;
  // A new file is what the memory store is: empty at each start.
  const fresh = `sqlite:${join(mkdtempSync(join(tmpdir(), 'kevents-workers-')), 'serve.db')}`;
  const rest = storage < 0 ? args : args.filter((_a, i) => i !== storage && !(args[storage] === '--storage' && i === storage + 1));
  return [...rest, '--storage', given === undefined || given === 'memory:' ? fresh : given, ...(threaded ? ['--writer-thread'] : ['--workers', workers!])];
}
