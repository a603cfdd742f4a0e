import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import type { CoreEvent } from '../api/index.js';
import { CollectingLogger } from '../internal/index.js';
import type { EventStore, ExportLog } from '../storage/index.js';
import { PostgresEventStore, PostgresExportLog } from '../storage/postgres/index.js';
import { SqliteEventStore, SqliteExportLog } from '../storage/sqlite/index.js';
import { parseExportConfig } from './config.js';
import { createExporter } from './exporter.js';
import { SINK_TYPES } from './sinks/index.js';
import { SinkRejected } from './types.js';
import type { ExportRecord, ExportSink, SinkType } from './types.js';
import { POSTGRES_URL, testSchemas } from '../../test/support/postgres.js';

/** FlakySink is a sink under the test's control: unavailable for a number of sends, refusing the records of some events. */
class FlakySink implements ExportSink {
  received: ExportRecord[] = [];
  unavailable = 0;
  refuse = new Set<string>();
  send(records: ExportRecord[]): Promise<void> {
    if (this.unavailable > 0) {
      this.unavailable--;
      return Promise.reject(new Error('connect ECONNREFUSED'));
    }
    if (records.some((r) => this.refuse.has(r.fields.name))) return Promise.reject(new SinkRejected('400 Bad Request'));
    this.received.push(...records);
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

function event(name: string, count = 1): CoreEvent {
  return {
    metadata: { name, namespace: 'prod', uid: `uid-${name}` },
    involvedObject: { kind: 'Pod', namespace: 'prod', name: `${name}-pod` },
    reason: 'Pulled',
    message: 'pulled',
    type: 'Normal',
    count,
    lastTimestamp: new Date(Date.UTC(2025, 0, 1, 0, 0, count)).toISOString().replace('.000', ''),
  };
}

async function until(what: string, fn: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(20);
  }
}

/** Archive is a fresh archive of one backend: its store, an export log over it, and how to remove both. */
interface Archive {
  store: EventStore;
  log: ExportLog;
  destroy: () => Promise<void>;
}

const dir = mkdtempSync(join(tmpdir(), 'kevents-exporter-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const postgres = testSchemas('kevents_exporter');

const BACKENDS: Record<string, () => Promise<Archive>> = {
  'an SQLite': () => {
    const path = join(dir, `a${n++}.db`);
    const store = new SqliteEventStore({ path });
    const log = new SqliteExportLog({ path });
    return Promise.resolve({ store, log, destroy: () => log.close().then(() => store.close()) });
  },
  'a PostgreSQL': async () => {
    const schema = postgres.fresh();
    const store = new PostgresEventStore({ connectionString: POSTGRES_URL, schema, poolSize: 3 });
    await store.ready();
    const log = await PostgresExportLog.open({ connectionString: POSTGRES_URL, schema });
    return {
      store,
      log,
      destroy: async () => {
        await log.close();
        await store.close();
        await postgres.drop(schema);
      },
    };
  },
};

for (const [backend, open] of Object.entries(BACKENDS)) void describe(`exporter over ${backend} archive`, () => {

  void it('delivers through an outage, dead-letters what the sink refuses, and resumes at its position', async () => {
    const { store, log, destroy } = await open();
    const sink = new FlakySink();
    SINK_TYPES.flaky = { fields: [], defaultPolicy: 'upsert', read: () => ({}), create: () => sink } satisfies SinkType;
    const config = parseExportConfig('sinks:\n  - name: f\n    type: flaky\n    batchSize: 3\n    retry: { maxAttempts: 2, initialBackoff: 1ms, maxBackoff: 5ms }\n');
    const exporter = createExporter({ log, config, pollIntervalMs: 5 });
    for (const n of ['a', 'b', 'c', 'd']) await store.create(event(n), { occurrence: {} });
    for (let c = 2; c <= 4; c++) await store.guaranteedUpdate('prod', 'a', () => event('a', c), { occurrence: {} });
    sink.unavailable = 5;
    sink.refuse.add('c');
    exporter.start();
    await until('everything but c is delivered', async () => (await log.getPosition('f'))?.position === (await log.head()));
    await exporter.stop();
    const docs = new Map(sink.received.map((r) => [r.documentId, r.fields.count]));
    assert.deepEqual(Object.fromEntries(docs), { 'uid-a': 4, 'uid-b': 1, 'uid-d': 1 });
    const dead = await log.deadLetters('f', 10);
    assert.equal(dead.length, 1);
    assert.equal(JSON.parse(dead[0]!.record).fields.name, 'c');
    assert.equal(dead[0]!.attempts, 2);
    assert.equal(await exporter.metrics.failed.get().then((m) => m.values[0]?.value), 5 + 1 + 2);

    // A new exporter resumes at the position: only what came after is sent.
    const before = sink.received.length;
    await store.guaranteedUpdate('prod', 'b', () => event('b', 2), { occurrence: {} });
    const again = createExporter({ log, config, pollIntervalMs: 5 });
    again.start();
    await until('the bump is delivered', () => sink.received.length > before);
    await again.stop();
    assert.deepEqual(sink.received.slice(before).map((r) => [r.documentId, r.fields.count]), [['uid-b', 2]]);
    delete SINK_TYPES.flaky;
    await destroy();
  });

  void it("gives the alert policy's messages the explainer's cause, usable in templates with its escape, and no other policy's fields", async () => {
    const { store, log, destroy } = await open();
    const alerts = new FlakySink();
    const rows = new FlakySink();
    SINK_TYPES.alerts = { fields: [], defaultPolicy: 'alert', read: () => ({}), create: () => alerts } satisfies SinkType;
    SINK_TYPES.rows = { fields: [], defaultPolicy: 'occurrences', read: () => ({}), create: () => rows } satisfies SinkType;
    const config = parseExportConfig(
      [
        'sinks:',
        '  - name: a',
        '    type: alerts',
        '    alert: { groupWait: 0s }',
        '    template: { text: "{{ reason }}: {{ cause | mrkdwn }}", cause: "{{ cause }}" }',
        '  - name: r',
        '    type: rows',
        '',
      ].join('\n'),
    );
    // The sentence repeats event text, as the catalogue's do: the template's filter escapes it, the whole reference keeps it.
    const explain = (e: CoreEvent): string | undefined => (e.type === 'Warning' ? `${e.involvedObject.name ?? ''} failed: <!channel> & more` : undefined);
    const exporter = createExporter({ log, config, pollIntervalMs: 5, explain });
    await store.create({ ...event('w'), type: 'Warning', reason: 'BackOff' }, { occurrence: {} });
    await store.create(event('n'), { occurrence: {} });
    exporter.start();
    await until('both sinks got both changes', () => alerts.received.length === 2 && rows.received.length === 2);
    await exporter.stop();
    const byName = new Map(alerts.received.map((r) => [r.fields.name, r]));
    assert.deepEqual(byName.get('w')!.payload, { text: 'BackOff: w-pod failed: &lt;!channel&gt; &amp; more', cause: 'w-pod failed: <!channel> & more' });
    assert.equal(byName.get('w')!.fields.cause, 'w-pod failed: <!channel> & more');
    // An event the explainer cannot explain has no cause: an empty text, a null value.
    assert.deepEqual(byName.get('n')!.payload, { text: 'Pulled: ', cause: null });
    assert.deepEqual(rows.received.map((r) => Object.hasOwn(r.fields, 'cause')), [false, false], 'the record policies carry no cause');
    delete SINK_TYPES.alerts;
    delete SINK_TYPES.rows;
    await destroy();
  });

  void it('asks a sink that can tell which records of a redelivery it holds, at start and after a failed send, and sends only the rest', async () => {
    const { store, log, destroy } = await open();
    /** HalfSink takes the first record of a batch, then fails the send once, as a server that went away half way. */
    class HalfSink extends FlakySink {
      asked: string[][] = [];
      halfFail = 1;
      override send(records: ExportRecord[]): Promise<void> {
        if (this.halfFail > 0) {
          this.halfFail--;
          this.received.push(records[0]!);
          return Promise.reject(new Error('socket hang up'));
        }
        return super.send(records);
      }
      delivered(records: ExportRecord[]): Promise<Set<string>> {
        this.asked.push(records.map((r) => r.id));
        const held = new Set(this.received.map((r) => r.id));
        return Promise.resolve(new Set(records.filter((r) => held.has(r.id)).map((r) => r.id)));
      }
    }
    const sink = new HalfSink();
    SINK_TYPES.half = { fields: [], defaultPolicy: 'occurrences', read: () => ({}), create: () => sink } satisfies SinkType;
    const config = parseExportConfig('sinks:\n  - name: h\n    type: half\n    batchSize: 10\n    retry: { initialBackoff: 1ms, maxBackoff: 5ms }\n');
    for (const n of ['a', 'b', 'c']) await store.create(event(n), { occurrence: {} });
    const exporter = createExporter({ log, config, pollIntervalMs: 5 });
    exporter.start();
    await until('everything is delivered', async () => (await log.getPosition('h'))?.position === (await log.head()));
    await exporter.stop();
    // Asked before the first send (a start) and before the retry; the record taken half way is not sent twice.
    assert.equal(sink.asked.length, 2);
    assert.deepEqual(sink.received.map((r) => r.fields.name), ['a', 'b', 'c']);
    // Once a send succeeded the runner no longer asks.
    await store.create(event('d'), { occurrence: {} });
    const again = createExporter({ log, config, pollIntervalMs: 5 });
    again.start();
    await until('d is delivered', () => sink.received.length === 4);
    await store.create(event('e'), { occurrence: {} });
    await until('e is delivered', () => sink.received.length === 5);
    await again.stop();
    assert.equal(sink.asked.length, 3, 'asked once more, at the second start only');
    assert.deepEqual(sink.received.map((r) => r.fields.name), ['a', 'b', 'c', 'd', 'e']);
    delete SINK_TYPES.half;
    await destroy();
  });

  void it('names an archive it cannot read in its readiness, logs it once, and delivers what follows once it reads again', async () => {
    const { store, log, destroy } = await open();
    let down = false;
    /** The archive going away: every read fails as a lost connection does, until `down` is cleared. */
    const unreachable: ExportLog = {
      read: (after, limit) => (down ? Promise.reject(new Error('postgres: connect ECONNREFUSED 127.0.0.1:5432')) : log.read(after, limit)),
      head: () => log.head(),
      pending: (after, cap) => log.pending(after, cap),
      getPosition: (sink) => log.getPosition(sink),
      commit: (sink, update) => log.commit(sink, update),
      deadLetters: (sink, limit) => log.deadLetters(sink, limit),
      close: () => log.close(),
    };
    const sink = new FlakySink();
    SINK_TYPES.flaky = { fields: [], defaultPolicy: 'occurrences', read: () => ({}), create: () => sink } satisfies SinkType;
    const config = parseExportConfig('sinks:\n  - name: f\n    type: flaky\n    retry: { initialBackoff: 1ms, maxBackoff: 5ms }\n');
    const logger = new CollectingLogger();
    const exporter = createExporter({ log: unreachable, config, pollIntervalMs: 5, logger });
    await store.create(event('a'), { occurrence: {} });
    exporter.start();
    await until('a is delivered', () => sink.received.length === 1);
    assert.deepEqual(exporter.readiness(), { ready: true, message: 'ok' });
    down = true;
    await until('the readiness names the archive', () => !exporter.readiness().ready);
    assert.match(exporter.readiness().message, /^sink f: cannot read the archive \(for \d+s; the position stays where it is\): postgres: connect ECONNREFUSED/);
    await store.create(event('b'), { occurrence: {} });
    await sleep(50);
    down = false;
    await until('b is delivered', () => sink.received.length === 2);
    assert.deepEqual(exporter.readiness(), { ready: true, message: 'ok' });
    await exporter.stop();
    assert.deepEqual(sink.received.map((r) => r.fields.name), ['a', 'b']);
    assert.equal(logger.messages('warn').filter((m) => m === 'export: cannot read the archive; retrying').length, 1, 'one line for the episode, not one per retry');
    assert.equal(logger.messages('info').filter((m) => m === 'export: the archive can be read again').length, 1);
    delete SINK_TYPES.flaky;
    await destroy();
  });

  void it('names an archive it cannot save its position in, while a batch waits to be committed, and commits it once it can', async () => {
    const { store, log, destroy } = await open();
    let down = false;
    /** Reads succeed (the batch was read before the archive went away); every commit fails until `down` is cleared. */
    const unsavable: ExportLog = {
      read: (after, limit) => log.read(after, limit),
      head: () => log.head(),
      pending: (after, cap) => log.pending(after, cap),
      getPosition: (sink) => log.getPosition(sink),
      commit: (sink, update) => (down ? Promise.reject(new Error('postgres: connect ECONNREFUSED 127.0.0.1:5432')) : log.commit(sink, update)),
      deadLetters: (sink, limit) => log.deadLetters(sink, limit),
      close: () => log.close(),
    };
    const sink = new FlakySink();
    SINK_TYPES.flaky = { fields: [], defaultPolicy: 'occurrences', read: () => ({}), create: () => sink } satisfies SinkType;
    const config = parseExportConfig('sinks:\n  - name: f\n    type: flaky\n    retry: { initialBackoff: 1ms, maxBackoff: 5ms }\n');
    const exporter = createExporter({ log: unsavable, config, pollIntervalMs: 5, logger: new CollectingLogger() });
    await store.create(event('a'), { occurrence: {} });
    exporter.start();
    await until('a is delivered', () => sink.received.length === 1);
    await until('a is committed', async () => (await log.getPosition('f')) !== undefined);
    down = true;
    await store.create(event('b'), { occurrence: {} });
    await until('b is delivered', () => sink.received.length === 2);
    await until('the readiness names the archive', () => !exporter.readiness().ready);
    assert.match(exporter.readiness().message, /^sink f: cannot save the position in the archive \(for \d+s; retrying\): postgres: connect ECONNREFUSED/);
    const stuck = (await log.getPosition('f'))!.position;
    down = false;
    await until('b is committed', async () => (await log.getPosition('f'))!.position > stuck);
    assert.deepEqual(exporter.readiness(), { ready: true, message: 'ok' });
    await exporter.stop();
    assert.deepEqual(sink.received.map((r) => r.fields.name), ['a', 'b']);
    delete SINK_TYPES.flaky;
    await destroy();
  });
});
