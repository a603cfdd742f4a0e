/**
 * Storage benchmark for the etcd backend, with its baseline measured in the
 * same run against the same etcd member:
 *   - creates: raw etcd3 puts of the same keys and bodies with 128 in flight vs
 *     EtcdEventStore.create from 128 concurrent callers (without a TTL, and with
 *     the 1 h event TTL through shared leases); raw etcd3 transactions of the
 *     same shape as a create (version == 0, then put) show how much of the
 *     difference is etcd's own cost of a transaction; rounds alternate, and each
 *     round's ratio is taken back to back, so the median ratio holds up on a
 *     busy machine better than either rate;
 *   - cross-replica watch delivery: on a three-member cluster, store A (talking
 *     to member 0) creates at a steady rate while store B (members 1 and 2, its
 *     own connection) watches; latency from A's create call to B's watcher.
 *
 * Run: node --import tsx bench/storage-etcd.ts   (BENCH_CREATES=10000 BENCH_ROUNDS=5 BENCH_RATE=200 BENCH_SECONDS=10)
 */
import { Etcd3 } from 'etcd3';
import type { CoreEvent } from '../src/api/index.js';
import { EtcdEventStore } from '../src/storage/etcd/index.js';
import { startEtcd } from '../test/support/etcd.js';
import { kubeletFields } from './support/events.js';

const CREATES = Number(process.env.BENCH_CREATES ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const IN_FLIGHT = 128;
const RATE = Number(process.env.BENCH_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
/** DATA_ROOT holds the members' data; BENCH_DATA_ROOT=/dev/shm takes the disk's fsync out of the figures. */
const DATA_ROOT = process.env.BENCH_DATA_ROOT;
const etcdOptions = DATA_ROOT === undefined ? {} : { dataRoot: DATA_ROOT };

function makeEvent(round: string, i: number): CoreEvent {
  const ns = `ns-${String(i % 100).padStart(3, '0')}`;
  const pod = `pod-${(i * 7919) % 20_000}`;
  const t = new Date(Date.UTC(2025, 0, 1) + i * 37).toISOString().replace(/\.\d+Z$/, 'Z');
  return {
    kind: 'Event',
    apiVersion: 'v1',
    metadata: { namespace: ns, name: `${pod}.${round}${i.toString(16)}`, uid: `6f1c${String(i).padStart(8, '0')}-1111-4222-8333-444455556666`, creationTimestamp: t },
    involvedObject: { kind: 'Pod', namespace: ns, name: pod, uid: `uid-${pod}`, apiVersion: 'v1', resourceVersion: '4242', fieldPath: 'spec.containers{app}' },
    ...kubeletFields(i, t),
  };
}

/** pool runs `n` tasks with `width` in flight and returns the elapsed milliseconds and this process's CPU time per task in µs. */
async function pool(n: number, width: number, task: (i: number) => Promise<unknown>): Promise<{ ms: number; cpuUs: number }> {
  let next = 0;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await task(next++);
    }),
  );
  const c = process.cpuUsage(c0);
  return { ms: performance.now() - t0, cpuUs: (c.user + c.system) / n };
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

const rate = (n: number, ms: number): number => Math.round((n / ms) * 1000);

