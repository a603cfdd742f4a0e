import { execFile } from 'node:child_process';
import { CLI } from './server-process.js';

/** CliResult is what a run of the built CLI printed, and its exit code. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** runBuiltCli runs the built `kevents` command as a user would, without a terminal or colour. */
export function runBuiltCli(args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
    });
  });
}
