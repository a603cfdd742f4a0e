/**
 * Storage benchmark for the PostgreSQL backend, with its baselines measured in
 * the same run against the same server:
 *   - ingest: PostgresEventStore.create from 64 (BENCH_CLIENTS) concurrent callers vs raw
 *     INSERTs of the same rows (64 concurrent single-row INSERTs over a pool, and
 *     64-row multi-row INSERTs one after another), with synchronous commit (the
 *     store's default: acknowledged writes survive a crash of the database
 *     server) and without it (`synchronousCommit: false`);
 *   - archive ingest: PostgresEventStore.applyArchiveBatch in batches of 500
 *     (BENCH_ARCHIVE_BATCH) one after another, with the mirror's own archive
 *     writes, an occurrence for each and a checkpoint for each batch: once for
 *     new events, once for a repeat (count bump) of each; against raw
 *     500-row INSERTs of the same rows;
 *   - cross-replica delivery: two stores over one schema (two replicas); a
 *     watcher on replica B, writes through replica A, at a steady rate and at
 *     full ingest load; latency from the start of the create on A to the event
 *     arriving at B's watcher.
 *
 * Run: node --import tsx bench/storage-postgres.ts
 *   KEVENTS_BENCH_POSTGRES=postgres://user@host:port/db  BENCH_CREATES=30000
 */
import pg from 'pg';
import { nowMicroTime } from '../src/api/index.js';
import type { CoreEvent } from '../src/api/index.js';
import { archiveWrite } from '../src/mirror/index.js';
import type { EventStore } from '../src/storage/index.js';
import { PostgresEventStore } from '../src/storage/postgres/index.js';
import { kubeletFields } from './support/events.js';

const URL = process.env.KEVENTS_BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:55432/test';
const CREATES = Number(process.env.BENCH_CREATES ?? 30_000);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 64);
const RAW_POOL = 16;
const ARCHIVE_BATCH = Number(process.env.BENCH_ARCHIVE_BATCH ?? 500);
const RATE = Number(process.env.BENCH_RATE ?? 2_000);
const RATE_SECONDS = 5;
const NAMESPACES = 100;
const PODS = 20_000;
const SCHEMA = `kevents_bench_${process.pid}`;

const admin = new pg.Pool({ connectionString: URL, max: RAW_POOL });

let seq = 0;
function makeEvent(i: number, note = ''): CoreEvent {
  const ns = `ns-${String(i % NAMESPACES).padStart(3, '0')}`;
  const pod = `pod-${(i * 7919) % PODS}`;
  const t = new Date(Date.UTC(2025, 0, 1) + i * 37).toISOString().replace(/\.\d+Z$/, 'Z');
  return {
    kind: 'Event',
    apiVersion: 'v1',
    metadata: { namespace: ns, name: `${pod}.${(0x17a2b3c4d5e6f7an + BigInt(i) * 7919n).toString(16)}`, uid: `6f1c${String(seq++).padStart(8, '0')}-1111-4222-8333-444455556666`, creationTimestamp: t },
    involvedObject: { kind: 'Pod', namespace: ns, name: pod, uid: `uid-${pod}`, apiVersion: 'v1', resourceVersion: '4242', fieldPath: 'spec.containers{app}' },
    ...kubeletFields(i, t),
    ...(note !== '' ? { message: note } : {}),
  };
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}
const f1 = (n: number): string => n.toFixed(1);
const f2 = (n: number): string => n.toFixed(2);

async function withSession<T>(sync: boolean, fn: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: URL, max: RAW_POOL, options: `-c synchronous_commit=${sync ? 'on' : 'off'}` });
  try {
    return await fn(pool);
  } finally {
    await pool.end();
  }
}

/** rawConcurrent: 64 callers, each a single-row autocommit INSERT, over a pool of RAW_POOL connections. */
async function rawConcurrent(n: number, sync: boolean): Promise<number> {
  const table = `${SCHEMA}.raw_c`;
  await admin.query(`DROP TABLE IF EXISTS ${table}; CREATE TABLE ${table} (key text COLLATE "C" PRIMARY KEY, object text NOT NULL)`);
  const rows = Array.from({ length: n }, (_, i) => makeEvent(i + 10_000_000)).map((e) => [`${e.metadata.namespace}/${e.metadata.name}`, JSON.stringify(e)]);
  return withSession(sync, async (pool) => {
    await pool.query('SELECT 1');
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < n) await pool.query(`INSERT INTO ${table} (key, object) VALUES ($1, $2)`, rows[next++]);
      }),
    );
    return n / ((performance.now() - t0) / 1000);
  });
}

