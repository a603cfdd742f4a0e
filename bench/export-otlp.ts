/**
 * Export benchmark, OTLP: `kevents export` (the built CLI, as a process) delivering an SQLite
 * archive's changes as OTLP/HTTP logs to a real OpenTelemetry Collector (`otelcol` from
 * scripts/peers.mjs, its otlp receiver into the debug exporter), against the same requests (the
 * same ExportLogsServiceRequest bodies, serialised beforehand from the same records, same batch
 * size) posted one after the other by this process with the sink's HTTP client (node:http,
 * keep-alive), before and after the exporter, in the same run.
 *
 *   - BENCH_EVENTS (default 100,000) archived changes, records/s, as a share of the direct
 *     requests (the mean of before and after). Target: 20,000 records/s and 70% of direct.
 *   - With BENCH_OUTAGE_S (default 300; 0 skips it): the collector is down while changes arrive at
 *     BENCH_RATE (default 1,000) a second; the exporter's RSS every 10 s (target: flat), then how
 *     long it takes to deliver the backlog once the collector is back.
 *
 * Run: npm run build && node --import tsx bench/export-otlp.ts (BENCH_EXPORT_NODE_ARGS="--cpu-prof" profiles the exporter)
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { otlpLogsRequest } from '../src/export/index.js';
import { SqliteEventStore, SqliteExportLog } from '../src/storage/sqlite/index.js';
import { startCollector } from '../test/support/otel-collector.js';
import { archivedBatches, benchDir, fillArchive, kubeletEvent, rssMiB, sleep, startCli, stopCli, timeExport } from './support/cli.js';

const N = Number(process.env.BENCH_EVENTS ?? 100_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 1_000);
const ENCODING = (process.env.BENCH_ENCODING ?? 'protobuf') as 'protobuf' | 'json';
const OUTAGE_S = Number(process.env.BENCH_OUTAGE_S ?? 300);
const RATE = Number(process.env.BENCH_RATE ?? 1_000);
/** NODE_ARGS are node's own arguments for the timed exporter (`--cpu-prof` to profile it). */
const NODE_ARGS = (process.env.BENCH_EXPORT_NODE_ARGS ?? '').split(' ').filter(Boolean);
const dir = benchDir('export-otlp');

process.env.KEVENTS_PEERS ??= execFileSync(process.execPath, [new URL('../scripts/peers.mjs', import.meta.url).pathname, '--json', '--quiet', '--only', 'otelcol'], { encoding: 'utf8' });

/** direct posts the bodies one after the other, as the sink does (one request at a time, kept alive), and returns the seconds. */
async function direct(url: string, bodies: Uint8Array[]): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const contentType = ENCODING === 'json' ? 'application/json' : 'application/x-protobuf';
  const t = performance.now();
  for (const body of bodies) {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${url}/v1/logs`, { method: 'POST', agent, headers: { 'Content-Type': contentType, 'Content-Length': body.length, 'User-Agent': 'kevents-export' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(body);
    });
    if (status !== 200) throw new Error(`direct POST: ${status}`);
  }
  const seconds = (performance.now() - t) / 1000;
  agent.destroy();
  return seconds;
}

function sinkConfig(name: string, url: string): string {
  const config = join(dir, `${name}.yaml`);
  writeFileSync(config, `sinks:\n  - name: ${name}\n    type: otlp\n    url: ${url}\n    encoding: ${ENCODING}\n    batchSize: ${BATCH}\n    retry: { initialBackoff: 200ms, maxBackoff: 5s }\n`);
  return config;
}

async function throughput(url: string, db: string): Promise<void> {
  const bodies = await Promise.all((await archivedBatches(db, BATCH, 'occurrences')).map((records) => otlpLogsRequest(records, ENCODING)));
  const bytes = bodies.reduce((n, b) => n + b.length, 0);
  // Warm the collector up on the same bodies, so neither side pays for its start.
  await direct(url, bodies.slice(0, 20));
  const before = await direct(url, bodies);
  const { total, steady } = await timeExport(sinkConfig('otel', url), db, 'otel', NODE_ARGS);
  const after = await direct(url, bodies);
  const baseRate = (2 * N) / (before + after);
  console.log(`direct: ${Math.round(baseRate)} records/s (${before.toFixed(2)} s before, ${after.toFixed(2)} s after the exporter; ${bodies.length} requests, ${(bytes / N).toFixed(0)} bytes a record in ${ENCODING})`);
  console.log(
    `kevents export: ${Math.round(N / total)} records/s including process start (${total.toFixed(2)} s), ${Math.round(N / steady)} records/s from the first batch; ${((N / steady / baseRate) * 100).toFixed(0)}% of direct`,
  );
}

async function outage(collector: Awaited<ReturnType<typeof startCollector>>): Promise<void> {
  const db = join(dir, 'outage.db');
  await fillArchive(db, 1);
  const exporter = await startCli(['export', '--config', sinkConfig('down', collector.otlpUrl), '--from', `sqlite:${db}`, '--listen', '127.0.0.1:0', '--log-level', 'error'], /readiness on (http:\/\/\S+)/);
  await sleep(2_000);
  await collector.down();
  const store = new SqliteEventStore({ path: db });
  const samples: number[] = [];
  const t0 = Date.now();
  let written = 0;
  let nextSample = t0;
  while (Date.now() - t0 < OUTAGE_S * 1000) {
    // RATE changes a second, in ticks of 100 ms.
    const due = Math.floor(((Date.now() - t0) / 1000) * RATE);
    for (; written < due; written++) await store.create(kubeletEvent(1_000_000 + written, Date.now()) as never, { occurrence: {} });
    if (Date.now() >= nextSample) {
      samples.push(rssMiB(exporter.child.pid!));
      nextSample += 10_000;
    }
    await sleep(100);
  }
  await store.close();
  console.log(`outage: ${written} changes in ${OUTAGE_S} s with the collector down; exporter RSS every 10 s (MiB): ${samples.map((s) => s.toFixed(0)).join(' ')}`);
  console.log(`outage: RSS first ${samples[0]!.toFixed(0)} MiB, max ${Math.max(...samples).toFixed(0)} MiB, last ${samples.at(-1)!.toFixed(0)} MiB`);
  const log = new SqliteExportLog({ path: db });
  const head = await log.head();
  await collector.up();
  const t = performance.now();
  while (((await log.getPosition('down'))?.position ?? 0) < head) await sleep(20);
  console.log(`outage: the backlog of ${written} changes delivered ${((performance.now() - t) / 1000).toFixed(1)} s after the collector came back (retry backoff at most 5 s)`);
  await log.close();
  await stopCli(exporter.child);
}

const collector = await startCollector({ exporter: 'debug' });
const db = join(dir, 'archive.db');
const t = performance.now();
await fillArchive(db, N);
console.log(`archive: ${N} changes written in ${((performance.now() - t) / 1000).toFixed(1)} s; batches of ${BATCH}; otelcol ${JSON.parse(process.env.KEVENTS_PEERS).otelcolVersion as string}`);
await throughput(collector.otlpUrl, db);
if (OUTAGE_S > 0) await outage(collector);
await collector.stop();
process.exit(0);
