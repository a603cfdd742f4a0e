import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import { startEtcd } from '../../../test/support/etcd.js';
import type { EtcdCluster } from '../../../test/support/etcd.js';
import type { CoreEvent } from '../../api/index.js';
import { isStorageError } from '../errors.js';
import type { EventStore, EventWatch, StoreWatchEvent } from '../event-store.js';
import { runEventStoreConformance, sampleEvent } from '../testing/index.js';
import { loadEtcdDriver } from './driver.js';
import { EtcdEventStore, etcdEndpointsFromUrl } from './index.js';
import type { EtcdClient } from './index.js';

/*
 * Every case gets a fresh etcd member: revisions, leases and compactions are
 * cluster-wide, so cases sharing one would see each other's. The next member
 * starts while a case runs.
 */
let spare: Promise<EtcdCluster> | undefined;
const clusters = new WeakMap<EventStore, EtcdCluster>();
const nextCluster = (): Promise<EtcdCluster> => {
  const c = spare ?? startEtcd();
  spare = startEtcd();
  return c;
};
after(async () => {
  await (await spare)?.stop();
});

/*
 * etcd leases run in real time, so the suite's TTL cases pass here by waiting
 * the real TTL out (10 s each): the fake clock moves only the compaction timer.
 * Their "not yet expired" checks hold trivially under real time, so the cases
 * below check renewal and the no-op short-circuit against the wall clock.
 */
runEventStoreConformance('etcd', {
  create: async (env) => {
    const cluster = await nextCluster();
    const store = new EtcdEventStore({ endpoints: cluster.endpoints, ...env.options });
    clusters.set(store, cluster);
    return store;
  },
  destroy: async (store) => {
    await store.close();
    await clusters.get(store)?.stop();
  },
});

function rvOf(e: CoreEvent): number {
  return Number(e.metadata.resourceVersion);
}

