import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, startServer } from './support/server-process.js';
import { legacyEvent, request as httpJson } from './support/http.js';
import { findKubectls, runKubectl } from './support/kubectl.js';

/**
 * `kevents serve --writer-thread`: the SQLite file's writes are committed on a
 * thread of their own. What a client sees must not change (the differential
 * suite runs every case against such a server too); what must hold besides is
 * durability across kill -9, every kubectl, and refusing what it cannot do.
 */

const CORE = '/api/v1/namespaces/default/events';
const event = (name: string): Record<string, unknown> => legacyEvent({ name, object: name, reason: 'Tested', message: `m ${name}`, firstAgo: 1, lastAgo: 1 });

describe('kevents serve --writer-thread', () => {
  it('keeps every acknowledged write across kill -9, and the file opens again with or without the thread', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kevents-writer-thread-kill-'));
    try {
      const storage = `sqlite:${join(dir, 'events.db')}`;
      const srv = await startServer(['--storage', storage, '--writer-thread', '--event-ttl', '0']);
      const acknowledged: string[] = [];
      let stop = false;
      const writers = Array.from({ length: 16 }, async (_, w) => {
        for (let i = 0; !stop; i++) {
          const name = `k-${w}-${i}`;
          try {
            if ((await httpJson(srv.url, 'POST', CORE, event(name))).status === 201) acknowledged.push(name);
          } catch {
            return;
          }
        }
      });
      const deadline = Date.now() + 60_000;
      while (acknowledged.length < 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      srv.child.kill('SIGKILL');
      await srv.stop();
      stop = true;
      await Promise.all(writers);
      assert.ok(acknowledged.length >= 200, `only ${acknowledged.length} writes acknowledged`);
      for (const flags of [['--writer-thread'], []]) {
        const again = await startServer(['--storage', storage, '--event-ttl', '0', ...flags]);
        try {
          const list = await httpJson(again.url, 'GET', CORE);
          const stored = new Set((list.json as { items: { metadata: { name: string } }[] }).items.map((e) => e.metadata.name));
          assert.deepEqual(
            acknowledged.filter((n) => !stored.has(n)),
            [],
            `after kill -9, opened ${flags.length > 0 ? 'with' : 'without'} the writer thread`,
          );
        } finally {
          await again.stop();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers every bundled kubectl', { timeout: 300_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kevents-writer-thread-kubectl-'));
    const srv = await startServer(['--storage', `sqlite:${join(dir, 'events.db')}`, '--writer-thread']);
    try {
      for (let i = 0; i < 30; i++) assert.equal((await httpJson(srv.url, 'POST', CORE, event(`kubectl-${i}`))).status, 201);
      const kubectls = findKubectls();
      assert.ok(kubectls.length > 0, 'no kubectl found');
      for (const [i, k] of kubectls.entries()) {
        const got = await runKubectl(k, srv.url, ['get', 'events', '-A']);
        assert.equal(got.code, 0, `kubectl 1.${k.minor}: ${got.stderr}`);
        // A header, the 30 events, and one more created by each kubectl before this one.
        assert.equal(got.stdout.trim().split('\n').length, 1 + 30 + i, `kubectl 1.${k.minor} lists every event under its header`);
        const created = await runKubectl(k, srv.url, ['create', '-f', '-', '-o', 'name'], { input: JSON.stringify(event(`by-kubectl-1-${k.minor}`)) });
        assert.equal(created.code, 0, `kubectl 1.${k.minor} create: ${created.stderr}`);
        assert.equal(created.stdout.trim(), `event/by-kubectl-1-${k.minor}`);
      }
    } finally {
      await srv.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a store that is not a SQLite file, --workers and --mirror', () => {
    const serve = (args: string[]): { status: number | null; stderr: string } => {
      const r = spawnSync(process.execPath, [CLI, 'serve', '--listen', '127.0.0.1:0', ...args], { encoding: 'utf8', timeout: 30_000 });
      return { status: r.status, stderr: r.stderr };
    };
    const memory = serve(['--storage', 'memory:', '--writer-thread']);
    assert.equal(memory.status, 2);
    assert.equal(memory.stderr.split('\n')[0], 'error: --writer-thread commits the writes of a SQLite file on a thread of their own; memory storage has no such file');
    const workers = serve(['--storage', `sqlite:${join(tmpdir(), 'kevents-never-opened.db')}`, '--writer-thread', '--workers', '2']);
    assert.equal(workers.status, 2);
    assert.match(workers.stderr.split('\n')[0]!, /^error: --writer-thread is for one process/);
    const mirror = serve(['--storage', `sqlite:${join(tmpdir(), 'kevents-never-opened.db')}`, '--writer-thread', '--mirror', 'in-cluster']);
    assert.equal(mirror.status, 2);
    assert.match(mirror.stderr.split('\n')[0]!, /^error: --writer-thread cannot be used with --mirror/);
    const help = execFileSync(process.execPath, [CLI, 'serve', '--help'], { encoding: 'utf8' });
    assert.match(help, /--writer-thread/);
  });
});
