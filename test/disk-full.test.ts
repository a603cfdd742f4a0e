import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import Database from 'better-sqlite3';
import { sinkFromKubeConfig } from '../src/client/index.js';
import { CollectingLogger } from '../src/internal/index.js';
import { createLegacyEventBroadcaster } from '../src/recorder/index.js';
import { allOccurrences, expectedHistories, historyDiffs, histories } from './support/archive-check.js';
import { startControlPlane } from './support/control-plane.js';
import { startExport, stopExport } from './support/export-process.js';
import { mirrorMetric, startMirror, stopMirror, untilListed } from './support/mirror-process.js';
import type { MirrorProcess } from './support/mirror-process.js';
import { startWitness } from './support/source-witness.js';
import { request } from './support/http.js';
import { findKubectls, runKubectl } from './support/kubectl.js';
import { startServer } from './support/server-process.js';
import { mountSmallDisk } from './support/small-disk.js';
import type { SmallDisk } from './support/small-disk.js';
import { until } from './support/wait.js';

/**
 * A full disk, for real: the SQLite archive (or a file sink's file) on a small
 * tmpfs filled to the last byte. `kevents serve` answers the writes it cannot
 * store with 507 InsufficientStorage, which kubectl, client-node and the
 * recorder show (the recorder retrying until space is freed), keeps serving
 * reads, and leaves a file that passes `PRAGMA integrity_check` with every
 * acknowledged write in it. A file sink on a full disk is unavailable, retried,
 * and delivers each record once, with no torn line, once space is freed.
 */

function event(name: string, namespace = 'default'): Record<string, unknown> {
  return {
    metadata: { name, namespace },
    involvedObject: { kind: 'Pod', namespace, name: `web-${name}` },
    reason: 'BackOff',
    // Incompressible, so the disk fills at a known pace.
    message: `${name} ${Buffer.from(Array.from({ length: 600 }, (_, i) => (i * 7919 + name.length * 31 + name.charCodeAt(name.length - 1)) % 251)).toString('base64')}`,
    type: 'Warning',
  };
}

/** assertIntact checks a closed archive file with SQLite's full integrity check. */
function assertIntact(path: string): void {
  const file = new Database(path, { readonly: true });
  try {
    assert.deepEqual(file.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
  } finally {
    file.close();
  }
}

function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    // client-node refuses plain http unless told to skip TLS verification.
    clusters: [{ name: 'kevents', server, skipTLSVerify: true }],
    users: [{ name: 'kevents' }],
    contexts: [{ name: 'kevents', cluster: 'kevents', user: 'kevents' }],
    currentContext: 'kevents',
  });
  return kc;
}

