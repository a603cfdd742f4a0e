/**
 * Soak benchmark: a long run of the whole pipeline at a steady rate.
 * `kevents serve` (the source, an SQLite store) takes BENCH_RATE (default
 * 500) creates/s for BENCH_MINUTES (default 30); `kevents mirror` archives it
 * into SQLite; `kevents export` delivers the archive to a real Kafka broker
 * and a real OpenSearch node (from scripts/sinks.mjs), both under the
 * occurrences policy. It reports:
 *
 *   - every change delivered once: the creates the source acknowledged, the
 *     occurrences in the archive, the Kafka records read back (and distinct
 *     ids among them), the OpenSearch documents (the record id is the `_id`);
 *   - the resident memory of each process, sampled every 10 s: the mean of
 *     the last 10 minutes against the mean of minutes 5 to 15 (target: within
 *     10%), scaled to the run's length when it is shorter;
 *   - every line logged at error level by the three processes (target: none).
 *
 * Run: npm run build && node --import tsx bench/soak.ts   (BENCH_MINUTES=2 for a short check)
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { sinkPaths, startKafka, startOpenSearch } from '../test/support/sink-servers.js';
import { benchDir, rssMiB, sleep, startCli, stopCli } from './support/cli.js';
import { Writer } from './support/writer.js';

const RATE = Number(process.env.BENCH_RATE ?? 500);
const MINUTES = Number(process.env.BENCH_MINUTES ?? 30);
const SAMPLE_MS = 10_000;
const dir = benchDir('soak');

const paths = sinkPaths(['kafka', 'opensearch']);
if (paths.kafka === undefined || paths.opensearch === undefined) throw new Error('Kafka and OpenSearch could not be set up: run node scripts/sinks.mjs --only kafka,opensearch');
const [kafka, os] = await Promise.all([startKafka(paths.kafka), startOpenSearch(paths.opensearch, { jvm: ['-Xms1g', '-Xmx1g'] })]);
const archive = join(dir, 'archive.db');
const config = join(dir, 'export.yaml');
writeFileSync(
  config,
  `sinks:
  - name: kafka
    type: kafka
    brokers: [${kafka.address}]
    topic: soak
    policy: occurrences
  - name: search
    type: opensearch
    url: ${os.address}
    index: soak-{yyyy.MM.dd}
    policy: occurrences
`,
);

const logs = new Map<string, string[]>();
function follow(name: string, child: { stdout: NodeJS.ReadableStream | null; stderr: NodeJS.ReadableStream | null }): void {
  const lines: string[] = [];
  logs.set(name, lines);
  for (const s of [child.stdout, child.stderr]) s?.on('data', (d: Buffer) => lines.push(...d.toString().split('\n').filter((l) => l.includes('"level":"error"'))));
}

// The source keeps its events in SQLite: in memory its RSS would grow with every event it holds, by design.
const serve = await startCli(['serve', '--listen', '127.0.0.1:0', '--storage', `sqlite:${join(dir, 'source.db')}`, '--event-ttl', '2h', '--log-level', 'warn'], /listening on (http:\/\/\S+)/);
const mirror = await startCli(['mirror', '--source', serve.url, '--to', `sqlite:${archive}`, '--cluster', 'soak', '--listen', '127.0.0.1:0', '--log-level', 'warn'], /readiness on (http:\/\/\S+)/);
const exporter = await startCli(['export', '--config', config, '--from', `sqlite:${archive}`, '--listen', '127.0.0.1:0', '--log-level', 'warn'], /readiness on (http:\/\/\S+)/);
const processes = { serve: serve.child, mirror: mirror.child, export: exporter.child };
for (const [name, child] of Object.entries(processes)) follow(name, child);

const samples: { atMin: number; rss: Record<string, number> }[] = [];
const started = Date.now();
const sampler = setInterval(() => {
  samples.push({ atMin: (Date.now() - started) / 60_000, rss: Object.fromEntries(Object.entries(processes).map(([n, c]) => [n, rssMiB(c.pid!)])) });
}, SAMPLE_MS);
const writer = new Writer(serve.url, 0, RATE);
console.log(`soak: ${RATE} creates/s for ${MINUTES} min through serve -> mirror -> export (Kafka, OpenSearch)`);
await writer.run(MINUTES * 60);
clearInterval(sampler);
console.log(`source: ${writer.sent} creates acknowledged, ${writer.failed} failed`);

async function metric(base: string, name: string): Promise<number> {
  const line = (await (await fetch(`${base}/metrics`)).text()).split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line === undefined ? NaN : Number(line.split(' ').at(-1));
}
async function searchCount(): Promise<number> {
  await fetch(`${os.address}/soak-*/_refresh`, { method: 'POST' });
  return ((await (await fetch(`${os.address}/soak-*/_count`)).json()) as { count?: number }).count ?? 0;
}
const deadline = Date.now() + 10 * 60_000;
while ((await metric(mirror.url, 'kevents_mirror_occurrences_written_total')) < writer.sent && Date.now() < deadline) await sleep(1000);
while ((await searchCount()) < writer.sent && Date.now() < deadline) await sleep(2000);
const archived = await metric(mirror.url, 'kevents_mirror_occurrences_written_total');
const indexed = await searchCount();

// Kafka: read the topic back from the start and count records and distinct ids.
const client = new Kafka({ clientId: 'soak', brokers: [kafka.address], logLevel: logLevel.NOTHING });
const consumer = client.consumer({ groupId: `soak-${Date.now()}` });
await consumer.connect();
await consumer.subscribe({ topics: ['soak'], fromBeginning: true });
let records = 0;
const ids = new Set<string>();
let lastAt = Date.now();
await consumer.run({
  eachMessage: ({ message }) => {
    records++;
    ids.add(message.headers?.['kevents-id']?.toString() ?? '');
    lastAt = Date.now();
    return Promise.resolve();
  },
});
while (Date.now() - lastAt < 10_000 && Date.now() < deadline) await sleep(1000);
await consumer.disconnect();
console.log(`delivered: archive ${archived} occurrences; Kafka ${records} records (${ids.size} distinct ids); OpenSearch ${indexed} documents; want ${writer.sent} each`);

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
// Minutes 5-15 and the last 10 of 30, scaled to a shorter run.
const scale = MINUTES / 30;
for (const name of Object.keys(processes)) {
  const early = mean(samples.filter((s) => s.atMin >= 5 * scale && s.atMin < 15 * scale).map((s) => s.rss[name]!));
  const late = mean(samples.filter((s) => s.atMin >= MINUTES - 10 * scale).map((s) => s.rss[name]!));
  console.log(`rss ${name}: ${early.toFixed(0)} MiB (minutes ${(5 * scale).toFixed(1)}-${(15 * scale).toFixed(1)}) -> ${late.toFixed(0)} MiB (last ${(10 * scale).toFixed(1)}): ${(((late - early) / early) * 100).toFixed(1)}%`);
}
for (const [name, lines] of logs) console.log(`errors logged by ${name}: ${lines.length}${lines.length > 0 ? `, first: ${lines[0]}` : ''}`);

for (const c of [exporter.child, mirror.child, serve.child]) await stopCli(c);
await Promise.all([kafka.stop(), os.stop()]);
