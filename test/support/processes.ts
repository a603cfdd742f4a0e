import { spawnSync } from 'node:child_process';

/** alive says whether a process of this pid still runs (signal 0 tests without sending). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** childrenOf are the pids of the processes `pid` started (e.g. the workers of `kevents serve --workers`). */
export function childrenOf(pid: number): number[] {
  const out = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout;
  return out
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);
}
