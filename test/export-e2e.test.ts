import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import { outageWithKill, startExport, stopExport } from './support/export-process.js';
import type { ExportProcess } from './support/export-process.js';
import { Workload, archiveChanges } from './support/event-workload.js';
import { startServer } from './support/server-process.js';
import { startSlackReceiver, startWebhookReceiver } from './support/sink-receivers.js';

/**
 * Export end to end: a `kevents serve` archive written through both event
 * APIs (creates, count and series bumps), a `kevents export` process delivering
 * it to a signed JSON webhook (upsert), a CloudEvents webhook (occurrences), a
 * JSON lines file (occurrences) and Slack (alerts on Warnings); the upsert
 * webhook is down for a minute while the exporter is killed with SIGKILL twice.
 * Every sink must end with exactly what its policy says, nothing missing and no
 * record id it should not have; a redelivery (at least once) carries the same
 * id and content, so an idempotent sink holds each change once.
 */

const OUTAGE_MS = Number(process.env.KEVENTS_EXPORT_OUTAGE_MS ?? 60_000);
const SECRET = 'hook-secret';

async function until(what: string, fn: () => Promise<boolean> | boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(200);
  }
}

void describe('kevents export', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-export-'));
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  void it('delivers every change with each sink\'s policy through an outage and two kill -9s', { timeout: 600_000 }, async () => {
    const db = join(dir, 'events.db');
    const server = await startServer(['--storage', `sqlite:${db}`]);
    cleanups.push(() => server.stop());
    const hooks = await startWebhookReceiver({ secret: SECRET, format: 'json' });
    const history = await startWebhookReceiver({ format: 'cloudevents' });
    const slack = await startSlackReceiver();
    cleanups.push(() => hooks.close(), () => history.close(), () => slack.close());
    const lines = join(dir, 'out', 'events.jsonl');
    const config = join(dir, 'export.yaml');
    writeFileSync(
      config,
      `# sinks of the export test
sinks:
  - name: hooks
    type: webhook
    url: ${hooks.url}
    secretEnv: HOOK_SECRET
    policy: upsert
    batchSize: 7
    retry: { initialBackoff: 100ms, maxBackoff: 2s }
  - name: history
    type: webhook
    format: cloudevents
    url: ${history.url}
    policy: occurrences
  - name: lines
    type: file
    path: ${lines}
    policy: occurrences
  - name: chat
    type: slack
    url: ${slack.url}
    alert: { groupWait: 1s, resolveAfter: 3s }
route:
  drop:
    - namespace: kube-system
  sinks: [hooks, history, lines]
  routes:
    - match:
        - type: Warning
      sinks: [chat]
`,
    );
    const env = { HOOK_SECRET: SECRET };
    let exporter: ExportProcess = await startExport(config, `sqlite:${db}`, env);
    cleanups.push(() => stopExport(exporter, 'SIGKILL'));
    const load = new Workload(server.url);

    // A burst of a Warning: one Slack message for it, and a follow-up once it stops.
    await load.opening(9);
    await until('the burst is reported', () => slack.messages.length >= 1);

    // The first kill -9, while changes keep coming.
    await load.round(3);
    await stopExport(exporter, 'SIGKILL');
    await load.round(4);
    exporter = await startExport(config, `sqlite:${db}`, env);

    // The upsert webhook goes down for the outage, and the exporter is killed again during it.
    exporter = await outageWithKill({ exporter, restart: () => startExport(config, `sqlite:${db}`, env), sink: hooks, round: (i) => load.round(i), from: 5, outageMs: OUTAGE_MS });

    // What the archive holds is the truth each sink is checked against.
    const { changeIds, events, finalCount } = await archiveChanges(server.url);
    assert.ok(changeIds.length > 80, `the workload made ${changeIds.length} changes`);

    await until('the upsert webhook holds every event at its final count', () =>
      hooks.documents.size === events.size && [...hooks.documents.values()].every((d) => d.record.count === finalCount.get(d.documentId)),
    );
    await until('the CloudEvents webhook holds every occurrence', () => history.byId.size >= changeIds.length);
    await until('the file holds every occurrence', () => existsSync(lines) && new Set(readFileSync(lines, 'utf8').trim().split('\n').map((l) => JSON.parse(l).id)).size >= changeIds.length);
    await until('the burst is followed up', () => slack.messages.length >= 2);

    // upsert: one document per event, each at its final count; redeliveries are the same records.
    assert.deepEqual([...hooks.documents.keys()].sort(), [...events].sort());
    for (const [uid, d] of hooks.documents) assert.equal(d.record.count, finalCount.get(uid), `event ${uid}`);
    for (const [name, count] of load.counts) if (!name.startsWith('kube-system/')) assert.ok([...hooks.documents.values()].some((d) => `${d.record.namespace}/${d.record.name}` === name && d.record.count === count), name);
    assert.deepEqual(hooks.mismatches, []);
    assert.ok(hooks.problems.every((p) => p === ''), `the hook refused: ${hooks.problems.join('; ')}`);
    // occurrences: exactly the archive's changes, each under its id.
    assert.deepEqual([...history.byId.keys()].sort(), changeIds);
    assert.deepEqual(history.mismatches, []);
    assert.deepEqual(history.problems, []);
    const fileIds = readFileSync(lines, 'utf8').trim().split('\n').map((l) => JSON.parse(l).id as string);
    assert.deepEqual([...new Set(fileIds)].sort(), changeIds);
    // Slack: one message for the burst of ten, one follow-up, nothing for Normal events; every message valid Block Kit.
    assert.deepEqual(slack.problems, []);
    const headers = slack.messages.map((m) => m.blocks[0].text.text as string);
    // Slack has no idempotency key: a kill -9 between Slack's ok and the saved position repeats that one message
    // (docs/export.md), so each of the two kills may have repeated one; nothing else may differ or be missing.
    const distinct = [...new Set(headers)];
    assert.equal(distinct.length, 2, headers.join('\n'));
    assert.ok(slack.messages.length <= 2 + 2, `at most one repeat a kill -9:\n${headers.join('\n')}`);
    assert.match(distinct[0]!, /BackOff: Pod app\/crash-pod/);
    assert.match(distinct[1]!, /BackOff stopped repeating: Pod app\/crash-pod/);
    assert.match(slack.messages[headers.indexOf(distinct[1]!)]!.text, /10 times/);
    // The CLI gives the alerts the catalogue's sentence: a BackOff whose message is not the kubelet's is stated as it was written.
    for (const m of slack.messages) assert.equal(m.blocks[1].text.text, '*Cause*\nPod "crash-pod" reported "BackOff": "BackOff for crash".');
    const redelivered = [...hooks.deliveries.values(), ...history.deliveries.values()].filter((n) => n > 1).length;
    process.stdout.write(`# ${changeIds.length} changes of ${events.size} events; ${redelivered} records redelivered (same id and content), ${fileIds.length - changeIds.length} file lines repeated\n`);
    await stopExport(exporter, 'SIGTERM');
  });
});
