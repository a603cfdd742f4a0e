import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { allOccurrences, expectedHistories, historyDiffs, histories } from './support/archive-check.js';
import { createNamespaces } from './support/cluster-setup.js';
import { startControlPlane } from './support/control-plane.js';
import type { ControlPlane } from './support/control-plane.js';
import { EventLoad } from './support/event-load.js';
import { mirrorMetric, startMirror, stopMirror, untilListed } from './support/mirror-process.js';
import type { MirrorProcess } from './support/mirror-process.js';
import { startServer } from './support/server-process.js';
import { startWitness } from './support/source-witness.js';
import type { SourceWitness } from './support/source-witness.js';
import { startTcpProxy } from './support/tcp-proxy.js';
import type { TcpProxy } from './support/tcp-proxy.js';
import { sleep, until } from './support/wait.js';

/**
 * A silent network between `kevents mirror` and a real kube-apiserver: a TCP
 * proxy that stops forwarding without closing anything, then one that cuts
 * every connection every few seconds under load. The mirror must notice the
 * silence by itself (its watch outlives its timeout), resume from its
 * checkpoint once the network is back, and in the end hold every change the
 * source served exactly once, against an independent watch of the source.
 */

/** CUT_FOR_MS is how long the connections are cut under load (two minutes by hand: KEVENTS_CUT_FOR_MS=120000). */
const CUT_FOR_MS = Number(process.env.KEVENTS_CUT_FOR_MS ?? 45_000);
const CUT_EVERY_MS = 3_000;

void describe('a silent network between the mirror and kube-apiserver', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-silent-'));
  const archivePath = join(dir, 'archive.db');
  let cp: ControlPlane;
  let proxy: TcpProxy;
  let witness: SourceWitness | undefined;
  let mirror: MirrorProcess | undefined;
  let load: EventLoad | undefined;
  before(async () => {
    cp = await startControlPlane({ extraArgs: ['--etcd-compaction-interval=0'] });
    await createNamespaces(cp, ['load']);
    proxy = await startTcpProxy(Number(new URL(cp.url).port));
  });
  after(async () => {
    load?.stop();
    witness?.stop();
    if (mirror !== undefined) await stopMirror(mirror, 'SIGKILL');
    await proxy?.close();
    await cp?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  void it('notices a silent network, resumes from its checkpoint, and loses or doubles nothing through cut connections', { timeout: 600_000 }, async (t) => {
    const w = startWitness(cp, (await cp.request('GET', '/api/v1/events?limit=1')).json.metadata.resourceVersion as string);
    witness = w;
    // The mirror reaches kube-apiserver through the proxy: same certificate (it names 127.0.0.1), another port.
    const kubeconfig = join(dir, 'through-proxy.kubeconfig');
    writeFileSync(kubeconfig, readFileSync(cp.kubeconfigFile(cp.readToken), 'utf8').replace(cp.url, `https://127.0.0.1:${proxy.port}`));
    const l = new EventLoad((method, path, body, contentType) => cp.request(method, path, body, { contentType: contentType ?? 'application/json' }));
    load = l;
    mirror = await startMirror({ kubeconfig }, `sqlite:${archivePath}`);
    const m = mirror;
    await untilListed(m);
    for (let i = 0; i < 20; i++) await l.step();
    const written = (): Promise<number> => mirrorMetric(m, 'kevents_mirror_occurrences_written_total');
    const caughtUp = async (what: string): Promise<void> => {
      await until('the witness saw every acknowledged write', () => l.acknowledged.every((a) => w.seen(a.uid, a.resourceVersion)), 30_000);
      const want = expectedCount(w);
      await until(what, async () => (await written()) >= want, 120_000).catch((e: Error) => assert.fail(`${e.message}: ${m.output().slice(-2000)}`));
    };
    await caughtUp('the mirror archived the first changes');

    // Silence: nothing is forwarded, nothing is closed.
    proxy.silence();
    const silentAt = Date.now();
    const before = await written();
    for (let i = 0; i < 20; i++) await l.step();
    // The watch's idle socket times out (30 s), or failing that the watch outlives its timeout (40 s): either ends it.
    const quietFrom = m.output().length;
    await until('the mirror notices the silent network', () => /mirror: retrying after a failure|the watch outlived its timeout/.test(m.output().slice(quietFrom)), 120_000, 250).catch((e: Error) =>
      assert.fail(`${e.message}: ${m.output().slice(-3000)}`),
    );
    const noticedS = (Date.now() - silentAt) / 1000;
    assert.equal(await written(), before, 'nothing can have come through a silent network');
    proxy.resume();
    await caughtUp('the mirror caught up after the silence');
    const resumedS = (Date.now() - silentAt) / 1000;
    t.diagnostic(`silent network noticed after ${noticedS.toFixed(1)} s, caught up ${resumedS.toFixed(1)} s after the silence began`);

    // Connections cut every few seconds under load.
    const running = l.run(3);
    let cuts = 0;
    let cutConnections = 0;
    const cutUntil = Date.now() + CUT_FOR_MS;
    while (Date.now() < cutUntil) {
      await sleep(CUT_EVERY_MS);
      cutConnections += proxy.cutAll();
      cuts++;
    }
    l.stop();
    await running;
    await caughtUp('the mirror archived every change');
    await stopMirror(m, 'SIGTERM');
    mirror = undefined;

    const archive = await startServer(['--storage', `sqlite:${archivePath}`, '--event-ttl', '0']);
    try {
      const want = expectedHistories(w.versions);
      const got = await allOccurrences(archive.url);
      const have = histories(got);
      assert.equal(historyDiffs(want, have), JSON.stringify({ differ: [], unexpected: [] }), 'the archive differs from the source');
      assert.equal(got.length, expectedCount(w), 'no occurrence is missing or doubled');
      t.diagnostic(`${l.writes} load writes (${l.acknowledged.length} acknowledged), ${cuts} cuts of ${cutConnections} connections over ${CUT_FOR_MS / 1000} s; ${want.size} events, ${got.length} occurrences, each once`);
    } finally {
      await archive.stop();
    }
  });
});

/** expectedCount is how many occurrences a lossless mirror holds for what the witness saw. */
function expectedCount(w: SourceWitness): number {
  return [...expectedHistories(w.versions).values()].reduce((n, c) => n + c.length, 0);
}
