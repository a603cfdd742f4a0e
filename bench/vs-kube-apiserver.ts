/**
 * bench/vs-kube-apiserver.ts puts the same load, in the same run, on the real
 * kube-apiserver (peers cache; etcd with --unsafe-no-fsync) and on
 * `kevents serve --storage sqlite:…`, both over HTTPS with a bearer token from a
 * token file, and prints each figure for both with kevents' ratio:
 *   creates: CLIENTS keep-alive clients create CREATES core/v1 events in NAMESPACES namespaces, on the
 *   server as it started, then CREATES more (warmed: its code compiled, its files grown); then, when
 *   Debian's wrk is installed, wrk creates for WRK_SECONDS over as many connections, from one thread and from two (a C client takes far
 *   less of the 2 cores than Node's, so its rate is nearer the server's own);
 *   lists: LIST_CLIENTS clients page through one namespace (CREATES / NAMESPACES events) LIST_LIMIT at a time;
 *   deletecollection: one DELETE of the namespace the warmed and wrk creates went to (asked again until
 *   it is empty: kube-apiserver cuts a long one at its request timeout), its events per second;
 *   list shapes: SHAPE_EVENTS events in a namespace of their own, then LIST_CLIENTS clients asking for one page
 *   for SHAPE_SECONDS, for each of both APIs × {no selector, type=Warning, reason=Pulled, involvedObject.name
 *   (regarding.name), a label selector} × {JSON, Table} × {first page, continued page}: p50/p99, rate and the
 *   server's CPU per request (BENCH_SHAPES, a regular expression, picks shapes by name);
 *   `kubectl get events -A` as kubectl asks it (Table, pages of 500) over TABLE_EVENTS events
 *   (the namespaces past them are deleted first), end-to-end latency per listing, TABLE_ROUNDS times on
 *   the running server and, after the watch phase, COLD_ROUNDS times each after a restart of the server
 *   (kube-apiserver alone: etcd keeps running); with BENCH_BIG_EVENTS, the same over that many events
 *   (created past the others), BIG_ROUNDS times warm and after a restart;
 *   watch fan-out: WATCHERS watchers of one namespace while WATCH_RATE events/s are created for
 *   WATCH_SECONDS; every frame must arrive; latency from the create's send to the frame's read.
 * Every figure has its p99; the resident memory of each server is sampled throughout. Beside each
 * server's CPU per create the Node clients' own is reported, and the cores server and clients kept busy
 * together: where the clients share the server's cores, the rate cannot pass cores ÷ (server + clients'
 * CPU per create).
 * With BENCH_RSS_EVENTS=1000000, kevents serve also reads a store of that many events (filled
 * directly, before the server starts) through to its end, as JSON pages and as Table pages, and
 * its resident memory is reported: bounded by the SQLite page caches and --render-cache-size.
 * Sizes come from the environment (BENCH_CREATES, BENCH_NAMESPACES, BENCH_CLIENTS, BENCH_LIST_CLIENTS,
 * BENCH_LIST_SECONDS, BENCH_LIST_LIMIT, BENCH_SHAPE_EVENTS, BENCH_SHAPE_SECONDS, BENCH_TABLE_EVENTS, BENCH_TABLE_ROUNDS,
 * BENCH_COLD_ROUNDS, BENCH_BIG_EVENTS, BENCH_BIG_ROUNDS, BENCH_WATCHERS, BENCH_WATCH_RATE, BENCH_WATCH_SECONDS).
 * BENCH_PHASES lists the phases run past the creates (default wrk,lists,shapes,deletes,table,watch,cold,big),
 * e.g. `shapes,table,cold` for the list figures alone. BENCH_TARGETS lists what runs (default kube-apiserver, kevents, and
 * "kevents --writer-thread", "kevents --workers 2": a target "kevents <flags>" is this build with those flags); BENCH_BASELINE_CLI
 * names another build's dist/bin/kevents.js, measured in the same run as "kevents before"; BENCH_KEVENTS_NODE_ARGS
 * are node's own arguments for every kevents server (e.g. `--cpu-prof --cpu-prof-dir DIR`).
 * Run: npm run build && npx tsx bench/vs-kube-apiserver.ts
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { CoreEvent } from '../src/api/index.js';
import { SqliteEventStore } from '../src/storage/sqlite/index.js';
import { startControlPlane } from '../test/support/control-plane.js';
import { benchDir, rssMiB, sleep } from './support/cli.js';
import { agentFor, pct, runLoad, send } from './support/https-load.js';
import type { LoadResult } from './support/https-load.js';
import { cpuSeconds, eventBody, startKevents } from './support/servers.js';
import type { Server } from './support/servers.js';
import { openTlsWatchers } from './support/tls-watchers.js';
import { hasWrk, runWrk, runWrkGet } from './support/wrk.js';
import type { WrkResult } from './support/wrk.js';

const env = (name: string, fallback: number): number => Number(process.env[`BENCH_${name}`] ?? fallback);
const CREATES = env('CREATES', 20_000);
const NAMESPACES = env('NAMESPACES', 20);
const CLIENTS = env('CLIENTS', 64);
const LIST_CLIENTS = env('LIST_CLIENTS', 16);
const LIST_SECONDS = env('LIST_SECONDS', 10);
const LIST_LIMIT = env('LIST_LIMIT', 500);
const TABLE_EVENTS = env('TABLE_EVENTS', 20_000);
const TABLE_ROUNDS = env('TABLE_ROUNDS', 10);
const COLD_ROUNDS = env('COLD_ROUNDS', 3);
const BIG_EVENTS = env('BIG_EVENTS', 0);
const BIG_ROUNDS = env('BIG_ROUNDS', 3);
const SHAPE_EVENTS = env('SHAPE_EVENTS', 5000);
const SHAPE_SECONDS = env('SHAPE_SECONDS', 2);
/** SHAPES picks the list shapes measured, a regular expression matched against each shape's name (e.g. `v1 .*Table`). */
const SHAPES = new RegExp(process.env.BENCH_SHAPES ?? '');
/** PHASES picks what runs past the creates (which fill the store every other phase reads). */
const PHASES = new Set((process.env.BENCH_PHASES ?? 'wrk,lists,shapes,deletes,table,watch,cold,big').split(','));
const WATCHERS = env('WATCHERS', 1000);
const WATCH_RATE = env('WATCH_RATE', 200);
const WATCH_SECONDS = env('WATCH_SECONDS', 10);
const WRK_SECONDS = env('WRK_SECONDS', 10);
const RSS_EVENTS = env('RSS_EVENTS', 0);
const BASELINE_CLI = process.env.BENCH_BASELINE_CLI;
const TARGETS = (process.env.BENCH_TARGETS ?? `kube-apiserver,${BASELINE_CLI !== undefined ? 'kevents before,' : ''}kevents,kevents --writer-thread,kevents --workers 2`).split(',');

