import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { SINK_TYPES, parseExportConfig } from '../src/export/index.js';
import type { ExportRecord } from '../src/export/index.js';
import { noopLogger } from '../src/internal/index.js';
import { Workload, archiveChanges } from './support/event-workload.js';
import { exportMetric, killInFlight, outageWithKill, startExport, stopExport } from './support/export-process.js';
import type { ExportProcess } from './support/export-process.js';
import { startServer } from './support/server-process.js';
import { sinkPaths, startKafka } from './support/sink-servers.js';

/**
 * Kafka end to end: a real KRaft broker (jars from Maven Central, started by
 * scripts/sinks.mjs's setup), `kevents export` producing the archive's changes
 * to an upsert topic (key = event uid: the last message of a key is the event
 * at its final count) and an occurrences topic (Warnings routed to a topic of
 * their own), with the librdkafka producer where it was built; the broker is down for a minute (SIGKILL, then restarted on its
 * data) while the exporter is killed with SIGKILL twice, and once more with batches in flight after it. A consumer reading
 * both topics from the start must find every change under its id, and no id
 * that is not one.
 */

const OUTAGE_MS = Number(process.env.KEVENTS_EXPORT_OUTAGE_MS ?? 60_000);
const paths = sinkPaths(['kafka']);
/** The producer of the kill -9 run: librdkafka (several requests in flight) where scripts/sinks.mjs could build it. */
const client = paths.kafka?.nodePath !== undefined ? 'librdkafka' : 'kafkajs';
const exportEnv = paths.kafka?.nodePath !== undefined ? { NODE_PATH: paths.kafka.nodePath } : {};

interface Message {
  topic: string;
  partition: number;
  key: string;
  id: string;
  value: any;
}

async function until(what: string, fn: () => Promise<boolean> | boolean, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(250);
  }
}

