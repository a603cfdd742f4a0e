import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { sinkFromKubeConfig } from '../src/client/index.js';
import { CollectingLogger } from '../src/internal/index.js';
import { createEventBroadcaster, createLegacyEventBroadcaster } from '../src/recorder/index.js';
import { allOccurrences, expectedHistories, histories, historyDiffs } from './support/archive-check.js';
import { createNamespaces } from './support/cluster-setup.js';
import { startControlPlane } from './support/control-plane.js';
import type { ControlPlane } from './support/control-plane.js';
import { EventLoad } from './support/event-load.js';
import type { Acknowledged } from './support/event-load.js';
import { request } from './support/http.js';
import { findKubectls, runKubectl } from './support/kubectl.js';
import { mirrorMetric, startMirror as startMirrorProcess, stopMirror, untilListed } from './support/mirror-process.js';
import type { MirrorProcess } from './support/mirror-process.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { startWitness } from './support/source-witness.js';
import type { SourceWitness } from './support/source-witness.js';
import { sleep, until } from './support/wait.js';

/**
 * The mirror's promise against a real kube-apiserver: events written through both APIs by raw
 * requests, by the recorder and by kubectl (creates, count bumps, series, new messages, labels);
 * `kevents mirror --kubeconfig` with the read-only token, killed with SIGKILL five times under that
 * load; an etcd compaction past its checkpoint so that the resumed watch really gets 410 and the
 * mirror relists; `--event-ttl 1m` so that the source really deletes events. The ground truth is
 * the test's own watch of the source (every version kube-apiserver served, checked against every
 * write it acknowledged): the archive must hold every event and every observed change exactly once.
 */

const kubectl = findKubectls().at(-1);

function etcdRevision(endpoint: string): number {
  const out = execFileSync('etcdctl', ['--endpoints', endpoint, 'endpoint', 'status', '-w', 'json'], { env: { ...process.env, ETCDCTL_API: '3' }, encoding: 'utf8' });
  return Number((JSON.parse(out) as { Status: { header: { revision: number } } }[])[0]!.Status.header.revision);
}

function etcdCompact(endpoint: string, revision: number): void {
  execFileSync('etcdctl', ['--endpoints', endpoint, 'compact', String(revision)], { env: { ...process.env, ETCDCTL_API: '3' }, stdio: ['ignore', 'ignore', 'pipe'] });
}

function second(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** KubectlWriter writes events with kubectl, as a user would, and keeps what the server acknowledged. */
class KubectlWriter {
  readonly acknowledged: Acknowledged[] = [];
  private n = 0;

  constructor(private readonly cp: ControlPlane) {}

  private async run(args: string[], input?: string): Promise<void> {
    if (kubectl === undefined) assert.fail('no kubectl on this machine');
    const r = await runKubectl(kubectl, this.cp.url, [...args, '-o', 'json'], { kubeconfig: this.cp.kubeconfigFile(), ...(input !== undefined ? { input } : {}) });
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    const meta = (JSON.parse(r.stdout) as { metadata: { uid: string; resourceVersion: string } }).metadata;
    this.acknowledged.push({ uid: meta.uid, resourceVersion: meta.resourceVersion });
  }

  /** round creates a core/v1 and an events.k8s.io/v1 event, then bumps, relabels and re-messages them. */
  async round(): Promise<void> {
    const i = this.n++;
    const now = Date.now();
    const core = `kubectl-core-${i}`;
    const v1 = `kubectl-v1-${i}`;
    await this.run(['create', '-f', '-'], JSON.stringify({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: core, namespace: 'load' },
      involvedObject: { kind: 'Pod', name: 'ops-0', namespace: 'load', apiVersion: 'v1' },
      reason: 'Evicted',
      message: 'The node was low on resource: memory.',
      type: 'Warning',
      source: { component: 'kubelet', host: 'node-1' },
      count: 1,
      firstTimestamp: second(now),
      lastTimestamp: second(now),
    }));
    await this.run(['create', '-f', '-'], JSON.stringify({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: v1, namespace: 'load' },
      eventTime: new Date(now).toISOString().replace('Z', '000Z'),
      reportingController: 'kubectl.example.com/ops',
      reportingInstance: 'ops-1',
      action: 'Drain',
      reason: 'Draining',
      regarding: { kind: 'Pod', name: 'ops-0', namespace: 'load', apiVersion: 'v1' },
      note: 'draining node-1 for maintenance',
      type: 'Normal',
    }));
    await this.run(['patch', 'events', core, '-n', 'load', '--type', 'merge', '-p', JSON.stringify({ count: 2, lastTimestamp: second(Date.now() + 1000) })]);
    await this.run(['patch', 'events.v1.events.k8s.io', v1, '-n', 'load', '--type', 'merge', '-p', JSON.stringify({ series: { count: 2, lastObservedTime: new Date().toISOString().replace('Z', '000Z') } })]);
    await this.run(['label', 'events', core, '-n', 'load', `round=${i}`]);
    await this.run(['patch', 'events', core, '-n', 'load', '--type', 'merge', '-p', JSON.stringify({ message: 'The node was low on resource: memory. Container app was using 2Gi.' })]);
  }
}