/** KUBECTL_TABLE is the Accept header of `kubectl get`. */
const KUBECTL_TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

/** Figures are one server's results, by phase. */
interface Figures {
  creates: LoadResult;
  /** warmCreates is the same load again, into the namespace wrk: the rate of a server past its first requests. */
  warmCreates: LoadResult;
  wrk: WrkResult | undefined;
  wrk2: WrkResult | undefined;
  wrkLists: WrkResult | undefined;
  lists: LoadResult;
  /** deletes is the deletecollection of the wrk namespace: its events, and the time until it was empty. */
  deletes: { events: number; seconds: number };
  table: { p50: number; p99: number; rows: number };
  /** shapes are the list shapes (API, selector, format, page), each loaded by LIST_CLIENTS clients for SHAPE_SECONDS. */
  shapes: ShapeResult[];
  /** cold is `get events -A` over TABLE_EVENTS, each listing the first after a restart of the server. */
  cold: Walks | undefined;
  /** big is `get events -A` over BIG_EVENTS, warm and cold. */
  big: { rows: number; warm: Walks; cold: Walks } | undefined;
  watch: { p50: number; p99: number; delivered: number; expected: number; open: number };
  cpu: Record<string, number>;
  /** clientCpu is this process's CPU time in each phase: the Node clients' (and the watchers' thread, in the watch phase). */
  clientCpu: Record<string, number>;
  rss: Record<string, number>;
}

/** ShapeResult is one list shape's load: its rate, latencies, items per answer and the server's CPU per request. */
interface ShapeResult extends LoadResult {
  name: string;
  items: number;
  cpuMs: number;
}

/** Walks are whole `get events -A` listings: their times in order, the rows of one, and the server's CPU per listing. */
interface Walks {
  times: number[];
  rows: number;
  cpuMs: number;
  /** restartMs is how long each restart took until the server was ready (cold walks alone). */
  restartMs: number[];
}

/** SHAPES_NS holds the events the list shapes read: SHAPE_EVENTS of them, with more than a page of each selection. */
const SHAPES_NS = 'shapes';

/**
 * shapeEventBody is the i-th event of the shapes namespace: a bench event about one of 8 pods (`web-0` to
 * `web-7`), labelled `tier=frontend` one time in four (`backend` otherwise); Warning BackOff one time in five.
 */
function shapeEventBody(i: number): string {
  const e = JSON.parse(eventBody(i, SHAPES_NS)) as { metadata: Record<string, unknown>; involvedObject: Record<string, unknown> };
  e.metadata.labels = { tier: i % 4 === 0 ? 'frontend' : 'backend' };
  e.involvedObject.name = `web-${i % 8}`;
  return JSON.stringify(e);
}

/** SELECTORS are the selections of the list shapes, as each API spells them (query parameters). */
const SELECTORS: { name: string; core: string; v1: string }[] = [
  { name: 'no selector', core: '', v1: '' },
  { name: 'type=Warning', core: 'fieldSelector=type%3DWarning', v1: 'fieldSelector=type%3DWarning' },
  { name: 'reason=Pulled', core: 'fieldSelector=reason%3DPulled', v1: 'fieldSelector=reason%3DPulled' },
  { name: 'object name', core: 'fieldSelector=involvedObject.name%3Dweb-3', v1: 'fieldSelector=regarding.name%3Dweb-3' },
  { name: 'tier=frontend (labels)', core: 'labelSelector=tier%3Dfrontend', v1: 'labelSelector=tier%3Dfrontend' },
];

