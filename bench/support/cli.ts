/**
 * What the benches that run the built CLI share: a scratch folder removed at
 * exit with every child still running killed, starting `kevents …` and waiting
 * for its banner, stopping it, and the kubelet-like events they write (the same
 * events in every bench, so figures compare).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fieldsOf, recordOf } from '../../src/export/index.js';
import type { ExportRecord } from '../../src/export/index.js';
import { SqliteEventStore, SqliteExportLog } from '../../src/storage/sqlite/index.js';
import { kubeletFields } from './events.js';

export const CLI = fileURLToPath(new URL('../../dist/bin/kevents.js', import.meta.url));

const children: ChildProcess[] = [];
const dirs: string[] = [];
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** benchDir makes a scratch folder that is removed when the bench exits. */
export function benchDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `kevents-bench-${name}-`));
  dirs.push(dir);
  return dir;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** startCli runs `kevents ARGS` (with `nodeArgs` for node itself; `cli`: another build's) and resolves once its stdout matches `banner`, with the banner's first group as `url`. */
export function startCli(args: string[], banner: RegExp, nodeArgs: string[] = [], cli = CLI): Promise<{ child: ChildProcess; url: string; startedAt: number }> {
  const startedAt = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = banner.exec(out);
      if (m) resolve({ child, url: m[1]!, startedAt });
    });
    child.once('exit', (code) => reject(new Error(`${args[0]} exited with ${code}: ${out.slice(-2000)}`)));
  });
}

/** stopCli sends SIGTERM and waits for the exit. */
export async function stopCli(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** rssMiB is a process's resident memory. */
export function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** kubeletEvent is the i-th bench event at `now`: a kubelet container event about one of 5,000 pods in 50 namespaces. */
export function kubeletEvent(i: number, now: number): Record<string, unknown> {
  const ns = `ns-${i % 50}`;
  const pod = `web-${(i * 7919) % 5000}-7d9f8b6c4-x2v9k`;
  const t = new Date(now).toISOString().replace(/\.\d+Z$/, 'Z');
  return {
    metadata: { name: `${pod}.${(0x17a2b3c4d5e6f7an + BigInt(i)).toString(16)}`, namespace: ns },
    involvedObject: { kind: 'Pod', namespace: ns, name: pod, uid: `7c3a${String(i % 5000).padStart(8, '0')}-1111-4222-8333-444455556666`, apiVersion: 'v1', fieldPath: 'spec.containers{app}' },
    ...kubeletFields(i, t),
  };
}

/** fillArchive writes `n` bench events, each with its occurrence, into an SQLite archive at `path`. */
export async function fillArchive(path: string, n: number): Promise<void> {
  const store = new SqliteEventStore({ path });
  const now = Date.now();
  for (let i = 0; i < n; i++) await store.create(kubeletEvent(i, now) as never, { occurrence: {} });
  await store.close();
}

/** archivedBatches reads an archive's whole export log as the records a sink of `policy` makes, `batch` to a batch (the baselines' input, built before they are timed). */
export async function archivedBatches(db: string, batch: number, policy: 'upsert' | 'occurrences'): Promise<ExportRecord[][]> {
  const log = new SqliteExportLog({ path: db });
  const batches: ExportRecord[][] = [];
  for (let after = 0; ; ) {
    const changes = await log.read(after, batch);
    if (changes.length === 0) break;
    // With the stored event, as the exporter's records carry it (the otlp sink maps from it).
    batches.push(changes.map((c) => Object.assign(recordOf(policy, fieldsOf(c), undefined, undefined)!, c.event !== undefined ? { event: c.event } : {})));
    after = changes.at(-1)!.id;
  }
  await log.close();
  return batches;
}

/**
 * timeExport runs `kevents export --config CONFIG --from sqlite:DB` until the
 * position it saves for `sink` reaches the archive's head, and stops it:
 * seconds in all (process start included) and from its first saved batch.
 * Progress is read from the saved position, not /metrics (a scrape counts the
 * queue, which costs the exporter).
 */
export async function timeExport(config: string, db: string, sink: string, nodeArgs: string[] = [], cli?: string): Promise<{ total: number; steady: number }> {
  const log = new SqliteExportLog({ path: db });
  const head = await log.head();
  const t = performance.now();
  const exporter = await startCli(['export', '--config', config, '--from', `sqlite:${db}`, '--listen', '127.0.0.1:0', '--log-level', 'warn'], /readiness on (http:\/\/\S+)/, nodeArgs, cli);
  let firstAt: number | undefined;
  for (;;) {
    const p = (await log.getPosition(sink))?.position ?? 0;
    if (p > 0) firstAt ??= performance.now();
    if (p >= head) break;
    await sleep(5);
  }
  const end = performance.now();
  await stopCli(exporter.child);
  await log.close();
  return { total: (end - t) / 1000, steady: (end - (firstAt ?? t)) / 1000 };
}
