import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { startControlPlane } from './support/control-plane.js';
import type { ControlPlane } from './support/control-plane.js';
import { legacyEvent } from './support/http.js';
import { alive, childrenOf } from './support/processes.js';

/**
 * `kevents serve --workers N`: N processes answer over one SQLite file, the
 * process started keeps it. Every request here opens its own connection, and
 * node:cluster hands each new connection to the next worker, so consecutive
 * requests meet different workers: a write on one and a read or watch on another.
 */

const CORE = '/api/v1/namespaces/default/events';

interface Answer {
  status: number;
  json: any;
  text: string;
}

/** fresh sends one request on a connection of its own. */
function fresh(url: string, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest(`${url}${path}`, { method, agent: false, headers: data === undefined ? {} : { 'Content-Type': contentType } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        let json: any;
        try {
          json = text === '' ? undefined : JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, json, text });
      });
    });
    req.on('error', reject);
    req.end(data);
  });
}

/** Watch is one open watch stream and the frames it has read. */
interface Watch {
  frames: any[];
  stop(): void;
}

function openWatch(url: string, path: string): Promise<Watch> {
  return new Promise((resolve, reject) => {
    const frames: any[] = [];
    const req = httpRequest(`${url}${path}`, { agent: false }, (res: IncomingMessage) => {
      assert.equal(res.statusCode, 200);
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        buf += d;
        for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
          frames.push(JSON.parse(buf.slice(0, nl)));
          buf = buf.slice(nl + 1);
        }
      });
      res.on('error', () => {});
      resolve({ frames, stop: () => req.destroy() });
    });
    req.on('error', (e) => (frames.length === 0 ? reject(e) : undefined));
    req.end();
  });
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** workerPids are the serve worker processes of a primary. */
const workerPids = childrenOf;

const event = (name: string, message = 'm'): Record<string, unknown> => legacyEvent({ name, object: name, reason: 'Tested', message, firstAgo: 1, lastAgo: 1 });

