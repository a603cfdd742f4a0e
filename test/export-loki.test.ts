import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { rfc3339Nanos } from '../src/export/index.js';
import { exportMetric, killInFlight, startExport, stopExport } from './support/export-process.js';
import type { ExportProcess } from './support/export-process.js';
import { Workload, archiveChanges } from './support/event-workload.js';
import { startServer } from './support/server-process.js';
import { sinkPaths, startVictoriaLogs } from './support/sink-servers.js';

/**
 * The loki sink end to end, against a real server of Loki's push API
 * (VictoriaLogs; Loki itself is AGPL-licensed): a `kevents serve` archive
 * written through both event APIs (creates, count and series bumps), a
 * `kevents export` process pushing every change (occurrences) to one tenant and
 * each new event (first, through a template) to another. The exporter is
 * killed with SIGKILL twice, once in the middle of the load and once while the
 * server itself is SIGKILLed and down; VictoriaLogs keeps what it was given
 * twice, so the sink's held-records query (LogsQL) is what keeps a redelivery
 * out. Read back through the query API, each tenant must hold exactly one entry
 * per record, none missing, none twice, with the stream labels, timestamps and
 * lines the sink documents.
 */

const OUTAGE_MS = Number(process.env.KEVENTS_EXPORT_OUTAGE_MS ?? 60_000);
/** PERSIST_MS: VictoriaLogs has written a push to its parts on disk within a few seconds (measured: 3 to 4 s with -inmemoryDataFlushInterval=1s). */
const PERSIST_MS = 8_000;
const LABELS = ['kind', 'namespace', 'reason', 'service_name', 'type'];

interface Entry {
  _time: string;
  _msg: string;
  _stream: string;
  kevents_id: string;
}

async function until(what: string, fn: () => Promise<boolean> | boolean, detail: () => Promise<string> | string = () => '', timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}: ${await detail()}`);
    await sleep(250);
  }
}

/** entries reads every entry of a tenant through LogsQL. */
async function entries(base: string, account: string): Promise<Entry[]> {
  const res = await fetch(`${base}/select/logsql/query`, {
    method: 'POST',
    headers: { AccountID: account, ProjectID: '0', 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ query: '* | fields _time, _msg, _stream, kevents_id', limit: '100000' }).toString(),
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Entry);
}

/** streamOf parses VictoriaLogs' `_stream` (`{a="x",b="y"}`) back into labels. */
function streamOf(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const m of text.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)=("(?:[^"\\]|\\.)*")/g)) labels[m[1]!] = JSON.parse(m[2]!) as string;
  return labels;
}

void describe('kevents export to Loki\'s push API', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-export-loki-'));
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  void it('holds each change once, with bounded stream labels, through a server outage and two kill -9s', { timeout: 600_000 }, async () => {
    const paths = sinkPaths(['victorialogs']).victorialogs;
    assert.ok(paths !== undefined, 'scripts/sinks.mjs --only victorialogs could not set VictoriaLogs up');
    const logs = await startVictoriaLogs(paths);
    cleanups.push(() => logs.stop());
    const db = join(dir, 'events.db');
    const server = await startServer(['--storage', `sqlite:${db}`]);
    cleanups.push(() => server.stop());
    const config = join(dir, 'export.yaml');
    writeFileSync(
      config,
      `sinks:
  - name: logs
    type: loki
    url: ${logs.address}
    # VictoriaLogs would otherwise unpack the JSON line into fields; keep it whole
    path: /insert/loki/api/v1/push?disable_message_parsing=1
    tenant: "7"
    staticLabels: { service_name: kevents }
    query: { api: logsql, settle: 2s }
    batchSize: 7
    retry: { initialBackoff: 100ms, maxBackoff: 2s }
  - name: new-events
    type: loki
    url: ${logs.address}
    path: /insert/loki/api/v1/push?disable_message_parsing=1
    tenant: "8"
    policy: first
    labels: [namespace, type]
    timestamp: lastSeen
    query: { api: logsql, settle: 2s }
    template:
      object: "{{ regarding.kind }}/{{ regarding.name }}"
      reason: "{{ reason }}"
      count: "{{ count }}"
route:
  drop:
    - namespace: kube-system
  sinks: [logs, new-events]
