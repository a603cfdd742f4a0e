/**
 * Storage benchmark for the SQLite backend, with its baselines measured in the
 * same run:
 *   - creates: raw better-sqlite3 inserts (same rows, same batch size, same
 *     durability) vs SqliteEventStore.create from 64 concurrent callers;
 *   - lists: one page of 500 out of BENCH_ROWS (default 1,000,000) stored events,
 *     page 1 vs page 2,000 (unfiltered), and filtered by namespace and by
 *     involvedObject.name; latest and snapshot (exact resourceVersion) reads;
 *   - memory: RSS with few vs BENCH_ROWS events stored, and while paging through all.
 *
 * Run: node --import tsx bench/storage-sqlite.ts   (BENCH_ROWS=200000 for a quick run)
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CoreEvent } from '../src/api/index.js';
import type { ListOptions } from '../src/storage/index.js';
import { SqliteEventStore } from '../src/storage/sqlite/index.js';
import { kubeletFields } from './support/events.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const CREATES = Number(process.env.BENCH_CREATES ?? 60_000);
const CLIENTS = 64;
const NAMESPACES = 100;
const PODS = 20_000;
const LIST_SAMPLES = Number(process.env.BENCH_LIST_SAMPLES ?? 200);

const dir = mkdtempSync(join(tmpdir(), 'kevents-bench-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

let seq = 0;
function makeEvent(i: number): CoreEvent {
  const ns = `ns-${String(i % NAMESPACES).padStart(3, '0')}`;
  // One pod in a thousand events is "hot", so a filter by its name matches 0.1% of all rows.
  const pod = i % 1000 === 7 ? 'hot-pod' : `pod-${(i * 7919) % PODS}`;
  const t = new Date(Date.UTC(2025, 0, 1) + i * 37).toISOString().replace(/\.\d+Z$/, 'Z');
  return {
    kind: 'Event',
    apiVersion: 'v1',
    metadata: { namespace: ns, name: `${pod}.${(0x17a2b3c4d5e6f7an + BigInt(i) * 7919n).toString(16)}`, uid: `6f1c${String(seq++).padStart(8, '0')}-1111-4222-8333-444455556666`, creationTimestamp: t },
    involvedObject: { kind: 'Pod', namespace: ns, name: pod, uid: `uid-${pod}`, apiVersion: 'v1', resourceVersion: '4242', fieldPath: 'spec.containers{app}' },
    ...kubeletFields(i, t),
  };
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

const f1 = (n: number): string => n.toFixed(1);
const f2 = (n: number): string => n.toFixed(2);
const mib = (n: number): string => `${(n / 1024 / 1024).toFixed(0)} MiB`;

type Sync = 'NORMAL' | 'FULL';

function rawInserts(n: number, batch: number, sync: Sync): number {
  const path = join(dir, `raw-${sync}.db`);
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${sync}`);
  db.exec('CREATE TABLE t (key TEXT PRIMARY KEY, object TEXT NOT NULL)');
  const ins = db.prepare('INSERT INTO t (key, object) VALUES (?, ?)');
  const rows = Array.from({ length: n }, (_, i) => {
    const e = makeEvent(i + 10_000_000);
    return [`${e.metadata.namespace}/${e.metadata.name}`, JSON.stringify(e)] as const;
  });
  const commit = db.transaction((chunk: (readonly [string, string])[]) => {
    for (const r of chunk) ins.run(r[0], r[1]);
  });
  const t0 = performance.now();
  for (let i = 0; i < n; i += batch) commit(rows.slice(i, i + batch));
  const s = (performance.now() - t0) / 1000;
  db.close();
  return n / s;
}

async function storeCreates(n: number, sync: Sync): Promise<{ rate: number; p50: number; p99: number }> {
  const store = new SqliteEventStore({ path: join(dir, `creates-${sync}.db`), synchronous: sync });
  await store.ready();
  const events = Array.from({ length: n }, (_, i) => makeEvent(i + 20_000_000));
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
  const s = (performance.now() - t0) / 1000;
  await store.close();
  return { rate: n / s, p50: pct(lat, 50), p99: pct(lat, 99) };
}

async function main(): Promise<void> {
  console.log(`SqliteEventStore benchmark: ${ROWS.toLocaleString('en')} stored events, ${CLIENTS} concurrent writers, node ${process.version}`);

  // --- creates ---------------------------------------------------------------
  const createRows: Record<string, string | number>[] = [];
  for (const sync of ['NORMAL', 'FULL'] as const) {
    const raw = rawInserts(CREATES, CLIENTS, sync);
    const creates = await storeCreates(CREATES, sync);
    createRows.push(
      { synchronous: sync, what: `raw better-sqlite3 insert (key, object), ${CLIENTS} rows/commit`, 'per s': Math.round(raw), 'p50 ms': '', 'p99 ms': '' },
      { synchronous: sync, what: `SqliteEventStore.create, ${CLIENTS} concurrent callers`, 'per s': Math.round(creates.rate), 'p50 ms': f2(creates.p50), 'p99 ms': f2(creates.p99) },
      { synchronous: sync, what: 'store / raw', 'per s': f2(creates.rate / raw), 'p50 ms': '', 'p99 ms': '' },
    );
  }
  console.log(`\ncreates (${CREATES.toLocaleString('en')} each, WAL; NORMAL survives kill -9, FULL also power loss)`);
  console.table(createRows);

  // --- fill ------------------------------------------------------------------
  const path = join(dir, 'big.db');
  const store = new SqliteEventStore({ path, synchronous: 'NORMAL' });
  await store.ready();
  const rssEmpty = process.memoryUsage().rss;
  const t0 = performance.now();
  const FILL_CONCURRENCY = 1000;
  let rssSmall = 0;
  for (let i = 0; i < ROWS; i += FILL_CONCURRENCY) {
    const chunk: Promise<CoreEvent>[] = [];
    for (let j = i; j < Math.min(ROWS, i + FILL_CONCURRENCY); j++) chunk.push(store.create(makeEvent(j), { ttlSeconds: 3600 }));
    await Promise.all(chunk);
    if (i === 50_000) rssSmall = process.memoryUsage().rss;
  }
  const fillS = (performance.now() - t0) / 1000;
  // History: some updates and deletes, so snapshot reads step over superseded rows.
  for (let i = 0; i < 20_000; i += 500) {
    await Promise.all(
      Array.from({ length: 500 }, (_, k) => {
        const e = makeEvent(((i + k) * 37) % ROWS);
        return i % 1000 === 0
          ? store.delete(e.metadata.namespace!, e.metadata.name!).catch(() => undefined)
          : store.guaranteedUpdate(e.metadata.namespace!, e.metadata.name!, (c) => ({ ...c!, count: (c!.count ?? 1) + 1 }), { ttlSeconds: 3600 }).catch(() => undefined);
      }),
    );
  }
  const rssFull = process.memoryUsage().rss;
  // Creates against the full store: every index is now larger than the page cache.
  const fullCreates = { n: 20_000, lat: [] as number[], s: 0 };
  {
    let next = 0;
    const t = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < fullCreates.n) {
          const e = makeEvent(30_000_000 + next++);
          const s = performance.now();
          await store.create(e, { ttlSeconds: 3600 });
          fullCreates.lat.push(performance.now() - s);
        }
      }),
    );
    fullCreates.s = (performance.now() - t) / 1000;
  }
  console.log(
    `\ncreates with ${ROWS.toLocaleString('en')} stored (NORMAL, ${CLIENTS} callers): ${Math.round(fullCreates.n / fullCreates.s)}/s, p50 ${f2(pct(fullCreates.lat, 50))} ms, p99 ${f2(pct(fullCreates.lat, 99))} ms`,
  );
  console.log(
    `filled ${ROWS.toLocaleString('en')} events in ${f1(fillS)} s (${Math.round(ROWS / fillS)}/s, batches of ${FILL_CONCURRENCY}), file ${mib(statSync(path).size)}`,
  );

  // --- lists -----------------------------------------------------------------
  // Let the checkpoint thread copy the fill's WAL into the file first, so reads are measured on a settled file.
  await new Promise((r) => setTimeout(r, 5_000));
  const snapshot = await store.currentResourceVersion();
  // Later writes, so the snapshot differs from the latest state.
  await Promise.all(Array.from({ length: 500 }, (_, k) => store.create(makeEvent(ROWS + k), { ttlSeconds: 3600 })));
  // The start of page n, found by paging there through the store itself.
  const startOfPage = async (options: ListOptions, n: number): Promise<string> => {
    let start = '';
    for (let p = 1; p < n; p++) {
      const r = await store.list({ ...options, limit: 500, ...(start !== '' ? { startKey: start } : {}) });
      if (r.lastKey === undefined) throw new Error(`list ${JSON.stringify(options)} has fewer than ${n} pages`);
      start = r.lastKey;
    }
    return start;
  };
  const ro = new Database(path, { readonly: true });
  const countLive = (extra: string, ...args: string[]): number =>
    (ro.prepare(`SELECT count(*) AS n FROM versions WHERE superseded_rv IS NULL AND op <> 3 ${extra}`).get(...args) as { n: number }).n;
  const live = countLive('');
  // A namespace is a key range: `<ns>/` up to `<ns>0`.
  const nsLive = countLive('AND key > ? AND key < ?', 'ns-042/', 'ns-0420');
  ro.close();
  const farPage = Math.min(2000, Math.floor(live / 500));
  const nsOptions: ListOptions = { namespace: 'ns-042' };
  const nsPage = Math.floor(nsLive / 500);
  const hot: ListOptions = { fieldEquals: { 'involvedObject.name': 'hot-pod' } };
  const hotPage = Math.max(1, Math.floor((await listCount(hot)) / 500));
  async function listCount(options: ListOptions): Promise<number> {
    return (await store.list(options)).items.length;
  }
  const backoff: ListOptions = { fieldEquals: { reason: 'BackOff' }, predicate: (e) => e.reason === 'BackOff' };
  const cases: { name: string; options: ListOptions; page: number; start: string }[] = [
    { name: 'all namespaces', options: {}, page: 1, start: '' },
    { name: 'all namespaces', options: {}, page: farPage, start: await startOfPage({}, farPage) },
    { name: 'namespace ns-042', options: nsOptions, page: 1, start: '' },
    { name: 'namespace ns-042', options: nsOptions, page: nsPage, start: await startOfPage(nsOptions, nsPage) },
    { name: 'involvedObject.name=hot-pod', options: hot, page: 1, start: '' },
    { name: 'involvedObject.name=hot-pod', options: hot, page: hotPage, start: await startOfPage(hot, hotPage) },
    { name: 'reason=BackOff (1 in 5)', options: backoff, page: 1, start: '' },
    { name: 'reason=BackOff (1 in 5)', options: backoff, page: Math.floor(farPage / 5), start: await startOfPage(backoff, Math.floor(farPage / 5)) },
  ];
  const rows: Record<string, string | number>[] = [];
  const p99s = new Map<string, number>();
  for (const c of cases) {
    for (const mode of ['latest', 'snapshot'] as const) {
      const opts: ListOptions = { ...c.options, limit: 500, ...(c.start !== '' ? { startKey: c.start } : {}), ...(mode === 'snapshot' ? { resourceVersion: snapshot, match: 'Exact' } : {}) };
      const lat: number[] = [];
      let items = 0;
      for (let i = 0; i < 5; i++) await store.list(opts);
      for (let i = 0; i < LIST_SAMPLES; i++) {
        const s = performance.now();
        const r = await store.list(opts);
        lat.push(performance.now() - s);
        items = r.items.length;
      }
      const p99 = pct(lat, 99);
      const first = p99s.get(`${c.name}/${mode}`);
      if (first === undefined) p99s.set(`${c.name}/${mode}`, p99);
      rows.push({ list: c.name, read: mode, page: c.page, items, 'p50 ms': f2(pct(lat, 50)), 'p99 ms': f2(p99), 'p99 / page 1': first === undefined ? '' : f2(p99 / first) });
    }
  }
  console.log(`\nlist pages of 500 (p50/p99 over ${LIST_SAMPLES} reads each; snapshot = exact resourceVersion ${snapshot}, 500 writes older than latest)`);
  console.table(rows);

  const withCount = [] as number[];
  for (let i = 0; i < 20; i++) {
    const s = performance.now();
    await store.list({ limit: 500, countRemaining: true });
    withCount.push(performance.now() - s);
  }
  console.log(`page 1 of all namespaces with countRemaining (count capped at 100,000, so left out here): p50 ${f2(pct(withCount, 50))} ms`);
  const nsCount: number[] = [];
  for (let i = 0; i < 20; i++) {
    const s = performance.now();
    await store.list({ namespace: 'ns-042', limit: 500, countRemaining: true });
    nsCount.push(performance.now() - s);
  }
  console.log(`page 1 of namespace ns-042 with countRemaining (counts ~${(ROWS / NAMESPACES).toLocaleString('en')} keys): p50 ${f2(pct(nsCount, 50))} ms`);

  // --- memory ----------------------------------------------------------------
  global.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  let startKey: string | undefined;
  let total = 0;
  const tStream = performance.now();
  for (;;) {
    const r = await store.list({ limit: 500, ...(startKey !== undefined ? { startKey } : {}), resourceVersion: snapshot, match: 'Exact' });
    total += r.items.length;
    peak = Math.max(peak, process.memoryUsage().rss);
    if (r.lastKey === undefined) break;
    startKey = r.lastKey;
  }
  const streamS = (performance.now() - tStream) / 1000;
  console.log('\nmemory (RSS)');
  console.table([
    { what: 'store open, empty', rss: mib(rssEmpty) },
    { what: 'after 50,000 creates', rss: mib(rssSmall) },
    { what: `after ${ROWS.toLocaleString('en')} creates + 20,000 updates/deletes`, rss: mib(rssFull) },
    { what: `paging all ${total.toLocaleString('en')} (snapshot, ${f1(streamS)} s): peak - start`, rss: mib(peak - before) },
  ]);
  await store.close();
}

await main();
