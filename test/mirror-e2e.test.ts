import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { allOccurrences, histories, historyDiffs } from './support/archive-check.js';
import { EventLoad } from './support/event-load.js';
import { request } from './support/http.js';
import { findKubectls, hasKubectl, runKubectl } from './support/kubectl.js';
import { mirrorMetric, startMirror as startMirrorProcess, stopMirror, untilListed } from './support/mirror-process.js';
import type { MirrorProcess } from './support/mirror-process.js';
import { CLI, startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { sleep, until } from './support/wait.js';

/**
 * The mirror's promise, end to end: a source `kevents serve` under load (creates,
 * count and series bumps, new messages and metadata-only writes through both
 * APIs), a `kevents mirror` process killed with SIGKILL at random moments and
 * restarted, a forced 410 on the source; then the archive must hold every event
 * and every observed change of the source exactly once. The source's own
 * occurrence history (it records every change of its local writes) is the
 * ground truth.
 */

const EVENT_TTL_S = 90;
const HISTORY_WINDOW_S = 30;
const CORE = '/api/v1/namespaces/load/events';

const kill = stopMirror;
const metric = mirrorMetric;
const startMirror = (source: string, archive: string): Promise<MirrorProcess> => startMirrorProcess(source, `sqlite:${archive}`);
const sendTo =
  (base: string) =>
  (method: string, path: string, body: unknown, contentType = 'application/json') =>
    request(base, method, path, body, { 'Content-Type': contentType });

function second(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

void describe('kevents mirror end to end', { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-mirror-e2e-'));
  const archivePath = join(dir, 'archive.db');
  let source: ServerProcess | undefined;
  let archive: ServerProcess | undefined;
  let mirror: MirrorProcess | undefined;
  after(async () => {
    if (mirror !== undefined) await kill(mirror, 'SIGKILL');
    await archive?.stop();
    await source?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  void it('archives every event and every observed change exactly once through kill -9 restarts and a 410', async () => {
    source = await startServer(['--storage', 'memory:', '--event-ttl', `${EVENT_TTL_S}s`, '--history-window', `${HISTORY_WINDOW_S}s`]);
    const load = new EventLoad(sendTo(source.url));
    // Events that exist before the mirror's first start are archived too. (Only creates: the
    // changes an event went through before a mirror first lists it are folded into its count.)
    for (let i = 0; i < 20; i++) await load.step(i % 2 === 0 ? 0 : 0.3);
    const earliest = (await request(source.url, 'GET', `${CORE}?limit=1`)).json.items[0]?.metadata.name as string | undefined;

    mirror = await startMirror(source.url, archivePath);
    // The load bumps those events too, so it starts once the first list is committed: a bump
    // the list already sees would be folded into the event's first archived state.
    await untilListed(mirror);
    const running = load.run(4);
    let kills = 0;
    for (let i = 0; i < 5; i++) {
      await sleep(500 + Math.random() * 2500);
      await kill(mirror, 'SIGKILL');
      kills++;
      mirror = await startMirror(source.url, archivePath);
    }
    await sleep(1000);
    load.stop();
    await running;
    assert.equal(kills, 5);
    assert.ok(load.writes > 100, `the load wrote ${load.writes} changes`);

    // Force a 410. The changes a 410 hides (several changes of one event while the mirror could
    // not watch) are unobservable, so first let the mirror catch up, then, while it is down,
    // change each of a few events once and create a few, and let the source's history window
    // pass the mirror's checkpoint.
    archive = await startServer(['--storage', `sqlite:${archivePath}`, '--event-ttl', '0']);
    const a = archive;
    const before = (await allOccurrences(source.url)).length;
    const mm = mirror;
    try {
      await until('the mirror caught up with the load', async () => (await allOccurrences(a.url)).length >= before, 120_000);
    } catch (e) {
      const got = await allOccurrences(a.url);
      const diffs = historyDiffs(histories(await allOccurrences(source.url)), histories(got));
      throw new Error(`${(e as Error).message}: archive ${got.length} of ${before}; ${diffs}\n${mm.output().slice(-3000)}`);
    }
    await kill(mirror, 'SIGKILL');
    for (const e of load.recentCore(5)) {
      e.count++;
      const r = await request(source.url, 'PATCH', `${CORE}/${e.name}`, { count: e.count, lastTimestamp: second(Date.now()) }, { 'Content-Type': 'application/merge-patch+json' });
      assert.equal(r.status, 200, r.text);
    }
    for (let i = 0; i < 5; i++) {
      const name = `gap-${i}`;
      const r = await request(source.url, 'POST', CORE, {
        metadata: { name },
        involvedObject: { kind: 'Pod', namespace: 'load', name: 'db-0' },
        reason: 'Unhealthy',
        message: 'Readiness probe failed: connection refused',
        type: 'Warning',
        count: 1,
        lastTimestamp: second(Date.now()),
      });
      assert.equal(r.status, 201, r.text);
    }
    await sleep((HISTORY_WINDOW_S + 8) * 1000);
    mirror = await startMirror(source.url, archivePath);
    const m = mirror;
    await until('the mirror relisted after 410 Expired', async () => (await metric(m, 'kevents_mirror_relists_total')) === 1 && (await metric(m, 'kevents_mirror_ready')) === 1);
    assert.match(m.output(), /relisting/);

    const truth = await allOccurrences(source.url);
    // Wait for the mirror to catch up: until the archive has as many occurrences, or stops growing.
    let seen = -1;
    let stableSince = Date.now();
    await until('the archive catches up', async () => {
      const n = (await allOccurrences(a.url)).length;
      if (n !== seen) {
        seen = n;
        stableSince = Date.now();
      }
      return n >= truth.length || Date.now() - stableSince > 10_000;
    });
    await kill(mirror, 'SIGTERM');
    mirror = undefined;

    const got = await allOccurrences(archive.url);
    const want = histories(truth);
    const have = histories(got);
    for (const [uid, changes] of want) assert.deepEqual(have.get(uid), changes, `changes of event ${uid}`);
    assert.deepEqual([...have.keys()].sort(), [...want.keys()].sort(), 'the same events');
    assert.equal(got.length, truth.length, 'no occurrence is missing or duplicated');
    assert.ok(got.every((o) => o.cluster === 'lab'));

    // Every event the source ever had is in the archive, with its identity and its last state.
    const archived = (await request(archive.url, 'GET', '/api/v1/namespaces/load/events')).json.items as any[];
    assert.equal(archived.length, want.size);
    const byUid = new Map(archived.map((e) => [e.metadata.uid, e]));
    for (const o of truth) {
      const e = byUid.get(o.event.uid);
      assert.ok(e !== undefined, `event ${o.event.name} is archived`);
      assert.equal(e.metadata.name, o.event.name);
      assert.equal(e.metadata.labels?.['archive.kevents.io/cluster'], 'lab');
      assert.ok(e.metadata.annotations?.['archive.kevents.io/source-resource-version']);
    }

    // The source has expired the earliest events; the archive still serves them to kubectl.
    assert.ok(earliest !== undefined);
    await until('the source expired the earliest event', async () => (await request(source!.url, 'GET', `${CORE}/${earliest}`)).status === 404, (EVENT_TTL_S + 10) * 1000);
    if (hasKubectl()) {
      const kubectl = findKubectls().at(-1)!;
      const r = await runKubectl(kubectl, archive.url, ['get', 'events', '-n', 'load', '-o', 'wide']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`\\b${earliest}\\b`));
      const occ = await runKubectl(kubectl, archive.url, ['get', 'occurrences', '-n', 'load', '--field-selector', `event.name=${earliest}`]);
      assert.equal(occ.code, 0, occ.stderr);
      assert.match(occ.stdout, /0->1/);
    } else {
      assert.equal((await request(archive.url, 'GET', `${CORE}/${earliest}`)).status, 200);
    }
  });
});

void describe('kevents serve --mirror', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-serve-mirror-'));
  const servers: ServerProcess[] = [];
  after(async () => {
    for (const s of servers) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  void it('archives and serves in one process, with the mirror in /readyz and /metrics', async () => {
    const source = await startServer(['--storage', 'memory:', '--event-ttl', '1h']);
    servers.push(source);
    const load = new EventLoad(sendTo(source.url));
    for (let i = 0; i < 10; i++) await load.step(i % 2 === 0 ? 0 : 0.3);
    const both = await startServer(['--storage', `sqlite:${join(dir, 'archive.db')}`, '--mirror', source.url, '--cluster', 'east', '--retention', '30d']);
    servers.push(both);
    await until('the events are archived', async () => (await request(both.url, 'GET', '/api/v1/namespaces/load/events')).json.items.length === 10);
    await until('the mirror is ready', async () => (await request(both.url, 'GET', '/readyz')).status === 200);
    for (let i = 0; i < 10; i++) await load.step(0.5);
    await until('the bumps are archived', async () => (await allOccurrences(both.url)).length === (await allOccurrences(source.url)).length);
    const metrics = (await request(both.url, 'GET', '/metrics')).text;
    assert.match(metrics, /^kevents_mirror_events_written_total [1-9]\d*$/m);
    assert.match(metrics, /^kevents_mirror_ready 1$/m);
    const occ = await allOccurrences(both.url);
    assert.ok(occ.every((o) => o.cluster === 'east'));
  });
});

describe('kevents mirror flags', () => {
  it('refuses a --cache-size that is not a whole number of MiB, with a one-line usage error', () => {
    for (const bad of ['0', 'x', '1.5']) {
      const r = spawnSync(process.execPath, [CLI, 'mirror', '--source', 'http://127.0.0.1:9', '--to', 'memory:', '--cache-size', bad], { encoding: 'utf8' });
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /^error: --cache-size must be a whole number of MiB from 1 to 65536/);
    }
  });

  it('names its archive with --storage, takes --to as its older name, and refuses both or neither', () => {
    const run = (...args: string[]) => spawnSync(process.execPath, [CLI, 'mirror', '--source', 'http://127.0.0.1:9', '--cache-size', '0', ...args], { encoding: 'utf8' });
    // --cache-size 0 is refused after the archive's flag is read: reaching it shows the archive was accepted.
    for (const ok of [['--storage', 'memory:'], ['--to', 'memory:']]) assert.match(run(...ok).stderr, /^error: --cache-size must be/, ok.join(' '));
    const both = run('--storage', 'memory:', '--to', 'memory:');
    assert.equal(both.status, 2);
    assert.match(both.stderr, /^error: --storage and --to name the same archive \(--to is its older name\): give one\n/);
    const neither = run();
    assert.equal(neither.status, 2);
    assert.match(neither.stderr, /^error: required option '--storage <spec>' not specified\n/);
    const help = spawnSync(process.execPath, [CLI, 'mirror', '--help'], { encoding: 'utf8' }).stdout;
    assert.match(help, /--storage <spec>/);
    assert.doesNotMatch(help, /--to </, 'the older name is hidden from --help');
  });
});
