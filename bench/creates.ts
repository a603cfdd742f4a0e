/**
 * bench/creates.ts measures `kevents serve`'s create path alone, as
 * vs-kube-apiserver.ts loads it (HTTPS, a bearer token, 64 keep-alive Node
 * clients), on fresh servers, ROUNDS times:
 *   from the start: CREATES creates into NAMESPACES namespaces on a server just started;
 *   warmed: CREATES more into one namespace;
 *   one at a time: SEQUENTIAL creates from one client, each after the answer to the one before;
 *   wrk: `wrk -c CLIENTS` creates for WRK_SECONDS (when Debian's wrk is installed);
 *   deletecollection: one DELETE of the warmed and wrk phases' namespace (every event they created).
 * For each it reports the rate, the server's CPU per create (per delete for the last) (all its threads and
 * processes, and its main thread alone) and the clients' CPU per create (this process's, or wrk's): on this
 * 2-core machine the server and its clients share the cores, so both decide the rate. For the loaded create
 * phases it also reads the search index's lag (`kevents_search_index_lag_seconds` on /metrics, before the phase
 * and LAG_SETTLE_MS after it) and reports the bucket its p99 falls in, the worst of the rounds.
 * With BENCH_BASELINE_CLI (another build's dist/bin/kevents.js) or BENCH_BASELINE_FLAGS
 * (this build with other flags) a baseline alternates with this build on fresh servers
 * in the same run and each figure gets its ratio to it. BENCH_BASELINE_CLI may name several
 * builds, comma-separated (each named by its tree's folder): this build's figures then get a
 * ratio to each, all measured in the same rounds.
 * Sizes come from BENCH_CREATES, BENCH_NAMESPACES, BENCH_CLIENTS, BENCH_ROUNDS, BENCH_SEQUENTIAL,
 * BENCH_WRK_SECONDS; BENCH_KEVENTS_FLAGS are more `kevents serve` flags for this build,
 * BENCH_BASELINE_FLAGS for the baseline; BENCH_PHASES (start,warmed,single,wrk,deletecollection) runs
 * some phases only; BENCH_KEVENTS_NODE_ARGS are node's own arguments for every kevents server
 * (`--cpu-prof --cpu-prof-dir DIR` to profile them; see bench/profile-parts.ts). BENCH_BARE=1 adds a bare
 * node:https server (same certificate, each body parsed and written back) to each round, loaded as the two loaded
 * phases load kevents, and gives each rate as a share of its rate. With BENCH_STORAGE=postgres://… the servers
 * store in PostgreSQL (a fresh schema each), and each figure adds the CPU per create of the PostgreSQL backends
 * serving them.
 * Run: npm run build && npx tsx bench/creates.ts
 */
import { basename, resolve } from 'node:path';
import { agentFor, runLoad, send } from './support/https-load.js';
import { cpuSeconds, eventBody, startBareHttps, startKevents, statSeconds } from './support/servers.js';
import type { Server } from './support/servers.js';
import { hasWrk, runWrk } from './support/wrk.js';

const env = (name: string, fallback: number): number => Number(process.env[`BENCH_${name}`] ?? fallback);
const CREATES = env('CREATES', 20_000);
const NAMESPACES = env('NAMESPACES', 20);
const CLIENTS = env('CLIENTS', 64);
const ROUNDS = env('ROUNDS', 3);
const SEQUENTIAL = env('SEQUENTIAL', 2_000);
const WRK_SECONDS = env('WRK_SECONDS', 5);
/** BASELINE_CLIS are the other builds to alternate with (BENCH_BASELINE_CLI, comma-separated). */
const BASELINE_CLIS = (process.env.BENCH_BASELINE_CLI ?? '').split(',').filter((c) => c !== '');
const flags = (name: string): string[] => (process.env[name] ?? '').split(' ').filter((f) => f !== '');
const FLAGS = flags('BENCH_KEVENTS_FLAGS');
const BASELINE_FLAGS = flags('BENCH_BASELINE_FLAGS');
const BASELINE = BASELINE_CLIS.length > 0 || process.env.BENCH_BASELINE_FLAGS !== undefined;
/** PHASES are the phases to run (BENCH_PHASES=start,warmed,single,wrk,deletecollection; all by default): a profile of the loaded creates alone, say. */
const PHASES = new Set(flags('BENCH_PHASES').flatMap((p) => p.split(',')));
const wanted = (phase: string): boolean => PHASES.size === 0 || PHASES.has(phase);
/** BARE adds a bare node:https server (`startBareHttps`) to each round, loaded as in the two loaded phases: each rate is then a share of its rate. */
const BARE = process.env.BENCH_BARE === '1';
const BARE_NAME = 'bare node:https';