void describe('kevents export to Kafka', { skip: paths.kafka === undefined ? 'Kafka could not be set up (scripts/sinks.mjs)' : false }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-export-kafka-'));
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  void it('reads back which records of a batch the broker already holds, across partitions and topics, and nothing else', { timeout: 300_000 }, async () => {
    const broker = await startKafka(paths.kafka!);
    cleanups.push(() => broker.stop());
    const sinkType = SINK_TYPES.kafka!;
    const { options } = parseExportConfig(`sinks:\n  - { name: k, type: kafka, brokers: [${broker.address}], topic: check-a }\n`).sinks[0]!;
    const record = (i: number, topic?: string): ExportRecord => ({
      id: `uid-${i % 7}.${i}`,
      documentId: `uid-${i % 7}.${i}`,
      key: `uid-${i % 7}`,
      version: i,
      policy: 'occurrences',
      fields: {} as never,
      payload: { i },
      ...(topic !== undefined ? { topic } : {}),
    });
    const signal = new AbortController().signal;
    const first = sinkType.create(options, { logger: noopLogger, env: {} });
    // Nothing produced yet (the topics do not even exist): nothing is held.
    assert.deepEqual([...(await first.delivered!([record(0), record(1, 'check-b')], signal))], []);
    const sent = Array.from({ length: 40 }, (_, i) => record(i, i % 3 === 0 ? 'check-b' : undefined));
    // Topics the broker creates on first use have no leader for a moment: create them, and wait for their leaders.
    const admin = new Kafka({ clientId: 'kevents-test', brokers: [broker.address], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'check-a', numPartitions: 3 }, { topic: 'check-b', numPartitions: 3 }], waitForLeaders: true });
    await admin.disconnect();
    await first.send(sent, signal);
    await first.close();
    // A new producer session (as after a crash) asks about the batch it would send again, plus records never sent.
    const second = sinkType.create(options, { logger: noopLogger, env: {} });
    const batch = [...sent.slice(25), ...Array.from({ length: 10 }, (_, i) => record(100 + i, i % 2 === 0 ? 'check-b' : undefined))];
    const held = await second.delivered!(batch, signal);
    assert.deepEqual([...held].sort(), sent.slice(25).map((r) => r.id).sort());
    await second.close();
  });

  void it(`delivers upserts and occurrences through a broker outage and four kill -9s, one after a delivered batch (${client} producer)`, { timeout: 900_000 }, async () => {
    const broker = await startKafka(paths.kafka!);
    cleanups.push(() => broker.stop());
    const db = join(dir, 'events.db');
    const server = await startServer(['--storage', `sqlite:${db}`]);
    cleanups.push(() => server.stop());
    const config = join(dir, 'export.yaml');
    writeFileSync(
      config,
      `sinks:
  - name: upserts
    type: kafka
    brokers: [${broker.address}]
    topic: events-upsert
    client: ${client}
    policy: upsert
    batchSize: 50
    retry: { initialBackoff: 200ms, maxBackoff: 3s }
  - name: history
    type: kafka
    brokers: [${broker.address}]
    topic: events-occurrences
    client: ${client}
    policy: occurrences
    retry: { initialBackoff: 200ms, maxBackoff: 3s }
route:
  drop: [{ namespace: kube-system }]
  sinks: [upserts]
  routes:
    - sinks: [history]
      routes:
        - match: [{ type: Warning }]
          topic: events-warnings
          sinks: [history]
`,
    );
    let exporter: ExportProcess = await startExport(config, `sqlite:${db}`, exportEnv);
    cleanups.push(() => stopExport(exporter, 'SIGKILL'));
    const load = new Workload(server.url);
    await load.opening(4);
    await sleep(1_000);
    await stopExport(exporter, 'SIGKILL');
    await load.round(3);
    exporter = await startExport(config, `sqlite:${db}`, exportEnv);
    const restart = (): Promise<ExportProcess> => startExport(config, `sqlite:${db}`, exportEnv);
    exporter = await outageWithKill({ exporter, restart, sink: broker, round: (i) => load.round(i), from: 4, outageMs: OUTAGE_MS });
    // With the broker back and batches in flight (librdkafka: several produce requests of one batch at once), a third kill -9.
    exporter = await killInFlight({ exporter, restart, round: (i) => load.round(i), at: 7 });
    // A crash after the broker took a batch and before its position was saved, made certain: the exporter is killed and
    // each sink's position put back 30 changes. What it sends again the broker holds, twice unless the read-back drops it.
    const caughtUp = async (): Promise<boolean> => (await exportMetric(exporter, 'kevents_export_queue_depth', 'upserts')) === 0 && (await exportMetric(exporter, 'kevents_export_queue_depth', 'history')) === 0;
    await until('the exporter is at the head', caughtUp);
    await stopExport(exporter, 'SIGKILL');
    const archive = new Database(db);
    for (const sink of ['upserts', 'history']) {
      const { position } = archive.prepare('SELECT position FROM export_positions WHERE sink = ?').get(sink) as { position: number };
      const back = (archive.prepare('SELECT id FROM occurrences WHERE id <= ? ORDER BY id DESC LIMIT 1 OFFSET 30').get(position) as { id: number }).id;
      archive.prepare('UPDATE export_positions SET position = ? WHERE sink = ?').run(back, sink);
    }
    archive.close();
    exporter = await restart();
    await until('the exporter is back at the head', caughtUp);

    const { changeIds, events, finalCount } = await archiveChanges(server.url);
    const messages: Message[] = [];
    const kafka = new Kafka({ clientId: 'kevents-test', brokers: [broker.address], logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: `test-${Date.now()}` });
    await consumer.connect();
    cleanups.push(() => consumer.disconnect());
    await until('the topics exist', async () => {
      const admin = kafka.admin();
      await admin.connect();
      const topics = await admin.listTopics();
      await admin.disconnect();
      return ['events-upsert', 'events-occurrences', 'events-warnings'].every((t) => topics.includes(t));
    });
    await consumer.subscribe({ topics: ['events-upsert', 'events-occurrences', 'events-warnings'], fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        messages.push({ topic, partition, key: message.key!.toString(), id: message.headers!['kevents-id']!.toString(), value: JSON.parse(message.value!.toString()) });
        await Promise.resolve();
      },
    });
    const history = (): Message[] => messages.filter((m) => m.topic !== 'events-upsert');
    await until('every occurrence is in Kafka', () => new Set(history().map((m) => m.id)).size >= changeIds.length);
    const last = (): Map<string, Message> => new Map(messages.filter((m) => m.topic === 'events-upsert').map((m) => [m.key, m]));
    await until('every event is in Kafka at its final count', () => [...events].every((uid) => last().get(uid)?.value.count === finalCount.get(uid)));

    assert.deepEqual([...new Set(history().map((m) => m.id))].sort(), changeIds);
    for (const m of history()) assert.equal(m.topic === 'events-warnings', m.value.type === 'Warning', `${m.id} went to ${m.topic}`);
    assert.deepEqual([...last().keys()].sort(), [...events].sort());
    for (const [uid, m] of last()) {
      assert.equal(m.value.count, finalCount.get(uid), `event ${uid}`);
      assert.equal(m.key, m.value.uid);
    }
    // Nothing twice: the producer's idempotence within a session, and the sink's read-back of the tail after a crash or a lost connection.
    const upserts = messages.filter((m) => m.topic === 'events-upsert');
    assert.equal(history().length, changeIds.length, 'every change is in Kafka once');
    assert.equal(upserts.length, new Set(upserts.map((m) => m.id)).size, 'no upsert message twice');
    // Each key where kafkajs (the earlier producer, the Java client) puts it: a topic written by both keeps an event in one partition.
    const partitioner = Partitioners.DefaultPartitioner();
    const partitionMetadata = [0, 1, 2].map((partitionId) => ({ partitionId, leader: 1, partitionErrorCode: 0, replicas: [1], isr: [1] }));
    for (const m of messages) assert.equal(m.partition, partitioner({ topic: m.topic, partitionMetadata, message: { key: m.key, value: null } }), `${m.id} in partition ${m.partition}`);
    assert.match(exporter.output(), new RegExp(`kafka producer.*${client}`), 'the exporter says which producer it runs');
    assert.equal((exporter.output().match(/already held records/g) ?? []).length, 2, 'both sinks skipped what the broker held of the batch put back');
    process.stdout.write(`# ${client}: ${changeIds.length} changes of ${events.size} events; ${upserts.length} upsert messages\n`);
    await stopExport(exporter, 'SIGTERM');
  });
});