/** shapeList is every list shape: both APIs × SELECTORS × {JSON, Table} × {first page, continued page}, as name, path and Accept. */
function shapeList(): { name: string; path: string; accept: string | undefined; continued: boolean }[] {
  const out: { name: string; path: string; accept: string | undefined; continued: boolean }[] = [];
  for (const [api, prefix] of [['core/v1', `/api/v1/namespaces/${SHAPES_NS}/events`], ['events.k8s.io/v1', `/apis/events.k8s.io/v1/namespaces/${SHAPES_NS}/events`]] as const) {
    for (const sel of SELECTORS) {
      const query = api === 'core/v1' ? sel.core : sel.v1;
      for (const [format, accept] of [['JSON', undefined], ['Table', KUBECTL_TABLE]] as const) {
        for (const continued of [false, true]) {
          out.push({ name: `${api} ${sel.name} ${format} ${continued ? 'continued' : 'first'}`, path: `${prefix}?limit=${LIST_LIMIT}${query !== '' ? `&${query}` : ''}`, accept, continued });
        }
      }
    }
  }
  return out.filter((x) => SHAPES.test(x.name));
}

/** startApiserver runs kube-apiserver 1.33 over etcd (no fsync: the figure is the API server's, not the disk's). */
async function startApiserver(): Promise<Server> {
  const cp = await startControlPlane({ etcdArgs: ['--unsafe-no-fsync'] });
  const target = { url: cp.url, token: cp.adminToken, ca: readFileSync(cp.caFile) };
  const pidOf = (exe: string): number[] => {
    const out = execFileSync('pgrep', ['-f', '--', exe], { encoding: 'utf8' }).trim();
    return out === '' ? [] : out.split('\n').map(Number);
  };
  const find = (): number[] => [...pidOf(`--secure-port=${new URL(cp.url).port}`), ...pidOf(`--listen-client-urls ${cp.etcdUrl}`)];
  let pids = find();
  return {
    name: 'kube-apiserver',
    ...target,
    pids: () => pids,
    restart: async () => {
      await cp.restartApiServer();
      pids = find();
    },
    prepare: async (namespaces) => {
      for (const name of namespaces) {
        const r = await cp.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
        if (r.status !== 201 && r.status !== 409) throw new Error(`namespace ${name}: ${r.status} ${r.text}`);
      }
    },
    stop: () => cp.stop(),
  };
}

/** listPages pages through `path` with `limit`, returning the number of items (or rows) read; `each` times every page. */
async function listPages(agent: ReturnType<typeof agentFor>, s: Server, path: string, limit: number, accept: string | undefined, each?: (ms: number) => void): Promise<number> {
  let token: string | undefined;
  let n = 0;
  do {
    const t0 = performance.now();
    const sep = path.includes('?') ? '&' : '?';
    const r = await send(agent, s, 'GET', `${path}${sep}limit=${limit}${token !== undefined ? `&continue=${encodeURIComponent(token)}` : ''}`, accept !== undefined ? { accept } : {});
    if (r.status !== 200) throw new Error(`list ${path}: ${r.status} ${r.body.toString().slice(0, 300)}`);
    each?.(performance.now() - t0);
    const page = JSON.parse(r.body.toString()) as { items?: unknown[]; rows?: unknown[]; metadata: { continue?: string } };
    n += (page.items ?? page.rows ?? []).length;
    token = page.metadata.continue || undefined;
  } while (token !== undefined);
  return n;
}

