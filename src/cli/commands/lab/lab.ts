// kevents lab: its flags in flags.ts; lab up checks them (labUpOptions) before it looks for binaries or starts anything.
import { homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { KUBERNETES_VERSION, LAB_NAMESPACE, buildBinaries, realNodeDir, realNodeDirProblem, createLabView, defaultLabDir, exerciseContext, exercisesOf, findBinaries, findExercise, findGo, findRealNode, formatCheck, formatExercise, formatExerciseList, formatTaint, isExecutable, isRunning, labDown, labProcesses, labUp, missingBinariesMessage, passed, readState } from '../../../lab/index.js';
import type { Exercise, ExerciseContext, LabBinaries, LabState, RealNodeBinaries } from '../../../lab/index.js';
import { CliError, UsageError } from '../../errors.js';
import { formatGoDuration, parseDurationFlag } from '../../flags/duration.js';
import type { CliIO } from '../../io.js';

/** LabDirFlags name the lab's state directory. */
export interface LabDirFlags {
  dir?: string;
}

/** LabUpFlags are the flags of `kevents lab up`. */
export interface LabUpFlags extends LabDirFlags {
  nodes: string;
  nodeCpu: string;
  nodeMemory: string;
  eventTtl: string;
  binDir?: string;
  /** kubelet (`--kubelet`) adds the real node. */
  kubelet?: boolean;
  /** build false (`--no-build`) refuses to build missing binaries with go. */
  build: boolean;
}

/** labDir is `--dir`, else $KEVENTS_LAB_DIR, else ~/.kevents/lab. */
export function labDir(flags: LabDirFlags, io: CliIO): string {
  return resolve(flags.dir ?? defaultLabDir(io.env));
}

const QUANTITY = /^\d+(\.\d+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;

function onPath(name: string, io: CliIO): boolean {
  return (io.env.PATH ?? '').split(delimiter).some((d) => d !== '' && isExecutable(join(d, name)));
}

function binariesOptions(flags: LabUpFlags, io: CliIO): { binDir: string | undefined; path: string | undefined; cacheDir: string; kwokCacheDir: string } {
  return { binDir: flags.binDir, path: io.env.PATH, cacheDir: io.env.KEVENTS_PEERS_CACHE ?? join(homedir(), '.cache', 'kevents-peers'), kwokCacheDir: join(homedir(), '.kwok', 'cache') };
}

/**
 * resolveRealNode finds what `--kubelet` needs, or stops `lab up` before it starts anything: a learner who asked
 * for the real node wants to hear at once that it cannot run here, and runs the lab without --kubelet if that will do.
 */
function resolveRealNode(flags: LabUpFlags, dir: string, io: CliIO): RealNodeBinaries | undefined {
  if (flags.kubelet !== true) return undefined;
  const r = findRealNode(binariesOptions(flags, io));
  const why = 'unavailable' in r ? r.unavailable : realNodeDirProblem(realNodeDir(dir));
  if (why !== undefined) throw new CliError(`--kubelet: the real node cannot run here: ${why} (without --kubelet the lab starts with the kubelet's events simulated)`);
  return 'found' in r ? r.found : undefined;
}

function resolveBinaries(flags: LabUpFlags, io: CliIO): LabBinaries {
  const options = binariesOptions(flags, io);
  let { found, missing } = findBinaries(options);
  const go = missing.length > 0 ? findGo(io.env) : undefined;
  if (go !== undefined && flags.build && !missing.includes('etcd')) {
    buildBinaries(missing, { go, cacheDir: options.cacheDir, env: io.env, log: (line) => io.stderr.write(`kevents lab: ${line}\n`) });
    ({ found, missing } = findBinaries(options));
  }
  if (missing.length > 0) throw new CliError(missingBinariesMessage(missing, { goFound: go !== undefined, kwokctlFound: onPath('kwokctl', io), cacheDir: options.cacheDir }));
  return found as LabBinaries;
}

/** LabUpOptions are the checked numbers of `kevents lab up`: how many nodes, and the cluster's event TTL. */
export interface LabUpOptions {
  nodes: number;
  ttlMs: number;
}

/** labUpOptions checks the flags of `kevents lab up` before anything is looked for or started. */
export function labUpOptions(flags: LabUpFlags): LabUpOptions {
  const nodes = Number(flags.nodes);
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > 100) throw new UsageError(`--nodes must be a whole number from 1 to 100, not ${JSON.stringify(flags.nodes)}`);
  if (!QUANTITY.test(flags.nodeCpu)) throw new UsageError(`--node-cpu must be a quantity such as 2 or 1500m, not ${JSON.stringify(flags.nodeCpu)}`);
  if (!QUANTITY.test(flags.nodeMemory)) throw new UsageError(`--node-memory must be a quantity such as 4Gi or 512Mi, not ${JSON.stringify(flags.nodeMemory)}`);
  const ttlMs = parseDurationFlag('--event-ttl', flags.eventTtl);
  if (ttlMs < 1000) throw new UsageError('--event-ttl must be at least 1s (kube-apiserver keeps events for this long after their last write)');
  return { nodes, ttlMs };
}

/** runLabUp is `kevents lab up`. */
export async function runLabUp(flags: LabUpFlags, io: CliIO): Promise<void> {
  const { nodes, ttlMs } = labUpOptions(flags);
  const dir = labDir(flags, io);
  const realNode = resolveRealNode(flags, dir, io);
  const binaries = resolveBinaries(flags, io);
  const started = Date.now();
  const script = process.argv[1];
  if (script === undefined) throw new CliError('cannot tell how kevents was started, to run its archive');
  const state = await labUp({
    dir,
    binaries,
    nodes,
    nodeCpu: flags.nodeCpu,
    nodeMemory: flags.nodeMemory,
    eventTtl: formatGoDuration(ttlMs),
    eventTtlSeconds: Math.round(ttlMs / 1000),
    kevents: [process.execPath, script],
    ...(realNode !== undefined ? { realNode } : {}),
    env: io.env,
    log: (line) => io.stderr.write(`kevents lab: ${line}\n`),
  });
  io.stdout.write(describeLab(state, `up in ${((Date.now() - started) / 1000).toFixed(1)} s`, io));
}

function describeLab(state: LabState, headline: string, io: CliIO): string {
  const dirFlag = state.dir === resolve(defaultLabDir(io.env)) ? '' : ` --dir ${state.dir}`;
  return [
    `kevents lab: ${headline}`,
    `  cluster:    kube-apiserver ${state.kubernetesVersion} on ${state.apiServer}, --event-ttl=${state.eventTtl}`,
    `  nodes:      ${state.nodes.names.length} kwok nodes (${state.nodes.names.join(', ')}), each ${state.nodes.cpu} CPU and ${state.nodes.memory}; the scheduler is real, the pods are not`,
    ...(state.realNode !== undefined
      ? [`  real node:  ${state.realNode.name} (kubelet ${KUBERNETES_VERSION} and containerd on this machine), tainted ${formatTaint(state.realNode.taint)}: its pods and their events are real`]
      : []),
    `  archive:    ${state.archive} (kevents serve --mirror: it keeps every event after the cluster forgets it)`,
    `  namespace:  ${state.namespace}`,
    `  kubeconfig: ${state.kubeconfig}`,
    '',
    'Use it:',
    `  export KUBECONFIG=${state.kubeconfig}`,
    `  export KEVENTS_SERVER=${state.archive}`,
    '  kubectl get nodes',
    `  kevents lab exercises${dirFlag}`,
    '',
    `Stop it, removing everything it made: kevents lab down${dirFlag}`,
    '',
  ].join('\n');
}

/** runLabDown is `kevents lab down`. */
export async function runLabDown(flags: LabDirFlags, io: CliIO): Promise<void> {
  const dir = labDir(flags, io);
  const result = await labDown(dir);
  if (!result.found) {
    io.stderr.write(`kevents lab: no lab in ${dir}, nothing to do\n`);
    return;
  }
  io.stdout.write(`kevents lab: stopped ${result.stopped.length === 0 ? 'nothing (no program was running)' : result.stopped.join(', ')}; removed ${dir}\n`);
}

/** runLabStatus is `kevents lab status`: each program of the lab, running or not. */
export function runLabStatus(flags: LabDirFlags, io: CliIO): void {
  const state = readState(labDir(flags, io));
  const processes = labProcesses(state);
  const rows = processes.map((p) => `  ${p.name.padEnd(24)} ${isRunning(p) ? `running (pid ${p.pid})` : 'not running'}   ${p.log}`);
  const allUp = processes.length > 0 && processes.every(isRunning);
  io.stdout.write(describeLab(state, allUp ? `running since ${state.startedAt}` : 'not (fully) running', io));
  io.stdout.write(['Programs:', ...rows, ''].join('\n'));
  if (!allUp) throw new CliError('the lab is not fully running: kevents lab down, then kevents lab up');
}

function exerciseArg(text: string, exercises: readonly Exercise[]): Exercise {
  const e = findExercise(text, exercises);
  if (e === undefined) throw new UsageError(`no exercise ${JSON.stringify(text)}: the exercises are 1 to ${exercises.length} (kevents lab exercises)`);
  return e;
}

/** labIfAny is the state of the lab in --dir, or undefined when none was started there. */
function labIfAny(flags: LabDirFlags, io: CliIO): LabState | undefined {
  try {
    return readState(labDir(flags, io));
  } catch {
    return undefined;
  }
}

function dirSuffix(flags: LabDirFlags, io: CliIO): string {
  const dir = labDir(flags, io);
  return dir === resolve(defaultLabDir(io.env)) ? '' : ` --dir ${dir}`;
}

/** runLabExercises is `kevents lab exercises`: exercise 6 is the real one in a lab with a real node. */
export function runLabExercises(flags: LabDirFlags, io: CliIO): void {
  io.stdout.write(formatExerciseList(exercisesOf(labIfAny(flags, io)?.realNode !== undefined)));
}

/** runLabExercise is `kevents lab exercise N`: the task, with the lab's own sizes (and real node) when one runs. */
export function runLabExercise(n: string, flags: LabDirFlags, io: CliIO): void {
  const s = labIfAny(flags, io);
  const e = exerciseArg(n, exercisesOf(s?.realNode !== undefined));
  // No lab yet: the text shows the defaults of kevents lab up.
  const ctx: ExerciseContext = s !== undefined ? exerciseContext(s) : { namespace: LAB_NAMESPACE, nodes: { count: 3, cpu: '2', memory: '4Gi' }, eventTtl: '1h0m0s' };
  io.stdout.write(formatExercise(e, ctx, `kevents lab check ${e.number}${dirSuffix(flags, io)}`));
}

/** runLabCheck is `kevents lab check N`: exit 0 when every step is done, 1 otherwise. */
export async function runLabCheck(n: string, flags: LabDirFlags, io: CliIO): Promise<void> {
  const state = readState(labDir(flags, io));
  const e = exerciseArg(n, exercisesOf(state.realNode !== undefined));
  const down = labProcesses(state).filter((p) => !isRunning(p)).map((p) => p.name);
  if (down.length > 0) throw new CliError(`the lab in ${state.dir} is not running (${down.join(', ')} stopped): kevents lab down, then kevents lab up`);
  const view = createLabView(state);
  let result;
  try {
    result = await e.check(view);
  } finally {
    view.close();
  }
  io.stdout.write(formatCheck(e, result));
  if (!passed(result)) throw new CliError(`exercise ${e.number} is not done yet`);
}

/** runLabEnv is `kevents lab env`: the exports that point kubectl at the lab and kevents at its archive. */
export function runLabEnv(flags: LabDirFlags, io: CliIO): void {
  const s = readState(labDir(flags, io));
  // KEVENTS_SERVER is what every kevents command reads as --server; KEVENTS_ARCHIVE, its name in the lab before, stays for scripts that use it.
  io.stdout.write(`export KUBECONFIG=${s.kubeconfig}\nexport KEVENTS_SERVER=${s.archive}\nexport KEVENTS_ARCHIVE=${s.archive}\n`);
}