/** rawBatched: `per`-row INSERT statements (unnest), one after another on one connection. */
async function rawBatched(n: number, sync: boolean, per = CLIENTS): Promise<number> {
  const table = `${SCHEMA}.raw_b`;
  await admin.query(`DROP TABLE IF EXISTS ${table}; CREATE TABLE ${table} (key text COLLATE "C" PRIMARY KEY, object text NOT NULL)`);
  const rows = Array.from({ length: n }, (_, i) => makeEvent(i + 20_000_000)).map((e) => [`${e.metadata.namespace}/${e.metadata.name}`, JSON.stringify(e)] as const);
  return withSession(sync, async (pool) => {
    const c = await pool.connect();
    try {
      const t0 = performance.now();
      for (let i = 0; i < n; i += per) {
        const chunk = rows.slice(i, i + per);
        await c.query(`INSERT INTO ${table} (key, object) SELECT * FROM unnest($1::text[], $2::text[])`, [chunk.map((r) => r[0]), chunk.map((r) => r[1])]);
      }
      return n / ((performance.now() - t0) / 1000);
    } finally {
      c.release();
    }
  });
}

function openStore(schema: string, sync: boolean): PostgresEventStore {
  return new PostgresEventStore({ connectionString: URL, schema, synchronousCommit: sync });
}

async function storeCreates(n: number, sync: boolean): Promise<{ rate: number; p50: number; p99: number }> {
  const schema = `${SCHEMA}_c${sync ? 's' : 'a'}`;
  const store = openStore(schema, sync);
  await store.ready();
  const events = Array.from({ length: n }, (_, i) => makeEvent(i + 30_000_000));
  const lat: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < n) {
        const e = events[next++]!;
        const s = performance.now();
        await store.create(e, { ttlSeconds: 3600 });
        lat.push(performance.now() - s);
      }
    }),
  );
  const rate = n / ((performance.now() - t0) / 1000);
  await store.close();
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  return { rate, p50: pct(lat, 50), p99: pct(lat, 99) };
}

/**
 * archiveIngest writes `n` events as the mirror does (its archive writes, one
 * occurrence each, a checkpoint per batch), then a repeat of each (count + 1,
 * a later lastTimestamp, a newer source resourceVersion).
 */
async function archiveIngest(n: number, sync: boolean): Promise<{ created: number; repeated: number }> {
  const schema = `${SCHEMA}_a${sync ? 's' : 'a'}`;
  const store = openStore(schema, sync);
  await store.ready();
  const version = (i: number, count: number): CoreEvent => {
    const e = makeEvent(i + 50_000_000);
    const last = new Date(Date.parse(e.lastTimestamp ?? '') + count * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
    return { ...e, count, lastTimestamp: last, metadata: { ...e.metadata, uid: `uid-archive-${i}`, resourceVersion: String(count * n + i + 1) } };
  };
  const pass = async (count: number): Promise<number> => {
    const events = Array.from({ length: n }, (_, i) => version(i, count));
    const t0 = performance.now();
    for (let i = 0; i < n; i += ARCHIVE_BATCH) {
      const chunk = events.slice(i, i + ARCHIVE_BATCH);
      const r = await store.applyArchiveBatch({
        writes: chunk.map((e) => archiveWrite(e, { cluster: 'bench' })),
        checkpoint: { source: 'bench', resourceVersion: chunk.at(-1)!.metadata.resourceVersion! },
        stamp: { observedTime: nowMicroTime(), cluster: 'bench' },
      });
      if (r.occurrences !== chunk.length) throw new Error(`a batch of ${chunk.length} wrote ${r.occurrences} occurrences`);
    }
    return n / ((performance.now() - t0) / 1000);
  };
  const created = await pass(1);
  const repeated = await pass(2);
  await store.close();
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  return { created, repeated };
}

/** delivery measures, on replica B's watcher, the time from the start of each create on replica A. */
async function delivery(a: EventStore, b: EventStore, mode: 'paced' | 'flat out', n: number): Promise<{ n: number; rate: number; p50: number; p99: number; max: number }> {
  const base = 40_000_000 + Math.floor(Math.random() * 1e9);
  const sent = new Map<string, number>();
  const lat: number[] = [];
  const w = b.watch({});
  const received = (async () => {
    for await (const e of w) {
      const t = sent.get(e.object.metadata.name!);
      if (t !== undefined) lat.push(performance.now() - t);
      if (lat.length === n) break;
    }
  })();
  const create = async (i: number): Promise<void> => {
    const e = makeEvent(base + i);
    sent.set(e.metadata.name!, performance.now());
    await a.create(e, { ttlSeconds: 3600 });
  };
  const t0 = performance.now();
  if (mode === 'paced') {
    const writes: Promise<void>[] = [];
    for (let i = 0; i < n; i++) {
      const due = t0 + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      writes.push(create(i));
    }
    await Promise.all(writes);
  } else {
    let next = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < n) await create(next++);
      }),
    );
  }
  await received;
  w.stop();
  const rate = n / ((performance.now() - t0) / 1000);
  return { n, rate, p50: pct(lat, 50), p99: pct(lat, 99), max: Math.max(...lat) };
}