async function measure(s: Server): Promise<Figures> {
  const namespaces = Array.from({ length: NAMESPACES }, (_, i) => `ns-${i}`);
  await s.prepare([...namespaces, 'watched', 'wrk']);
  const cpu: Record<string, number> = {};
  const clientCpu: Record<string, number> = {};
  const rss: Record<string, number> = {};
  let peak = 0;
  const sampler = setInterval(() => {
    // A server being restarted has no process for a moment.
    try {
      peak = Math.max(peak, s.pids().reduce((a, p) => a + rssMiB(p), 0));
    } catch {
      /* sampled again in 200 ms */
    }
  }, 200);
  const phase = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const c0 = cpuSeconds(s.pids());
    const own0 = process.cpuUsage();
    peak = 0;
    const out = await fn();
    cpu[name] = cpuSeconds(s.pids()) - c0;
    const own = process.cpuUsage(own0);
    clientCpu[name] = (own.user + own.system) / 1e6;
    rss[name] = peak;
    process.stderr.write(
      `  ${s.name} ${name}: done (server CPU ${cpu[name].toFixed(1)} s, this process's CPU ${((own.user + own.system) / 1e6).toFixed(1)} s, RSS peak ${peak.toFixed(0)} MiB)\n`,
    );
    return out;
  };
  try {
    rss.start = s.pids().reduce((a, p) => a + rssMiB(p), 0);
    // Creates.
    const writer = agentFor(s, CLIENTS);
    let next = 0;
    const creates = await phase('creates', () =>
      runLoad(CLIENTS, () => next < CREATES, async (record) => {
        const i = next++;
        const ns = namespaces[i % NAMESPACES]!;
        const t0 = performance.now();
        const r = await send(writer, s, 'POST', `/api/v1/namespaces/${ns}/events`, { body: eventBody(i, ns) });
        if (r.status !== 201) throw new Error(`create: ${r.status} ${r.body.toString().slice(0, 300)}`);
        record(performance.now() - t0);
      }),
    );
    // The same load again on the warmed server (its code compiled, its files grown), into the namespace
    // the wrk phases write to, which is deleted before the Table listings.
    let warmNext = 0;
    const warmCreates = await phase('creates, warmed', () =>
      runLoad(CLIENTS, () => warmNext < CREATES, async (record) => {
        const i = CREATES + warmNext++;
        const t0 = performance.now();
        const r = await send(writer, s, 'POST', '/api/v1/namespaces/wrk/events', { body: eventBody(i, 'wrk') });
        if (r.status !== 201) throw new Error(`create: ${r.status} ${r.body.toString().slice(0, 300)}`);
        record(performance.now() - t0);
      }),
    );
    writer.destroy();
    const wrk = hasWrk() && PHASES.has('wrk')
      ? await phase('wrk', () => runWrk(`${s.url}/api/v1/namespaces/wrk/events`, { seconds: WRK_SECONDS, connections: CLIENTS, namespace: 'wrk', token: s.token }))
      : undefined;
    // The same with two wrk threads: one thread encrypting every request can be the limit before the server is.
    const wrk2 = hasWrk() && PHASES.has('wrk')
      ? await phase('wrk -t2', () =>
          runWrk(`${s.url}/api/v1/namespaces/wrk/events`, { seconds: WRK_SECONDS, connections: CLIENTS, threads: 2, namespace: 'wrk', prefix: 'v', token: s.token }),
        )
      : undefined;
    // Lists of LIST_LIMIT, paging one namespace.
    const reader = agentFor(s, LIST_CLIENTS);
    const perNamespace = await listPages(reader, s, `/api/v1/namespaces/${namespaces[0]}/events`, LIST_LIMIT, undefined);
    const listEnd = performance.now() + LIST_SECONDS * 1000;
    const lists = PHASES.has('lists')
      ? await phase('lists', () =>
          runLoad(LIST_CLIENTS, () => performance.now() < listEnd, async (record) => {
            await listPages(reader, s, `/api/v1/namespaces/${namespaces[0]}/events`, LIST_LIMIT, undefined, record);
          }),
        )
      : SKIPPED;
    process.stderr.write(`  ${s.name}: a namespace holds ${perNamespace} events\n`);
    // The same first page from wrk, whose C client leaves more of the 2 cores to the server.
    const wrkLists = hasWrk() && PHASES.has('wrk')
      ? await phase('wrk lists', () =>
          runWrkGet(`${s.url}/api/v1/namespaces/${namespaces[0]}/events?limit=${LIST_LIMIT}`, { seconds: WRK_SECONDS, connections: LIST_CLIENTS, token: s.token }),
        )
      : undefined;
    reader.destroy();
    const shapes = PHASES.has('shapes') ? await measureShapes(s, phase) : [];
    // `kubectl get events -A` over TABLE_EVENTS: the namespaces past them go first.
    const keep = Math.max(1, Math.ceil(TABLE_EVENTS / Math.max(1, perNamespace)));
    let deletes = { events: 0, seconds: NaN };
    const cleaner = agentFor(s, 1);
    if (PHASES.has('deletes') || PHASES.has('table') || PHASES.has('cold') || PHASES.has('big')) {
      for (const ns of [...namespaces.slice(keep), SHAPES_NS, 'wrk']) {
        // The wrk phases' namespace (the largest) is timed: its events over the time until it is empty.
        // Every create the warmed and wrk phases had acknowledged went there.
        const counted = ns === 'wrk' ? warmCreates.done + (wrk === undefined ? 0 : wrk.requests - wrk.errors) + (wrk2 === undefined ? 0 : wrk2.requests - wrk2.errors) : 0;
        const t0 = performance.now();
        await deleteAll(cleaner, s, ns);
        if (ns === 'wrk') deletes = { events: counted, seconds: (performance.now() - t0) / 1000 };
      }
    }
    const tableTimes: number[] = [];
    let rows = 0;
    if (PHASES.has('table')) {
      const walks = await phase('table', () => walk(s, TABLE_ROUNDS, false));
      tableTimes.push(...walks.times);
      rows = walks.rows;
      process.stderr.write(`  ${s.name} table listings, in order: ${tableTimes.map((t) => t.toFixed(0)).join(', ')} ms\n`);
    }
    tableTimes.sort((a, b) => a - b);
    // Watch fan-out.
    const watch = !PHASES.has('watch')
      ? { p50: NaN, p99: NaN, delivered: 0, expected: 0, open: 0 }
      : await phase('watch', async () => {
          const watchers = await openTlsWatchers({ url: s.url, path: '/api/v1/namespaces/watched/events?watch=true', token: s.token, ca: s.ca, watchers: WATCHERS });
          await sleep(1000);
          const agent = agentFor(s, 8);
          let sent = 0;
          let failed = 0;
          const interval = 1000 / WATCH_RATE;
          const t0 = performance.now();
          const inflight: Promise<void>[] = [];
          while (performance.now() - t0 < WATCH_SECONDS * 1000) {
            const wait = t0 + sent * interval - performance.now();
            if (wait > 0) await sleep(wait);
            const i = sent++;
            const body = eventBody(CREATES + i, 'watched', `sent ${performance.timeOrigin + performance.now()}`);
            inflight.push(send(agent, s, 'POST', '/api/v1/namespaces/watched/events', { body }).then((r) => void (r.status !== 201 && failed++), () => void failed++));
          }
          await Promise.all(inflight);
          await sleep(2000);
          const lat = [...(await watchers.stop())].sort((a, b) => a - b);
          agent.destroy();
          return { p50: pct(lat, 50), p99: pct(lat, 99), delivered: lat.length, expected: (sent - failed) * watchers.open, open: watchers.open };
        });
    // The listings after a restart: the watched namespace goes first, so that they read TABLE_EVENTS again.
    if (PHASES.has('watch') && (PHASES.has('cold') || PHASES.has('big'))) await deleteAll(cleaner, s, 'watched');
    cleaner.destroy();
    rss.end = s.pids().reduce((a, p) => a + rssMiB(p), 0);
    const cold = PHASES.has('cold') ? await walk(s, COLD_ROUNDS, true) : undefined;
    if (cold !== undefined) process.stderr.write(`  ${s.name} cold table listings, in order: ${cold.times.map((t) => t.toFixed(0)).join(', ')} ms (${cold.rows} rows)\n`);
    let big: Figures['big'];
    if (PHASES.has('big') && BIG_EVENTS > 0) {
      // More of the same events, across the same namespaces, until the store holds BIG_EVENTS.
      const have = rows > 0 ? rows : cold?.rows ?? 0;
      const bigWriter = agentFor(s, CLIENTS);
      let bigNext = 0;
      await phase('big creates', () =>
        runLoad(CLIENTS, () => bigNext < BIG_EVENTS - have, async () => {
          const i = 10 * CREATES + bigNext++;
          const ns = namespaces[i % keep]!;
          const r = await send(bigWriter, s, 'POST', `/api/v1/namespaces/${ns}/events`, { body: eventBody(i, ns) });
          if (r.status !== 201) throw new Error(`create: ${r.status} ${r.body.toString().slice(0, 300)}`);
        }),
      );
      bigWriter.destroy();
      const warm = await phase('big table', () => walk(s, BIG_ROUNDS, false));
      const bigCold = await walk(s, BIG_ROUNDS, true);
      process.stderr.write(`  ${s.name} big table listings (${warm.rows} rows), warm ${warm.times.map((t) => t.toFixed(0)).join(', ')} ms, cold ${bigCold.times.map((t) => t.toFixed(0)).join(', ')} ms\n`);
      big = { rows: warm.rows, warm, cold: bigCold };
    }
    return { creates, warmCreates, wrk, wrk2, lists, wrkLists, deletes, table: { p50: pct(tableTimes, 50), p99: pct(tableTimes, 99), rows }, shapes, cold, big, watch, cpu, clientCpu, rss };
  } finally {
    clearInterval(sampler);
  }
}