/** Figure is one phase on one server: creates per second, and CPU per create of the server, of its main thread, and of the clients. */
interface Figure {
  rate: number;
  serverUs: number;
  /** mainUs is the server's main thread alone (the one that answers requests). */
  mainUs: number;
  clientUs: number;
  /** dbUs is the PostgreSQL backends' CPU (BENCH_STORAGE). */
  dbUs?: number;
  /** lagMs is the p99 of the search index's lag over the phase's versions (`kevents_search_index_lag_seconds`), where the build has it. */
  lagMs?: number;
}

/** LAG_METRIC is the build's histogram of the time each version waited for its search index entry. */
const LAG_METRIC = 'kevents_search_index_lag_seconds_bucket';
/** LAG_SETTLE_MS is how long a phase's last versions are given to be indexed (and the writer thread to tell) before the lag is read. */
const LAG_SETTLE_MS = 1_500;

/** indexLag reads the lag histogram's cumulative buckets from /metrics (empty for a build without it). */
async function indexLag(s: Server): Promise<Map<number, number>> {
  const agent = agentFor(s, 1);
  try {
    const r = await send(agent, s, 'GET', '/metrics');
    const out = new Map<number, number>();
    for (const m of r.body.toString().matchAll(new RegExp(`^${LAG_METRIC}\\{le="([^"]+)"\\} (\\d+)`, 'gm'))) out.set(m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2]));
    return out;
  } finally {
    agent.destroy();
  }
}

/** lagP99Ms is the upper bound of the bucket holding the 99th percentile of the versions indexed between two readings. */
function lagP99Ms(before: Map<number, number>, after: Map<number, number>): number | undefined {
  const total = (after.get(Infinity) ?? 0) - (before.get(Infinity) ?? 0);
  if (total <= 0) return undefined;
  for (const [le, n] of [...after].sort((a, b) => a[0] - b[0])) if (n - (before.get(le) ?? 0) >= 0.99 * total) return le * 1000;
  return undefined;
}

/** mainThreadSeconds is the CPU time of a process's main thread (its task of the same id). */
const mainThreadSeconds = (pid: number): number => statSeconds(`/proc/${pid}/task/${pid}/stat`);

/** ownCpuSeconds is this process's CPU time, with that of its children that have ended (wrk's). */
const ownCpuSeconds = (): number => statSeconds('/proc/self/stat', true);

async function phase(s: Server, done: () => number, run: () => Promise<number>, lag = false): Promise<Figure> {
  const lag0 = lag ? await indexLag(s) : undefined;
  const db0 = await s.dbCpuSeconds?.();
  const server0 = cpuSeconds(s.pids());
  const main0 = mainThreadSeconds(s.pids()[0]!);
  const client0 = ownCpuSeconds();
  const t0 = performance.now();
  const n0 = done();
  await run();
  const seconds = (performance.now() - t0) / 1000;
  const n = done() - n0;
  const per = (seconds: number): number => (seconds * 1e6) / n;
  const figure: Figure = { rate: n / seconds, serverUs: per(cpuSeconds(s.pids()) - server0), mainUs: per(mainThreadSeconds(s.pids()[0]!) - main0), clientUs: per(ownCpuSeconds() - client0) };
  if (db0 !== undefined) figure.dbUs = per((await s.dbCpuSeconds!()) - db0);
  if (lag0 !== undefined) {
    await new Promise((resolve) => setTimeout(resolve, LAG_SETTLE_MS));
    const p99 = lagP99Ms(lag0, await indexLag(s));
    if (p99 !== undefined) figure.lagMs = p99;
  }
  return figure;
}