async function main(): Promise<void> {
  const version = (await admin.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]?.v;
  console.log(`PostgresEventStore benchmark: PostgreSQL ${version}, ${CLIENTS} concurrent writers, node ${process.version}`);
  await admin.query(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`);
  try {
    const rows: Record<string, string | number>[] = [];
    for (const sync of [true, false]) {
      const label = sync ? 'on (default)' : 'off';
      const concurrent = await rawConcurrent(CREATES, sync);
      const batched = await rawBatched(CREATES, sync);
      const store = await storeCreates(CREATES, sync);
      const rawArchive = await rawBatched(CREATES, sync, ARCHIVE_BATCH);
      const archive = await archiveIngest(CREATES, sync);
      rows.push(
        { synchronous_commit: label, what: `raw INSERT (key, object), ${CLIENTS} concurrent callers, pool of ${RAW_POOL}`, 'per s': Math.round(concurrent), 'p50 ms': '', 'p99 ms': '' },
        { synchronous_commit: label, what: `raw INSERT (key, object), ${CLIENTS} rows per statement`, 'per s': Math.round(batched), 'p50 ms': '', 'p99 ms': '' },
        { synchronous_commit: label, what: `PostgresEventStore.create, ${CLIENTS} concurrent callers`, 'per s': Math.round(store.rate), 'p50 ms': f2(store.p50), 'p99 ms': f2(store.p99) },
        { synchronous_commit: label, what: 'store / best raw', 'per s': f2(store.rate / Math.max(concurrent, batched)), 'p50 ms': '', 'p99 ms': '' },
        { synchronous_commit: label, what: `raw INSERT (key, object), ${ARCHIVE_BATCH} rows per statement`, 'per s': Math.round(rawArchive), 'p50 ms': '', 'p99 ms': '' },
        { synchronous_commit: label, what: `applyArchiveBatch of ${ARCHIVE_BATCH}, new events (+ occurrence each)`, 'per s': Math.round(archive.created), 'p50 ms': '', 'p99 ms': '' },
        { synchronous_commit: label, what: `applyArchiveBatch of ${ARCHIVE_BATCH}, repeats (+ occurrence each)`, 'per s': Math.round(archive.repeated), 'p50 ms': '', 'p99 ms': '' },
        { synchronous_commit: label, what: `archive new / raw ${ARCHIVE_BATCH}-row`, 'per s': f2(archive.created / rawArchive), 'p50 ms': '', 'p99 ms': '' },
      );
    }
    console.log(
      `\ningest (${CREATES.toLocaleString('en')} events each; a create writes 1 row + 5 indexes, an archived event 1 more row + 2 indexes for its occurrence, raw 1 row + 1 index)`,
    );
    console.table(rows);

    const deliveryRows: Record<string, string | number>[] = [];
    for (const sync of [true, false]) {
      const schema = `${SCHEMA}_r${sync ? 's' : 'a'}`;
      const a = openStore(schema, sync);
      const b = openStore(schema, sync);
      await Promise.all([a.ready(), b.ready()]);
      // Warm up: every pooled connection plans its statements once; the figures are for a running server.
      await delivery(a, b, 'flat out', 2_000);
      const paced = await delivery(a, b, 'paced', RATE * RATE_SECONDS);
      const loaded = await delivery(a, b, 'flat out', CREATES);
      for (const [what, r] of [
        [`A creates at ${RATE}/s, B watches`, paced],
        [`A creates flat out (${CLIENTS} callers), B watches`, loaded],
      ] as const) {
        deliveryRows.push({ synchronous_commit: sync ? 'on (default)' : 'off', what, events: r.n, 'per s': Math.round(r.rate), 'p50 ms': f1(r.p50), 'p99 ms': f1(r.p99), 'max ms': f1(r.max) });
      }
      await Promise.all([a.close(), b.close()]);
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    }
    console.log('\ncross-replica watch delivery (start of create on replica A -> event at a watcher on replica B)');
    console.table(deliveryRows);
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await admin.end();
  }
}

await main();
