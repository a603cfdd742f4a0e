/**
 * Export benchmark, Kafka: `kevents export` (the built CLI, as a process)
 * delivering an SQLite archive's changes to a real KRaft broker (the one the
 * tests use, from scripts/sinks.mjs), with each producer the sink has
 * (`client: kafkajs`, the idempotent producer with one request in flight, as
 * before; `client: librdkafka`, several in flight), against kafkajs producing
 * the same records directly (acks=all, the same batch size), in the same run.
 *
 *   - throughput: BENCH_EVENTS (default 100,000) archived changes delivered
 *     under the occurrences policy, events/s, per client, as a share of the
 *     direct producer and librdkafka against kafkajs (target: 20,000 events/s,
 *     2x kafkajs);
 *   - kill: the same archive into a fresh topic with librdkafka, the exporter
 *     killed with SIGKILL at a third and at two thirds of it (batches in
 *     flight) and started again; a consumer then counts the messages and their
 *     distinct `kevents-id`s (target: both the archive's count);
 *   - latency: `kevents serve --sinks` taking BENCH_RATE (default 1,000) creates/s
 *     for BENCH_SECONDS (default 30); p50/p99 from the archive commit
 *     (`observedTime`) to the record read back by a consumer (target: p99 < 1 s);
 *   - outage: the broker down for BENCH_OUTAGE_SECONDS (default 300) while
 *     `kevents serve` takes BENCH_RATE creates/s and `kevents export` waits; the
 *     exporter's resident memory sampled every 5 s (target: flat), then the time
 *     it takes to catch up once the broker is back.
 *
 * With BENCH_BASELINE_CLI=<another build's dist/bin/kevents.js>, that build's exporter joins the throughput
 * alternation as "before" (its own default producer).
 * The librdkafka client comes from scripts/sinks.mjs's cache (on NODE_PATH for the exporters).
 * Run: npm run build && node --import tsx bench/export-kafka.ts [throughput,kill,latency,outage]
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { kafkaMessage } from '../src/export/index.js';
import { SqliteExportLog } from '../src/storage/sqlite/index.js';
import { sinkPaths, startKafka } from '../test/support/sink-servers.js';
import { archivedBatches, benchDir, fillArchive, rssMiB, sleep, startCli, stopCli, timeExport } from './support/cli.js';
import { Writer } from './support/writer.js';

const N = Number(process.env.BENCH_EVENTS ?? 100_000);
const RATE = Number(process.env.BENCH_RATE ?? 1_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const OUTAGE_SECONDS = Number(process.env.BENCH_OUTAGE_SECONDS ?? 300);
const BASELINE_CLI = process.env.BENCH_BASELINE_CLI;
const BATCH = Number(process.env.BENCH_BATCH ?? 1_000);
const only = (process.argv[2] ?? 'throughput,kill,latency,outage').split(',');
const dir = benchDir('export-kafka');
function config(broker: string, topic: string, client?: 'kafkajs' | 'librdkafka'): string {
  const path = join(dir, `${topic}.yaml`);
  // The sink is named after its topic: each run starts from the archive's beginning (its own saved position).
  writeFileSync(path, `sinks:\n  - name: ${topic}\n    type: kafka\n    brokers: [${broker}]\n    topic: ${topic}\n${client === undefined ? '' : `    client: ${client}\n`}    policy: occurrences\n    batchSize: ${BATCH}\n    retry: { initialBackoff: 200ms, maxBackoff: 2s }\n`);
  return path;
}

async function throughput(broker: string): Promise<void> {
  const db = join(dir, 'throughput.db');
  let t = performance.now();
  await fillArchive(db, N);
  console.log(`archive: ${N} changes written in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  // Baseline: the same records, built beforehand, produced by the same client with the same settings.
  const batches = (await archivedBatches(db, BATCH, 'occurrences')).map((b) => b.map((r) => kafkaMessage(r)));
  const kafka = new Kafka({ clientId: 'bench', brokers: [broker], logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: true });
  await producer.connect();
  await producer.sendBatch({ topicMessages: [{ topic: 'baseline', messages: batches[0]!.slice(0, 1) }], acks: -1 });
  t = performance.now();
  for (const messages of batches) await producer.sendBatch({ topicMessages: [{ topic: 'baseline', messages }], acks: -1 });
  const baseSeconds = (performance.now() - t) / 1000;
  await producer.disconnect();
  const baseRate = N / baseSeconds;

  console.log(`throughput: direct kafkajs ${Math.round(baseRate)} records/s (${baseSeconds.toFixed(2)} s)`);
  // Alternating, twice each, so the machine's noise falls on both clients alike; the best of each.
  const best: Record<string, number> = {};
  // BENCH_BASELINE_CLI names another build's dist/bin/kevents.js (e.g. the one before this sink had a librdkafka
  // client): its exporter, with its own default producer, runs in the same alternation as "before".
  const clients = [...(BASELINE_CLI !== undefined ? (['before'] as const) : []), 'kafkajs', 'librdkafka'] as const;
  for (const round of [1, 2]) {
    for (const client of clients) {
      const topic = `kevents-${client}-${round}`;
      const { total, steady } =
        client === 'before'
          ? await timeExport(config(broker, topic), db, topic, [], BASELINE_CLI)
          : await timeExport(config(broker, topic, client), db, topic);
      best[client] = Math.max(best[client] ?? 0, N / steady);
      console.log(`throughput: kevents export (${client}, run ${round}) ${Math.round(N / total)} events/s including process start (${total.toFixed(2)} s), ${Math.round(N / steady)} events/s from the first batch; ${((N / steady / baseRate) * 100).toFixed(0)}% of direct kafkajs`);
    }
  }
  console.log(`throughput: best librdkafka ${Math.round(best.librdkafka!)} events/s against best kafkajs ${Math.round(best.kafkajs!)} events/s: ${(best.librdkafka! / best.kafkajs!).toFixed(2)}x`);
  if (best.before !== undefined) console.log(`throughput: best librdkafka ${Math.round(best.librdkafka!)} events/s against the build before ${Math.round(best.before)} events/s: ${(best.librdkafka! / best.before).toFixed(2)}x`);
}

/** kill: librdkafka into a fresh topic, kill -9 twice with batches in flight; then every change must be in the topic once. */
async function kill(broker: string): Promise<void> {
  const db = join(dir, 'throughput.db');
  if (!existsSync(db)) await fillArchive(db, N);
  const log = new SqliteExportLog({ path: db });
  const head = await log.head();
  const cfg = config(broker, 'killed', 'librdkafka');
  const args = ['export', '--config', cfg, '--from', `sqlite:${db}`, '--listen', '127.0.0.1:0', '--log-level', 'warn'];
  const positions: number[] = [];
  for (const share of [1 / 3, 2 / 3]) {
    const exporter = await startCli(args, /readiness on (http:\/\/\S+)/);
    while (((await log.getPosition('killed'))?.position ?? 0) < head * share) await sleep(5);
    exporter.child.kill('SIGKILL');
    await new Promise((r) => exporter.child.once('exit', r));
    positions.push((await log.getPosition('killed'))?.position ?? 0);
  }
  const exporter = await startCli(args, /readiness on (http:\/\/\S+)/);
  while (((await log.getPosition('killed'))?.position ?? 0) < head) await sleep(20);
  await stopCli(exporter.child);
  await log.close();
  const kafka = new Kafka({ clientId: 'bench', brokers: [broker], logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `bench-kill-${Date.now()}` });
  await consumer.connect();
  await consumer.subscribe({ topics: ['killed'], fromBeginning: true });
  const ids = new Set<string>();
  let messages = 0;
  await consumer.run({
    eachBatch: async ({ batch }) => {
      for (const m of batch.messages) {
        messages++;
        ids.add(m.headers!['kevents-id']!.toString());
      }
      await Promise.resolve();
    },
  });
  const deadline = Date.now() + 60_000;
  while (messages < N && Date.now() < deadline) await sleep(100);
  await sleep(2_000);
  await consumer.disconnect();
  console.log(`kill: librdkafka, kill -9 at saved positions ${positions.join(' and ')} of ${head}; the topic holds ${messages} messages, ${ids.size} distinct ids, for ${N} changes: ${messages === N && ids.size === N ? 'each once' : 'NOT each once'}`);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function latency(broker: string): Promise<void> {
  const db = join(dir, 'latency.db');
  const serve = await startCli(['serve', '--storage', `sqlite:${db}`, '--listen', '127.0.0.1:0', '--sinks', config(broker, 'latency')], /listening on (http:\/\/\S+)/);
  const kafka = new Kafka({ clientId: 'bench', brokers: [broker], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'latency', numPartitions: 3 }], waitForLeaders: true });
  await admin.disconnect();
  const consumer = kafka.consumer({ groupId: `bench-${Date.now()}`, maxWaitTimeInMs: 10 });
  await consumer.connect();
  await consumer.subscribe({ topics: ['latency'], fromBeginning: true });
  const delays: number[] = [];
  await consumer.run({
    eachBatch: async ({ batch }) => {
      const now = Date.now();
      for (const m of batch.messages) delays.push(now - Date.parse((JSON.parse(m.value!.toString()) as { observedTime: string }).observedTime));
      await Promise.resolve();
    },
  });
  await sleep(2_000);
  const writer = new Writer(serve.url, 0, RATE);
  await writer.run(SECONDS);
  const deadline = Date.now() + 30_000;
  while (delays.length < writer.sent && Date.now() < deadline) await sleep(100);
  await consumer.disconnect();
  await stopCli(serve.child);
  delays.sort((a, b) => a - b);
  console.log(`latency: ${writer.sent} creates at ${RATE}/s for ${SECONDS} s (${writer.failed} failed), ${delays.length} read back; archive commit to consumer p50 ${percentile(delays, 50)} ms, p99 ${percentile(delays, 99)} ms, max ${delays.at(-1)} ms`);
}