/** startRecorders records events through both APIs with the real recorder until the returned stop. */
function startRecorders(kubeconfig: string): { stop(): Promise<{ written: number; failed: number }> } {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const logger = new CollectingLogger();
  // A short finish makes the series' later counts reach the server while the mirror watches.
  const v1 = createEventBroadcaster({ sink: sinkFromKubeConfig(kc), logger, hostname: 'mirror-e2e', finishAfterMs: 2_000 });
  const legacy = createLegacyEventBroadcaster({ sink: sinkFromKubeConfig(kc), logger });
  const r = v1.newRecorder({ reportingController: 'example.com/operator' });
  const lr = legacy.newRecorder({ source: { component: 'example-operator', host: 'node-2' } });
  let running = true;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const n = Math.floor(Math.random() * 6);
      r.event({ regarding: { kind: 'Pod', apiVersion: 'v1', name: `rec-${n}`, namespace: 'rec', uid: `uid-rec-${n}` }, type: 'Warning', reason: 'ProbeFailed', action: 'Probe', note: `readiness probe failed (${i})` });
      lr.event({ involvedObject: { kind: 'Pod', apiVersion: 'v1', name: `legacy-${n}`, namespace: 'rec', uid: `uid-legacy-${n}` }, type: 'Warning', reason: 'BackOff', message: 'Back-off restarting failed container' });
      await sleep(100);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await Promise.all([v1.shutdown({ timeoutMs: 30_000 }), legacy.shutdown({ timeoutMs: 30_000 })]);
      return { written: v1.counters.written + legacy.counters.written, failed: v1.counters.failed + legacy.counters.failed };
    },
  };
}

