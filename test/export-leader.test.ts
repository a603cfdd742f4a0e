import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import { startExport, stopExport } from './support/export-process.js';
import type { ExportProcess } from './support/export-process.js';
import { Workload, archiveChanges } from './support/event-workload.js';
import { changesStreamConfig, readStream, streamState } from './support/nats-stream.js';
import { POSTGRES_URL, testSchemas } from './support/postgres.js';
import { CLI, startServer } from './support/server-process.js';
import { sinkPaths, startNats } from './support/sink-servers.js';

/**
 * Highly available export: two `kevents export --leader-elect` replicas over
 * one PostgreSQL archive (their lease in the archive's lease table, no cluster
 * involved) deliver a live workload to a real nats-server with JetStream,
 * while the leader is killed with SIGKILL three times and comes back as a
 * standby. The stream forgets message ids after one second, so only one
 * delivering replica at a time (and the sink's read-back of what a killed
 * leader had in flight) keeps a change from arriving twice: the stream must
 * hold every change of the archive exactly once by record id.
 */

const LEASE = ['--leader-elect', '--leader-elect-lease-duration', '3s', '--leader-elect-renew-deadline', '2s', '--leader-elect-retry-period', '500ms'];
const LEASE_MS = 3000;

async function until(what: string, fn: () => Promise<boolean> | boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(100);
  }
}

async function leads(p: ExportProcess): Promise<boolean> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return false;
  try {
    return /^kevents_export_leader 1$/m.test(await (await fetch(`${p.metricsUrl}/metrics`)).text());
  } catch {
    return false;
  }
}

function repeated(ids: string[]): string[] {
  const seen = new Set<string>();
  return ids.filter((id) => seen.size === seen.add(id).size);
}

