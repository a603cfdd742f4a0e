import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import { startExport, stopExport } from './support/export-process.js';
import type { ExportProcess } from './support/export-process.js';
import { Workload, archiveChanges } from './support/event-workload.js';
import { isSinkRejected, parseExportConfig } from '../src/export/index.js';
import type { ExportRecord, ExportSink } from '../src/export/index.js';
import { noopLogger } from '../src/internal/index.js';
import { readStream, streamState } from './support/nats-stream.js';
import type { NatsAuth, StreamMessage } from './support/nats-stream.js';
import { startServer } from './support/server-process.js';
import { sinkPaths, startNats } from './support/sink-servers.js';

/**
 * The NATS JetStream sink end to end: a `kevents serve` archive written through
 * both event APIs (creates, count and series bumps), a `kevents export` process
 * publishing it to Debian's nats-server with JetStream: every change into a
 * stream kevents creates (occurrences, JetStream's 10 minute duplicate window),
 * the same into a stream that remembers message ids for one second only (so
 * only the sink's `delivered` keeps a redelivery out), and the Warnings as
 * upserts on the subject their route names. nats-server is SIGKILLed for a
 * while and restarted with its store, and the exporter is killed with SIGKILL
 * twice while it publishes a backlog and twice more. A consumer then reads the streams back: exactly one message per
 * change, none missing, none twice.
 */

const OUTAGE_MS = Number(process.env.KEVENTS_EXPORT_OUTAGE_MS ?? 60_000);

async function until(what: string, fn: () => Promise<boolean> | boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(200);
  }
}

/** burst creates many events at once, so the exporter is in the middle of a batch when the test strikes. */
async function burst(load: Workload, prefix: string, n: number): Promise<void> {
  for (let i = 0; i < n; i += 10) await Promise.all(Array.from({ length: Math.min(10, n - i) }, (_, j) => load.core(`${prefix}-${i + j}`)));
}

