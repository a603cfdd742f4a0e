import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runBuiltCli } from './support/cli-process.js';
import { request } from './support/http.js';
import { POSTGRES_URL, testSchemas } from './support/postgres.js';
import { startServer } from './support/server-process.js';

/**
 * `kevents archive stats` measures an archive that `kevents serve` wrote, on
 * SQLite and PostgreSQL: each table and index with its bytes (summing to the
 * total), what the archive holds, and what a retention would remove.
 */

const { fresh } = testSchemas('kevents_archive_stats');
const NS = 'stats';
const EVENTS = 20;
const PATCHES = 4;

async function fill(url: string): Promise<void> {
  const at = new Date(Date.now() - 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  for (let i = 0; i < EVENTS; i++) {
    const name = `web-${i}.boom`;
    const r = await request(url, 'POST', `/api/v1/namespaces/${NS}/events`, {
      metadata: { name, namespace: NS },
      involvedObject: { kind: 'Pod', namespace: NS, name: `web-${i}` },
      reason: 'BackOff',
      type: 'Warning',
      message: `Back-off restarting failed container app in pod web-${i}`,
      source: { component: 'kubelet', host: 'node-1' },
      firstTimestamp: at,
      lastTimestamp: at,
      count: 1,
    });
    assert.equal(r.status, 201, r.text);
    for (let p = 1; p <= PATCHES; p++) {
      const u = await request(url, 'PATCH', `/api/v1/namespaces/${NS}/events/${name}`, { count: p + 1 }, { 'Content-Type': 'application/strategic-merge-patch+json' });
      assert.equal(u.status, 200, u.text);
    }
  }
}

for (const backend of ['sqlite', 'postgres'] as const) {
  void describe(`kevents archive stats over ${backend}`, () => {
    let dir: string;
    let storage: string;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'kevents-stats-'));
      if (backend === 'sqlite') storage = `sqlite:${join(dir, 'events.db')}`;
      else {
        const u = new URL(POSTGRES_URL);
        u.searchParams.set('schema', fresh());
        storage = u.toString();
      }
      const srv = await startServer(['--storage', storage, '--event-ttl', '0']);
      try {
        await fill(srv.url);
      } finally {
        await srv.stop();
      }
      // Every occurrence observed more than a second before the report, so a retention of a second removes each.
      await new Promise((r) => setTimeout(r, 1_100));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    void it('reports every table and index, what the archive holds, and a retention estimate', async () => {
      const r = await runBuiltCli(['archive', 'stats', '--storage', storage, '-o', 'json', '--retention', '1s']);
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout);
      assert.equal(report.events, EVENTS);
      assert.equal(report.occurrences, EVENTS * (PATCHES + 1));
      assert.ok(report.versions >= EVENTS * (PATCHES + 1), `${report.versions} versions`);
      const byName = new Map(report.relations.map((x: any) => [x.name, x]));
      for (const table of ['versions', 'occurrences']) {
        const t: any = byName.get(table);
        assert.ok(t !== undefined && t.kind === 'table' && t.bytes > 0, `${table}: ${JSON.stringify(t)}`);
      }
      assert.ok(report.relations.some((x: any) => x.kind === 'index' && x.table === 'versions' && x.bytes > 0), 'an index of versions');
      assert.equal(report.totalBytes, report.relations.reduce((n: number, x: any) => n + x.bytes, 0));
      // A retention of one second removes every occurrence, and at most the whole archive.
      assert.equal(report.retention.occurrences, report.occurrences);
      assert.ok(report.retention.bytes > 0 && report.retention.bytes <= report.totalBytes);

      const keep = JSON.parse((await runBuiltCli(['archive', 'stats', '--storage', storage, '-o', 'json', '--retention', '720h'])).stdout);
      assert.equal(keep.retention.occurrences, 0);
      assert.equal(keep.retention.bytes, 0);
    });

    void it('prints a table: the totals, per event and per occurrence, then each relation', async () => {
      const r = await runBuiltCli(['archive', 'stats', '--storage', storage]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`events ${EVENTS}, versions \\d+, occurrences ${EVENTS * (PATCHES + 1)}`));
      assert.match(r.stdout, /per event \d+ B, per version \d+ B, per occurrence \d+ B/);
      assert.match(r.stdout, /^NAME +KIND +TABLE +SIZE +SHARE$/m);
      assert.match(r.stdout, /^versions +table +versions +[\d.]+ (B|KiB|MiB) +[\d.]+%$/m);
    });
  });
}

void describe('kevents archive stats usage', () => {
  for (const [args, message] of [
    [['--storage', 'memory:'], /keeps nothing to measure/],
    [['-o', 'yaml'], /-o must be table or json/],
    [['--retention', 'soon'], /--retention soon/],
  ] as const) {
    void it(`refuses ${args.join(' ')} in one line, exit 2`, async () => {
      const r = await runBuiltCli(['archive', 'stats', ...args]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
    });
  }
});