async function measure(s: Server, bare = false): Promise<Record<string, Figure>> {
  const agent = agentFor(s, CLIENTS);
  let next = 0;
  const create = (namespace: (i: number) => string) => async (): Promise<number> => {
    const end = next + CREATES;
    await runLoad(CLIENTS, () => next < end, async (record) => {
      const i = next++;
      const ns = namespace(i);
      const t0 = performance.now();
      const r = await send(agent, s, 'POST', `/api/v1/namespaces/${ns}/events`, { body: eventBody(i, ns) });
      if (r.status !== 201) throw new Error(`create: ${r.status} ${r.body.toString().slice(0, 300)}`);
      record(performance.now() - t0);
    });
    return next;
  };
  const out: Record<string, Figure> = {};
  if (wanted('start')) out['from the start'] = await phase(s, () => next, create((i) => `ns-${i % NAMESPACES}`), !bare);
  if (wanted('warmed')) out.warmed = await phase(s, () => next, create(() => 'wrk'), !bare);
  agent.destroy();
  if (bare) return out;
  if (!wanted('single')) return measureRest(s, out);
  // One client, each create after the answer to the one before: what a write's round trip costs.
  const single = agentFor(s, 1);
  out['one at a time'] = await phase(
    s,
    () => next,
    async () => {
      for (const end = next + SEQUENTIAL; next < end; next++) {
        const r = await send(single, s, 'POST', '/api/v1/namespaces/wrk/events', { body: eventBody(next, 'wrk') });
        if (r.status !== 201) throw new Error(`create: ${r.status} ${r.body.toString().slice(0, 300)}`);
      }
      return next;
    },
  );
  single.destroy();
  return measureRest(s, out);
}

/** measureRest runs the phases after the Node clients' creates: wrk's, then the deletecollection. */
async function measureRest(s: Server, out: Record<string, Figure>): Promise<Record<string, Figure>> {
  if (hasWrk() && wanted('wrk')) {
    let requests = 0;
    out.wrk = await phase(
      s,
      () => requests,
      async () => {
        const r = await runWrk(`${s.url}/api/v1/namespaces/wrk/events`, { seconds: WRK_SECONDS, connections: CLIENTS, namespace: 'wrk', token: s.token });
        if (r.errors > 0) throw new Error(`wrk: ${r.errors} errors`);
        requests = r.requests;
        return requests;
      },
      true,
    );
  }
  if (!wanted('deletecollection')) return out;
  // Every event of the warmed and wrk phases, in one request, as a namespace's deletion has the namespace controller delete them.
  const deleter = agentFor(s, 1);
  let deleted = 0;
  out.deletecollection = await phase(
    s,
    () => deleted,
    async () => {
      const r = await send(deleter, s, 'DELETE', '/api/v1/namespaces/wrk/events');
      if (r.status !== 200) throw new Error(`deletecollection: ${r.status} ${r.body.toString().slice(0, 300)}`);
      deleted = (JSON.parse(r.body.toString()) as { items: unknown[] }).items.length;
      return deleted;
    },
  );
  deleter.destroy();
  return out;
}

