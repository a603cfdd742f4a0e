import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
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

function withDefaultStorage(args: string[]): string[] {
  return args.some((a) => a === '--storage' || a.startsWith('--storage=')) ? args : [...args, '--storage', 'memory:'];
}