describe('kevents serve --workers', () => {
  let srv: ServerProcess;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kevents-workers-'));
    srv = await startServer(['--storage', `sqlite:${join(dir, 'events.db')}`, '--workers', '3', '--event-ttl', '0']);
  });
  after(async () => {
    await srv?.stop();
  });

  it('starts the workers it is asked for and says so', async () => {
    await until('three workers run', () => workerPids(srv.child.pid!).length === 3);
    assert.equal(workerPids(srv.child.pid!).length, 3);
  });

  it('shows every watcher, on every worker, each write of any worker once and in revision order', async () => {
    const watches = await Promise.all(Array.from({ length: 6 }, () => openWatch(srv.url, `${CORE}?watch=true`)));
    try {
      // Every watcher must be registered before the first write: the primary counts them across workers.
      await until('six watchers are counted', async () => /^kevents_watchers 6$/m.test((await fresh(srv.url, 'GET', '/metrics')).text));
      const names = Array.from({ length: 60 }, (_, i) => `fan-${i}`);
      const created = await Promise.all(names.map((n) => fresh(srv.url, 'POST', CORE, event(n))));
      for (const c of created) assert.equal(c.status, 201, c.text);
      // Read your writes: each created event, asked for on another connection (so another worker), is there.
      for (const c of created) {
        const got = await fresh(srv.url, 'GET', `${CORE}/${c.json.metadata.name}`);
        assert.equal(got.status, 200, got.text);
        assert.equal(got.json.metadata.resourceVersion, c.json.metadata.resourceVersion);
      }
      await until('every watcher has every frame', () => watches.every((w) => w.frames.length >= names.length));
      const expected = created.map((c) => Number(c.json.metadata.resourceVersion)).sort((a, b) => a - b);
      for (const w of watches) {
        assert.deepEqual(
          w.frames.map((f) => f.type),
          names.map(() => 'ADDED'),
        );
        assert.deepEqual(
          w.frames.map((f) => Number(f.object.metadata.resourceVersion)),
          expected,
        );
      }
      // A list on any worker is at or past every acknowledged write.
      const list = await fresh(srv.url, 'GET', CORE);
      assert.ok(Number(list.json.metadata.resourceVersion) >= expected[expected.length - 1]!);
      assert.equal(list.json.items.filter((e: any) => e.metadata.name.startsWith('fan-')).length, names.length);
    } finally {
      for (const w of watches) w.stop();
    }
  });

  it('lets exactly one of racing updates from different workers win, as etcd does', async () => {
    const c = await fresh(srv.url, 'POST', CORE, event('race'));
    assert.equal(c.status, 201, c.text);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => fresh(srv.url, 'PUT', `${CORE}/race`, { ...c.json, message: `writer ${i}` })),
    );
    const statuses = answers.map((a) => a.status).sort();
    assert.equal(statuses.filter((s) => s === 200).length, 1, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 409).length, 11, statuses.join(','));
    // Merge patches carry no precondition: all of them land, one after the other.
    const patches = await Promise.all(
      Array.from({ length: 12 }, (_, i) => fresh(srv.url, 'PATCH', `${CORE}/race`, { metadata: { labels: { [`w${i}`]: 'x' } } }, 'application/merge-patch+json')),
    );
    for (const p of patches) assert.equal(p.status, 200, p.text);
    const final = await fresh(srv.url, 'GET', `${CORE}/race`);
    assert.equal(Object.keys(final.json.metadata.labels).length, 12);
    const gone = await fresh(srv.url, 'DELETE', `${CORE}/race`);
    assert.equal(gone.status, 200, gone.text);
    assert.equal((await fresh(srv.url, 'GET', `${CORE}/race`)).status, 404);
  });

  it('sums every process on /metrics', async () => {
    const before = await fresh(srv.url, 'GET', '/metrics');
    const count = (text: string): number =>
      text
        .split('\n')
        .filter((l) => l.startsWith('kevents_apiserver_request_total{') && l.includes('verb="LIST"') && l.includes('code="200"') && l.includes('resource="events"'))
        .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
    for (let i = 0; i < 9; i++) assert.equal((await fresh(srv.url, 'GET', CORE)).status, 200);
    const later = await fresh(srv.url, 'GET', '/metrics');
    assert.equal(count(later.text) - count(before.text), 9);
  });

  it('starts another worker when one is killed, and keeps serving', async () => {
    const [victim] = workerPids(srv.child.pid!);
    process.kill(victim!, 'SIGKILL');
    await until('a new worker replaces the killed one', () => {
      const now = workerPids(srv.child.pid!);
      return now.length === 3 && !now.includes(victim!);
    });
    for (let i = 0; i < 6; i++) assert.equal((await fresh(srv.url, 'POST', CORE, event(`after-kill-${i}`))).status, 201);
    await until('the server says its killed worker was replaced', () => /serve worker exited; starting another/.test(srv.stderr()));
  });
});

describe('kevents serve --workers and kill -9 of the process that keeps the file', () => {
  it('keeps every acknowledged write, and its workers end with it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kevents-workers-kill-'));
    const storage = `sqlite:${join(dir, 'events.db')}`;
    const srv = await startServer(['--storage', storage, '--workers', '2', '--event-ttl', '0']);
    const workers = workerPids(srv.child.pid!);
    assert.equal(workers.length, 2);
    const acknowledged: string[] = [];
    let stop = false;
    const writers = Array.from({ length: 12 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const name = `k-${w}-${i}`;
        try {
          if ((await fresh(srv.url, 'POST', CORE, event(name))).status === 201) acknowledged.push(name);
        } catch {
          return;
        }
      }
    });
    const deadline = Date.now() + 60_000;
    while (acknowledged.length < 60 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    srv.child.kill('SIGKILL');
    await srv.stop();
    stop = true;
    await Promise.all(writers);
    assert.ok(acknowledged.length >= 60, `only ${acknowledged.length} writes acknowledged`);
    await until('the workers have ended', () => workers.every((p) => !alive(p)), 15_000);
    const again = await startServer(['--storage', storage, '--workers', '2', '--event-ttl', '0']);
    try {
      const list = await fresh(again.url, 'GET', CORE);
      const stored = new Set(list.json.items.map((e: any) => e.metadata.name));
      assert.deepEqual(
        acknowledged.filter((n) => !stored.has(n)),
        [],
      );
    } finally {
      await again.stop();
    }
  });
});

