import { execFile } from 'node:child_process';

/** Run is what a program printed, and its exit code (1 when it was killed or could not start). */
export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** RunOptions add to the test's environment and bound how long a program may take. */
export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  /** timeoutMs kills the program after this long (default 180 s: a lab's `up` builds a control plane). */
  timeoutMs?: number;
}

/** run runs a program to its end, never rejecting: a test asserts on the code and output it resolves with. */
export function run(program: string, args: string[], options: RunOptions = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(program, args, { timeout: options.timeoutMs ?? 180_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...options.env } }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

/** sh runs a shell snippet as a user types it (bash, stopping at the first failing command or pipe stage). */
export function sh(script: string, env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return run('bash', ['-euo', 'pipefail', '-c', script], { env });
}