async function throughput(): Promise<void> {
  const cluster = await startEtcd(etcdOptions);
  try {
    const raw = new Etcd3({ hosts: cluster.endpoints, grpcOptions: { 'grpc.max_receive_message_length': -1 } });
    const store = new EtcdEventStore({ endpoints: cluster.endpoints, prefix: '/store' });
    await store.ready();
    const bodies = Array.from({ length: CREATES }, (_, i) => makeEvent('', i));
    const best = { raw: 0, txn: 0, create: 0, ttl: 0 };
    const cpu = { raw: Infinity, txn: Infinity, create: Infinity, ttl: Infinity };
    const ratios = { txn: [] as number[], create: [] as number[], ttl: [] as number[] };
    for (let r = 0; r < ROUNDS; r++) {
      const rawRun = await pool(CREATES, IN_FLIGHT, (i) => {
        const e = bodies[i]!;
        return raw.put(`/raw${r}/events/${e.metadata.namespace}/${e.metadata.name}`).value(JSON.stringify(e)).exec();
      });
      const txnRun = await pool(CREATES, IN_FLIGHT, (i) => {
        const e = bodies[i]!;
        const key = Buffer.from(`/txn${r}/events/${e.metadata.namespace}/${e.metadata.name}`);
        return raw.kv.txn({
          compare: [{ key, target: 'Version', result: 'Equal', version: 0 }],
          success: [{ request_put: { key, value: Buffer.from(JSON.stringify(e)) } }],
          failure: [],
        });
      });
      const createRun = await pool(CREATES, IN_FLIGHT, (i) => {
        const e = bodies[i]!;
        return store.create({ ...e, metadata: { ...e.metadata, name: `${e.metadata.name}.c${r}` } });
      });
      const ttlRun = await pool(CREATES, IN_FLIGHT, (i) => {
        const e = bodies[i]!;
        return store.create({ ...e, metadata: { ...e.metadata, name: `${e.metadata.name}.t${r}` } }, { ttlSeconds: 3600 });
      });
      console.log(
        `round ${r + 1}: raw put ${rate(CREATES, rawRun.ms)}/s, raw txn ${rate(CREATES, txnRun.ms)}/s, create ${rate(CREATES, createRun.ms)}/s, create+TTL ${rate(CREATES, ttlRun.ms)}/s`,
      );
      best.raw = Math.max(best.raw, rate(CREATES, rawRun.ms));
      best.txn = Math.max(best.txn, rate(CREATES, txnRun.ms));
      best.create = Math.max(best.create, rate(CREATES, createRun.ms));
      best.ttl = Math.max(best.ttl, rate(CREATES, ttlRun.ms));
      ratios.txn.push(rawRun.ms / txnRun.ms);
      ratios.create.push(rawRun.ms / createRun.ms);
      ratios.ttl.push(rawRun.ms / ttlRun.ms);
      cpu.raw = Math.min(cpu.raw, rawRun.cpuUs);
      cpu.txn = Math.min(cpu.txn, txnRun.cpuUs);
      cpu.create = Math.min(cpu.create, createRun.cpuUs);
      cpu.ttl = Math.min(cpu.ttl, ttlRun.cpuUs);
    }
    const median = (xs: number[]): string => `${(100 * pct(xs, 50)).toFixed(0)}%`;
    console.log(`\ncreates, ${IN_FLIGHT} in flight, ${CREATES} per run, best of ${ROUNDS}:`);
    console.log(`  raw etcd3 put            ${best.raw}/s  (client CPU ${cpu.raw.toFixed(0)} µs/op)`);
    console.log(`  raw etcd3 txn            ${best.txn}/s  (median round ${median(ratios.txn)} of raw put; client CPU ${cpu.txn.toFixed(0)} µs/op)`);
    console.log(
      `  EtcdEventStore.create    ${best.create}/s  (median round ${median(ratios.create)} of raw, target >= 50%; client CPU ${cpu.create.toFixed(0)} µs/op)`,
    );
    console.log(
      `  create with 1 h TTL      ${best.ttl}/s  (median round ${median(ratios.ttl)} of raw; client CPU ${cpu.ttl.toFixed(0)} µs/op; ${store.leasesGranted} leases for ${ROUNDS * CREATES} objects)`,
    );
    await store.close();
    raw.close();
  } finally {
    await cluster.stop();
  }
}

async function crossReplica(): Promise<void> {
  const cluster = await startEtcd({ members: 3, ...etcdOptions });
  try {
    const a = new EtcdEventStore({ endpoints: [cluster.members[0]!.endpoint] });
    const b = new EtcdEventStore({ endpoints: [cluster.members[1]!.endpoint, cluster.members[2]!.endpoint] });
    await Promise.all([a.ready(), b.ready()]);
    const sent = new Map<string, number>();
    const latencies: number[] = [];
    const total = RATE * SECONDS;
    const w = b.watch({ resourceVersion: await a.currentResourceVersion() });
    const received = (async () => {
      for await (const e of w) {
        const t = sent.get(e.object.metadata.name!);
        if (t !== undefined) latencies.push(performance.now() - t);
        if (latencies.length === total) break;
      }
    })();
    // A steady rate, in 10 ms ticks, like a cluster's event stream rather than a burst.
    const perTick = RATE / 100;
    const writes: Promise<unknown>[] = [];
    const t0 = performance.now();
    for (let i = 0; i < total; ) {
      const due = Math.min(total, Math.floor(((performance.now() - t0) / 10) * perTick) + perTick);
      for (; i < due; i++) {
        const e = makeEvent('x', i);
        sent.set(e.metadata.name!, performance.now());
        writes.push(a.create(e, { ttlSeconds: 3600 }));
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    await Promise.all(writes);
    await received;
    console.log(`\ncross-replica watch delivery, ${RATE} creates/s for ${SECONDS} s, A on member 0, B watching on members 1-2:`);
    console.log(`  p50 ${pct(latencies, 50).toFixed(1)} ms, p99 ${pct(latencies, 99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms  (target p99 < 200 ms)`);
    await a.close();
    await b.close();
  } finally {
    await cluster.stop();
  }
}

await throughput();
await crossReplica();
