/**
 * bench/amplification.ts measures what one large, often repeated event costs the
 * reads of `kevents serve` (issue "bounded answers"): EVENTS events whose message
 * is MESSAGE_KIB KiB, each PATCHed REPEATS times to bump its count as a kubelet
 * does, then every archive read of them (search, incidents, timeline, occurrences,
 * both event lists) alone and then four at once, while /healthz is asked every
 * 20 ms. For each read: its status, its bytes and its time; for the server: its
 * peak RSS (VmHWM) and the /healthz latencies seen while the reads ran, beside
 * /healthz on the idle server as the baseline of the same run.
 * Run: npm run build && npx tsx bench/amplification.ts [--events 6] [--message-kib 1024] [--repeats 100]
 *      [--storage sqlite] [--flags "--max-answer-bytes 8Mi"] [--cli dist/bin/kevents.js]
 */
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { benchDir, CLI as BUILT_CLI, startCli, stopCli } from './support/cli.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const CLI = args.get('cli') ?? BUILT_CLI;
const EVENTS = Number(args.get('events') ?? 6);
const MESSAGE_KIB = Number(args.get('message-kib') ?? 1024);
const REPEATS = Number(args.get('repeats') ?? 100);
const STORAGE = args.get('storage') ?? 'sqlite';
const FLAGS = (args.get('flags') ?? '').split(' ').filter((f) => f !== '');
/** DB is a SQLite file to keep the filled archive in: filled when it does not exist, read as it is when it does. */
const DB = args.get('db');
const NS = 'amp';

const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

interface Answer {
  status: number;
  bytes: number;
  ms: number;
  body: Buffer;
}

function request(base: string, method: string, path: string, body?: string, contentType = 'application/json'): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method, agent, headers: body === undefined ? {} : { 'Content-Type': contentType } }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (d: Buffer) => {
        bytes += d.length;
        // Keep only the head of a large answer: the bench must not be what runs out of memory.
        if (bytes < 4 << 20) chunks.push(d);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, ms: performance.now() - started, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /VmHWM:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) / 1024 : NaN;
}

function pct(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** healthDuring asks /healthz every 20 ms while `work` runs and returns its latencies. */
async function healthDuring(base: string, work: Promise<unknown>): Promise<number[]> {
  let done = false;
  void work.finally(() => (done = true));
  const lat: number[] = [];
  while (!done) {
    const a = await request(base, 'GET', '/healthz');
    lat.push(a.ms);
    await new Promise((r) => setTimeout(r, 20));
  }
  return lat.sort((a, b) => a - b);
}

async function fill(base: string): Promise<void> {
  await request(base, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }));
  const words = 'boom the container exited with an error while pulling the image and mounting the volume ';
  const message = words.repeat(Math.ceil((MESSAGE_KIB * 1024) / words.length)).slice(0, MESSAGE_KIB * 1024);
  const t0 = Date.now() - 3_600_000;
  for (let e = 1; e <= EVENTS; e++) {
    const ts = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `amp-${e}.boom`, namespace: NS },
      involvedObject: { kind: 'Pod', namespace: NS, name: `amp-${e}`, uid: `00000000-0000-4000-8000-00000000000${e}`, apiVersion: 'v1' },
      reason: 'BackOff',
      type: 'Warning',
      message,
      source: { component: 'kubelet', host: 'node-1' },
      firstTimestamp: ts(t0),
      lastTimestamp: ts(t0),
      count: 1,
    };
    const c = await request(base, 'POST', `/api/v1/namespaces/${NS}/events`, JSON.stringify(body));
    if (c.status !== 201) throw new Error(`create: ${c.status} ${c.body.toString().slice(0, 300)}`);
    for (let r = 1; r <= REPEATS; r++) {
      const p = await request(
        base,
        'PATCH',
        `/api/v1/namespaces/${NS}/events/amp-${e}.boom`,
        JSON.stringify({ count: r + 1, lastTimestamp: ts(t0 + r * 30_000) }),
        'application/strategic-merge-patch+json',
      );
      if (p.status !== 200) throw new Error(`patch: ${p.status} ${p.body.toString().slice(0, 300)}`);
    }
  }
}

const READS: [string, string][] = [
  ['search', `/apis/archive.kevents.io/v1alpha1/namespaces/${NS}/search?q=boom`],
  ['incidents', `/apis/archive.kevents.io/v1alpha1/incidents?since=${encodeURIComponent(new Date(Date.now() - 3 * 3_600_000).toISOString())}`],
  ['timeline', `/apis/archive.kevents.io/v1alpha1/namespaces/${NS}/timeline?for=Pod/amp-1`],
  ['occurrences', `/apis/archive.kevents.io/v1alpha1/namespaces/${NS}/occurrences`],
  ['core/v1 list', `/api/v1/namespaces/${NS}/events`],
  ['events.k8s.io list', `/apis/events.k8s.io/v1/namespaces/${NS}/events`],
];

async function main(): Promise<void> {
  const dir = benchDir('amplification');
  const filled = DB !== undefined && existsSync(DB);
  const storage = STORAGE === 'sqlite' ? `sqlite:${DB ?? join(dir, 'events.db')}` : STORAGE;
  const srv = await startCli(['serve', '--listen', '127.0.0.1:0', '--storage', storage, '--event-ttl', '0', '--log-level', 'error', ...FLAGS], /listening on (\S+)/, [], CLI);
  const base = srv.url.replace(/\/$/, '');
  const pid = srv.child.pid!;
  console.log(`kevents serve (${CLI}) on ${storage} ${FLAGS.join(' ')}`);
  const t = performance.now();
  if (!filled) await fill(base);
  console.log(`filled: ${EVENTS} events of ${MESSAGE_KIB} KiB, each patched ${REPEATS} times, in ${((performance.now() - t) / 1000).toFixed(1)} s; peak RSS ${peakRssMiB(pid).toFixed(0)} MiB`);
  const idle = await healthDuring(base, new Promise((r) => setTimeout(r, 1_000)));
  console.log(`/healthz idle: p50 ${pct(idle, 50).toFixed(1)} ms, p99 ${pct(idle, 99).toFixed(1)} ms`);
  console.log('\nread                 status        bytes      ms');
  for (const [name, path] of READS) {
    const a = await request(base, 'GET', path);
    const why = a.status >= 400 ? ` ${a.body.toString().slice(0, 160)}` : '';
    console.log(`${name.padEnd(20)} ${String(a.status).padStart(6)} ${String(a.bytes).padStart(12)} ${a.ms.toFixed(0).padStart(7)}${why}`);
  }
  console.log(`peak RSS after the reads one at a time: ${peakRssMiB(pid).toFixed(0)} MiB`);
  const four = Promise.all([0, 1, 2, 3].map(async (i) => {
    const out: string[] = [];
    for (const [name, path] of READS) {
      const a = await request(base, 'GET', path);
      out.push(`${i}:${name}=${a.status}/${a.bytes}`);
    }
    return out;
  }));
  const lat = await healthDuring(base, four);
  const answers = (await four).flat();
  const bad = answers.filter((a) => !/=200\//.test(a));
  console.log(`four at once: ${answers.length} reads, ${bad.length} not 200 ${bad.slice(0, 6).join(' ')}`);
  console.log(`/healthz meanwhile: ${lat.length} asked, p50 ${pct(lat, 50).toFixed(1)} ms, p99 ${pct(lat, 99).toFixed(1)} ms, max ${pct(lat, 100).toFixed(1)} ms`);
  console.log(`peak RSS: ${peakRssMiB(pid).toFixed(0)} MiB`);
  await stopCli(srv.child);
}

await main();
