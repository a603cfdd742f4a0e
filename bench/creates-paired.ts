/**
 * bench/creates-paired.ts measures the server CPU of a create on two or more builds of `kevents serve` (SQLite, HTTPS,
 * a bearer token, 64 keep-alive Node clients, as bench/creates.ts loads it) in short bursts taken in turn: each server is
 * started once and warmed with WARM creates, then PAIRS times each takes BURST creates, the order alternating. A build
 * that costs a few percent less is lost in creates.ts's rounds on a shared machine (a fresh server a round, each phase
 * some tens of seconds away from the other build's, the load moving between); here the bursts of the builds are seconds
 * apart, so a change of the load falls on all of them. For each build it reports the server's CPU per create (all its
 * threads, and its main thread, the one that answers) summed over its bursts, its ratio to the first build's, and the
 * median of the ratios of bursts taken side by side.
 * Builds: BENCH_BASELINE_CLI (other builds' dist/bin/kevents.js, comma-separated, each named by its tree's folder),
 * then this build. Sizes: BENCH_BURST (2,000), BENCH_PAIRS (16), BENCH_WARM (4,000), BENCH_CLIENTS (64);
 * BENCH_KEVENTS_FLAGS are more `kevents serve` flags for every build.
 * Run: npm run build && BENCH_BASELINE_CLI=<tree>/dist/bin/kevents.js npx tsx bench/creates-paired.ts
 */
import type { Agent } from 'node:https';
import { basename, resolve } from 'node:path';
import { agentFor, runLoad, send } from './support/https-load.js';
import { cpuSeconds, eventBody, startKevents, statSeconds } from './support/servers.js';
import type { Server } from './support/servers.js';

const env = (name: string, fallback: number): number => Number(process.env[`BENCH_${name}`] ?? fallback);
const BURST = env('BURST', 2_000);
const PAIRS = env('PAIRS', 16);
const WARM = env('WARM', 4_000);
const CLIENTS = env('CLIENTS', 64);
const BASELINE_CLIS = (process.env.BENCH_BASELINE_CLI ?? '').split(',').filter((c) => c !== '');
const FLAGS = (process.env.BENCH_KEVENTS_FLAGS ?? '').split(' ').filter((f) => f !== '');

/** Build is one server under test, with the CPU its counted bursts used. */
interface Build {
  name: string;
  server: Server;
  agent: Agent;
  creates: number;
  serverSeconds: number;
  mainSeconds: number;
  /** bursts are each counted burst's server CPU per create, in µs, in the order taken. */
  bursts: number[];
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

let next = 0;

/** burst sends `n` creates to one build from CLIENTS clients, and counts their CPU where `counted`. */
async function burst(b: Build, n: number, counted: boolean): Promise<void> {
  const pid = b.server.pids()[0]!;
  const main = (): number => statSeconds(`/proc/${pid}/task/${pid}/stat`);
  const server0 = cpuSeconds(b.server.pids());
  const main0 = main();
  const end = next + n;
  await runLoad(CLIENTS, () => next < end, async () => {
    const i = next++;
    const ns = `ns-${i % 20}`;
    const r = await send(b.agent, b.server, 'POST', `/api/v1/namespaces/${ns}/events`, { body: eventBody(i, ns) });
    if (r.status !== 201) throw new Error(`create: ${r.status} ${r.body.toString().slice(0, 300)}`);
  });
  if (!counted) return;
  const server = cpuSeconds(b.server.pids()) - server0;
  b.serverSeconds += server;
  b.mainSeconds += main() - main0;
  b.creates += n;
  b.bursts.push((server * 1e6) / n);
}

async function main(): Promise<void> {
  const builds: Build[] = [];
  try {
    for (const cli of [...BASELINE_CLIS, undefined]) {
      const name = cli === undefined ? 'kevents' : basename(resolve(cli, '../../..'));
      const server = await startKevents(FLAGS, undefined, cli, name);
      builds.push({ name, server, agent: agentFor(server, CLIENTS), creates: 0, serverSeconds: 0, mainSeconds: 0, bursts: [] });
    }
    for (const b of builds) await burst(b, WARM, false);
    for (let pair = 0; pair < PAIRS; pair++) {
      for (const b of pair % 2 === 0 ? builds : [...builds].reverse()) await burst(b, BURST, true);
    }
  } finally {
    for (const b of builds) {
      b.agent.destroy();
      await b.server.stop();
    }
  }
  const first = builds[0]!;
  const perCreate = (b: Build, seconds: number): number => (seconds * 1e6) / b.creates;
  console.log(`creates in paired bursts (${CLIENTS} clients, ${PAIRS} bursts of ${BURST} each after ${WARM} to warm, ${new Date().toISOString()}, node ${process.version})`);
  for (const b of builds) {
    const vs =
      b === first
        ? ''
        : `  ÷ ${first.name}: ${(perCreate(b, b.serverSeconds) / perCreate(first, first.serverSeconds)).toFixed(3)}× (main thread ${(perCreate(b, b.mainSeconds) / perCreate(first, first.mainSeconds)).toFixed(3)}×), burst by burst ${median(b.bursts.map((us, i) => us / first.bursts[i]!)).toFixed(3)}×`;
    console.log(`${b.name.padEnd(15)} server ${perCreate(b, b.serverSeconds).toFixed(1).padStart(6)} µs/create (main thread ${perCreate(b, b.mainSeconds).toFixed(1).padStart(6)})${vs}`);
  }
}

await main();
process.exit(0);
