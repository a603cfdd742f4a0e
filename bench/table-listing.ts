/**
 * bench/table-listing.ts times `kubectl get events -A` as kubectl asks it (Table, pages of 500, one
 * keep-alive connection) against `kevents serve --storage sqlite:…` over plain HTTP, on a store of
 * BENCH_EVENTS listed events written before the server starts (see SPREAD below):
 *   first: the first listing of a fresh server (its Table code not compiled yet; its rows those the
 *          server rendered before it listened, `--render-cache-warm`: add `--render-cache-warm 0` to
 *          BENCH_SERVE_FLAGS for a server that renders every row on the first listing);
 *   cold:  later listings with a render cache too small to keep a listing (every row read from storage);
 *   warm:  later listings with the default render cache (rows spliced from it).
 * Fresh servers alternate between the two caches (BENCH_SERVERS of them); each gives one first
 * listing and BENCH_ROUNDS cold or warm ones. Medians and the slowest are printed, with the first
 * listings in order. The baseline in the same run is better-sqlite3 alone reading every row of the
 * file (not decompressed) in revision order: what reading costs before any decoding or rendering.
 * Other knobs: BENCH_SPREAD (below); BENCH_JSON_FIRST=1 lists every event as JSON before the first
 * Table listing (as bench/vs-kube-apiserver.ts's lists come before its Table listings);
 * BENCH_WARM_NS=N lists the first N namespaces as Tables before it; BENCH_GAP_MS idles between
 * listings (which tells them apart in a profile); BENCH_SERVE_FLAGS adds flags to every server and
 * BENCH_SERVE_NODE_ARGS arguments to its node (e.g. `--cpu-prof --cpu-prof-dir DIR`);
 * BENCH_BASELINE_CLI names another build's dist/bin/kevents.js, measured alternately with this one.
 * Run: npm run build && npx tsx bench/table-listing.ts
 */
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { CoreEvent } from '../src/api/index.js';
import { SqliteEventStore } from '../src/storage/sqlite/index.js';
import { benchDir, CLI, sleep, startCli, stopCli } from './support/cli.js';

const env = (name: string, fallback: number): number => Number(process.env[`BENCH_${name}`] ?? fallback);
const EVENTS = env('EVENTS', 10_000);
const SERVERS = env('SERVERS', 6);
const ROUNDS = env('ROUNDS', 4);
const NAMESPACES = 10;
/**
 * SPREAD (BENCH_SPREAD): the store is written with SPREAD times the events over SPREAD times the
 * namespaces, in turn, and the events of the namespaces past the first NAMESPACES are deleted, so
 * the listed events share the file's pages with deleted ones, as in a cluster's store.
 */
const SPREAD = env('SPREAD', 2);
const FLAGS = (process.env.BENCH_SERVE_FLAGS ?? '').split(' ').filter((f) => f !== '');
/** GAP_MS (BENCH_GAP_MS) idles the server between listings, which tells them apart in a profile. */
const GAP_MS = env('GAP_MS', 0);
const WARM_NS = env('WARM_NS', 0);
const JSON_FIRST = process.env.BENCH_JSON_FIRST === '1';
const NODE_ARGS = (process.env.BENCH_SERVE_NODE_ARGS ?? '').split(' ').filter((f) => f !== '');
const BUILDS: [string, string][] = [['kevents', CLI], ...(process.env.BENCH_BASELINE_CLI !== undefined ? [['kevents before', process.env.BENCH_BASELINE_CLI] as [string, string]] : [])];
const KUBECTL_TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

