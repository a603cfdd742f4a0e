import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { nowMicroTime } from '../src/api/index.js';
import type { CoreEvent } from '../src/api/index.js';
import { realClock } from '../src/internal/index.js';
import { archiveWrite } from '../src/mirror/index.js';
import { SqliteEventStore } from '../src/storage/sqlite/index.js';
import { stopExport } from './support/export-process.js';
import type { ExportProcess } from './support/export-process.js';
import { kubeletEvent } from './support/kubelet-events.js';
import { waitForReadinessBanner } from './support/mirror-process.js';
import { CLI } from './support/server-process.js';
import { until } from './support/wait.js';

/**
 * The series cap: 100,000 distinct objects, each with its own event, archived (as the mirror
 * writes them) while `kevents export --event-metrics` counts the archive with the object `name`
 * labelled and a cap of 1,000 series. The series must stay at the cap, the rest go to the overflow
 * series and the dropped counter, nothing is lost from the sum, and /metrics stays small.
 */

const OBJECTS = 100_000;
const CAP = 1_000;
const BATCH = 1_000;

function family(text: string, name: string): { labels: string; value: number }[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .map((l) => ({ labels: l.slice(name.length, l.lastIndexOf(' ')), value: Number(l.slice(l.lastIndexOf(' ') + 1)) }));
}

void describe('the event series cap', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-metrics-cap-'));
  let exporter: ExportProcess | undefined;
  after(async () => {
    if (exporter !== undefined) await stopExport(exporter, 'SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  void it(`keeps ${OBJECTS.toLocaleString('en')} objects with name labelled at ${CAP.toLocaleString('en')} series`, { timeout: 300_000 }, async () => {
    const db = join(dir, 'archive.db');
    const store = new SqliteEventStore({ path: db });
    await store.ready();
    const config = join(dir, 'metrics.yaml');
    writeFileSync(config, `labels: [namespace, kind, name, reason]\nmaxSeries: ${CAP}\n`);
    const child = spawn(process.execPath, ['--enable-source-maps', CLI, 'export', '--from', `sqlite:${db}`, '--event-metrics', config, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    exporter = await waitForReadinessBanner(child, 'kevents export');
    const scrape = async (): Promise<string> => (await fetch(`${exporter!.metricsUrl}/metrics`)).text();
    for (let from = 0; from < OBJECTS; from += BATCH) {
      const writes = Array.from({ length: BATCH }, (_, k) => {
        const i = from + k;
        const e = kubeletEvent({ namespace: `ns-${i % 20}`, name: `pod-${i}.backoff`, pod: `pod-${i}`, count: 1 }) as unknown as CoreEvent;
        e.metadata = { ...e.metadata, uid: `uid-${i}`, resourceVersion: String(i + 1) };
        return archiveWrite(e);
      });
      await store.applyArchiveBatch({ writes, stamp: { observedTime: nowMicroTime(realClock) } });
    }
    await store.close();
    const sum = (text: string): number => family(text, 'kevents_events_total').reduce((s, x) => s + x.value, 0);
    await until('the exporter counted every archived change', async () => sum(await scrape()) === OBJECTS, 120_000, 500);
    const text = await scrape();
    const series = family(text, 'kevents_events_total');
    assert.equal(series.filter((s) => s.labels !== '{overflow="true"}').length, CAP);
    assert.deepEqual(family(text, 'kevents_events_total').find((s) => s.labels === '{overflow="true"}')?.value, OBJECTS - CAP);
    assert.deepEqual(family(text, 'kevents_event_series'), [{ labels: '', value: CAP }]);
    assert.deepEqual(family(text, 'kevents_event_series_dropped_total'), [{ labels: '{metric="kevents_events_total"}', value: OBJECTS - CAP }]);
    assert.ok(Buffer.byteLength(text) < 400_000, `/metrics is ${Buffer.byteLength(text)} bytes`);
  });

  void it('refuses a cap of 0 and an unknown label with their line and column', async () => {
    const { runBuiltCli } = await import('./support/cli-process.js');
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'labels: [namespace, pod]\nmaxSeries: 0\n');
    const r = await runBuiltCli(['export', '--from', `sqlite:${join(dir, 'archive.db')}`, '--event-metrics', bad, '--listen', '127.0.0.1:0']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /bad\.yaml:1:21: labels\[1\]: must be one of cluster, namespace, kind, name, reason, type, reporting_controller, not "pod"/);
    assert.match(r.stderr, /bad\.yaml:2:12: maxSeries: must be at least 1/);
  });
});
