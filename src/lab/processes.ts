import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** LabProcess is one program a lab started: enough to find it again from another shell. */
export interface LabProcess {
  name: string;
  pid: number;
  /** bin is the program; its path is checked in /proc before a signal, so a reused pid is never hit. */
  bin: string;
  /** log is the file that receives its stdout and stderr. */
  log: string;
}

/**
 * startProcess runs a program in its own process group, detached from the
 * caller, with its output in logs/NAME.log: it outlives `kevents lab up`.
 */
export async function startProcess(options: { name: string; bin: string; args: string[]; dir: string; env?: NodeJS.ProcessEnv }): Promise<LabProcess> {
  const log = join(options.dir, 'logs', `${options.name}.log`);
  const fd = openSync(log, 'a');
  try {
    const child = spawn(options.bin, options.args, { cwd: options.dir, detached: true, stdio: ['ignore', fd, fd], env: options.env ?? process.env });
    // 'spawn' comes once the program runs in place of the fork: until then /proc shows the parent's command line.
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (e) => reject(new Error(`${options.name} did not start (${options.bin}): ${e.message}`, { cause: e })));
    });
    child.unref();
    if (child.pid === undefined) throw new Error(`${options.name} did not start (${options.bin})`);
    return { name: options.name, pid: child.pid, bin: options.bin, log };
  } finally {
    closeSync(fd);
  }
}

/** isRunning tells whether the process still runs as the program it was started as (a pid can be reused). */
export function isRunning(p: Pick<LabProcess, 'pid' | 'bin'>): boolean {
  try {
    process.kill(p.pid, 0);
  } catch (e) {
    return (e as { code?: string }).code === 'EPERM';
  }
  try {
    const cmdline = readFileSync(`/proc/${p.pid}/cmdline`, 'utf8');
    if (cmdline === '') return false;
    return cmdline.split('\0').some((part) => part === p.bin);
  } catch {
    // No /proc (macOS): trust the signal check.
    return true;
  }
}

/** STOP_GRACE_MS is how long a program has to exit after SIGTERM before SIGKILL (kube-apiserver drains for a few seconds). */
const STOP_GRACE_MS = 15_000;

/** stopProcess sends SIGTERM, then SIGKILL after the grace period, and resolves once the process is gone. */
export async function stopProcess(p: LabProcess, graceMs = STOP_GRACE_MS): Promise<void> {
  if (!isRunning(p)) return;
  signal(p.pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (isRunning(p)) {
    if (Date.now() > deadline) {
      signal(p.pid, 'SIGKILL');
      if (Date.now() > deadline + 5_000) throw new Error(`${p.name} (pid ${p.pid}) does not exit`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (e) {
    if ((e as { code?: string }).code !== 'ESRCH') throw e;
  }
}

/** tail is the end of a process's log, for an error message. */
export function tail(p: LabProcess, bytes = 3000): string {
  try {
    const text = readFileSync(p.log, 'utf8');
    return text.slice(-bytes).trim();
  } catch {
    return '';
  }
}
