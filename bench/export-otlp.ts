/**
 * Export benchmark, OTLP: `kevents export` (the built CLI, as a process) delivering an SQLite
 * archive's changes as OTLP/HTTP logs to a real OpenTelemetry Collector (`otelcol` from
 * scripts/peers.mjs, its otlp receiver into the debug exporter), against two baselines in the same
 * run, each before and after the exporter (their mean):
 *
 *   - direct: the same requests (the same ExportLogsServiceRequest bodies, serialised and
 *     compressed beforehand from the same records, split as the sink splits each batch) posted by
 *     this process with the sink's HTTP client (node:http, kept alive), a batch's requests at once
 *     as the sink sends them. This is the baseline.
 *   - sink.send: the records, built beforehand from the archive, handed to the sink itself, which
 *     maps, serialises and posts them: what the exporter does less reading the archive and
 *     saving its position.
 *
 *   - BENCH_EVENTS (default 100,000) archived changes, records/s, as a share of each baseline.
 *     Target: 20,000 records/s and 70% of direct. BENCH_BATCH (1,000), BENCH_IN_FLIGHT (the sink's
 *     default maxInFlight), BENCH_ENCODING (protobuf) and BENCH_COMPRESSION (none) set the sink.
 *   - With BENCH_OUTAGE_S (default 300; 0 skips it): the collector is down while changes arrive at
 *     BENCH_RATE (default 1,000) a second; the exporter's RSS every 10 s (target: flat), then how
 *     long it takes to deliver the backlog once the collector is back.
 *
 * Run: npm run build && node --import tsx bench/export-otlp.ts (BENCH_EXPORT_NODE_ARGS="--cpu-prof" profiles the exporter)
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import type { OutgoingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { DEFAULT_MAX_IN_FLIGHT, otlpLogsRequest, otlpRequests, parseExportConfig, SINK_TYPES } from '../src/export/index.js';
import type { ExportRecord } from '../src/export/index.js';
import { noopLogger } from '../src/internal/index.js';
import { SqliteEventStore, SqliteExportLog } from '../src/storage/sqlite/index.js';
import { startCollector } from '../test/support/otel-collector.js';
import { archivedBatches, benchDir, fillArchive, kubeletEvent, rssMiB, sleep, startCli, stopCli, timeExport } from './support/cli.js';

const N = Number(process.env.BENCH_EVENTS ?? 100_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 1_000);
const ENCODING = (process.env.BENCH_ENCODING ?? 'protobuf') as 'protobuf' | 'json';
const COMPRESSION = (process.env.BENCH_COMPRESSION ?? 'none') as 'none' | 'gzip';
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? DEFAULT_MAX_IN_FLIGHT);
const OUTAGE_S = Number(process.env.BENCH_OUTAGE_S ?? 300);
const RATE = Number(process.env.BENCH_RATE ?? 1_000);
/** NODE_ARGS are node's own arguments for the timed exporter (`--cpu-prof` to profile it). */
const NODE_ARGS = (process.env.BENCH_EXPORT_NODE_ARGS ?? '').split(' ').filter(Boolean);
const dir = benchDir('export-otlp');

process.env.KEVENTS_PEERS ??= execFileSync(process.execPath, [new URL('../scripts/peers.mjs', import.meta.url).pathname, '--json', '--quiet', '--only', 'otelcol'], { encoding: 'utf8' });

/** post sends one body with the sink's headers and resolves on a 200. */
function post(url: string, agent: Agent, body: Uint8Array): Promise<void> {
  const headers: OutgoingHttpHeaders = { 'Content-Type': ENCODING === 'json' ? 'application/json' : 'application/x-protobuf', 'Content-Length': body.length, 'User-Agent': 'kevents-export' };
  if (COMPRESSION === 'gzip') headers['Content-Encoding'] = 'gzip';
  return new Promise<void>((resolve, reject) => {
    const req = request(`${url}/v1/logs`, { method: 'POST', agent, headers }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`direct POST: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * direct posts each batch's requests as the sink sends them (the same split, all of a batch at
 * once, the next batch once they answered, kept-alive connections) and returns the seconds.
 */
async function direct(url: string, batches: Uint8Array[][]): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
  const t = performance.now();
  for (const bodies of batches) await Promise.all(bodies.map((body) => post(url, agent, body)));
  const seconds = (performance.now() - t) / 1000;
  agent.destroy();
  return seconds;
}

/** viaSink hands the records, built beforehand, to the sink itself (mapping, serialising, compressing, posting), without the archive or the runner. */
async function viaSink(url: string, batches: ExportRecord[][]): Promise<number> {
  const config = parseExportConfig(readFileSync(sinkConfig('insink', url), 'utf8'));
  const sink = SINK_TYPES.otlp!.create(config.sinks[0]!.options, { logger: noopLogger, env: {} });
  const t = performance.now();
  for (const records of batches) await sink.send(records, AbortSignal.timeout(60_000));
  const seconds = (performance.now() - t) / 1000;
  await sink.close();
  return seconds;
}

function sinkConfig(name: string, url: string): string {
  const config = join(dir, `${name}.yaml`);
  writeFileSync(
    config,
    `sinks:\n  - name: ${name}\n    type: otlp\n    url: ${url}\n    encoding: ${ENCODING}\n    compression: ${COMPRESSION}\n    maxInFlight: ${IN_FLIGHT}\n    batchSize: ${BATCH}\n    retry: { initialBackoff: 200ms, maxBackoff: 5s }\n`,
  );
  return config;
}

async function throughput(url: string, db: string): Promise<void> {
  const batches = await archivedBatches(db, BATCH, 'occurrences');
  const bodies = await Promise.all(
    batches.map((records) =>
      Promise.all(otlpRequests(records, IN_FLIGHT).map(async (part) => (COMPRESSION === 'gzip' ? gzipSync(await otlpLogsRequest(part, ENCODING)) : otlpLogsRequest(part, ENCODING)))),
    ),
  );
  const bytes = bodies.flat().reduce((n, b) => n + b.length, 0);
  // Warm the collector and the sink's code up on the same requests, so no side pays for its start.
  await direct(url, bodies.slice(0, 20));
  await viaSink(url, batches.slice(0, 20));
  const before = await direct(url, bodies);
  const sinkBefore = await viaSink(url, batches);
  const { total, steady } = await timeExport(sinkConfig('otel', url), db, 'otel', NODE_ARGS);
  const sinkAfter = await viaSink(url, batches);
  const after = await direct(url, bodies);
  const baseRate = (2 * N) / (before + after);
  const sinkRate = (2 * N) / (sinkBefore + sinkAfter);
  const rate = N / steady;
  const requests = bodies.reduce((n, b) => n + b.length, 0);
  console.log(
    `direct: ${Math.round(baseRate)} records/s (${before.toFixed(2)} s before, ${after.toFixed(2)} s after the exporter; ${requests} requests, up to ${IN_FLIGHT} at once, ${(bytes / N).toFixed(0)} bytes a record in ${ENCODING}, compression ${COMPRESSION})`,
  );
  console.log(`sink.send from records built beforehand: ${Math.round(sinkRate)} records/s (${sinkBefore.toFixed(2)} s before, ${sinkAfter.toFixed(2)} s after)`);
  console.log(
    `kevents export: ${Math.round(N / total)} records/s including process start (${total.toFixed(2)} s), ${Math.round(rate)} records/s from the first batch; ${((rate / baseRate) * 100).toFixed(0)}% of direct, ${((rate / sinkRate) * 100).toFixed(0)}% of sink.send`,
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