/** SKIPPED stands for a load that was not run (BENCH_PHASES). */
const SKIPPED: LoadResult = { done: 0, rate: NaN, p50: NaN, p99: NaN, errors: 0 };

/** deleteAll deletes a namespace's events, asking again until it is empty: kube-apiserver cuts a long deletecollection at its request timeout (and goes on deleting). */
async function deleteAll(agent: ReturnType<typeof agentFor>, s: Server, ns: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const r = await send(agent, s, 'DELETE', `/api/v1/namespaces/${ns}/events`).catch((e: Error) => ({ status: 0, body: Buffer.from(e.message) }));
    if (r.status === 200) return;
    if (attempt >= 10) throw new Error(`deletecollection ${ns}: ${r.status} ${r.body.toString().slice(0, 300)}`);
    await sleep(2000);
  }
}

/**
 * walk lists every event as `kubectl get events -A` does (Table, pages of 500), `rounds` times, each on a
 * new connection; `cold` restarts the server before each, so that each is its first listing.
 */
async function walk(s: Server, rounds: number, cold: boolean): Promise<Walks> {
  const times: number[] = [];
  const restartMs: number[] = [];
  let rows = 0;
  let cpu = 0;
  for (let round = 0; round < rounds; round++) {
    if (cold) {
      const r0 = performance.now();
      await s.restart();
      restartMs.push(performance.now() - r0);
    }
    const agent = agentFor(s, 1);
    const c0 = cpuSeconds(s.pids());
    const t0 = performance.now();
    rows = await listPages(agent, s, '/api/v1/events', 500, KUBECTL_TABLE);
    times.push(performance.now() - t0);
    cpu += cpuSeconds(s.pids()) - c0;
    agent.destroy();
  }
  return { times, rows, cpuMs: (cpu * 1000) / rounds, restartMs };
}

