import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { waitForReadinessBanner } from './mirror-process.js';
import { CLI } from './server-process.js';

/** ExportProcess is a running `kevents export` child process. */
export interface ExportProcess {
  child: ChildProcess;
  metricsUrl: string;
  output: () => string;
  exited: Promise<void>;
}

/** startExport runs `kevents export --config CONFIG --from FROM [ARGS…]` with its metrics on a free loopback port, and waits until it serves them. */
export function startExport(config: string, from: string, env: NodeJS.ProcessEnv = {}, args: readonly string[] = []): Promise<ExportProcess> {
  const child = spawn(process.execPath, ['--enable-source-maps', CLI, 'export', '--config', config, '--from', from, '--listen', '127.0.0.1:0', '--log-level', 'info', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  return waitForReadinessBanner(child, 'kevents export');
}

/** stopExport signals an export process (if it still runs) and waits for it to exit. */
export async function stopExport(p: ExportProcess, signal: NodeJS.Signals): Promise<void> {
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill(signal);
  await p.exited;
}

/** exportMetric reads one metric of an export process for one sink. */
export async function exportMetric(p: ExportProcess, name: string, sink: string): Promise<number> {
  const text = await (await fetch(`${p.metricsUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{sink="${sink}"}`));
  return line === undefined ? Number.NaN : Number(line.split(' ')[1]);
}

/**
 * killInFlight is how the export tests crash an exporter with batches in flight: round `at` of the
 * load starts, the exporter is killed with SIGKILL 150 ms into it, started again once the round is
 * written, and round `at + 1` follows. It returns the exporter that runs then.
 */
export async function killInFlight(o: { exporter: ExportProcess; restart: () => Promise<ExportProcess>; round: (i: number) => Promise<void>; at: number }): Promise<ExportProcess> {
  const round = o.round(o.at);
  await sleep(150);
  await stopExport(o.exporter, 'SIGKILL');
  await round;
  const exporter = await o.restart();
  await o.round(o.at + 1);
  return exporter;
}

/**
 * outageWithKill is the outage the export tests put a sink through: the sink
 * goes down (SIGKILL, keeping its data) while the load goes on with rounds
 * `from`, `from + 1` and `from + 2`; the exporter is killed with SIGKILL during
 * the outage and started again; after `outageMs` the sink comes back. It
 * returns the exporter that runs then.
 */
export async function outageWithKill(o: {
  exporter: ExportProcess;
  restart: () => Promise<ExportProcess>;
  sink: { down(): Promise<void>; up(): Promise<void> };
  round: (i: number) => Promise<void>;
  from: number;
  outageMs: number;
}): Promise<ExportProcess> {
  await o.sink.down();
  const outageEnds = Date.now() + o.outageMs;
  await o.round(o.from);
  await sleep(Math.min(3_000, o.outageMs / 3));
  await stopExport(o.exporter, 'SIGKILL');
  await o.round(o.from + 1);
  const exporter = await o.restart();
  await o.round(o.from + 2);
  const left = outageEnds - Date.now();
  if (left > 0) await sleep(left);
  await o.sink.up();
  return exporter;
}
