import { existsSync, rmSync } from 'node:fs';
import { readState, statePath } from './lab-state.js';
import { isRunning, stopProcess } from './processes.js';
import { stopRealNode } from './real-node.js';

/** LabDownResult says what `lab down` did. */
export interface LabDownResult {
  /** found is false when the directory held no lab. */
  found: boolean;
  /** stopped names the programs that were still running. */
  stopped: string[];
}

/**
 * labDown stops the real node first, if the lab has one (its containers, mounts and cgroups with it), then every
 * other program of the lab in dir, newest first (the archive before the cluster it mirrors, etcd last), then
 * removes the directory: its certificates, tokens, logs, etcd data and archive.
 */
export async function labDown(dir: string): Promise<LabDownResult> {
  if (!existsSync(statePath(dir))) return { found: false, stopped: [] };
  const state = readState(dir);
  const stopped = state.realNode !== undefined ? await stopRealNode(state.realNode) : [];
  for (const p of [...state.processes].reverse()) {
    if (!isRunning(p)) continue;
    await stopProcess(p);
    stopped.push(p.name);
  }
  rmSync(dir, { recursive: true, force: true });
  return { found: true, stopped };
}
