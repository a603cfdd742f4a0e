import { run } from './run.js';
import type { Run } from './run.js';
import { CLI } from './server-process.js';

/** runBuiltCli runs the built `kevents` command as a user would, without a terminal or colour. */
export function runBuiltCli(args: string[]): Promise<Run> {
  return run(process.execPath, [CLI, ...args], { env: { NO_COLOR: '1' }, timeoutMs: 60_000 });
}