void describe('a full disk', () => {
  const disks: SmallDisk[] = [];
  const scratch = mkdtempSync(join(tmpdir(), 'kevents-disk-full-'));
  after(() => {
    for (const d of disks) d.unmount();
    rmSync(scratch, { recursive: true, force: true });
  });

  void it('serve refuses writes with 507, serves reads, keeps every acknowledged write and an intact file', { timeout: 300_000 }, async (t) => {
    const disk = mountSmallDisk(16);
    disks.push(disk);
    const db = join(disk.dir, 'events.db');
    const server = await startServer(['--storage', `sqlite:${db}`, '--event-ttl', '0']);
    const acknowledged = new Set<string>();
    try {
      for (let i = 0; i < 200; i++) {
        const r = await request(server.url, 'POST', '/api/v1/namespaces/default/events', event(`before-${i}`));
        assert.equal(r.status, 201, r.text);
        acknowledged.add(`before-${i}`);
      }
      let filler = 0;
      /**
       * saturate fills the disk and writes until three writes in a row are refused: SQLite reuses
       * the space of its write-ahead log after a checkpoint, so one refusal does not mean the next.
       */
      const saturate = async (): Promise<Awaited<ReturnType<typeof request>>> => {
        disk.fill();
        let refusal;
        for (let refused = 0; refused < 3; filler++) {
          assert.ok(filler < 100_000, 'the disk never filled');
          const r = await request(server.url, 'POST', '/api/v1/namespaces/default/events', event(`filling-${filler}`));
          if (r.status === 201) {
            acknowledged.add(`filling-${filler}`);
            refused = 0;
          } else {
            refusal ??= r;
            refused++;
          }
        }
        assert.ok(refusal !== undefined);
        return refusal;
      };
      const refusal = await saturate();
      t.diagnostic(`${acknowledged.size} writes acknowledged before the first refusal`);
      assert.equal(refusal.status, 507, refusal.text);
      assert.equal(refusal.json.kind, 'Status');
      assert.equal(refusal.json.reason, 'InsufficientStorage');
      assert.match(refusal.json.message, /^the archive has no space left for this write, which was not stored \(reads are still served\): sqlite: database or disk is full$/);
      /**
       * refused saturates the disk and makes one more write until that write is refused: a
       * checkpoint of the write-ahead log can make room for one write after three refusals.
       * A write that goes through is acknowledged like any other (`name` of the attempt).
       */
      const refused = async <T>(what: string, write: (attempt: number) => Promise<T>, stored: (r: T) => boolean, name?: (attempt: number) => string): Promise<T> => {
        for (let attempt = 0; attempt < 10; attempt++) {
          if (attempt > 0) await saturate();
          const r = await write(attempt);
          if (!stored(r)) return r;
          if (name !== undefined) acknowledged.add(name(attempt));
          t.diagnostic(`${what}: attempt ${attempt} was stored (the log's checkpoint made room); the disk is filled again`);
        }
        assert.fail(`${what}: stored ten times on a full disk`);
      };
      const created = (r: { status: number }): boolean => r.status === 201 || r.status === 200;
      // Both APIs, and patches, are refused alike.
      const v1 = await refused('events.k8s.io/v1 create', (n) => request(server.url, 'POST', '/apis/events.k8s.io/v1/namespaces/default/events', {
        metadata: { name: `v1-refused-${n}` }, eventTime: new Date().toISOString().replace('Z', '000Z'), reportingController: 'x/y', reportingInstance: 'i', action: 'A', reason: 'R', regarding: { kind: 'Pod', name: 'p', namespace: 'default' }, type: 'Normal',
      }), created, (n) => `v1-refused-${n}`);
      assert.equal(v1.status, 507, v1.text);
      const patch = await refused('merge patch', (n) => request(server.url, 'PATCH', '/api/v1/namespaces/default/events/before-0', { count: 2 + n }, { 'Content-Type': 'application/merge-patch+json' }), created);
      assert.equal(patch.status, 507, patch.text);

      // Reads go on.
      const list = await request(server.url, 'GET', '/api/v1/namespaces/default/events');
      assert.equal(list.status, 200);
      assert.deepEqual(new Set(list.json.items.map((e: { metadata: { name: string } }) => e.metadata.name)), acknowledged);

      // What the clients show.
      const kubectl = findKubectls().at(-1);
      if (kubectl !== undefined) {
        await saturate();
        const run = await refused('kubectl create', (n) => runKubectl(kubectl, server.url, ['create', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'Event', ...event(`kubectl-refused-${n}`) }) }), (r) => r.code === 0, (n) => `kubectl-refused-${n}`);
        assert.equal(run.code, 1);
        assert.match(run.stderr, /^Error from server \(InsufficientStorage\): error when creating "STDIN": the archive has no space left for this write/m);
        t.diagnostic(`kubectl: ${run.stderr.trim()}`);
      }
      await saturate();
      const api = kubeConfigFor(server.url).makeApiClient(CoreV1Api);
      const rejection = await refused('client-node create', (n) => api.createNamespacedEvent({ namespace: 'default', body: event(`client-node-refused-${n}`) as never }).then(() => undefined, (e: unknown) => e as { code?: number; body?: string }), (e) => e === undefined, (n) => `client-node-refused-${n}`);
      assert.equal(rejection?.code, 507);
      assert.equal(JSON.parse(rejection?.body ?? '{}').reason, 'InsufficientStorage');

      // The recorder retries through it.
      await saturate();
      const logger = new CollectingLogger();
      const broadcaster = createLegacyEventBroadcaster({ sink: sinkFromKubeConfig(kubeConfigFor(server.url)), logger, retrySleepMs: 300 });
      const recorder = broadcaster.newRecorder({ source: { component: 'disk-full-test' } });
      recorder.event({ involvedObject: { kind: 'Pod', apiVersion: 'v1', name: 'recorded', namespace: 'default', uid: 'u-1' }, type: 'Warning', reason: 'Recorded', message: 'recorded while the disk was full' });
      await until('the recorder has been refused', () => logger.entries.some((e) => JSON.stringify(e).includes('507') || JSON.stringify(e).includes('InsufficientStorage')));
      t.diagnostic(`recorder: ${logger.messages().slice(0, 2).join(' | ')}`);
      disk.free();
      await until('the recorder has written its event', async () => {
        const r = await request(server.url, 'GET', '/api/v1/namespaces/default/events?fieldSelector=reason%3DRecorded');
        return r.json?.items?.length === 1;
      });
      await broadcaster.shutdown();
      const again = await request(server.url, 'POST', '/api/v1/namespaces/default/events', event('after-free'));
      assert.equal(again.status, 201, again.text);
      acknowledged.add('after-free');
      const stderr = server.stderr();
      // The full disk is logged once an episode, not once a refused write: an attempt the log's checkpoint made room
      // for (above) ends one, and the next refusal starts another.
      const episodes = stderr.split('\n').filter((l) => l.includes('the disk is full') || l.includes('writes are stored again'));
      assert.ok(episodes.length >= 2 && episodes[0]!.includes('the disk is full'), stderr.slice(0, 2000));
      episodes.forEach((l, i) => assert.equal(l.includes('the disk is full'), i % 2 === 0, `full and stored again alternate: ${stderr.slice(0, 2000)}`));
      assert.match(episodes[episodes.length - 1]!, /writes are stored again/);
    } finally {
      assert.equal(await server.stop(), 0);
    }
    assertIntact(db);
    // Reopened: every acknowledged write, nothing else of the refused ones.
    const reopened = await startServer(['--storage', `sqlite:${db}`, '--event-ttl', '0']);
    try {
      const list = await request(reopened.url, 'GET', '/api/v1/namespaces/default/events');
      const names = new Set<string>(list.json.items.map((e: { metadata: { name: string } }) => e.metadata.name));
      for (const n of acknowledged) assert.ok(names.has(n), `${n} was acknowledged and lost`);
      const extra = [...names].filter((n) => !acknowledged.has(n) && !n.startsWith('recorded.'));
      assert.deepEqual(extra, []);
    } finally {
      await reopened.stop();
    }
  });

  void it('a file sink on a full disk is unavailable, retried, and then delivers each record once', { timeout: 300_000 }, async () => {
    const disk = mountSmallDisk(16);
    disks.push(disk);
    const archive = join(scratch, 'archive.db');
    const server = await startServer(['--storage', `sqlite:${archive}`, '--event-ttl', '0']);
    const lines = join(disk.dir, 'out', 'events.jsonl');
    const config = join(scratch, 'export.yaml');
    writeFileSync(config, `sinks:\n  - name: lines\n    type: file\n    path: ${lines}\n    stuckAfter: 1s\n    retry: { initialBackoff: 100ms, maxBackoff: 1s }\n`);
    let exporter;
    try {
      const total = 3_000;
      for (let i = 0; i < total; i += 100) {
        const batch = await Promise.all(Array.from({ length: 100 }, (_, j) => request(server.url, 'POST', '/api/v1/namespaces/default/events', event(`line-${i + j}`))));
        for (const r of batch) assert.equal(r.status, 201, r.text);
      }
      // About a third of the records fit.
      disk.fill(2_000_000);
      exporter = await startExport(config, `sqlite:${archive}`);
      const metrics = exporter.metricsUrl;
      await until('/readyz names the full disk', async () => {
        const r = await fetch(`${metrics}/readyz?verbose`);
        return r.status !== 200 && /sink lines: nothing delivered for \d+s \(.*ENOSPC/.test(await r.text());
      }, 120_000);
      disk.free();
      await until('every record is in the file', () => {
        try {
          return readFileSync(lines, 'utf8').split('\n').length - 1 >= total;
        } catch {
          return false;
        }
      }, 120_000);
      await until('/readyz is ok again', async () => (await fetch(`${metrics}/readyz`)).status === 200);
      const text = readFileSync(lines, 'utf8');
      assert.ok(text.endsWith('\n'));
      const ids = text.trimEnd().split('\n').map((l) => (JSON.parse(l) as { id: string }).id);
      assert.equal(ids.length, total, 'a record was written twice or a line torn');
      assert.equal(new Set(ids).size, total);
      assert.match(exporter.output(), /export: delivery failed; retrying.*ENOSPC/);
    } finally {
      if (exporter !== undefined) await stopExport(exporter, 'SIGTERM');
      await server.stop();
    }
  });

  void it('the mirror stops on a full disk, names it in /readyz, and resumes from its checkpoint with no gap', { timeout: 300_000 }, async (t) => {
    const disk = mountSmallDisk(16);
    disks.push(disk);
    const db = join(disk.dir, 'archive.db');
    const cp = await startControlPlane({ extraArgs: ['--etcd-compaction-interval=0'] });
    let mirror: MirrorProcess | undefined;
    const witness = startWitness(cp, (await cp.request('GET', '/api/v1/events?limit=1')).json.metadata.resourceVersion as string);
    try {
      let n = 0;
      const create = async (count: number): Promise<void> => {
        for (let i = 0; i < count; i += 10) {
          const batch = await Promise.all(Array.from({ length: 10 }, () => cp.request('POST', '/api/v1/namespaces/default/events', event(`src-${n++}`))));
          for (const r of batch) assert.equal(r.status, 201, r.text);
        }
      };
      mirror = await startMirror({ kubeconfig: cp.kubeconfigFile(cp.readToken) }, `sqlite:${db}`);
      await untilListed(mirror);
      await create(50);
      const m = mirror;
      const readyz = async (): Promise<{ status: number; text: string }> => {
        const r = await fetch(`${m.metricsUrl}/readyz?verbose`);
        return { status: r.status, text: await r.text() };
      };
      disk.fill();
      await create(300);
      let named = '';
      await until('/readyz names the failing write', async () => {
        const r = await readyz();
        named = r.text;
        if (r.status !== 200 && /writes to the archive fail \(for \d+s; the checkpoint stays where it is\): .*sqlite: database or disk is full/.test(r.text)) return true;
        // SQLite reuses its log's space after a checkpoint: keep writing until no space is left at all.
        disk.fill();
        await create(10);
        return false;
      }, 120_000).catch((e: Error) => assert.fail(`${e.message}: ${named}; ${disk.available()} bytes free; ${m.output().slice(-1500)}`));
      t.diagnostic(`/readyz: ${named.split('\n')[0]}`);
      const fullAt = Date.now();
      disk.free();
      await until('the mirror is ready again', async () => (await readyz()).status === 200, 120_000);
      t.diagnostic(`ready again ${((Date.now() - fullAt) / 1000).toFixed(1)} s after the space was freed`);
      await create(50);
      await until('the witness saw every event', () => witness.versions.length >= n, 60_000);
      await until('the mirror wrote every event', async () => (await mirrorMetric(m, 'kevents_mirror_occurrences_written_total')) >= witness.versions.length, 60_000);
      await stopMirror(mirror, 'SIGTERM');
      mirror = undefined;
      assert.match(m.output(), /mirror: writes to the archive succeed again/);
    } finally {
      if (mirror !== undefined) await stopMirror(mirror, 'SIGKILL');
      witness.stop();
      await cp.stop();
    }
    assertIntact(db);
    const archive = await startServer(['--storage', `sqlite:${db}`, '--event-ttl', '0']);
    try {
      const want = expectedHistories(witness.versions);
      const have = histories(await allOccurrences(archive.url));
      assert.equal(historyDiffs(want, have), JSON.stringify({ differ: [], unexpected: [] }), 'the archive differs from the source');
      assert.deepEqual([...have.keys()].sort(), [...want.keys()].sort());
      assert.equal([...have.values()].flat().length, [...want.values()].flat().length, 'no occurrence is missing or doubled');
      t.diagnostic(`${want.size} events at the source, each archived once`);
    } finally {
      await archive.stop();
    }
  });
});
