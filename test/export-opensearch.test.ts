import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import { SINK_TYPES, isSinkRejected, parseExportConfig } from '../src/export/index.js';
import type { ExportFields, ExportRecord } from '../src/export/index.js';
import { noopLogger } from '../src/internal/index.js';
import { SqliteExportLog } from '../src/storage/sqlite/index.js';
import { Workload, archiveChanges } from './support/event-workload.js';
import { outageWithKill, startExport, stopExport } from './support/export-process.js';
import type { ExportProcess } from './support/export-process.js';
import { startServer } from './support/server-process.js';
import { sinkPaths, startOpenSearch } from './support/sink-servers.js';

/**
 * OpenSearch end to end: a real single-node OpenSearch (its modules from
 * Maven Central, set up by scripts/sinks.mjs), `kevents export` writing the
 * archive's changes through the bulk API into a daily upsert index (one
 * document per event, versioned by change id) and a daily occurrences index
 * (Warnings routed to a monthly index of their own). OpenSearch is killed
 * (SIGKILL) and started again on its data while the exporter is killed with
 * SIGKILL twice. Read back through the search API: exactly one document per
 * event at its final count, in the index of its first day; exactly one
 * document per change under its id, none missing.
 */

const OUTAGE_MS = Number(process.env.KEVENTS_EXPORT_OUTAGE_MS ?? 60_000);
const paths = sinkPaths(['opensearch']);

interface Hit {
  _index: string;
  _id: string;
  _version?: number;
  _source: { uid: string; count: number; type: string; reason: string; firstSeen: string; lastSeen: string; namespace: string; name: string };
}

async function until(what: string, fn: () => Promise<boolean> | boolean, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(250);
  }
}

/** search refreshes the indices of a pattern and returns all their documents (with their versions). */
async function search(base: string, pattern: string): Promise<Hit[]> {
  const refresh = await fetch(`${base}/${pattern}/_refresh?allow_no_indices=true`, { method: 'POST' });
  assert.ok(refresh.ok, await refresh.text());
  const r = await fetch(`${base}/${pattern}/_search?allow_no_indices=true`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ size: 10_000, version: true, track_total_hits: true, query: { match_all: {} } }),
  });
  const body = (await r.json()) as { hits: { total: { value: number }; hits: Hit[] } };
  assert.equal(r.status, 200, JSON.stringify(body));
  assert.equal(body.hits.hits.length, body.hits.total.value, 'one page holds every document');
  return body.hits.hits;
}

const day = (t: string): string => new Date(t).toISOString().slice(0, 10).replace(/-/g, '.');