/** unit is what a phase does per operation. */
const unit = (phase: string): string => (phase === 'deletecollection' ? 'delete' : 'create');

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const builds: [string, string | undefined, string[]][] = [['kevents', undefined, FLAGS]];
  // One baseline keeps its old name; several are told apart by their trees' folders (…/TREE/dist/bin/kevents.js).
  const baselines: [string, string | undefined, string[]][] =
    BASELINE_CLIS.length > 1 ? BASELINE_CLIS.map((cli) => [basename(resolve(cli, '../../..')), cli, BASELINE_FLAGS]) : BASELINE ? [['kevents before', BASELINE_CLIS[0], BASELINE_FLAGS]] : [];
  builds.unshift(...baselines);
  if (BARE) builds.unshift([BARE_NAME, undefined, []]);
  const results = new Map<string, Record<string, Figure>[]>(builds.map(([name]) => [name, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    // Alternate which build goes first, so that a change of the machine's load falls on both.
    const order = round % 2 === 1 ? builds : [...builds].reverse();
    for (const [name, cli, serveFlags] of order) {
      const s = name === BARE_NAME ? await startBareHttps() : await startKevents(serveFlags, undefined, cli, name);
      try {
        const r = await measure(s, name === BARE_NAME);
        results.get(name)!.push(r);
        process.stderr.write(
          `round ${round} ${name}: ${Object.entries(r)
            .map(([p, f]) => `${p} ${f.rate.toFixed(0)}/s (server ${f.serverUs.toFixed(0)} µs, its main thread ${f.mainUs.toFixed(0)} µs${f.dbUs !== undefined ? `, postgres ${f.dbUs.toFixed(0)} µs` : ''}, clients ${f.clientUs.toFixed(0)} µs${f.lagMs !== undefined ? `, index lag p99 ≤ ${f.lagMs} ms` : ''})`)
            .join('; ')}\n`,
        );
      } finally {
        await s.stop();
      }
    }
  }
  console.log(`creates (${CLIENTS} clients, ${CREATES} per phase, medians of ${ROUNDS} fresh servers, ${new Date().toISOString()}, node ${process.version})`);
  for (const p of Object.keys(results.get('kevents')![0]!)) {
    const bare = results.get(BARE_NAME);
    for (const [name, rs] of results) {
      if (rs[0]![p] === undefined) continue;
      const m = (k: Exclude<keyof Figure, 'lagMs' | 'dbUs'>, of = rs): number => median(of.map((r) => r[p]![k]));
      const share = bare?.[0]![p] !== undefined && name !== BARE_NAME ? `  ${((100 * m('rate')) / m('rate', bare)).toFixed(0)}% of bare` : '';
      const dbs = rs.map((r) => r[p]!.dbUs).filter((d): d is number => d !== undefined);
      const db = dbs.length > 0 ? `  postgres ${median(dbs).toFixed(0).padStart(4)} µs/${unit(p)}` : '';
      const lags = rs.map((r) => r[p]!.lagMs).filter((l): l is number => l !== undefined);
      const lag = lags.length > 0 ? `  index lag p99 ≤ ${Math.max(...lags)} ms` : '';
      const against = ([baseName]: [string, ...unknown[]]): string => {
        const base = results.get(baseName)!;
        const baseDbs = base.map((r) => r[p]!.dbUs).filter((d): d is number => d !== undefined);
        const dbVs = dbs.length > 0 && baseDbs.length > 0 ? `, postgres CPU ${(median(dbs) / median(baseDbs)).toFixed(2)}×` : '';
        const of = baselines.length > 1 ? ` ${baseName}` : '';
        return `${(m('rate') / m('rate', base)).toFixed(2)}×${of}, server CPU ${(m('serverUs') / m('serverUs', base)).toFixed(2)}×${dbVs}`;
      };
      const vs = baselines.length > 0 && name === 'kevents' ? ` (${baselines.map(against).join('; ')})` : '';
      console.log(
        `${p.padEnd(16)} ${name.padEnd(15)} ${m('rate').toFixed(0).padStart(6)}/s  server ${m('serverUs').toFixed(0).padStart(4)} µs/${unit(p)} (main thread ${m('mainUs').toFixed(0).padStart(4)})${db}  clients ${m('clientUs').toFixed(0).padStart(4)} µs/${unit(p)}${lag}${vs}${share}`,
      );
    }
  }
}

await main();
process.exit(0);