void describe('kevents mirror against kube-apiserver', { timeout: 400_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-mirror-kube-'));
  const archivePath = join(dir, 'archive.db');
  let cp: ControlPlane;
  let witness: SourceWitness | undefined;
  let archive: ServerProcess | undefined;
  let mirror: MirrorProcess | undefined;
  let load: EventLoad | undefined;
  let recorders: { stop(): Promise<unknown> } | undefined;

  before(async () => {
    // No compaction but the test's own: a 410 at a moment the test does not choose would fold changes.
    cp = await startControlPlane({ eventTtl: '1m', extraArgs: ['--etcd-compaction-interval=0'] });
    await createNamespaces(cp, ['load', 'rec']);
  });
  after(async () => {
    load?.stop();
    await recorders?.stop();
    witness?.stop();
    if (mirror !== undefined) await stopMirror(mirror, 'SIGKILL');
    await archive?.stop();
    await cp?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  void it('archives every event and every observed change exactly once through kill -9 restarts, a compaction 410 and the TTL', async (t) => {
    const startRv = (await cp.request('GET', '/api/v1/events?limit=1')).json.metadata.resourceVersion as string;
    const w = startWitness(cp, startRv);
    witness = w;
    const l = new EventLoad((method, path, body, contentType) => cp.request(method, path, body, { contentType: contentType ?? 'application/json' }));
    load = l;
    const kubectlWriter = new KubectlWriter(cp);
    const startMirror = (): Promise<MirrorProcess> => startMirrorProcess({ kubeconfig: cp.kubeconfigFile(cp.readToken) }, `sqlite:${archivePath}`);

    // Events that exist before the mirror's first start are archived too (creates only: what an
    // event went through before a mirror first lists it is folded into its count).
    for (let i = 0; i < 20; i++) await l.step(i % 2 === 0 ? 0 : 0.3);
    const earliest = 'core-0';

    mirror = await startMirror();
    // The load bumps those events too, so it starts once the first list is committed: a bump
    // the list already sees would be folded into the event's first archived state.
    await untilListed(mirror);
    const rec = startRecorders(cp.kubeconfigFile());
    recorders = rec;
    const running = l.run(4);
    // Settled at once (to an error or undefined), so that a failure is reported where it is awaited.
    const byKubectl = (async () => {
      for (let i = 0; i < 2; i++) await kubectlWriter.round();
    })().then(
      () => undefined,
      (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
    );
    let kills = 0;
    for (let i = 0; i < 5; i++) {
      await sleep(500 + Math.random() * 2500);
      await stopMirror(mirror, 'SIGKILL');
      kills++;
      mirror = await startMirror();
    }
    await sleep(1000);
    l.stop();
    await running;
    const kubectlFailure = await byKubectl;
    if (kubectlFailure !== undefined) throw kubectlFailure;
    const recorded = await rec.stop();
    assert.equal(kills, 5);
    assert.ok(l.writes > 100, `the load wrote ${l.writes} changes`);
    assert.ok(recorded.written > 20 && recorded.failed === 0, `the recorders wrote ${JSON.stringify(recorded)}`);

    // The witness saw every write kube-apiserver acknowledged.
    const acknowledged = [...l.acknowledged, ...kubectlWriter.acknowledged];
    await until('the witness saw every acknowledged write', () => acknowledged.every((a) => w.seen(a.uid, a.resourceVersion)), 30_000);

    archive = await startServer(['--storage', `sqlite:${archivePath}`, '--event-ttl', '0']);
    const a = archive;
    const caughtUp = async (what: string, m: MirrorProcess): Promise<void> => {
      let last = '';
      try {
        await until(what, async () => {
          const want = expectedHistories(w.versions);
          const have = histories(await allOccurrences(a.url));
          last = historyDiffs(want, have);
          return [...want].every(([uid, c]) => JSON.stringify(have.get(uid)) === JSON.stringify(c)) && have.size === want.size;
        }, 120_000, 500);
      } catch (e) {
        throw new Error(`${(e as Error).message}: ${last}\n${m.output().slice(-3000)}`);
      }
    };
    await caughtUp('the mirror caught up with the load', mirror);

    // A real 410: while the mirror is down, change each of a few events once and create a few, then
    // compact etcd past the mirror's checkpoint. kube-apiserver has no watch cache for events, so the
    // resumed watch reaches etcd and is refused; the mirror relists. (Several changes of one event
    // behind a 410 are unobservable, hence one each.)
    await stopMirror(mirror, 'SIGKILL');
    for (const e of l.recentCore(5)) await l.bumpCore(e);
    for (let i = 0; i < 5; i++) {
      const r = await cp.request('POST', '/api/v1/namespaces/load/events', {
        metadata: { name: `gap-${i}` },
        involvedObject: { kind: 'Pod', namespace: 'load', name: 'db-0' },
        reason: 'Unhealthy',
        message: 'Readiness probe failed: connection refused',
        type: 'Warning',
        count: 1,
        lastTimestamp: second(Date.now()),
      });
      assert.equal(r.status, 201, r.text);
      l.acknowledged.push({ uid: r.json.metadata.uid, resourceVersion: r.json.metadata.resourceVersion });
    }
    await until('the witness saw the changes behind the 410', () => l.acknowledged.every((x) => w.seen(x.uid, x.resourceVersion)), 30_000);
    const revision = etcdRevision(cp.etcd.endpoints[0]!);
    etcdCompact(cp.etcd.endpoints[0]!, revision);
    const stale = await cp.request('GET', `/api/v1/events?watch=true&resourceVersion=${Number(startRv) + 1}&timeoutSeconds=1`);
    assert.match(stale.text, /"code":410/, 'kube-apiserver refuses a watch from before the compaction');

    mirror = await startMirror();
    const m = mirror;
    await until('the mirror relisted after 410', async () => (await mirrorMetric(m, 'kevents_mirror_relists_total')) === 1 && (await mirrorMetric(m, 'kevents_mirror_ready')) === 1);
    assert.match(m.output(), /relisting/);
    // The watch after the relist goes on archiving.
    for (let i = 0; i < 30; i++) await l.step();
    await caughtUp('the mirror caught up after the relist', m);

    // --event-ttl for real: kube-apiserver deletes the earliest events; the archive keeps them.
    await until('kube-apiserver expired the earliest event', async () => (await cp.request('GET', `/api/v1/namespaces/load/events/${earliest}`)).status === 404, 120_000, 1000);
    await stopMirror(mirror, 'SIGTERM');
    mirror = undefined;
    assert.ok(w.deleted.size > 0, 'the witness saw the TTL delete events');

    const got = await allOccurrences(a.url);
    const want = expectedHistories(w.versions);
    const have = histories(got);
    for (const [uid, changes] of want) assert.deepEqual(have.get(uid), changes, `changes of event ${uid}`);
    assert.deepEqual([...have.keys()].sort(), [...want.keys()].sort(), 'the same events');
    assert.equal(got.length, [...want.values()].reduce((n, c) => n + c.length, 0), 'no occurrence is missing or duplicated');
    assert.ok(got.every((o) => o.cluster === 'lab'));

    // Every event the source ever had is archived once, with its identity and its last version.
    const archived = (await request(a.url, 'GET', '/api/v1/events')).json.items as any[];
    assert.equal(archived.length, want.size);
    const lastVersion = new Map(w.versions.map((v) => [v.metadata.uid, v]));
    for (const e of archived) {
      const source = lastVersion.get(e.metadata.uid);
      assert.ok(source !== undefined, `${e.metadata.name} came from the source`);
      assert.equal(e.metadata.annotations?.['archive.kevents.io/source-resource-version'], source.metadata.resourceVersion, `${e.metadata.name} is archived at its last version`);
      assert.equal(e.metadata.labels?.['archive.kevents.io/cluster'], 'lab');
      assert.equal(e.count ?? null, source.count ?? null);
      assert.deepEqual(e.series ?? null, source.series ?? null);
    }
    for (const uid of w.deleted) assert.ok(lastVersion.has(uid) && archived.some((e) => e.metadata.uid === uid), `the expired event ${uid} is archived`);

    t.diagnostic(`${l.writes} load writes, ${acknowledged.length} acknowledged by kube-apiserver (load and kubectl), ${recorded.written} recorder writes; ${w.versions.length} versions of ${want.size} events, ${got.length} occurrences, ${w.deleted.size} events expired at the source; ${kills} kills`);
    if (kubectl === undefined) assert.fail('no kubectl on this machine');
    const out = await runKubectl(kubectl, a.url, ['get', 'events', '-n', 'load', '--field-selector', `metadata.name=${earliest}`, '-o', 'wide']);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, new RegExp(`\\b${earliest}\\b`));
  });
});