void describe('kevents export to OpenSearch', { skip: paths.opensearch === undefined ? 'OpenSearch could not be set up (scripts/sinks.mjs --only opensearch)' : false }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-export-opensearch-'));
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  void it('delivers upserts and occurrences through a server outage and two kill -9s', { timeout: 900_000 }, async () => {
    const os = await startOpenSearch(paths.opensearch!);
    cleanups.push(() => os.stop());
    const db = join(dir, 'events.db');
    const server = await startServer(['--storage', `sqlite:${db}`]);
    cleanups.push(() => server.stop());
    const config = join(dir, 'export.yaml');
    writeFileSync(
      config,
      `sinks:
  - name: upserts
    type: opensearch
    url: ${os.address}
    index: kevents-upserts-{yyyy.MM.dd}
    policy: upsert
    batchSize: 20
    retry: { initialBackoff: 200ms, maxBackoff: 3s }
  - name: history
    type: elasticsearch
    url: ${os.address}/
    index: kevents-history-{yyyy.MM.dd}
    policy: occurrences
    retry: { initialBackoff: 200ms, maxBackoff: 3s }
route:
  drop: [{ namespace: kube-system }]
  sinks: [upserts]
  routes:
    - sinks: [history]
      routes:
        - match: [{ type: Warning }]
          topic: kevents-warnings-{yyyy.MM}
          sinks: [history]
`,
    );
    let exporter: ExportProcess = await startExport(config, `sqlite:${db}`);
    cleanups.push(() => stopExport(exporter, 'SIGKILL'));
    const load = new Workload(server.url);
    await load.opening(4);
    await sleep(1_000);
    await stopExport(exporter, 'SIGKILL');
    await load.round(3);
    exporter = await startExport(config, `sqlite:${db}`);
    exporter = await outageWithKill({ exporter, restart: () => startExport(config, `sqlite:${db}`), sink: os, round: (i) => load.round(i), from: 4, outageMs: OUTAGE_MS });

    const { changeIds, events, finalCount } = await archiveChanges(server.url);
    assert.ok(changeIds.length > 60, `the workload made ${changeIds.length} changes`);
    await until('every occurrence is in OpenSearch', async () => (await search(os.address, 'kevents-history-*,kevents-warnings-*')).length >= changeIds.length);
    await until('every event is in OpenSearch at its final count', async () => {
      const docs = await search(os.address, 'kevents-upserts-*');
      return docs.length === events.size && docs.every((d) => d._source.count === finalCount.get(d._id));
    });

    // upsert: exactly one document per event (across the daily indices), at its final count, in its first day's index.
    const upserts = await search(os.address, 'kevents-upserts-*');
    assert.deepEqual(upserts.map((d) => d._id).sort(), [...events].sort());
    for (const d of upserts) {
      assert.equal(d._source.count, finalCount.get(d._id), `event ${d._id}`);
      assert.equal(d._source.uid, d._id);
      assert.equal(d._index, `kevents-upserts-${day(d._source.firstSeen)}`);
      // The document's version is the id of the event's last change: writes were ordered by it.
      assert.equal(d._version, Math.max(...changeIds.filter((c) => c.startsWith(`${d._id}.`)).map((c) => Number(c.slice(d._id.length + 1)))), `version of ${d._id}`);
    }
    for (const [name, count] of load.counts) if (!name.startsWith('kube-system/')) assert.ok(upserts.some((d) => `${d._source.namespace}/${d._source.name}` === name && d._source.count === count), name);
    // occurrences: exactly one document per change, under its id; Warnings in the routed monthly index.
    const history = await search(os.address, 'kevents-history-*,kevents-warnings-*');
    assert.deepEqual(history.map((d) => d._id).sort(), changeIds);
    for (const d of history) {
      const want = d._source.type === 'Warning' ? `kevents-warnings-${day(d._source.lastSeen).slice(0, 7)}` : `kevents-history-${day(d._source.lastSeen)}`;
      assert.equal(d._index, want, d._id);
      assert.equal(d._version, 1, `${d._id} was written once`);
    }
    assert.ok(history.some((d) => d._source.type === 'Warning'));

    // The index template's mapping applies: exact-value filters and date ranges work.
    const mapping = (await (await fetch(`${os.address}/kevents-upserts-*/_mapping`)).json()) as Record<string, { mappings: { properties: Record<string, { type: string; properties?: Record<string, { type: string }> }> } }>;
    for (const m of Object.values(mapping)) {
      assert.equal(m.mappings.properties.namespace?.type, 'keyword');
      assert.equal(m.mappings.properties.reason?.type, 'keyword');
      assert.equal(m.mappings.properties.regarding?.properties?.kind?.type, 'keyword');
      assert.equal(m.mappings.properties.lastSeen?.type, 'date');
    }
    const r = await fetch(`${os.address}/kevents-history-*,kevents-warnings-*/_count`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ query: { bool: { filter: [{ term: { reason: 'BackOff' } }, { range: { lastSeen: { gte: 'now-1d' } } }] } } }),
    });
    const counted = ((await r.json()) as { count: number }).count;
    assert.ok(counted > 0);
    assert.equal(counted, history.filter((d) => d._source.reason === 'BackOff').length);
    // Redeliveries answered 409 (already there, or a later version): delivered, never dead letters.
    const log = new SqliteExportLog({ path: db });
    for (const sink of ['upserts', 'history']) assert.deepEqual(await log.deadLetters(sink, 10), [], `dead letters of ${sink}`);
    await log.close();

    // Per-item errors against the real server: a document it cannot map refuses only its own record.
    const sinkType = SINK_TYPES.opensearch!;
    const { options } = parseExportConfig(`sinks:\n  - { name: s, type: opensearch, url: "${os.address}", index: "check-{yyyy.MM.dd}", policy: occurrences }\n`).sinks[0]!;
    const sink = sinkType.create(options, { logger: noopLogger, env: {} });
    const fields = { firstSeen: '2025-01-01T00:00:00Z', lastSeen: '2025-01-01T00:00:00Z', observedTime: '2025-01-01T00:00:00Z' } as ExportFields;
    const batch: ExportRecord[] = Array.from({ length: 5 }, (_, i) => ({
      id: `check.${i}`,
      documentId: `check.${i}`,
      key: 'check',
      version: i + 1,
      policy: 'occurrences',
      fields,
      payload: { lastSeen: i === 2 ? 'yesterday' : '2025-01-01T00:00:00Z', i },
    }));
    const signal = new AbortController().signal;
    const refused = await sink.send(batch, signal).catch((e: unknown) => e as Error);
    assert.ok(isSinkRejected(refused), String(refused));
    assert.match((refused as Error).message, /refused 1 of 5 records: check\.2: 400 mapper_parsing_exception/);
    // The runner's retry one at a time: the others are already there (409, delivered), the bad one is refused again.
    for (const r of batch) {
      const e = await sink.send([r], signal).catch((err: unknown) => err as Error);
      assert.equal(e !== undefined, r.id === 'check.2', `${r.id}: ${String(e)}`);
    }
    assert.deepEqual((await search(os.address, 'check-*')).map((d) => d._id).sort(), ['check.0', 'check.1', 'check.3', 'check.4']);
    // An upsert older than what the server holds (a late redelivery) is delivered and changes nothing.
    const doc = (version: number): ExportRecord => ({ ...batch[0]!, id: `doc@${version}`, documentId: 'doc', version, policy: 'upsert', payload: { v: version } });
    await sink.send([doc(5)], signal);
    await sink.send([doc(3), doc(5)], signal);
    const [held] = (await search(os.address, 'check-*')).filter((d) => d._id === 'doc');
    assert.deepEqual([held?._version, (held?._source as unknown as { v: number }).v], [5, 5]);
    await sink.close();
    process.stdout.write(`# ${changeIds.length} changes of ${events.size} events; ${upserts.length} upsert documents, ${history.length} occurrence documents\n`);
    await stopExport(exporter, 'SIGTERM');
  });
});