async function outage(paths: NonNullable<ReturnType<typeof sinkPaths>['kafka']>): Promise<void> {
  const broker = await startKafka(paths);
  const db = join(dir, 'outage.db');
  const serve = await startCli(['serve', '--storage', `sqlite:${db}`, '--listen', '127.0.0.1:0'], /listening on (http:\/\/\S+)/);
  await new Writer(serve.url, 0, RATE).run(1);
  const exporter = await startCli(['export', '--config', config(broker.address, 'outage'), '--from', `sqlite:${db}`, '--listen', '127.0.0.1:0'], /readiness on (http:\/\/\S+)/);
  const log = new SqliteExportLog({ path: db });
  while (((await log.getPosition('outage'))?.position ?? 0) < (await log.head())) await sleep(100);
  await broker.down();
  const writer = new Writer(serve.url, 1_000_000, RATE);
  const writing = writer.run(OUTAGE_SECONDS);
  const samples: { s: number; rss: number }[] = [];
  const t0 = Date.now();
  while (Date.now() - t0 < OUTAGE_SECONDS * 1000) {
    await sleep(5_000);
    samples.push({ s: Math.round((Date.now() - t0) / 1000), rss: rssMiB(exporter.child.pid!) });
  }
  await writing;
  const head = await log.head();
  await broker.up();
  const t = performance.now();
  while (((await log.getPosition('outage'))?.position ?? 0) < head) await sleep(100);
  const catchUp = (performance.now() - t) / 1000;
  const rss = samples.map((x) => x.rss);
  const firstMinute = samples.filter((x) => x.s <= 60).map((x) => x.rss);
  const lastMinute = samples.filter((x) => x.s > OUTAGE_SECONDS - 60).map((x) => x.rss);
  const mean = (a: number[]): number => a.reduce((x, y) => x + y, 0) / a.length;
  console.log(`outage: broker down ${OUTAGE_SECONDS} s while ${writer.sent} creates arrived (${writer.failed} failed); exporter RSS MiB min ${Math.min(...rss).toFixed(1)}, max ${Math.max(...rss).toFixed(1)}, first-minute mean ${mean(firstMinute).toFixed(1)}, last-minute mean ${mean(lastMinute).toFixed(1)}`);
  console.log(`outage: samples ${samples.map((x) => `${x.s}s=${x.rss.toFixed(0)}`).join(' ')}`);
  console.log(`outage: caught up ${writer.sent} changes in ${catchUp.toFixed(1)} s once the broker was back`);
  await log.close();
  await stopCli(exporter.child);
  await stopCli(serve.child);
  await broker.stop();
}

const paths = sinkPaths(['kafka']).kafka;
if (paths === undefined) throw new Error('Kafka could not be set up: run node scripts/sinks.mjs --only kafka');
if (paths.nodePath === undefined) throw new Error('the librdkafka client could not be built: see scripts/sinks.mjs --only kafka');
// The exporters inherit it: the librdkafka client lives in the sinks' cache, not in node_modules.
process.env.NODE_PATH = paths.nodePath;
if (only.includes('throughput') || only.includes('kill') || only.includes('latency')) {
  const broker = await startKafka(paths);
  if (only.includes('throughput')) await throughput(broker.address);
  if (only.includes('kill')) await kill(broker.address);
  if (only.includes('latency')) await latency(broker.address);
  await broker.stop();
}
if (only.includes('outage')) await outage(paths);
process.exit(0);
