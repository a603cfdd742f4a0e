import { it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { createBackOffs, request } from './support/http.js';

const CORE = '/api/v1/namespaces/default/events';
const TABLE = { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json' };

/** rendered reads `kevents_list_rendered_total` of one renderer from the server's metrics. */
async function rendered(srv: ServerProcess, by: 'request' | 'read-ahead' | 'startup' | 'write'): Promise<number> {
  const m = await request(srv.url, 'GET', '/metrics');
  return Number(new RegExp(`^kevents_list_rendered_total\\{by="${by}"\\} (\\d+)`, 'm').exec(m.text)?.[1] ?? 0);
}

/** tableWalk lists every event as `kubectl get events` does (Table, pages of 500) and returns the rows. */
async function tableWalk(srv: ServerProcess): Promise<any[]> {
  const rows: any[] = [];
  let token: string | undefined;
  do {
    const page = await request(srv.url, 'GET', `${CORE}?limit=500${token !== undefined ? `&continue=${encodeURIComponent(token)}` : ''}`, undefined, TABLE);
    assert.equal(page.status, 200, page.text);
    rows.push(...page.json.rows);
    token = page.json.metadata.continue;
  } while (token !== undefined);
  return rows;
}

it('renders the Table row of each version it writes (when idle, or when first listed), and the stored rows before it listens, so neither the first listing after writes nor one after a restart renders any', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-warm-'));
  const args = ['--storage', `sqlite:${join(dir, 'events.db')}`, '--event-ttl', '0', '--workers', '1'];
  let writtenRows: any[] = [];
  try {
    const first = await startServer(args);
    try {
      const names = Array.from({ length: 600 }, (_, i) => `warm-${String(i).padStart(4, '0')}`);
      await createBackOffs(first.url, CORE, names);
      // A repeat (a PATCH of the count, as a recorder sends it) stores a new version, whose row is rendered too.
      const patched = await request(first.url, 'PATCH', `${CORE}/warm-0007`, { count: 2 }, { 'Content-Type': 'application/merge-patch+json' });
      assert.equal(patched.status, 200, patched.text);
      // A server started on an empty store had nothing to warm.
      assert.equal(await rendered(first, 'startup'), 0);
      // Each write kept the object of the version it stored, whose row is rendered in an idle moment or, at the
      // latest, when the first listing asks: that listing renders none from storage.
      writtenRows = await tableWalk(first);
      assert.equal(writtenRows.length, 600);
      assert.equal(await rendered(first, 'write'), 601);
      assert.equal(await rendered(first, 'request'), 0);
      assert.equal(writtenRows.find((r) => r.object.metadata.name === 'warm-0007')?.cells[8], 2, 'the repeat\'s row, not the first version\'s');
    } finally {
      await first.stop();
    }
    let warmRows: any[];
    const warm = await startServer(args);
    try {
      assert.equal(await rendered(warm, 'startup'), 600);
      warmRows = await tableWalk(warm);
      assert.equal(warmRows.length, 600);
      // Every row came from the cache: none rendered by the requests, so none read ahead either.
      assert.equal(await rendered(warm, 'request'), 0);
      assert.equal(await rendered(warm, 'read-ahead'), 0);
    } finally {
      await warm.stop();
    }
    const cold = await startServer([...args, '--render-cache-warm', '0']);
    try {
      assert.equal(await rendered(cold, 'startup'), 0);
      const coldRows = await tableWalk(cold);
      assert.ok((await rendered(cold, 'request')) >= 500, 'the first page was rendered from storage');
      // The warmed rows, and those the writes rendered, are the rows a listing renders from storage (the ages,
      // cells 0 and 7, move with the clock).
      const steady = (rows: any[]): unknown[] => rows.map((r) => [r.cells.slice(1, 7), r.cells.slice(8), r.object]);
      assert.deepEqual(steady(warmRows), steady(coldRows));
      assert.deepEqual(steady(writtenRows), steady(coldRows));
    } finally {
      await cold.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
