/**
 * Export benchmark, OpenSearch: `kevents export` (the built CLI, as a process)
 * delivering an SQLite archive's changes to a real single-node OpenSearch (the
 * one the tests use, from scripts/sinks.mjs) through the bulk API, against the
 * same bulk requests (same NDJSON bodies, built beforehand from the same
 * records, same batch size, same index template) posted directly with fetch
 * from this process, in the same run.
 *
 *   - for each policy (BENCH_POLICIES, default occurrences,upsert): BENCH_EVENTS
 *     (default 100,000) archived changes, events/s, as a share of the direct
 *     requests (run before and after the exporter, the mean of both; target:
 *     10,000 events/s).
 *
 * Run: npm run build && node --import tsx bench/export-opensearch.ts
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bulkBody, bulkOutcome, fieldsOf, indexTemplate, recordOf } from '../src/export/index.js';
import type { ExportRecord, PolicyName } from '../src/export/index.js';
import { SqliteExportLog } from '../src/storage/sqlite/index.js';
import { sinkPaths, startOpenSearch } from '../test/support/sink-servers.js';
import { archivedBatches, benchDir, fillArchive, timeExport } from './support/cli.js';

const N = Number(process.env.BENCH_EVENTS ?? 100_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 1_000);
const POLICIES = (process.env.BENCH_POLICIES ?? 'occurrences,upsert').split(',') as Exclude<PolicyName, 'alert' | 'first'>[];
const dir = benchDir('export-os');
async function count(base: string, pattern: string): Promise<number> {
  await fetch(`${base}/${pattern}/_refresh`, { method: 'POST' });
  const r = (await (await fetch(`${base}/${pattern}/_count`)).json()) as { count: number };
  return r.count;
}

async function direct(base: string, policy: string, bodies: { body: string; records: ExportRecord[] }[], run: string): Promise<number> {
  const pattern = `direct${run}-${policy}-{yyyy.MM.dd}`;
  const { name, body } = indexTemplate(pattern);
  const put = await fetch(`${base}/_index_template/${name}`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  if (!put.ok) throw new Error(`template: ${await put.text()}`);
  const t = performance.now();
  for (const b of bodies) {
    const r = await fetch(`${base}/_bulk?filter_path=errors,items.*.status,items.*.error.type,items.*.error.reason`, { method: 'POST', headers: { 'Content-Type': 'application/x-ndjson' }, body: b.body.replaceAll(`"_index":"kevents-${policy}-`, `"_index":"direct${run}-${policy}-`) });
    const outcome = bulkOutcome(b.records, await r.text());
    if (outcome.refused.length + outcome.unavailable.length > 0) throw new Error(`direct bulk: ${JSON.stringify(outcome).slice(0, 300)}`);
  }
  return (performance.now() - t) / 1000;
}

/** warmUp sends a few batches to a throw-away index first, so neither side pays for the server's JIT. */
async function warmUp(base: string, db: string): Promise<void> {
  const log = new SqliteExportLog({ path: db });
  const changes = await log.read(0, Math.min(N, 10 * BATCH));
  await log.close();
  const records = changes.map((c) => recordOf('occurrences', fieldsOf(c), undefined, undefined)!);
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < records.length; i += BATCH) {
      const batch = records.slice(i, i + BATCH);
      const r = await fetch(`${base}/_bulk`, { method: 'POST', headers: { 'Content-Type': 'application/x-ndjson' }, body: bulkBody(batch, () => `warmup-${round}`) });
      await r.text();
    }
  }
}

async function run(base: string, db: string, policy: Exclude<PolicyName, 'alert' | 'first'>): Promise<void> {
  // Baseline: the same records, as the same bulk bodies, built beforehand.
  const bodies = (await archivedBatches(db, BATCH, policy)).map((records) => ({ body: bulkBody(records, () => `kevents-${policy}-{yyyy.MM.dd}`), records }));
  // The direct requests run before and after the exporter (the machine's load drifts), into fresh indices each time.
  const before = await direct(base, policy, bodies, 'a');

  const config = join(dir, `${policy}.yaml`);
  writeFileSync(config, `sinks:\n  - name: os-${policy}\n    type: opensearch\n    url: ${base}\n    index: kevents-${policy}-{yyyy.MM.dd}\n    policy: ${policy}\n    batchSize: ${BATCH}\n`);
  const { total, steady } = await timeExport(config, db, `os-${policy}`);
  const exported = await count(base, `kevents-${policy}-*`);
  const afterSeconds = await direct(base, policy, bodies, 'b');
  const stored = await count(base, `direct*-${policy}-*`);
  const baseRate = (2 * N) / (before + afterSeconds);
  console.log(`${policy}: direct bulk ${Math.round(baseRate)} events/s (${before.toFixed(2)} s before, ${afterSeconds.toFixed(2)} s after the exporter; ${stored} documents)`);
  console.log(
    `${policy}: kevents export ${Math.round(N / total)} events/s including process start (${total.toFixed(2)} s), ${Math.round(N / steady)} events/s from the first batch (${exported} documents); ${((N / steady / baseRate) * 100).toFixed(0)}% of direct`,
  );
}

const paths = sinkPaths(['opensearch']).opensearch;
if (paths === undefined) throw new Error('OpenSearch could not be set up: run node scripts/sinks.mjs --only opensearch');
// A server as run for throughput: both JIT tiers, a 1 GiB heap, G1 (OpenSearch's defaults, smaller heap).
const os = await startOpenSearch(paths, { jvm: ['-Xms1g', '-Xmx1g', '-XX:+UseG1GC'] });
const db = join(dir, 'archive.db');
const t = performance.now();
await fillArchive(db, N);
console.log(`archive: ${N} changes written in ${((performance.now() - t) / 1000).toFixed(1)} s; batches of ${BATCH}; OpenSearch ${paths.version}`);
await warmUp(os.address, db);
for (const policy of POLICIES) await run(os.address, db, policy);
await os.stop();
process.exit(0);
