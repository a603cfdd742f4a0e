/**
 * Fleet benchmark: N sources mirrored into one PostgreSQL archive.
 *
 * For each N in BENCH_SOURCES (default 1,3,5): N `kevents serve` sources (in
 * memory), each taking BENCH_RATE (default 100) creates/s for BENCH_SECONDS
 * (default 30), and N `kevents mirror` processes (one per source, each under
 * its own `--cluster`) into one fresh schema of the PostgreSQL on
 * 127.0.0.1:55432. It reports, per N:
 *
 *   - archived events/s in total: the events archived, over the span from the
 *     first write to the last archive commit;
 *   - the lag from the source's acknowledged write to the archive: each event
 *     carries its send time (an annotation), each archived version its
 *     occurrence's observed time, stamped by the mirror as its batch's
 *     transaction begins (p50, p99, max);
 *   - PostgreSQL CPU: user + system time of the backends serving the mirrors
 *     (found by their application_name in pg_stat_activity), from /proc, per
 *     second of the run and per 1,000 events. The server's background
 *     processes (WAL writer, checkpointer) are shared with whatever else the
 *     server runs, and are not counted.
 *
 * The baseline is N = 1 in the same run: the target is that at 5 sources the
 * total ingest is at least 80% of 5x one source's, with a p99 lag under 2 s.
 *
 * Run: npm run build && node --import tsx bench/fleet.ts
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { kubeletEvent, sleep, startCli, stopCli } from './support/cli.js';

const POSTGRES_URL = process.env.KEVENTS_BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:55432/test';
const RATE = Number(process.env.BENCH_RATE ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const SIZES = (process.env.BENCH_SOURCES ?? '1,3,5').split(',').map(Number);
/** DRAIN_MS bounds the wait for the archive to catch up after the writers stop. */
const DRAIN_MS = 120_000;
const SENT = 'bench.kevents.io/sent-ms';
const TICKS = 100; // USER_HZ on Linux

const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });

/** Source is one `kevents serve` and its writer. */
interface Source {
  url: string;
  stop(): Promise<void>;
}

/** write POSTs RATE creates/s to one source for SECONDS, each stamped with its send time; it resolves with the number acknowledged. */
async function write(base: string, offset: number): Promise<{ sent: number; failed: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  let sent = 0;
  let failed = 0;
  const post = (i: number): Promise<void> => {
    const ev = kubeletEvent(offset + i, Date.now()) as { metadata: { namespace: string; annotations?: Record<string, string> } };
    ev.metadata.annotations = { [SENT]: String(Date.now()) };
    return new Promise((resolve) => {
      const req = http.request(`${base}/api/v1/namespaces/${ev.metadata.namespace}/events`, { method: 'POST', agent, headers: { 'Content-Type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 201) sent++;
          else failed++;
          resolve();
        });
      });
      req.on('error', () => {
        failed++;
        resolve();
      });
      req.end(JSON.stringify(ev));
    });
  };
  const t0 = Date.now();
  const inflight = new Set<Promise<void>>();
  let i = 0;
  while (Date.now() - t0 < SECONDS * 1000) {
    const due = Math.floor(((Date.now() - t0) / 1000) * RATE);
    while (i < due && inflight.size < 64) {
      const p: Promise<void> = post(i++).then(() => void inflight.delete(p));
      inflight.add(p);
    }
    await sleep(5);
  }
  await Promise.all(inflight);
  agent.destroy();
  return { sent, failed };
}

/** cpuSeconds is the user + system time of processes, from /proc (a process gone since counts 0). */
function cpuSeconds(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The backend ended: its time is lost, which undercounts.
    }
  }
  return ticks / TICKS;
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

interface Result {
  n: number;
  sent: number;
  archived: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  pgCpuPerSecond: number;
  pgCpuPer1000: number;
}

