import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { kubeletEvent } from './support/kubelet-events.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { until } from './support/wait.js';

/**
 * `kevents serve` over SQLite writes its search index after the writes (docs/search.md): each create, searched
 * for the moment its 201 arrives (before the index's catch-up, at most 200 ms later), is found by its own word, and
 * by a word every create has, among the others; once the index has caught up, `kevents_search_index_lag_seconds` on
 * /metrics has counted every version. In one thread and with `--writer-thread` (the lag told by the writer thread).
 */

const CREATES = 40;

async function searchNames(server: ServerProcess, q: string): Promise<string[]> {
  const r = await fetch(`${server.url}/apis/archive.kevents.io/v1alpha1/namespaces/lag/search?q=${encodeURIComponent(q)}&limit=100`);
  assert.equal(r.status, 200, await r.clone().text());
  const body = (await r.json()) as { items: { event: { metadata: { name: string } } }[] };
  return body.items.map((i) => i.event.metadata.name).sort();
}

async function lagCount(server: ServerProcess): Promise<number | undefined> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('kevents_search_index_lag_seconds_count '));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

void describe('kevents serve: the search index after the writes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-search-lag-'));
  const servers: ServerProcess[] = [];
  after(async () => {
    for (const s of servers) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const [what, flags] of [['one thread', []], ['--writer-thread', ['--writer-thread']]] as const) {
    void it(`finds each create the moment it is answered, and counts its wait for the index (${what})`, async () => {
      const server = await startServer(['--storage', `sqlite:${join(dir, `${flags.length}.db`)}`, ...flags]);
      servers.push(server);
      const names: string[] = [];
      for (let i = 0; i < CREATES; i++) {
        const name = `e${i}`;
        const event = kubeletEvent({ namespace: 'lag', name, pod: `pod-${i}`, count: 1, message: `written word${i} lately` });
        const r = await fetch(`${server.url}/api/v1/namespaces/lag/events`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(event) });
        assert.equal(r.status, 201, await r.text());
        names.push(name);
        assert.deepEqual(await searchNames(server, `word${i}`), [name], `create ${i} found by its own word`);
      }
      assert.deepEqual(await searchNames(server, 'lately'), [...names].sort());
      await until('the index counted every version', async () => (await lagCount(server)) === CREATES);
      assert.deepEqual(await searchNames(server, 'lately'), [...names].sort(), 'the same once indexed');
    });
  }
});