async function take(w: EventWatch, n: number): Promise<StoreWatchEvent[]> {
  const out: StoreWatchEvent[] = [];
  const it = w[Symbol.asyncIterator]();
  while (out.length < n) {
    const r = await it.next();
    if (r.done === true) break;
    out.push(r.value);
  }
  return out;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

void describe('EtcdEventStore against etcd', () => {
  let cluster: EtcdCluster;
  let raw: Etcd3;
  const stores: EtcdEventStore[] = [];
  const open = async (options: Partial<ConstructorParameters<typeof EtcdEventStore>[0]> = {}): Promise<EtcdEventStore> => {
    const store = new EtcdEventStore({ endpoints: cluster.endpoints, ...options });
    stores.push(store);
    await store.ready();
    return store;
  };

  before(async () => {
    cluster = await startEtcd();
    raw = new Etcd3({ hosts: cluster.endpoints });
  });
  after(async () => {
    for (const s of stores) await s.close();
    raw?.close();
    await cluster?.stop();
  });

  void it('keeps upstream layout: <prefix>/events/<namespace>/<name>, resourceVersion = mod revision, stored without resourceVersion', { timeout: 60_000 }, async () => {
    const store = await open({ prefix: '/layout' });
    const created = await store.create(sampleEvent('kube-system', 'x.1'));
    const kv = (await raw.kv.range({ key: Buffer.from('/layout/events/kube-system/x.1') })).kvs[0];
    assert.ok(kv !== undefined);
    assert.equal(Number(kv.mod_revision), rvOf(created));
    const stored = JSON.parse(kv.value.toString()) as CoreEvent;
    assert.equal(stored.metadata.resourceVersion, undefined);
    assert.equal(stored.message, 'event x.1');
    const def = await open();
    await def.create(sampleEvent('default', 'y'));
    assert.equal((await raw.get('/registry/events/default/y').string()) !== null, true);
    assert.deepEqual(
      (await def.list({})).items.map((e) => e.metadata.name),
      ['y'],
      'stores under other prefixes are not listed',
    );
  });

  void it('shares leases: one per 1,000 objects, each of TTL + min(5% TTL, 60 s)', { timeout: 60_000 }, async () => {
    const store = await open({ prefix: '/leases' });
    const n = 2_500;
    for (let i = 0; i < n; i += 250) {
      await Promise.all(Array.from({ length: 250 }, (_, j) => store.create(sampleEvent('default', `e${i + j}`), { ttlSeconds: 3600 })));
    }
    assert.equal(store.leasesGranted, 3);
    const kvs = (await raw.kv.range({ key: Buffer.from('/leases/events/'), range_end: Buffer.from('/leases/events0') })).kvs;
    assert.equal(kvs.length, n);
    const perLease = new Map<string, number>();
    for (const kv of kvs) perLease.set(kv.lease, (perLease.get(kv.lease) ?? 0) + 1);
    assert.deepEqual([...perLease.values()].sort((a, b) => a - b), [500, 1000, 1000]);
    for (const id of perLease.keys()) {
      const ttl = await raw.leaseClient.leaseTimeToLive({ ID: id });
      assert.equal(Number(ttl.grantedTTL), 3660);
    }
    const short = await open({ prefix: '/leases-short' });
    await short.create(sampleEvent('default', 'a'), { ttlSeconds: 100 });
    await short.create(sampleEvent('default', 'b'), { ttlSeconds: 100 });
    const lease = (await raw.kv.range({ key: Buffer.from('/leases-short/events/default/a') })).kvs[0]!.lease;
    assert.equal(Number((await raw.leaseClient.leaseTimeToLive({ ID: lease })).grantedTTL), 105, 'the reuse window is 5% of a short TTL');
    assert.equal(short.leasesGranted, 1);
    await short.create(sampleEvent('default', 'c'));
    assert.equal((await raw.kv.range({ key: Buffer.from('/leases-short/events/default/c') })).kvs[0]!.lease, '0', 'no TTL, no lease');
  });

  void it('expires in real time: a real write renews the TTL, an unchanged one does not, and watchers see DELETED', { timeout: 60_000 }, async () => {
    const store = await open({ prefix: '/ttl' });
    const start = await store.currentResourceVersion();
    await store.create(sampleEvent('default', 'renewed'), { ttlSeconds: 3 });
    await store.create(sampleEvent('default', 'unchanged'), { ttlSeconds: 3 });
    await store.create(sampleEvent('default', 'kept'));
    await sleep(1_500);
    await store.guaranteedUpdate('default', 'renewed', (e) => ({ ...e!, count: 2 }), { ttlSeconds: 3 });
    const noop = await store.guaranteedUpdate('default', 'unchanged', (e) => ({ ...e! }), { ttlSeconds: 3 });
    assert.equal(noop.object.count, 1);
    const w = store.watch({ resourceVersion: start });
    const seen = await take(w, 5);
    const first = seen.findIndex((e) => e.type === 'DELETED');
    assert.equal(seen[first]?.object.metadata.name, 'unchanged', 'the object whose TTL was not renewed goes first');
    // By the time the first lease ran out, the renewed object still had about 1.5 s to live.
    assert.equal((await store.get('default', 'renewed')).count, 2);
    const [gone] = await take(w, 1);
    w.stop();
    assert.equal(gone?.type, 'DELETED');
    assert.equal(gone?.object.metadata.name, 'renewed');
    assert.equal(gone?.object.count, 2, 'DELETED carries the last state');
    assert.deepEqual(
      (await store.list({})).items.map((e) => e.metadata.name),
      ['kept'],
    );
  });

  void it('pauses a replay the reader is not keeping up with, and resumes it without gap or repeat', { timeout: 60_000 }, async () => {
    const store = await open({ prefix: '/replay', watchBufferSize: 8 });
    const start = await store.currentResourceVersion();
    for (let i = 0; i < 300; i += 50) await Promise.all(Array.from({ length: 50 }, (_, j) => store.create(sampleEvent('default', `e${i + j}`))));
    const end = await store.currentResourceVersion();
    const w = store.watch({ resourceVersion: start });
    const got: number[] = [];
    for await (const e of w) {
      got.push(rvOf(e.object));
      if (got.length % 20 === 0) await sleep(20);
      if (got.length === 300) break;
    }
    assert.deepEqual(got, Array.from({ length: 300 }, (_, i) => start + 1 + i));
    assert.equal(got.at(-1), end);
  });

  void it('resumes a watch across a crash and restart of its etcd member, mid-replay, without gap or repeat', { timeout: 60_000 }, async () => {
    const lone = await startEtcd();
    // A buffer large enough that the replay never pauses: the etcd watch stays open through the crash.
    const store = new EtcdEventStore({ endpoints: lone.endpoints, watchBufferSize: 10_000 });
    try {
      await store.ready();
      const start = await store.currentResourceVersion();
      const acked: number[] = [];
      for (let i = 0; i < 3000; i += 200) {
        const batch = await Promise.all(Array.from({ length: 200 }, (_, j) => store.create(sampleEvent('default', `e${i + j}`))));
        acked.push(...batch.map(rvOf));
      }
      const w = store.watch({ resourceVersion: start });
      const it = w[Symbol.asyncIterator]();
      const next = async (): Promise<number> => rvOf(((await it.next()) as IteratorYieldResult<StoreWatchEvent>).value.object);
      const got = [await next()];
      // etcd replays at most 1,000 revisions per watch response, about every 100 ms: the crash falls
      // between two of them, while the driver believes it has seen everything up to the header's revision.
      await lone.members[0]!.kill('SIGKILL');
      await lone.members[0]!.restart();
      acked.push(rvOf(await store.create(sampleEvent('default', 'after-restart'))));
      while (got.length < acked.length) got.push(await next());
      w.stop();
      assert.deepEqual(got, acked.sort((x, y) => x - y));
      assert.equal((await store.list({})).items.length, 3001, 'every acknowledged write survived the crash');
    } finally {
      await store.close();
      await lone.stop();
    }
  });

  void it('fails with Unreachable when etcd is gone, and after close()', { timeout: 60_000 }, async () => {
    const lone = await startEtcd();
    const store = new EtcdEventStore({ endpoints: lone.endpoints, requestTimeoutMs: 2_000 });
    await store.ready();
    await lone.stop();
    await assert.rejects(store.get('default', 'a'), (e) => isStorageError(e, 'Unreachable'));
    await store.close();
    await assert.rejects(store.create(sampleEvent('default', 'a')), (e) => isStorageError(e, 'Unreachable'));
    await assert.rejects(take(store.watch({}), 1), (e) => isStorageError(e, 'Unreachable'));
  });

  void it('takes an etcd3 client the caller keeps open', { timeout: 60_000 }, async () => {
    const client: EtcdClient = new Etcd3({ hosts: cluster.endpoints });
    const store = new EtcdEventStore({ client, prefix: '/given' });
    await store.create(sampleEvent('default', 'a'));
    await store.close();
    assert.notEqual(await raw.get('/given/events/default/a').string(), null);
    assert.equal((await client.kv.range({ key: Buffer.from('/given/events/default/a') })).kvs.length, 1, 'the client is still usable');
    client.close();
  });
});

void describe('etcd driver loading and endpoints', () => {
  void it('names the missing package and how to install it', { timeout: 60_000 }, async () => {
    const missing = Object.assign(new Error("Cannot find package 'etcd3'"), { code: 'ERR_MODULE_NOT_FOUND' });
    await assert.rejects(
      loadEtcdDriver(() => Promise.reject(missing)),
      (e) => isStorageError(e, 'Unreachable') && /npm install etcd3/.test(e.message) && e.cause === missing,
    );
    const broken = new Error('boom');
    await assert.rejects(loadEtcdDriver(() => Promise.reject(broken)), (e) => isStorageError(e, 'Unreachable') && /boom/.test(e.message));
    await assert.rejects(loadEtcdDriver(() => Promise.resolve({})), (e) => isStorageError(e, 'Unreachable'));
    assert.equal(typeof (await loadEtcdDriver()).Etcd3, 'function');
  });

  const cases: { spec: string; want?: string[]; error?: RegExp }[] = [
    { spec: 'etcd://127.0.0.1:2379', want: ['http://127.0.0.1:2379'] },
    { spec: 'etcd://a:1,b.example:2,[::1]:3', want: ['http://a:1', 'http://b.example:2', 'http://[::1]:3'] },
    { spec: 'etcd://127.0.0.1:2379/', want: ['http://127.0.0.1:2379'] },
    { spec: 'etcd://', error: /bad etcd member ""/ },
    { spec: 'etcd://host', error: /want HOST:PORT/ },
    { spec: 'etcd://a:1,,b:2', error: /bad etcd member ""/ },
    { spec: 'http://a:1', error: /not an etcd storage URL/ },
  ];
  for (const c of cases) {
    void it(`reads ${c.spec}`, () => {
      if (c.want !== undefined) assert.deepEqual(etcdEndpointsFromUrl(c.spec), c.want);
      else assert.throws(() => etcdEndpointsFromUrl(c.spec), c.error!);
    });
  }
});