/** publishing waits (polling closely) until a stream has grown by `by` messages: the exporter is then publishing a backlog. */
async function publishing(servers: string, stream: string, from: number, by: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (((await streamState(servers, stream))?.messages ?? 0) < from + by) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${stream} to grow past ${from + by}`);
    await sleep(5);
  }
}

function repeated(ids: string[]): string[] {
  const seen = new Set<string>();
  return ids.filter((id) => seen.size === seen.add(id).size);
}

void describe('kevents export to NATS JetStream', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-export-nats-'));
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  void it('publishes every change once through a nats-server crash and four kill -9s', { timeout: 600_000 }, async () => {
    const paths = sinkPaths(['nats']);
    assert.ok(paths.nats !== undefined, 'nats-server is not set up: run node scripts/sinks.mjs --only nats');
    const nats = await startNats(paths.nats);
    cleanups.push(() => nats.stop());
    const db = join(dir, 'events.db');
    const server = await startServer(['--storage', `sqlite:${db}`]);
    cleanups.push(() => server.stop());
    const config = join(dir, 'export.yaml');
    const common = `    type: nats
    servers: [${nats.address}]
    timeout: 2s
    retry: { initialBackoff: 100ms, maxBackoff: 2s }`;
    writeFileSync(
      config,
      `sinks:
  - name: history
${common}
    subject: kevents.history
    policy: occurrences
    batchSize: 7
    stream: { name: KEVENTS, subjects: ["kevents.>"] }
  - name: short
${common}
    subject: short.history
    policy: occurrences
    batchSize: 5
    maxInFlight: 2
    stream: { name: SHORT, subjects: ["short.>"], duplicateWindow: 1s, storage: file }
  - name: latest
${common}
    subject: kevents.latest
    policy: upsert
route:
  drop:
    - namespace: kube-system
  sinks: [history, short]
  routes:
    - match:
        - type: Warning
      topic: kevents.warnings
      sinks: [latest]
`,
    );
    let exporter: ExportProcess = await startExport(config, `sqlite:${db}`);
    const logs: string[] = [];
    const keep = (p: ExportProcess): void => void p.exited.then(() => logs.push(p.output()));
    keep(exporter);
    cleanups.push(() => stopExport(exporter, 'SIGKILL'));
    const load = new Workload(server.url);

    await load.opening(9);
    await until('the first changes are in the stream', async () => ((await streamState(nats.address, 'KEVENTS'))?.messages ?? 0) > 0);

    // kill -9 while changes keep coming; a burst arrives while the exporter is down, and it is killed again
    // while it publishes that backlog (a batch half published is the case delivered() is for).
    await load.round(3);
    await stopExport(exporter, 'SIGKILL');
    await load.round(4);
    let before = (await streamState(nats.address, 'SHORT'))?.messages ?? 0;
    await burst(load, 'burst-a', 200);
    exporter = await startExport(config, `sqlite:${db}`);
    keep(exporter);
    await publishing(nats.address, 'SHORT', before, 20);
    await stopExport(exporter, 'SIGKILL');

    // The same with a crash of nats-server instead, which then stays down for the outage; the exporter is
    // killed again during it.
    before = (await streamState(nats.address, 'SHORT'))?.messages ?? 0;
    await burst(load, 'burst-b', 200);
    exporter = await startExport(config, `sqlite:${db}`);
    keep(exporter);
    await publishing(nats.address, 'SHORT', before, 20);
    await nats.down();
    const outageEnds = Date.now() + OUTAGE_MS;
    await load.round(5);
    await sleep(Math.min(3_000, OUTAGE_MS / 3));
    await stopExport(exporter, 'SIGKILL');
    await load.round(6);
    exporter = await startExport(config, `sqlite:${db}`);
    keep(exporter);
    await load.round(7);
    const waited = outageEnds - Date.now();
    if (waited > 0) await sleep(waited);
    await nats.up();

    const { changeIds, events, finalCount } = await archiveChanges(server.url);
    assert.ok(changeIds.length > 80, `the workload made ${changeIds.length} changes`);
    await until('both streams hold every change', async () => {
      const [a, b] = [await streamState(nats.address, 'KEVENTS').catch(() => undefined), await streamState(nats.address, 'SHORT').catch(() => undefined)];
      return (a?.messages ?? 0) >= changeIds.length && (b?.messages ?? 0) >= changeIds.length;
    });
    await until('the Warning is at its final count', async () => {
      const latest = (await readStream(nats.address, 'KEVENTS')).filter((m) => m.subject === 'kevents.warnings');
      const last = latest.at(-1);
      return last !== undefined && (last.data as { count: number }).count === finalCount.get(last.headers['kevents-document-id']!);
    });
    // Let anything still in flight land before the streams are read for good.
    await sleep(2_000);

    const kevents = await readStream(nats.address, 'KEVENTS');
    const short = await readStream(nats.address, 'SHORT');
    const check = (what: string, messages: StreamMessage[]): void => {
      const ids = messages.map((m) => m.headers['kevents-id']!);
      assert.deepEqual(repeated(ids), [], `${what}: changes published twice`);
      assert.deepEqual([...ids].sort(), changeIds, `${what}: exactly the archive's changes`);
      for (const m of messages) {
        const d = m.data as { uid: string; changeId: number; count: number; countBefore: number };
        assert.equal(m.headers['Nats-Msg-Id'], `${m.subject}/${m.headers['kevents-id']}`);
        assert.equal(m.headers['kevents-id'], `${d.uid}.${d.changeId}`);
        assert.equal(m.headers['kevents-policy'], 'occurrences');
        assert.ok(d.count > d.countBefore, `${what}: ${m.headers['kevents-id']} counts ${d.countBefore} → ${d.count}`);
      }
      // Each event's changes are in the stream in the order they happened.
      const last = new Map<string, number>();
      for (const m of messages) {
        const d = m.data as { uid: string; changeId: number };
        assert.ok((last.get(d.uid) ?? 0) < d.changeId, `${what}: ${d.uid} out of order`);
        last.set(d.uid, d.changeId);
      }
    };
    check('KEVENTS kevents.history', kevents.filter((m) => m.subject === 'kevents.history'));
    check('SHORT', short);
    assert.deepEqual([...new Set(kevents.map((m) => m.subject))].sort(), ['kevents.history', 'kevents.warnings']);

    // upsert on the route's subject: the Warning's versions in order, the last at its final count.
    const latest = kevents.filter((m) => m.subject === 'kevents.warnings');
    assert.ok(latest.length >= 1);
    const uids = new Set(latest.map((m) => m.headers['kevents-document-id']!));
    assert.equal(uids.size, 1, 'only the Warning event is routed to kevents.warnings');
    const [uid] = [...uids];
    assert.ok(events.has(uid!));
    assert.equal((latest.at(-1)!.data as { count: number }).count, finalCount.get(uid!));
    const versions = latest.map((m) => Number(m.headers['kevents-version']));
    assert.deepEqual(versions, [...new Set(versions)].sort((a, b) => a - b), 'versions increase');

    await stopExport(exporter, 'SIGTERM');
    const output = [...logs, exporter.output()].join('\n');
    const skipped = [...output.matchAll(/already held records of a redelivery.*?"skipped":(\d+)/g)].map((m) => Number(m[1]));
    process.stdout.write(`# ${changeIds.length} changes of ${events.size} events; ${kevents.length} messages in KEVENTS, ${short.length} in SHORT; delivered() skipped ${skipped.reduce((a, b) => a + b, 0)} records in ${skipped.length} redeliveries\n`);
  });

  void it('authenticates with a user and password or a token, and takes a refused login as unavailable', { timeout: 120_000 }, async () => {
    const paths = sinkPaths(['nats']);
    assert.ok(paths.nats !== undefined, 'nats-server is not set up: run node scripts/sinks.mjs --only nats');
    const records: ExportRecord[] = [1, 2, 3].map((i) => ({ id: `u-${i}.${i}`, documentId: `u-${i}.${i}`, key: `u-${i}`, version: i, policy: 'occurrences', fields: {} as never, payload: { n: i } }));
    const cases: { args: string[]; yaml: string; env: Record<string, string>; wrong: Record<string, string>; auth: NatsAuth }[] = [
      { args: ['--user', 'kevents', '--pass', 's3cret'], yaml: 'user: kevents\n    passwordEnv: NATS_PASSWORD', env: { NATS_PASSWORD: 's3cret' }, wrong: { NATS_PASSWORD: 'guess' }, auth: { user: 'kevents', pass: 's3cret' } },
      { args: ['--auth', 't0ken'], yaml: 'tokenEnv: NATS_TOKEN', env: { NATS_TOKEN: 't0ken' }, wrong: { NATS_TOKEN: 'guess' }, auth: { token: 't0ken' } },
    ];
    for (const c of cases) {
      const server = await startNats(paths.nats, c.args);
      cleanups.push(() => server.stop());
      const [cfg] = parseExportConfig(`sinks:\n  - name: n\n    type: nats\n    servers: [${server.address}]\n    subject: auth.events\n    stream: { name: AUTH }\n    ${c.yaml}\n`).sinks;
      const sink = cfg!.sinkType.create(cfg!.options, { logger: noopLogger, env: c.env });
      const signal = new AbortController().signal;
      await sink.send(records, signal);
      await sink.send(records.slice(1), signal);
      const held = await sink.delivered!(records, signal);
      await sink.close();
      assert.deepEqual([...held].sort(), records.map((r) => r.id), `${c.args[0]}: delivered() finds what was published`);
      const stored = await readStream(server.address, 'AUTH', c.auth);
      assert.deepEqual(stored.map((m) => m.headers['kevents-id']), records.map((r) => r.id), `${c.args[0]}: JetStream dropped the repeated message ids`);
      assert.deepEqual(stored.map((m) => m.data), records.map((r) => r.payload));

      const refused = cfg!.sinkType.create(cfg!.options, { logger: noopLogger, env: c.wrong });
      const err = await refused.send(records, signal).then(() => undefined, (e: unknown) => e as Error);
      await refused.close();
      assert.ok(err !== undefined, `${c.args[0]}: a wrong secret is refused`);
      assert.match(err.message, /nats: cannot connect to .*[Aa]uthorization/);
      assert.equal(isSinkRejected(err), false, 'a refused login is retried: the secret may be mended on the server');
    }
  });

  void it('takes a subject no stream takes as unavailable, and a message larger than the server takes as a refusal', { timeout: 120_000 }, async () => {
    const paths = sinkPaths(['nats']);
    assert.ok(paths.nats !== undefined, 'nats-server is not set up: run node scripts/sinks.mjs --only nats');
    const server = await startNats(paths.nats);
    cleanups.push(() => server.stop());
    const record = (payload: unknown): ExportRecord => ({ id: 'u.1', documentId: 'u.1', key: 'u', version: 1, policy: 'occurrences', fields: {} as never, payload });
    const signal = new AbortController().signal;
    const build = (yaml: string): ExportSink => {
      const [cfg] = parseExportConfig(`sinks:\n  - name: n\n    type: nats\n    servers: [${server.address}]\n    timeout: 2s\n${yaml}`).sinks;
      return cfg!.sinkType.create(cfg!.options, { logger: noopLogger, env: {} });
    };
    const nowhere = build('    subject: nowhere.events\n');
    const unavailable = await nowhere.send([record({ n: 1 })], signal).then(() => undefined, (e: unknown) => e as Error);
    await nowhere.close();
    assert.ok(unavailable !== undefined);
    assert.match(unavailable.message, /no JetStream stream takes subject nowhere\.events/);
    assert.equal(isSinkRejected(unavailable), false);

    const big = build('    subject: big.events\n    stream: { name: BIG }\n');
    const refused = await big.send([record({ note: 'x'.repeat(2 * 1024 * 1024) })], signal).then(() => undefined, (e: unknown) => e as Error);
    await big.send([record({ n: 1 })], signal);
    await big.close();
    assert.ok(refused !== undefined);
    assert.match(refused.message, /max_payload/);
    assert.equal(isSinkRejected(refused), true);
    assert.equal((await readStream(server.address, 'BIG')).length, 1, 'the connection outlives the refusal');
  });
});