/**
 * measureShapes fills the shapes namespace with SHAPE_EVENTS events, then loads each list shape in turn:
 * LIST_CLIENTS clients asking for the same page for SHAPE_SECONDS (a continued page: the second page, its
 * token read once), with the server's CPU per request.
 */
async function measureShapes(s: Server, phase: <T>(name: string, fn: () => Promise<T>) => Promise<T>): Promise<ShapeResult[]> {
  await s.prepare([SHAPES_NS]);
  const writer = agentFor(s, CLIENTS);
  let next = 0;
  await phase('shape creates', () =>
    runLoad(CLIENTS, () => next < SHAPE_EVENTS, async () => {
      const r = await send(writer, s, 'POST', `/api/v1/namespaces/${SHAPES_NS}/events`, { body: shapeEventBody(next++) });
      if (r.status !== 201) throw new Error(`create: ${r.status} ${r.body.toString().slice(0, 300)}`);
    }),
  );
  writer.destroy();
  const reader = agentFor(s, LIST_CLIENTS);
  const out: ShapeResult[] = [];
  for (const shape of shapeList()) {
    let path = shape.path;
    if (shape.continued) {
      const first = await send(reader, s, 'GET', path, shape.accept !== undefined ? { accept: shape.accept } : {});
      const token = (JSON.parse(first.body.toString()) as { metadata: { continue?: string } }).metadata.continue;
      if (first.status !== 200) throw new Error(`${shape.name}: ${first.status} ${first.body.toString().slice(0, 300)}`);
      if (token === undefined || token === '') {
        process.stderr.write(`  ${s.name} ${shape.name}: skipped, the selection fits one page (BENCH_SHAPE_EVENTS)\n`);
        continue;
      }
      path = `${path}&continue=${encodeURIComponent(token)}`;
    }
    const once = await send(reader, s, 'GET', path, shape.accept !== undefined ? { accept: shape.accept } : {});
    if (once.status !== 200) throw new Error(`${shape.name}: ${once.status} ${once.body.toString().slice(0, 300)}`);
    const parsed = JSON.parse(once.body.toString()) as { items?: unknown[]; rows?: unknown[] };
    const items = (parsed.items ?? parsed.rows ?? []).length;
    const c0 = cpuSeconds(s.pids());
    const end = performance.now() + SHAPE_SECONDS * 1000;
    const load = await runLoad(LIST_CLIENTS, () => performance.now() < end, async (record) => {
      const t0 = performance.now();
      const r = await send(reader, s, 'GET', path, shape.accept !== undefined ? { accept: shape.accept } : {});
      if (r.status !== 200) throw new Error(`${shape.name}: ${r.status} ${r.body.toString().slice(0, 300)}`);
      record(performance.now() - t0);
    });
    const cpuMs = ((cpuSeconds(s.pids()) - c0) * 1000) / Math.max(1, load.done);
    process.stderr.write(`  ${s.name} ${shape.name}: ${load.rate.toFixed(0)}/s, p50 ${load.p50.toFixed(1)} ms, p99 ${load.p99.toFixed(1)} ms, ${items} items, CPU ${cpuMs.toFixed(2)} ms\n`);
    out.push({ name: shape.name, items, cpuMs, ...load });
  }
  reader.destroy();
  return out;
}