void describe('kevents export --leader-elect', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-export-leader-'));
  const { fresh } = testSchemas('kevents_export_leader');
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  void it('two replicas over a PostgreSQL archive, the leader killed with SIGKILL three times: every change at the sink exactly once, one leader at a time', { timeout: 600_000 }, async (t) => {
    const paths = sinkPaths(['nats']);
    assert.ok(paths.nats !== undefined, 'nats-server is not set up: run node scripts/sinks.mjs --only nats');
    const nats = await startNats(paths.nats);
    cleanups.push(() => nats.stop());
    const storage = `${POSTGRES_URL}?schema=${fresh()}`;
    const server = await startServer(['--storage', storage]);
    cleanups.push(() => server.stop());
    const config = join(dir, 'export.yaml');
    writeFileSync(config, changesStreamConfig(nats.address, { batchSize: 5, dropKubeSystem: true }));
    const load = new Workload(server.url);
    await load.opening(4);
    const start = async (): Promise<ExportProcess> => {
      const p = await startExport(config, storage, {}, LEASE);
      cleanups.push(() => stopExport(p, 'SIGKILL'));
      return p;
    };
    const replicas = [await start(), await start()];

    // Watch the replicas throughout: never two leaders at once, and when each one began to lead.
    let overlap = 0;
    let watching = true;
    const leaderSince: { at: number; index: number }[] = [];
    const watch = (async () => {
      let previous = -1;
      while (watching) {
        const now = Date.now();
        const leading = (await Promise.all(replicas.map(leads))).map((l, i) => (l ? i : -1)).filter((i) => i >= 0);
        overlap = Math.max(overlap, leading.length);
        if (leading.length === 1 && leading[0] !== previous) leaderSince.push({ at: now, index: leading[0]! });
        previous = leading.length === 1 ? leading[0]! : previous;
        await sleep(50);
      }
    })();

    const leaderIndex = async (): Promise<number> => {
      let found = -1;
      await until('one replica leads', async () => {
        const l = await Promise.all(replicas.map(leads));
        found = l.indexOf(true);
        return l.filter(Boolean).length === 1;
      });
      return found;
    };
    const kills: number[] = [];
    let round = 3;
    for (let k = 0; k < 3; k++) {
      const leader = await leaderIndex();
      assert.equal(await (await fetch(`${replicas[1 - leader]!.metricsUrl}/readyz`)).text(), 'ok', 'a standby is ready: it stands by');
      const before = (await streamState(nats.address, 'CHANGES'))?.messages ?? 0;
      await load.round(round++);
      await until('the leader publishes', async () => ((await streamState(nats.address, 'CHANGES'))?.messages ?? 0) > before);
      // Strike while a backlog is being published: a batch may be half delivered.
      await Promise.all(Array.from({ length: 30 }, (_, j) => load.core(`burst-${k}-${j}`)));
      kills.push(Date.now());
      await stopExport(replicas[leader]!, 'SIGKILL');
      await load.round(round++);
      replicas[leader] = await start();
      // Either replica may win the free lease: the standby, or the one just started if the
      // lease expired before the standby's next try.
      await until('a replica takes over', async () => (await Promise.all(replicas.map(leads))).some(Boolean));
    }
    await load.round(round++);

    const { changeIds } = await archiveChanges(server.url);
    assert.ok(changeIds.length > 150, `the workload made ${changeIds.length} changes`);
    await until('the stream holds every change', async () => ((await streamState(nats.address, 'CHANGES'))?.messages ?? 0) >= changeIds.length);
    // Let anything still in flight land before the stream is read for good.
    await sleep(2_000);
    watching = false;
    await watch;
    const ids = (await readStream(nats.address, 'CHANGES')).map((m) => m.headers['kevents-id']!);
    assert.deepEqual(repeated(ids), [], 'changes published twice');
    assert.deepEqual([...ids].sort(), changeIds, "exactly the archive's changes");
    assert.equal(overlap, 1, 'never two leaders at once');

    // The failover gap: from each kill to the next replica's leading.
    const gaps = kills.map((k) => (leaderSince.find((l) => l.at > k)?.at ?? Number.NaN) - k);
    t.diagnostic(`${changeIds.length} changes; failover gaps ${gaps.map((g) => `${(g / 1000).toFixed(1)} s`).join(', ')} with a ${LEASE_MS / 1000} s lease`);
    for (const p of replicas) await stopExport(p, 'SIGTERM');
  });

  void it('refuses --leader-elect where no lease can live, and a cluster flag without it, with a one-line error', () => {
    writeFileSync(join(dir, 'lines.yaml'), `sinks:\n  - name: lines\n    type: file\n    path: ${join(dir, 'lines.jsonl')}\n`);
    const run = (...args: string[]): { status: number | null; stderr: string } =>
      spawnSync(process.execPath, [CLI, 'export', '--config', join(dir, 'lines.yaml'), '--listen', '127.0.0.1:0', ...args], { encoding: 'utf8', timeout: 30_000 });
    const sqlite = run('--from', `sqlite:${join(dir, 'none.db')}`, '--leader-elect');
    assert.equal(sqlite.status, 2, sqlite.stderr);
    assert.match(sqlite.stderr, /--leader-elect needs a cluster to hold the Lease \(--kubeconfig, --context or --in-cluster\) or a PostgreSQL archive \(--storage postgres:\/\/…\) to hold the lock/);
    const noElect = run('--from', `sqlite:${join(dir, 'none.db')}`, '--context', 'prod');
    assert.equal(noElect.status, 2, noElect.stderr);
    assert.match(noElect.stderr, /--kubeconfig, --context and --in-cluster name the cluster of the --leader-elect Lease: add --leader-elect/);
    const timings = run('--from', `${POSTGRES_URL}?schema=${fresh()}`, '--leader-elect', '--leader-elect-lease-duration', '1s', '--leader-elect-renew-deadline', '2s');
    assert.equal(timings.status, 2, timings.stderr);
    assert.match(timings.stderr, /leader election: leaseDuration must be greater than renewDeadline/);
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'sinks:\n  - name: x\n    type: nope\n');
    const config = spawnSync(process.execPath, [CLI, 'export', '--config', bad, '--from', `${POSTGRES_URL}?schema=${fresh()}`, '--leader-elect', '--listen', '127.0.0.1:0'], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(config.status, 1, config.stderr);
    assert.match(config.stderr, /invalid export config:\n.*bad\.yaml:3:\d+: sinks\[0\]\.type: must be one of /);
  });
});
