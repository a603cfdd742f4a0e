import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { CLI } from './server-process.js';
import { until } from './wait.js';

/** MirrorProcess is a running `kevents mirror` child process. */
export interface MirrorProcess {
  child: ChildProcess;
  metricsUrl: string;
  output: () => string;
  exited: Promise<void>;
}

/**
 * startMirror runs `kevents mirror --source SOURCE --to TO --cluster lab` (or `--kubeconfig FILE` for a
 * source that needs its CA and a token) with its metrics on a free loopback port, and waits until it
 * serves them. `extra` flags come last (a later `--listen` wins).
 */
export function startMirror(source: string | { kubeconfig: string }, to: string, extra: string[] = []): Promise<MirrorProcess> {
  const from = typeof source === 'string' ? ['--source', source] : ['--kubeconfig', source.kubeconfig];
  const child = spawn(
    process.execPath,
    ['--enable-source-maps', CLI, 'mirror', ...from, '--to', to, '--cluster', 'lab', '--listen', '127.0.0.1:0', '--log-level', 'info', ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return waitForMirror(child);
}

/** waitForMirror follows a spawned `kevents mirror` until it serves its metrics (or exits), keeping what it prints. */
export function waitForMirror(child: ChildProcess): Promise<MirrorProcess> {
  return waitForReadinessBanner(child, 'kevents mirror');
}

/** waitForReadinessBanner waits until a `kevents mirror` or `kevents export` child prints where it serves /metrics and /readyz. */
export function waitForReadinessBanner(child: ChildProcess, what: string): Promise<MirrorProcess> {
  let out = '';
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start: ${out}`)), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /readiness on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, metricsUrl: m[1]!, output: () => out, exited });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code}: ${out}`));
    });
  });
}

/** stopMirror sends a signal to a mirror process (if it still runs) and waits for it to exit. */
export async function stopMirror(m: MirrorProcess, signal: NodeJS.Signals): Promise<void> {
  if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill(signal);
  await m.exited;
}

/** mirrorMetric reads one unlabelled metric of a mirror process. */
export async function mirrorMetric(m: MirrorProcess, name: string): Promise<number> {
  const text = await (await fetch(`${m.metricsUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.split(' ')[1]);
}

/**
 * untilListed waits until a mirror has committed its first list of the source (kevents_mirror_ready
 * is 1 once it has). A change the source makes before that list is read is folded into the state
 * the list finds (two changes of one event become one): it happened before the mirror could see
 * it. A test whose ground truth holds every change of the source therefore changes events (other
 * than creating them) only after this. The mirror's readiness line is printed while that list may
 * still be on its way to the source, so the line alone is not enough.
 */
export async function untilListed(m: MirrorProcess, timeoutMs = 60_000): Promise<void> {
  await until('the mirror committed its first list of the source', async () => (await mirrorMetric(m, 'kevents_mirror_ready')) === 1, timeoutMs, 50);
}