function report(all: Map<string, Figures>): void {
  const a = all.get('kube-apiserver');
  // Every other target has its column and its ratio to kube-apiserver, in the order run.
  const others = [...all.entries()].filter(([name]) => name !== 'kube-apiserver');
  const fmt = (n: number, d = 0): string => (Number.isFinite(n) ? n.toFixed(d) : '-');
  const ratio = (x: number | undefined, y: number | undefined): string => (x !== undefined && y !== undefined && y > 0 ? `${(x / y).toFixed(2)}×` : '-');
  const head = ['figure', 'kube-apiserver', ...others.flatMap(([name]) => [name, '÷ kube-apiserver'])];
  const rows: string[][] = [head];
  const add = (name: string, f: (x: Figures) => number, d: number, unit: string): void => {
    const cell = (x: Figures | undefined): string => (x ? `${fmt(f(x), d)} ${unit}` : '-');
    rows.push([name, cell(a), ...others.flatMap(([, x]) => [cell(x), ratio(f(x), a && f(a))])]);
  };
  add(`creates/s (${CLIENTS} clients, ${CREATES} events)`, (x) => x.creates.rate, 0, '/s');
  add('  create p99', (x) => x.creates.p99, 1, 'ms');
  add(`creates/s, warmed (${CREATES} more)`, (x) => x.warmCreates.rate, 0, '/s');
  add('  warmed create p99', (x) => x.warmCreates.p99, 1, 'ms');
  add('server CPU per create, warmed', (x) => (x.cpu['creates, warmed']! * 1e6) / x.warmCreates.done, 0, 'µs');
  if (a?.wrk !== undefined || others.some(([, x]) => x.wrk !== undefined)) {
    add(`creates/s, wrk -c${CLIENTS} for ${WRK_SECONDS} s`, (x) => x.wrk?.rate ?? NaN, 0, '/s');
    add('  wrk create p99', (x) => x.wrk?.p99 ?? NaN, 1, 'ms');
    add('server CPU per create (wrk)', (x) => (x.wrk !== undefined ? (x.cpu.wrk! * 1e6) / x.wrk.requests : NaN), 0, 'µs');
    add(`creates/s, wrk -t2 -c${CLIENTS} for ${WRK_SECONDS} s`, (x) => x.wrk2?.rate ?? NaN, 0, '/s');
    add('  wrk -t2 create p99', (x) => x.wrk2?.p99 ?? NaN, 1, 'ms');
    add('server CPU per create (wrk -t2)', (x) => (x.wrk2 !== undefined ? (x.cpu['wrk -t2']! * 1e6) / x.wrk2.requests : NaN), 0, 'µs');
  }
  add(`lists of ${LIST_LIMIT}/s (${LIST_CLIENTS} clients)`, (x) => x.lists.rate, 0, '/s');
  add('  list p99', (x) => x.lists.p99, 1, 'ms');
  if (a?.wrkLists !== undefined || others.some(([, x]) => x.wrkLists !== undefined)) {
    add(`lists of ${LIST_LIMIT}/s, wrk -c${LIST_CLIENTS} for ${WRK_SECONDS} s`, (x) => x.wrkLists?.rate ?? NaN, 0, '/s');
    add('  wrk list p99', (x) => x.wrkLists?.p99 ?? NaN, 1, 'ms');
    add(`server CPU per list (wrk)`, (x) => (x.wrkLists !== undefined ? (x.cpu['wrk lists']! * 1e3) / x.wrkLists.requests : NaN), 2, 'ms');
  }
  add('deletecollection of the wrk namespace, events/s', (x) => x.deletes.events / x.deletes.seconds, 0, '/s');
  add(`get events -A (Table), p50`, (x) => x.table.p50, 0, 'ms');
  add(`  get events -A p99`, (x) => x.table.p99, 0, 'ms');
  add(`watch delivery p50 (${WATCHERS} watchers, ${WATCH_RATE}/s)`, (x) => x.watch.p50, 1, 'ms');
  add('  watch delivery p99', (x) => x.watch.p99, 1, 'ms');
  add('server CPU per create', (x) => (x.cpu.creates! * 1e6) / x.creates.done, 0, 'µs');
  // The Node clients share the machine's cores with the server: server and clients together can keep at most
  // os.availableParallelism() cores busy, which caps the rate at cores ÷ (server + clients' CPU per create).
  add('  the clients\' CPU per create', (x) => (x.clientCpu.creates! * 1e6) / x.creates.done, 0, 'µs');
  add('  cores busy, server and clients', (x) => ((x.cpu.creates! + x.clientCpu.creates!) * x.creates.rate) / x.creates.done, 2, `of ${availableParallelism()}`);
  add('  the clients\' CPU per create, warmed', (x) => (x.clientCpu['creates, warmed']! * 1e6) / x.warmCreates.done, 0, 'µs');
  add('  cores busy, warmed', (x) => ((x.cpu['creates, warmed']! + x.clientCpu['creates, warmed']!) * x.warmCreates.rate) / x.warmCreates.done, 2, `of ${availableParallelism()}`);
  add('server CPU per list', (x) => (x.cpu.lists! * 1e3) / x.lists.done, 2, 'ms');
  add('server CPU per get events -A', (x) => (x.cpu.table! * 1e3) / TABLE_ROUNDS, 0, 'ms');
  add('RSS at start', (x) => x.rss.start!, 0, 'MiB');
  add('RSS peak (creates, lists, table, watch)', (x) => Math.max(...['creates', 'lists', 'table', 'watch'].map((p) => x.rss[p] ?? 0)), 0, 'MiB');
  const walkRows = (label: string, w: (x: Figures) => Walks | undefined): void => {
    if (w(a!) === undefined && others.every(([, x]) => w(x) === undefined)) return;
    const sorted = (x: Figures): number[] => [...(w(x)?.times ?? [])].sort((p, q) => p - q);
    add(`${label} p50`, (x) => pct(sorted(x), 50), 0, 'ms');
    add(`  ${label} p99`, (x) => pct(sorted(x), 99), 0, 'ms');
    add(`  server CPU per listing`, (x) => w(x)?.cpuMs ?? NaN, 0, 'ms');
    if ((w(a!)?.restartMs.length ?? 0) > 0) add(`  restart until ready, p50`, (x) => pct([...(w(x)?.restartMs ?? [])].sort((p, q) => p - q), 50), 0, 'ms');
  };
  if (a !== undefined) {
    walkRows(`get events -A (Table, ${TABLE_EVENTS}) after a restart, ${COLD_ROUNDS} restarts,`, (x) => x.cold);
    walkRows(`get events -A over ${BIG_EVENTS}, warm`, (x) => x.big?.warm);
    walkRows(`get events -A over ${BIG_EVENTS}, after a restart`, (x) => x.big?.cold);
  }
  const print = (table: string[][]): void => {
    const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
    for (const r of table) console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '));
  };
  console.log(`vs kube-apiserver (${new Date().toISOString()}, node ${process.version})`);
  print(rows);
  // The list shapes: one row each, with each server's p50/p99, rate and CPU per request, and the rate's ratio.
  const names = [...new Set([...all.values()].flatMap((x) => x.shapes.map((r) => r.name)))];
  if (names.length > 0) {
    const shapeRows: string[][] = [['shape (limit ' + LIST_LIMIT + ', ' + LIST_CLIENTS + ' clients, ' + SHAPE_SECONDS + ' s)', 'items', ...[...all.keys()].flatMap((n) => [`${n} p50/p99 ms`, 'rate', 'CPU/req']), ...others.map(([n]) => `${n} ÷`)]];
    for (const name of names) {
      const of = (x: Figures): ShapeResult | undefined => x.shapes.find((r) => r.name === name);
      const first = [...all.values()].map(of).find((r) => r !== undefined);
      shapeRows.push([
        name,
        String(first?.items ?? '-'),
        ...[...all.values()].flatMap((x) => {
          const r = of(x);
          return r === undefined ? ['-', '-', '-'] : [`${fmt(r.p50, 1)}/${fmt(r.p99, 1)}`, `${fmt(r.rate)}/s`, `${fmt(r.cpuMs, 2)} ms`];
        }),
        ...others.map(([, x]) => ratio(of(x)?.rate, a !== undefined ? of(a)?.rate : undefined)),
      ]);
    }
    console.log('');
    print(shapeRows);
  }
  for (const [name, x] of all) {
    console.log(
      `${name}: errors creates ${x.creates.errors}, warmed ${x.warmCreates.errors}${x.wrk !== undefined ? `, wrk ${x.wrk.errors}` : ''}${x.wrk2 !== undefined ? `, wrk -t2 ${x.wrk2.errors}` : ''}${x.wrkLists !== undefined ? `, wrk lists ${x.wrkLists.errors}` : ''}${x.creates.firstError ? ` (${x.creates.firstError})` : ''}, lists ${x.lists.errors}${x.lists.firstError ? ` (${x.lists.firstError})` : ''}; ` +
        `deletecollection ${x.deletes.events} events in ${x.deletes.seconds.toFixed(1)} s; table rows ${x.table.rows}${x.cold !== undefined ? `, after restarts ${x.cold.rows} (${x.cold.times.map((t) => t.toFixed(0)).join(', ')} ms)` : ''}${x.big !== undefined ? `, big ${x.big.rows}` : ''}; shape errors ${x.shapes.reduce((n, r) => n + r.errors, 0)}; watch: ${x.watch.open} open, ${x.watch.delivered} of ${x.watch.expected} frames delivered`,
    );
  }
}