function get(agent: Agent, url: string, path: string, accept = KUBECTL_TABLE): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { agent, headers: { accept } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`${path}: ${res.statusCode} ${Buffer.concat(chunks).toString().slice(0, 300)}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

/** listing reads every page of `kubectl get events -A` and returns its time and its rows. */
async function listing(agent: Agent, url: string, accept = KUBECTL_TABLE, path = '/api/v1/events'): Promise<{ ms: number; rows: number }> {
  const t0 = performance.now();
  let rows = 0;
  let token: string | undefined;
  do {
    const page = JSON.parse((await get(agent, url, `${path}?limit=500${token !== undefined ? `&continue=${encodeURIComponent(token)}` : ''}`, accept)).toString()) as {
      rows?: unknown[];
      items?: unknown[];
      metadata: { continue?: string };
    };
    rows += (page.rows ?? page.items)!.length;
    token = page.metadata.continue || undefined;
  } while (token !== undefined);
  return { ms: performance.now() - t0, rows };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const max = (xs: number[]): number => Math.max(...xs);

async function fill(path: string): Promise<void> {
  const store = new SqliteEventStore({ path });
  const t = new Date(Date.now() - 600_000).toISOString().replace(/\.\d+Z$/, 'Z');
  for (let i = 0; i < EVENTS * SPREAD; i += 1000) {
    const writes: Promise<unknown>[] = [];
    for (let j = i; j < Math.min(EVENTS * SPREAD, i + 1000); j++) {
      const ns = `ns-${j % (NAMESPACES * SPREAD)}`;
      const e: CoreEvent = {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `web-${j}.17a2b3c4d5e6f${j}`, namespace: ns, uid: `u-${j}`, creationTimestamp: t },
        involvedObject: { kind: 'Pod', namespace: ns, name: `web-${j}`, uid: `7c3a${String(j).padStart(8, '0')}-1111-4222-8333-444455556666`, apiVersion: 'v1', fieldPath: 'spec.containers{app}' },
        reason: j % 7 === 0 ? 'BackOff' : 'Pulled',
        message: j % 7 === 0 ? 'Back-off restarting failed container app in pod web' : 'Container image "registry.example/app:1.2.3" already present on machine',
        source: { component: 'kubelet', host: `node-${j % 3}` },
        firstTimestamp: t,
        lastTimestamp: t,
        count: 1 + (j % 5),
        type: j % 7 === 0 ? 'Warning' : 'Normal',
        reportingComponent: 'kubelet',
        reportingInstance: `node-${j % 3}`,
      };
      writes.push(store.create(e));
    }
    await Promise.all(writes);
  }
  for (let i = 0; i < EVENTS * SPREAD; i += 1000) {
    const deletes: Promise<unknown>[] = [];
    for (let j = i; j < Math.min(EVENTS * SPREAD, i + 1000); j++) {
      if (j % (NAMESPACES * SPREAD) >= NAMESPACES) deletes.push(store.delete(`ns-${j % (NAMESPACES * SPREAD)}`, `web-${j}.17a2b3c4d5e6f${j}`));
    }
    await Promise.all(deletes);
  }
  await store.close();
}

/** baseline reads the same pages of row JSON with better-sqlite3 alone: the floor under any listing. */
function baseline(path: string): number {
  const db = new Database(path, { readonly: true });
  const stmt = db.prepare('SELECT rv, key, object FROM versions WHERE rv > ? ORDER BY rv LIMIT 500').raw();
  const t0 = performance.now();
  let n = 0;
  let last = 0;
  for (;;) {
    const rows = stmt.all(last) as [number, string, Buffer][];
    if (rows.length === 0) break;
    n += rows.length;
    last = rows[rows.length - 1]![0];
  }
  const ms = performance.now() - t0;
  db.close();
  if (n < EVENTS * SPREAD) throw new Error(`baseline read ${n} rows`);
  return ms;
}

async function main(): Promise<void> {
  const dir = benchDir('table-listing');
  const path = join(dir, 'events.db');
  await fill(path);
  const base: number[] = [];
  const first = new Map<string, number[]>(BUILDS.map(([n]) => [n, []]));
  const cold = new Map<string, number[]>(BUILDS.map(([n]) => [n, []]));
  const warm = new Map<string, number[]>(BUILDS.map(([n]) => [n, []]));
  for (let round = 0; round < SERVERS; round++) {
    base.push(baseline(path));
    for (const [name, cli] of BUILDS) {
      // Odd rounds keep a render cache too small for a listing (cold), even ones the default (warm).
      const isCold = round % 2 === 1;
      const flags = ['serve', '--listen', '127.0.0.1:0', '--storage', `sqlite:${path}`, '--event-ttl', '0', '--log-level', 'error', ...(isCold ? ['--render-cache-size', '1MiB'] : []), ...FLAGS];
      const srv = await startCli(flags, /listening on (\S+)/, NODE_ARGS, cli);
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        // BENCH_JSON_FIRST=1: a JSON listing of every event first, as in bench/vs-kube-apiserver.ts, where lists came before.
        if (JSON_FIRST) await listing(agent, srv.url, 'application/json');
        for (let i = 0; i < WARM_NS; i++) await listing(agent, srv.url, KUBECTL_TABLE, `/api/v1/namespaces/ns-${i}/events`);
        await sleep(GAP_MS);
        const f = await listing(agent, srv.url);
        if (f.rows !== EVENTS) throw new Error(`${name}: ${f.rows} rows, not ${EVENTS}`);
        first.get(name)!.push(f.ms);
        for (let i = 0; i < ROUNDS; i++) {
          await sleep(GAP_MS);
          (isCold ? cold : warm).get(name)!.push((await listing(agent, srv.url)).ms);
        }
      } finally {
        agent.destroy();
        await stopCli(srv.child);
      }
    }
  }
  const b = median(base);
  console.log(`${EVENTS} events, ${SERVERS} fresh servers; baseline (better-sqlite3 reading the same rows): median ${b.toFixed(1)} ms`);
  for (const [name] of BUILDS) {
    // One server gives no cold listing (BENCH_SERVERS=1), no rounds no later listing (BENCH_ROUNDS=0).
    const line = (what: string, xs: number[]): string =>
      xs.length === 0 ? `${what}: none` : `${what} median ${median(xs).toFixed(0)} ms (${(median(xs) / b).toFixed(1)}× baseline), slowest ${max(xs).toFixed(0)} ms`;
    console.log(`${name}: ${line('first listing', first.get(name)!)}; ${line('cold', cold.get(name)!)}; ${line('warm', warm.get(name)!)}`);
    console.log(`  first listings, in order: ${first.get(name)!.map((x) => x.toFixed(0)).join(', ')} ms`);
  }
}

await main();
process.exit(0);