async function run(n: number): Promise<Result> {
  const schema = `kevents_bench_fleet_${process.pid}_${n}`;
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  const app = `kevents-bench-fleet-${process.pid}-${n}`;
  const sources: Source[] = [];
  const mirrors: Awaited<ReturnType<typeof startCli>>[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const s = await startCli(['serve', '--listen', '127.0.0.1:0', '--storage', 'memory:', '--event-ttl', '1h', '--log-level', 'warn'], /listening on (http:\/\/\S+)/);
      sources.push({ url: s.url, stop: () => stopCli(s.child) });
    }
    for (let i = 0; i < n; i++) {
      const to = `${POSTGRES_URL}?schema=${schema}&application_name=${app}`;
      mirrors.push(await startCli(['mirror', '--source', sources[i]!.url, '--to', to, '--cluster', `source-${i}`, '--listen', '127.0.0.1:0', '--log-level', 'warn'], /readiness on (http:\/\/\S+)/));
    }
    const backends = async (): Promise<number[]> => (await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [app])).rows.map((r) => r.pid);
    const seen = new Set(await backends());
    const cpu0 = cpuSeconds([...seen]);
    const started = Date.now();
    const poll = setInterval(() => {
      void backends().then((pids) => {
        for (const p of pids) seen.add(p);
      });
    }, 1000);
    const writes = await Promise.all(sources.map((s, i) => write(s.url, i * 10_000_000)));
    const sent = writes.reduce((a, w) => a + w.sent, 0);
    const count = async (): Promise<number> => Number((await admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.occurrences`)).rows[0]!.n);
    const deadline = Date.now() + DRAIN_MS;
    while ((await count()) < sent && Date.now() < deadline) await sleep(250);
    clearInterval(poll);
    // Backends that ended before the last poll are not counted (the pools keep theirs open).
    const cpu = cpuSeconds([...seen]) - cpu0;
    const elapsed = (Date.now() - started) / 1000;
    const { rows } = await admin.query<{ observed_us: string; sent_ms: string }>(
      `SELECT o.observed_us, (v.object::json->'metadata'->'annotations'->>'${SENT}') AS sent_ms FROM ${schema}.occurrences o JOIN ${schema}.versions v ON v.rv = o.id`,
    );
    const lags = rows.map((r) => Number(r.observed_us) / 1000 - Number(r.sent_ms)).sort((a, b) => a - b);
    const first = Math.min(...rows.map((r) => Number(r.sent_ms)));
    const last = Math.max(...rows.map((r) => Number(r.observed_us) / 1000));
    return {
      n,
      sent,
      archived: rows.length,
      perSecond: rows.length / ((last - first) / 1000),
      p50: quantile(lags, 0.5),
      p99: quantile(lags, 0.99),
      max: lags.at(-1) ?? NaN,
      pgCpuPerSecond: cpu / elapsed,
      pgCpuPer1000: (cpu / rows.length) * 1000,
    };
  } finally {
    for (const m of mirrors) await stopCli(m.child);
    for (const s of sources) await s.stop();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  }
}

console.log(`fleet: N sources x ${RATE} creates/s for ${SECONDS} s, N mirrors into one PostgreSQL archive`);
const results: Result[] = [];
for (const n of SIZES) {
  const r = await run(n);
  results.push(r);
  console.log(
    `N=${n}: ${r.archived}/${r.sent} archived, ${r.perSecond.toFixed(0)} events/s, lag p50 ${r.p50.toFixed(0)} ms p99 ${r.p99.toFixed(0)} ms max ${r.max.toFixed(0)} ms, ` +
      `PostgreSQL CPU ${r.pgCpuPerSecond.toFixed(2)} s/s (${r.pgCpuPer1000.toFixed(2)} s per 1,000 events)`,
  );
}
const one = results.find((r) => r.n === 1);
for (const r of results) {
  if (one === undefined || r.n === 1) continue;
  console.log(`N=${r.n}: ${((100 * r.perSecond) / (r.n * one.perSecond)).toFixed(0)}% of ${r.n}x one source's ingest; p99 lag ${r.p99 < 2000 ? 'under' : 'over'} 2 s`);
}
await admin.end();
