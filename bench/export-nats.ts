/**
 * Export benchmark, NATS JetStream: `kevents export` (the built CLI, as a
 * process) delivering an SQLite archive's changes to Debian's nats-server with
 * JetStream (the one the tests use, from scripts/sinks.mjs), against the same
 * client (@nats-io/transport-node + @nats-io/jetstream: `js.publish` with a
 * `Nats-Msg-Id`, the same headers, the same acknowledgements in flight)
 * publishing the same records directly, in the same run. Each writes to a
 * stream of its own (file storage, the sink's default 10 minute duplicate window).
 *
 *   - throughput: BENCH_EVENTS (default 100,000) archived changes delivered under
 *     the occurrences policy, events/s, as a share of the direct publisher;
 *     BENCH_BATCH (default 1,000) records per batch, BENCH_IN_FLIGHT (default
 *     256) acknowledgements awaited at once by both.
 *
 * Run: npm run build && node --import tsx bench/export-nats.ts
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type * as JetStream from '@nats-io/jetstream';
import type * as Nats from '@nats-io/transport-node';
import { natsMessage } from '../src/export/index.js';
import { sinkPaths, startNats } from '../test/support/sink-servers.js';
import { archivedBatches, benchDir, fillArchive, timeExport } from './support/cli.js';

const require = createRequire(import.meta.url);
const nats = require('@nats-io/transport-node') as typeof Nats;
const jetstream = require('@nats-io/jetstream') as typeof JetStream;

const N = Number(process.env.BENCH_EVENTS ?? 100_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 1_000);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 256);
const WINDOW_NS = 10 * 60 * 1e9;
const dir = benchDir('export-nats');
const server = await (async () => {
  const paths = sinkPaths(['nats']).nats;
  if (paths === undefined) throw new Error('nats-server could not be set up: run node scripts/sinks.mjs --only nats');
  return startNats(paths);
})();

const db = join(dir, 'throughput.db');
let t = performance.now();
await fillArchive(db, N);
console.log(`archive: ${N} changes written in ${((performance.now() - t) / 1000).toFixed(1)} s`);

const nc = await nats.connect({ servers: server.address });
const jsm = await jetstream.jetstreamManager(nc);
const js = jetstream.jetstream(nc);
for (const name of ['BASELINE', 'KEVENTS']) {
  await jsm.streams.add({ name, subjects: [`${name.toLowerCase()}.>`], storage: jetstream.StorageType.File, duplicate_window: WINDOW_NS });
}

// Baseline: the same records, built beforehand, published by the same client with the same headers and bound.
const batches = (await archivedBatches(db, BATCH, 'occurrences')).map((b) => b.map((r) => natsMessage(r, 'baseline.events')));
t = performance.now();
for (const batch of batches) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(IN_FLIGHT, batch.length) }, async () => {
      while (next < batch.length) {
        const m = batch[next++]!;
        const h = nats.headers();
        for (const [k, v] of Object.entries(m.headers)) h.set(k, v);
        await js.publish(m.subject, m.data, { msgID: m.msgID, headers: h });
      }
    }),
  );
}
const baseSeconds = (performance.now() - t) / 1000;
const baseRate = N / baseSeconds;

const config = join(dir, 'export.yaml');
writeFileSync(config, `sinks:\n  - name: nats\n    type: nats\n    servers: [${server.address}]\n    subject: kevents.events\n    policy: occurrences\n    batchSize: ${BATCH}\n    maxInFlight: ${IN_FLIGHT}\n    stream: { name: KEVENTS }\n    retry: { initialBackoff: 200ms, maxBackoff: 2s }\n`);
const { total, steady } = await timeExport(config, db, 'nats');
const [base, kevents] = [await jsm.streams.info('BASELINE'), await jsm.streams.info('KEVENTS')];
await nc.close();
await server.stop();
console.log(`throughput: direct js.publish ${Math.round(baseRate)} records/s (${baseSeconds.toFixed(2)} s, ${base.state.messages} stored)`);
console.log(`throughput: kevents export ${Math.round(N / total)} events/s including process start (${total.toFixed(2)} s), ${Math.round(N / steady)} events/s from the first batch (${kevents.state.messages} stored); ${((N / steady / baseRate) * 100).toFixed(0)}% of direct`);
process.exit(0);