describe('kevents serve --workers refuses what it cannot do', () => {
  const serve = (args: string[]): { status: number | null; stderr: string } => {
    const r = spawnSync(process.execPath, [CLI, 'serve', '--listen', '127.0.0.1:0', ...args], { encoding: 'utf8', timeout: 30_000 });
    return { status: r.status, stderr: r.stderr };
  };
  it('with a store other processes cannot share', () => {
    const r = serve(['--storage', 'memory:', '--workers', '2']);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr.split('\n')[0]!, /^error: --workers serves one SQLite file from several processes; the memory store lives in one process$/);
  });
  it('with a count that is not one', () => {
    for (const n of ['0', 'two', '1.5']) {
      const r = serve(['--storage', 'memory:', '--workers', n]);
      assert.notEqual(r.status, 0);
      assert.match(r.stderr, /--workers must be a whole number from 1 to 64, or auto/);
    }
  });
  it('lists the flag in its help', () => {
    const help = execFileSync(process.execPath, [CLI, 'serve', '--help'], { encoding: 'utf8' });
    assert.match(help, /--workers <n>/);
  });
});

describe('kevents serve --workers --mirror against the real kube-apiserver', { timeout: 120_000 }, () => {
  let cp: ControlPlane | undefined;
  let srv: ServerProcess | undefined;
  after(async () => {
    await srv?.stop();
    await cp?.stop();
  });

  it('archives in the first process and shows what it archived to every worker, its metrics and readiness too', async () => {
    cp = await startControlPlane();
    const dir = mkdtempSync(join(tmpdir(), 'kevents-workers-mirror-'));
    srv = await startServer(['--storage', `sqlite:${join(dir, 'archive.db')}`, '--workers', '2', '--event-ttl', '0', '--mirror', cp.kubeconfigFile(), '--cluster', 'source']);
    const url = srv.url;
    await until('the mirror is ready, as every worker reports', async () => {
      const answers = await Promise.all([fresh(url, 'GET', '/readyz'), fresh(url, 'GET', '/readyz')]);
      return answers.every((a) => a.status === 200);
    });
    const watches = await Promise.all(Array.from({ length: 4 }, () => openWatch(url, `${CORE}?watch=true`)));
    try {
      await until('four watchers are counted', async () => /^kevents_watchers 4$/m.test((await fresh(url, 'GET', '/metrics')).text));
      const names = Array.from({ length: 10 }, (_, i) => `mirrored-${i}`);
      for (const name of names) {
        const r = await cp.request('POST', CORE, event(name));
        assert.equal(r.status, 201, r.text);
      }
      await until('every watcher has every archived event', () => watches.every((w) => names.every((n) => w.frames.some((f) => f.object.metadata.name === n))));
      for (const w of watches) {
        const mine = w.frames.filter((f) => names.includes(f.object.metadata.name));
        assert.equal(mine.length, names.length, 'each archived event once');
        assert.ok(mine.every((f) => f.type === 'ADDED' && f.object.metadata.labels['archive.kevents.io/cluster'] === 'source'));
      }
      for (let i = 0; i < 4; i++) {
        const list = await fresh(url, 'GET', CORE);
        assert.deepEqual(
          list.json.items.map((e: any) => e.metadata.name).filter((n: string) => n.startsWith('mirrored-')).sort(),
          [...names].sort(),
        );
      }
      // The mirror runs in the first process: any worker's /metrics shows its counters.
      const metrics = (await fresh(url, 'GET', '/metrics')).text;
      const written = /^kevents_mirror_events_written_total(?:\{[^}]*\})? (\d+)/m.exec(metrics);
      assert.ok(written !== null && Number(written[1]) >= names.length, metrics.slice(0, 2000));
    } finally {
      for (const w of watches) w.stop();
    }
  });
});
