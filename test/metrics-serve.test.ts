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
 * `kevents serve --event-metrics` both ways: with `--mirror` (the mirror tells what it appends)
 * mirroring another kevents server, and without (the metrics follow the archive's log, which
 * the server's own API writes). Each must count every repeat, and a restart must count nothing
 * it had archived before.
 */

async function backOff(server: ServerProcess): Promise<number | undefined> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const lines = text.split('\n').filter((l) => l.startsWith('kevents_events_total{') && l.includes('reason="BackOff"'));
  return lines.length === 0 ? undefined : lines.reduce((s, l) => s + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

async function write(server: ServerProcess, method: 'POST' | 'PUT', count: number): Promise<void> {
  const path = `/api/v1/namespaces/shop/events${method === 'PUT' ? '/web-1.backoff' : ''}`;
  const r = await fetch(`${server.url}${path}`, { method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(kubeletEvent({ namespace: 'shop', name: 'web-1.backoff', pod: 'web-1', count })) });
  assert.equal(r.status, method === 'POST' ? 201 : 200, await r.text());
}

void describe('kevents serve --event-metrics', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-metrics-serve-'));
  const servers: ServerProcess[] = [];
  after(async () => {
    for (const s of servers) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const start = async (args: string[]): Promise<ServerProcess> => {
    const s = await startServer(args);
    servers.push(s);
    return s;
  };

  void it('with --mirror counts what the mirror archives, every repeat, and nothing again after a restart', async () => {
    const source = await start([]);
    const args = ['--storage', `sqlite:${join(dir, 'mirrored.db')}`, '--mirror', source.url, '--event-metrics'];
    let archive = await start(args);
    await write(source, 'POST', 1);
    await write(source, 'PUT', 2);
    await write(source, 'PUT', 7);
    await until('the archive counted the burst', async () => (await backOff(archive)) === 7);
    await archive.stop();
    archive = await start(args);
    await write(source, 'PUT', 9);
    await until('the restarted archive counted the repeats after its start', async () => (await backOff(archive)) === 2);
  });

  void it("without --mirror counts the server's own writes from its log", async () => {
    const server = await start(['--storage', `sqlite:${join(dir, 'own.db')}`, '--event-metrics']);
    await write(server, 'POST', 1);
    await write(server, 'PUT', 4);
    await until('the server counted its writes', async () => (await backOff(server)) === 4);
  });
});
