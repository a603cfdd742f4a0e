import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import type { CoreEvent } from '../src/api/index.js';
import type { EventWatch, StoreWatchEvent } from '../src/storage/index.js';
import { EtcdEventStore } from '../src/storage/etcd/index.js';
import { sampleEvent } from '../src/storage/testing/index.js';
import { startEtcd } from './support/etcd.js';
import type { EtcdCluster, EtcdMember } from './support/etcd.js';

function rvOf(e: CoreEvent): number {
  return Number(e.metadata.resourceVersion);
}

function brief(e: StoreWatchEvent): string {
  return `${e.type} ${e.object.metadata.namespace}/${e.object.metadata.name}@${e.object.metadata.resourceVersion}`;
}

/** collect reads a watch in the background until `until` says it has enough. */
function collect(w: EventWatch, until: (got: StoreWatchEvent[]) => boolean): Promise<StoreWatchEvent[]> {
  return (async () => {
    const got: StoreWatchEvent[] = [];
    for await (const e of w) {
      got.push(e);
      if (until(got)) break;
    }
    return got;
  })();
}

async function leaderOf(cluster: EtcdCluster): Promise<EtcdMember> {
  for (const m of cluster.members) {
    const c = new Etcd3({ hosts: [m.endpoint] });
    try {
      const s = await c.maintenance.status();
      if (s.leader === s.header.member_id) return m;
    } finally {
      c.close();
    }
  }
  throw new Error('no member is the leader');
}

void describe('EtcdEventStore on a three-member etcd cluster', () => {
  let cluster: EtcdCluster;
  const stores: EtcdEventStore[] = [];
  before(async () => {
    cluster = await startEtcd({ members: 3 });
  });
  after(async () => {
    for (const s of stores) await s.close();
    await cluster?.stop();
  });
  const open = async (endpoints: string[], prefix: string): Promise<EtcdEventStore> => {
    const s = new EtcdEventStore({ endpoints, prefix, requestTimeoutMs: 5_000 });
    stores.push(s);
    await s.ready();
    return s;
  };

  void it('two stores on different members: a write through one reaches watchers of the other in order, with the same resourceVersions', { timeout: 60_000 }, async () => {
    const a = await open([cluster.members[0]!.endpoint], '/two');
    const b = await open([cluster.members[1]!.endpoint, cluster.members[2]!.endpoint], '/two');
    const start = await a.currentResourceVersion();
    const ops = 120;
    const onB = collect(b.watch({ resourceVersion: start }), (got) => got.length === ops + 1);
    const onA = collect(a.watch({ resourceVersion: start }), (got) => got.length === ops + 1);
    const live = collect(b.watch({ namespace: 'ns-1' }), (got) => got.some((e) => e.type === 'DELETED'));
    const acked: string[] = [];
    for (let i = 0; i < ops; i++) {
      if (i % 4 === 3) {
        const ns = `ns-${(i - 1) % 3}`;
        const r = await a.guaranteedUpdate(ns, `e${i - 1}`, (e) => ({ ...e!, count: 2 }));
        acked.push(`MODIFIED ${ns}/e${i - 1}@${r.object.metadata.resourceVersion}`);
      } else {
        const ns = `ns-${i % 3}`;
        const e = await a.create(sampleEvent(ns, `e${i}`));
        acked.push(`ADDED ${ns}/e${i}@${e.metadata.resourceVersion}`);
      }
    }
    // An expiry is a write too: the lease runs out in etcd and both stores' watchers see it.
    const short = await a.create(sampleEvent('ns-1', 'short'), { ttlSeconds: 1 });
    acked.push(`ADDED ns-1/short@${short.metadata.resourceVersion}`);
    const fromB = await onB;
    const fromA = await onA;
    assert.deepEqual(fromB.map(brief), acked);
    assert.deepEqual(fromA.map(brief), acked);
    const seenLive = await live;
    const expiry = seenLive.at(-1)!;
    assert.equal(expiry.object.metadata.name, 'short');
    assert.ok(rvOf(expiry.object) > rvOf(short));
    assert.deepEqual(
      seenLive.slice(0, -1).map(brief),
      acked.filter((s) => / ns-1\//.test(s)),
      'a watch started on B before the writes sees every change of its namespace',
    );
    const listA = await a.list({});
    const listB = await b.list({ resourceVersion: listA.resourceVersion, match: 'Exact' });
    assert.deepEqual(listB.items, listA.items);
    assert.equal(listA.items.length, (ops * 3) / 4);
  });

  void it('loses no acknowledged write when the leader is killed mid-stream; writes continue through the others', { timeout: 60_000 }, async () => {
    const store = await open(cluster.endpoints, '/kill');
    const start = await store.currentResourceVersion();
    const acked = new Map<string, number>();
    let failed = 0;
    let ackedAfterKill = 0;
    let killed = false;
    const total = 600;
    const w = store.watch({ resourceVersion: start });
    const seen = new Set<number>();
    const watched = collect(w, (got) => {
      seen.add(rvOf(got.at(-1)!.object));
      return false;
    });
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < total) {
        const i = next++;
        if (i === total / 3) {
          const leader = await leaderOf(cluster);
          await leader.kill('SIGKILL');
          killed = true;
        }
        try {
          const e = await store.create(sampleEvent('default', `e${String(i).padStart(4, '0')}`), { ttlSeconds: 3600 });
          acked.set(e.metadata.name!, rvOf(e));
          if (killed) ackedAfterKill++;
        } catch {
          // Unacknowledged (the member died with it in flight, or no leader yet): the caller would retry.
          failed++;
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    assert.ok(ackedAfterKill >= total / 2, `only ${ackedAfterKill} writes were acknowledged after the kill (${failed} failed)`);
    const survivors = cluster.members.filter((m) => m.running).map((m) => m.endpoint);
    assert.equal(survivors.length, 2);
    const fresh = await open(survivors, '/kill');
    const stored = new Map((await fresh.list({})).items.map((e) => [e.metadata.name!, rvOf(e)]));
    for (const [name, rv] of acked) assert.equal(stored.get(name), rv, `acknowledged ${name}@${rv} is kept`);
    const deadline = Date.now() + 20_000;
    while ([...acked.values()].some((rv) => !seen.has(rv)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    w.stop();
    const rvs = (await watched).map((e) => rvOf(e.object));
    assert.deepEqual(rvs, [...rvs].sort((x, y) => x - y), 'the watch stayed in order across the failover');
    assert.equal(new Set(rvs).size, rvs.length, 'and repeated nothing');
    for (const rv of acked.values()) assert.ok(seen.has(rv), `the watch saw ${rv}`);
  });
});