/** bigStore streams a store of RSS_EVENTS events through kevents serve, as JSON and as Table pages, and reports its memory. */
async function bigStore(extra: string[]): Promise<void> {
  const dir = benchDir('rss');
  const store = new SqliteEventStore({ path: join(dir, 'events.db') });
  const t = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  for (let i = 0; i < RSS_EVENTS; i += 2000) {
    const writes: Promise<unknown>[] = [];
    for (let j = i; j < Math.min(RSS_EVENTS, i + 2000); j++) {
      const ns = `ns-${j % NAMESPACES}`;
      const e = JSON.parse(eventBody(j, ns)) as CoreEvent;
      e.metadata.uid = `u-${j}`;
      e.metadata.creationTimestamp = t;
      writes.push(store.create(e));
    }
    await Promise.all(writes);
  }
  await store.close();
  const s = await startKevents(extra, dir);
  try {
    const agent = agentFor(s, 1);
    const start = rssMiB(s.pids()[0]!);
    let peak = start;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(s.pids()[0]!))), 200);
    const t0 = performance.now();
    const json = await listPages(agent, s, '/api/v1/events', 500, undefined);
    const t1 = performance.now();
    const table = await listPages(agent, s, '/api/v1/events', 500, KUBECTL_TABLE);
    const t2 = performance.now();
    clearInterval(sampler);
    agent.destroy();
    console.log(
      `kevents serve over ${RSS_EVENTS} stored events: RSS ${start.toFixed(0)} MiB at start, peak ${peak.toFixed(0)} MiB while reading ` +
        `${json} events as JSON pages of 500 (${((t1 - t0) / 1000).toFixed(1)} s) and ${table} as Table pages (${((t2 - t1) / 1000).toFixed(1)} s)`,
    );
  } finally {
    await s.stop();
  }
}

async function main(): Promise<void> {
  const all = new Map<string, Figures>();
  const extra = (process.env.BENCH_KEVENTS_FLAGS ?? '').split(' ').filter((f) => f !== '');
  for (const name of TARGETS) {
    process.stderr.write(`${name}: starting\n`);
    // A target "kevents <flags>" runs this build with those flags too (e.g. "kevents --workers 2").
    const own = name.startsWith('kevents') && name !== 'kevents before' ? name.split(' ').slice(1) : [];
    const s =
      name === 'kube-apiserver'
        ? await startApiserver()
        : await startKevents([...extra, ...own], undefined, name === 'kevents before' ? BASELINE_CLI : undefined, name);
    try {
      all.set(name, await measure(s));
    } finally {
      await s.stop();
    }
  }
  report(all);
  if (RSS_EVENTS > 0) await bigStore(extra);
}

await main();
process.exit(0);