`,
    );
    const outputs: (() => string)[] = [];
    const start = async (): Promise<ExportProcess> => {
      const p = await startExport(config, `sqlite:${db}`);
      outputs.push(p.output);
      return p;
    };
    let exporter: ExportProcess = await start();
    cleanups.push(() => stopExport(exporter, 'SIGKILL'));
    const load = new Workload(server.url);
    await load.opening(5);

    // The first kill -9 lands while the load goes on and batches of 7 are in flight.
    exporter = await killInFlight({ exporter, restart: start, round: (i) => load.round(i), at: 3 });

    // The server goes down once it holds everything so far, and has had the time to write it out: a
    // SIGKILL takes with it what VictoriaLogs took in its last few seconds, which it had acknowledged.
    const sofar = await archiveChanges(server.url);
    await until('the server holds every change so far', async () => new Set((await entries(logs.address, '7')).map((e) => e.kevents_id)).size >= sofar.changeIds.length);
    await sleep(PERSIST_MS);
    await logs.down();
    const outageEnds = Date.now() + OUTAGE_MS;
    await load.round(5);
    await sleep(Math.min(3_000, OUTAGE_MS / 3));
    // The second kill -9, while the exporter retries the dead server.
    await stopExport(exporter, 'SIGKILL');
    await load.round(6);
    exporter = await start();
    await load.round(7);
    const waited = outageEnds - Date.now();
    if (waited > 0) await sleep(waited);
    await logs.up();

    const { changeIds, events } = await archiveChanges(server.url);
    assert.ok(changeIds.length > 80, `the workload made ${changeIds.length} changes`);
    const held = async (account: string): Promise<string[]> => (await entries(logs.address, account)).map((e) => e.kevents_id);
    const missing = async (): Promise<string> => {
      const have = new Set(await held('7'));
      const metrics = (await (await fetch(`${exporter.metricsUrl}/metrics`)).text()).split('\n').filter((l) => l.startsWith('kevents_export')).join(' ');
      return `${metrics}; ${have.size} of ${changeIds.length} held, missing ${changeIds.filter((id) => !have.has(id)).slice(0, 5).join(' ')}; exporter: ${exporter.output().slice(-3000)}; server: ${logs.output().slice(-1500)}`;
    };
    await until('every change is in the server', async () => new Set(await held('7')).size >= changeIds.length, missing);
    await until('every new event is in the server', async () => (await entries(logs.address, '8')).length >= events.size);
    // Give a late duplicate the time to show up before counting.
    await sleep(3_000);

    // occurrences: exactly one entry per change of the archive.
    const checkAll = async (): Promise<Entry[]> => {
      const all = await entries(logs.address, '7');
      assert.deepEqual(all.map((e) => e.kevents_id).sort(), changeIds);
      return all;
    };
    const all = await checkAll();
    for (const e of all) {
      const record = JSON.parse(e._msg) as { uid: string; changeId: number; namespace: string; type: string; reason: string; regarding: { kind: string }; observedTime: string };
      assert.equal(e.kevents_id, `${record.uid}.${record.changeId}`, 'the structured metadata carries the record id');
      // Bounded labels only: never the object's name, the uid or the message.
      const labels = streamOf(e._stream);
      assert.deepEqual(Object.keys(labels).sort(), LABELS, e._stream);
      assert.deepEqual(labels, { namespace: record.namespace, kind: record.regarding.kind, reason: record.reason, type: record.type, service_name: 'kevents' });
      assert.equal(rfc3339Nanos(e._time), rfc3339Nanos(record.observedTime), `the entry's time is the change's observed time (${e.kevents_id})`);
    }
    const warnings = all.filter((e) => streamOf(e._stream).reason === 'BackOff');
    assert.equal(warnings.length, 6, 'the Warning and its five repeats are six entries of one stream');

    // first: one entry per event, from its template, in a stream of its namespace and type.
    const firsts = await entries(logs.address, '8');
    assert.deepEqual(firsts.map((e) => e.kevents_id.split('@')[0]).sort(), [...events].sort());
    for (const e of firsts) {
      assert.deepEqual(Object.keys(JSON.parse(e._msg) as object).sort(), ['count', 'object', 'reason']);
      assert.equal((JSON.parse(e._msg) as { count: number }).count, 1);
      assert.deepEqual(Object.keys(streamOf(e._stream)).sort(), ['namespace', 'type']);
    }
    // A crash between the server's answer and the saved position, made sure of: the exporter is
    // killed and its position put back five changes (less than a batch), as a crash in flight leaves it. What it sends
    // again the server already holds, and holds twice unless the sink asks first.
    await stopExport(exporter, 'SIGKILL');
    const archive = new Database(db);
    const { position } = archive.prepare("SELECT position FROM export_positions WHERE sink = 'logs'").get() as { position: number };
    const back = (archive.prepare('SELECT id FROM occurrences WHERE id <= ? ORDER BY id DESC LIMIT 1 OFFSET 5').get(position) as { id: number }).id;
    archive.prepare("UPDATE export_positions SET position = ? WHERE sink = 'logs'").run(back);
    archive.close();
    exporter = await start();
    await until('the exporter is back at the head', async () => (await exportMetric(exporter, 'kevents_export_queue_depth', 'logs')) === 0 && /already held records/.test(exporter.output()));
    await sleep(3_000);
    await checkAll();
    assert.equal(await exportMetric(exporter, 'kevents_export_sent_total', 'logs'), 0, 'nothing the server held was sent again');

    const skipped = outputs.map((o) => (o().match(/already held records/g) ?? []).length).reduce((a, b) => a + b, 0);
    process.stdout.write(`# ${changeIds.length} changes of ${events.size} events, each held once; held records of a redelivery skipped ${skipped} time(s)\n`);
    await stopExport(exporter, 'SIGTERM');
  });
});
