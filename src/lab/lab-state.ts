import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { LabError } from './lab-error.js';
import type { LabProcess } from './processes.js';
import type { Taint } from './real-node-config.js';
import type { RealNodeState } from './real-node.js';

/** LAB_NAMESPACE is the namespace the exercises work in (not `default`: see exercise 2). */
export const LAB_NAMESPACE = 'lab';

/** LAB_CLUSTER labels what the lab's mirror archives. */
export const LAB_CLUSTER = 'lab';

/** REAL_NODE_NAME is the name of the lab's real node (`lab up --kubelet`). */
export const REAL_NODE_NAME = 'real-1';

/** REAL_NODE_TAINT keeps the lab's pods off its real node, but those that tolerate it (exercise 6). */
export const REAL_NODE_TAINT: Taint = { key: 'lab.kevents.dev/real-node', value: 'yes', effect: 'NoSchedule' };

/** LabState is what `lab up` leaves in state.json for the other lab commands, from any shell. */
export interface LabState {
  dir: string;
  /** apiServer is the lab's kube-apiserver, https://127.0.0.1:PORT. */
  apiServer: string;
  /** archive is the lab's `kevents serve`, which mirrors the cluster and keeps what it forgets. */
  archive: string;
  caFile: string;
  /** kubeconfig is the learner's kubeconfig (user lab-admin, namespace lab). */
  kubeconfig: string;
  /** checkToken is the checks' own token: their reads are not the learner's, and stay out of the audit log. */
  checkToken: string;
  /** auditLog records the learner's requests on events, which the checks read. */
  auditLog: string;
  namespace: string;
  eventTtl: string;
  eventTtlSeconds: number;
  nodes: { names: string[]; cpu: string; memory: string };
  kubernetesVersion: string;
  kwokVersion: string;
  /** startedAt is when `lab up` began, RFC 3339. */
  startedAt: string;
  processes: LabProcess[];
  /** realNode is the real node of `lab up --kubelet` (containerd and a kubelet), stopped first by `lab down`. */
  realNode?: RealNodeState;
}

/** labProcesses are every program of a lab, the real node's included. */
export function labProcesses(state: LabState): LabProcess[] {
  return [...state.processes, ...(state.realNode?.processes ?? [])];
}

/** defaultLabDir is `$KEVENTS_LAB_DIR`, else `~/.kevents/lab`. */
export function defaultLabDir(env: NodeJS.ProcessEnv): string {
  const fromEnv = env.KEVENTS_LAB_DIR;
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : join(homedir(), '.kevents', 'lab');
}

/** statePath is where a lab directory keeps its state. */
export function statePath(dir: string): string {
  return join(dir, 'state.json');
}

/** writeState saves the state atomically (a reader in another shell never sees half of it). */
export function writeState(state: LabState): void {
  const path = statePath(state.dir);
  writeFileSync(`${path}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(`${path}.tmp`, path);
}

/** readState loads a lab's state, or fails with how to start one. */
export function readState(dir: string): LabState {
  const path = statePath(dir);
  if (!existsSync(path)) throw new LabError(`no lab in ${dir}: start one with kevents lab up`);
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as LabState;
  } catch (e) {
    throw new LabError(`${path} is not a lab state file (${(e as Error).message}): remove the lab with kevents lab down`, { cause: e });
  }
}
