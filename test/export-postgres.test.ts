import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { startExport, stopExport } from './support/export-process.js';
import type { ExportProcess } from './support/export-process.js';
import { Workload, archiveChanges } from './support/event-workload.js';
import { CLI, startServer } from './support/server-process.js';

/**
 * Export from PostgreSQL end to end: two `kevents serve` replicas over one
 * database take events through both APIs at once, many writes in flight on
 * each, while a `kevents export --from postgres://…` process (killed with
 * SIGKILL once on the way) delivers every change to a JSON lines file, and
 * one of the replicas delivers them with `--sinks` to a file of its own. Each
 * file must hold exactly the archive's changes, by id: none skipped while the
 * other replica's writes committed, none that is not a change, and a line
 * written twice (the batch in flight at the kill) only with the same content.
 */

/** POSTGRES_URL is the machine's PostgreSQL unless KEVENTS_TEST_POSTGRES says otherwise. */
const POSTGRES_URL = process.env.KEVENTS_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:55432/test';

async function until(what: string, fn: () => boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(200);
  }
}

/** linesById reads a JSON lines sink's file: each id with the lines written for it. */
function linesById(path: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (!existsSync(path)) return out;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line === '') continue;
    const id = (JSON.parse(line) as { id: string }).id;
    out.set(id, [...(out.get(id) ?? []), line]);
  }
  return out;
}

/** sinkConfig is an export config of one JSON lines sink with small batches, so a run has many of them. */
function sinkConfig(name: string, path: string): string {
  return `sinks:\n  - name: ${name}\n    type: file\n    path: ${path}\n    policy: occurrences\n    batchSize: 5\n`;
}

void describe('kevents export from PostgreSQL', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-export-pg-'));
  const schema = `kevents_export_e2e_${process.pid}`;
  const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  });

  void it('delivers every change written through two replicas exactly once by id, through a kill -9 of the exporter', { timeout: 300_000 }, async () => {
    const storage = `${POSTGRES_URL}?schema=${schema}`;
    const exported = join(dir, 'exported.jsonl');
    const served = join(dir, 'served.jsonl');
    const exportConfig = join(dir, 'export.yaml');
    const serveConfig = join(dir, 'serve.yaml');
    writeFileSync(exportConfig, sinkConfig('lines', exported));
    writeFileSync(serveConfig, sinkConfig('served', served));
    const a = await startServer(['--storage', storage, '--sinks', serveConfig]);
    cleanups.push(() => a.stop());
    const b = await startServer(['--storage', storage]);
    cleanups.push(() => b.stop());
    let exporter: ExportProcess = await startExport(exportConfig, storage);
    cleanups.push(() => stopExport(exporter, 'SIGKILL'));

    // Each round writes through both replicas at once: both APIs, bumps of every event so far, and a burst of creates in flight together.
    const viaA = new Workload(a.url);
    const viaB = new Workload(b.url);
    const round = async (i: number): Promise<void> => {
      await Promise.all([
        viaA.round(i),
        viaB.round(100 + i),
        ...Array.from({ length: 12 }, (_, k) => (k % 2 === 0 ? viaA : viaB).core(`burst-${i}-${k}`)),
      ]);
    };
    for (let i = 0; i < 3; i++) await round(i);
    await until('the exporter has delivered some changes', () => linesById(exported).size > 0);
    await round(3);
    await stopExport(exporter, 'SIGKILL');
    await round(4);
    exporter = await startExport(exportConfig, storage);
    for (let i = 5; i < 8; i++) await round(i);

    // What the archive holds is the truth both files are checked against.
    const { changeIds } = await archiveChanges(a.url);
    assert.ok(changeIds.length > 200, `the workload made ${changeIds.length} changes`);
    const truth = await archiveChanges(b.url);
    assert.deepEqual(truth.changeIds, changeIds, 'both replicas read the same archive');

    for (const [what, file] of [
      ['kevents export', exported],
      ['kevents serve --sinks', served],
    ] as const) {
      await until(`${what} has delivered every change`, () => linesById(file).size >= changeIds.length);
      const lines = linesById(file);
      assert.deepEqual([...lines.keys()].sort(), changeIds, `${what}: exactly the archive's changes`);
      const repeated = [...lines.values()].filter((l) => l.length > 1);
      for (const l of repeated) assert.ok(l.every((x) => x === l[0]), `${what}: a redelivery carries the same content: ${l.join('\n')}`);
      process.stdout.write(`# ${what}: ${changeIds.length} changes, ${repeated.length} lines written again\n`);
    }
    // The exporter read the ids in order: within each life, the ids of its lines never go back.
    const ids = readFileSync(exported, 'utf8')
      .trim()
      .split('\n')
      .map((l) => Number((JSON.parse(l) as { id: string }).id.split('.').at(-1)));
    let backs = 0;
    for (let k = 1; k < ids.length; k++) if (ids[k]! < ids[k - 1]!) backs++;
    assert.ok(backs <= 1, `the exporter went back ${backs} times (once at most: the restart after the kill)`);
    await stopExport(exporter, 'SIGTERM');
  });

  void it('refuses a store that keeps no export log, and a schema that holds no archive, with a one-line error', () => {
    writeFileSync(join(dir, 'refused.yaml'), sinkConfig('lines', join(dir, 'refused.jsonl')));
    const run = (from: string): { status: number | null; stderr: string } =>
      spawnSync(process.execPath, [CLI, 'export', '--config', join(dir, 'refused.yaml'), '--from', from, '--listen', '127.0.0.1:0'], { encoding: 'utf8', timeout: 30_000 });
    const memory = run('memory:');
    assert.equal(memory.status, 2, memory.stderr);
    assert.match(memory.stderr, /--storage needs an archive in SQLite \(sqlite:PATH\) or PostgreSQL \(postgres:\/\/…\); a memory store keeps no export log/);
    const empty = run(`${POSTGRES_URL}?schema=${schema}_none`);
    assert.equal(empty.status, 1, empty.stderr);
    assert.match(empty.stderr, new RegExp(`cannot open the archive in schema ${schema}_none: schema ${schema}_none holds no archive \\(start kevents serve or kevents mirror on it first\\)`));
    assert.equal(empty.stderr.trim().split('\n').length, 1, empty.stderr);
  });
});
