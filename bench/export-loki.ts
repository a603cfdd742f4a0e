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
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lokiPushBody, parseExportConfig } from '../src/export/index.js';
import { SqliteEventStore } from '../src/storage/sqlite/index.js';
import { sinkPaths, startVictoriaLogs } from '../test/support/sink-servers.js';
import { archivedBatches, benchDir, sleep, timeExport } from './support/cli.js';
import { kubeletFields } from './support/events.js';

const N = Number(process.env.BENCH_EVENTS ?? 20_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 500);
const TARGET = 10_000;
const PUSH_PATH = '/insert/loki/api/v1/push?disable_message_parsing=1';

const dir = benchDir('export-loki');

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
  const bodies = (await archivedBatches(db, BATCH, 'occurrences')).map((records) => lokiPushBody(records, options));
  const b0 = performance.now();
  for (const body of bodies) {
    const res = await fetch(`${logs.address}${PUSH_PATH}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Scope-OrgID': '1' }, body });
    if (!res.ok) throw new Error(`baseline push: ${res.status} ${await res.text()}`);
  }
  const baselineRate = N / ((performance.now() - b0) / 1000);

  // kevents export, the built CLI.
  const file = join(dir, 'export.yaml');
  writeFileSync(file, `sinks:\n  - name: logs\n    type: loki\n    url: ${logs.address}\n    path: "${PUSH_PATH}"\n    tenant: "2"\n    batchSize: ${BATCH}\n`);
  const { steady } = await timeExport(file, db, 'logs', (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== ''));
  const keventsRate = N / steady;

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
