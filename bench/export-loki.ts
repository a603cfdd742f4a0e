/**
 * Loki sink benchmark: events/s that `kevents export` (the built CLI, as a
 * process) pushes from a local SQLite archive to a real server of Loki's push
 * API (VictoriaLogs, set up by scripts/sinks.mjs), against the same push
 * requests written directly in the same run (the baseline: the same records,
 * the same JSON bodies of 500 entries, one request after the other, from this
 * process with fetch).
 *
 *   - BENCH_BATCH (default 500, the sinks' default batchSize) entries per push;
 *   - BENCH_EVENTS (default 20,000) events are written to the archive (one
 *     change each, kubelet-like, a Warning one time in five, 50 nodes, 20 namespaces);
 *   - baseline: the bodies are built first, then only the requests are timed;
 *   - kevents: from the exporter's readiness banner to its saved position
 *     reaching the archive's head (reading the archive, fields, routing,
 *     stream grouping, JSON, the request, the saved position per batch).
 *
 * Each run pushes to its own tenant, so neither counts the other's entries.
 * Target: 10,000 events/s through kevents.
 *
 * Run: npm run build && node --import tsx bench/export-loki.ts
 */
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fieldsOf, lokiPushBody, parseExportConfig, recordOf } from '../src/export/index.js';
import { SqliteEventStore, SqliteExportLog } from '../src/storage/sqlite/index.js';
import { sinkPaths, startVictoriaLogs } from '../test/support/sink-servers.js';
import { kubeletFields } from './support/events.js';

const N = Number(process.env.BENCH_EVENTS ?? 20_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 500);
const TARGET = 10_000;
const PUSH_PATH = '/insert/loki/api/v1/push?disable_message_parsing=1';
const CLI = fileURLToPath(new URL('../dist/bin/kevents.js', import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'kevents-bench-export-loki-'));
const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function count(base: string, account: string): Promise<number> {
  const res = await fetch(`${base}/select/logsql/query`, {
    method: 'POST',
    headers: { AccountID: account, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ query: '* | count() n' }).toString(),
  });
  const text = await res.text();
  return Number((JSON.parse(text.trim() || '{"n":"0"}') as { n: string }).n);
}

async function main(): Promise<void> {
  const paths = sinkPaths(['victorialogs']).victorialogs;
  if (paths === undefined) throw new Error('scripts/sinks.mjs --only victorialogs could not set VictoriaLogs up');
  const logs = await startVictoriaLogs(paths);

  // The archive: N events, one change each.
  const db = join(dir, 'events.db');
  const store = new SqliteEventStore({ path: db });
  const t0 = performance.now();
  const base = Date.now() - 60_000;
  for (let i = 0; i < N; i++) {
    const t = new Date(base + Math.floor((i * 60_000) / N)).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const ns = `ns-${i % 20}`;
    await store.create(
      { metadata: { name: `e-${i}`, namespace: ns, uid: `uid-${i}` }, involvedObject: { kind: 'Pod', namespace: ns, name: `pod-${i}` }, ...kubeletFields(i, t) },
      { occurrence: {} },
    );
  }
  await store.close();
  process.stdout.write(`archive: ${N} events written in ${((performance.now() - t0) / 1000).toFixed(1)}s\n`);

  // Baseline: the same records as the sink makes them, pushed directly.
  const config = parseExportConfig(`sinks:\n  - name: logs\n    type: loki\n    url: ${logs.address}\n    path: "${PUSH_PATH}"\n`);
  const options = config.sinks[0]!.options as Parameters<typeof lokiPushBody>[1];
  const log = new SqliteExportLog({ path: db });
  const bodies: string[] = [];
  for (let after = 0; ; ) {
    const changes = await log.read(after, BATCH);
    if (changes.length === 0) break;
    bodies.push(lokiPushBody(changes.map((c) => recordOf('occurrences', fieldsOf(c), undefined, undefined)!), options));
    after = changes.at(-1)!.id;
  }
  await log.close();
  const b0 = performance.now();
  for (const body of bodies) {
    const res = await fetch(`${logs.address}${PUSH_PATH}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Scope-OrgID': '1' }, body });
    if (!res.ok) throw new Error(`baseline push: ${res.status} ${await res.text()}`);
  }
  const baselineRate = N / ((performance.now() - b0) / 1000);

  // kevents export, the built CLI.
  const file = join(dir, 'export.yaml');
  writeFileSync(file, `sinks:\n  - name: logs\n    type: loki\n    url: ${logs.address}\n    path: "${PUSH_PATH}"\n    tenant: "2"\n    batchSize: ${BATCH}\n`);
  const child = spawn(process.execPath, [...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== ''), CLI, 'export', '--config', file, '--from', `sqlite:${db}`, '--listen', '127.0.0.1:0', '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /readiness on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`kevents export exited with ${code}: ${out}`)));
  });
  // Progress is read from the saved position (a scrape of /metrics counts the queue, which costs the exporter).
  const archive = new Database(db, { readonly: true });
  const head = (archive.prepare('SELECT max(id) AS id FROM occurrences').get() as { id: number }).id;
  const position = archive.prepare("SELECT position FROM export_positions WHERE sink = 'logs'");
  const k0 = performance.now();
  while (((position.get() as { position: number } | undefined)?.position ?? 0) < head) await sleep(5);
  archive.close();
  const keventsRate = N / ((performance.now() - k0) / 1000);
  child.kill('SIGTERM');

  await sleep(3_000);
  const [baselineHeld, keventsHeld] = [await count(logs.address, '1'), await count(logs.address, '2')];
  await logs.stop();
  process.stdout.write(
    [
      `loki push (VictoriaLogs ${paths.version}), ${N} events in batches of ${BATCH}:`,
      `  baseline (the same bodies, fetch): ${Math.round(baselineRate)} events/s (${baselineHeld} held)`,
      `  kevents export:                    ${Math.round(keventsRate)} events/s (${keventsHeld} held)`,
      `  ratio kevents/baseline: ${(keventsRate / baselineRate).toFixed(2)}; target ${TARGET} events/s: ${keventsRate >= TARGET ? 'met' : 'not met'}`,
      '',
    ].join('\n'),
  );
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
