/**
 * bench/selector-stall.ts measures how long one hostile list holds `kevents serve`'s
 * event loop: /healthz is asked every 10 ms, one request at a time, while a list with
 * a huge label selector (by default 829 KB of `!=` requirements, each true of every
 * event, so each is checked against each) runs over a few thousand stored events.
 * It reports the list's status and time and the /healthz latencies seen meanwhile,
 * beside /healthz on the idle server as the baseline of the same run; then the same
 * for a selector at the server's caps, and for a list of every event page by page.
 * Run: npx tsx bench/selector-stall.ts [--events 3000] [--selector-kb 829] [--storage memory:] [--cli dist/bin/kevents.js]
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const CLI = args.get('cli') ?? fileURLToPath(new URL('../dist/bin/kevents.js', import.meta.url));
const EVENTS = Number(args.get('events') ?? 3000);
const SELECTOR_BYTES = Number(args.get('selector-kb') ?? 829) * 1000;
const STORAGE = args.get('storage') ?? 'memory:';
/** CAPPED_BYTES and CAPPED_REQUIREMENTS are the largest selector the server takes (src/server/rest/query.ts). */
const CAPPED_BYTES = 32 * 1024;
const CAPPED_REQUIREMENTS = 256;

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

function get(base: string, path: string): Promise<{ status: number; body: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get(`${base}${path}`, { agent }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - started }));
      })
      .on('error', reject);
  });
}

function post(base: string, path: string, body: unknown): Promise<number> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(text);
  });
}

/** selector is `k0!=v0,k1!=v1,…` up to `bytes` long, or `count` requirements. */
function selector(bytes: number, count = Infinity): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes && parts.length < count; i++) {
    const p = `bench-${i}!=v${i}`;
    if (size + p.length + 1 > bytes) break;
    parts.push(p);
    size += p.length + 1;
  }
  return parts.join(',');
}

function pct(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** underLoad runs `work` while /healthz is polled back to back; returns the work's result and the latencies. */
async function underLoad<T>(base: string, work: () => Promise<T>): Promise<{ result: T; healthz: number[] }> {
  const healthz: number[] = [];
  let done = false;
  const poll = (async () => {
    while (!done) {
      healthz.push((await get(base, '/healthz')).ms);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const result = await work();
  done = true;
  await poll;
  return { result, healthz: healthz.sort((a, b) => a - b) };
}

function describeLatencies(l: number[]): string {
  return `/healthz n=${l.length} p50 ${pct(l, 50).toFixed(1)} ms, p99 ${pct(l, 99).toFixed(1)} ms, max ${(l.at(-1) ?? NaN).toFixed(1)} ms`;
}

async function main(): Promise<void> {
  const child = spawn(process.execPath, [CLI, 'serve', '--listen', '127.0.0.1:0', '--storage', STORAGE, '--event-ttl', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const base = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`kevents serve exited with ${code}`)));
  });
  try {
    for (let i = 0; i < EVENTS; i += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, EVENTS - i) }, (_, j) =>
          post(base, '/api/v1/namespaces/default/events', {
            apiVersion: 'v1',
            kind: 'Event',
            metadata: { name: `bench-${i + j}`, labels: { app: `app-${(i + j) % 10}` } },
            involvedObject: { kind: 'Pod', namespace: 'default', name: `pod-${i + j}` },
            reason: 'Bench',
            message: 'a stored event',
            type: 'Normal',
          }),
        ),
      );
    }
    console.log(`kevents serve (${CLI}) over ${STORAGE}, ${EVENTS} events`);
    const idle = await underLoad(base, () => new Promise((r) => setTimeout(r, 1000)));
    console.log(`idle:                ${describeLatencies(idle.healthz)}`);
    const huge = selector(SELECTOR_BYTES);
    // `!`, `=` and `,` need no escaping in a query: 829 KB of selector fit in the server's 1 MiB of headers.
    const hostile = await underLoad(base, () => get(base, `/api/v1/events?labelSelector=${huge}`));
    console.log(
      `${(huge.length / 1000).toFixed(0)} KB selector (${huge.split(',').length} requirements): ${hostile.result.status} in ${hostile.result.ms.toFixed(0)} ms (${hostile.result.body.slice(0, 100)}); ${describeLatencies(hostile.healthz)}`,
    );
    const capped = selector(CAPPED_BYTES, CAPPED_REQUIREMENTS);
    const atCap = await underLoad(base, () => get(base, `/api/v1/events?labelSelector=${encodeURIComponent(capped)}`));
    console.log(
      `selector at the caps (${capped.length} bytes, ${capped.split(',').length} requirements): ${atCap.result.status} in ${atCap.result.ms.toFixed(0)} ms; ${describeLatencies(atCap.healthz)}`,
    );
  } finally {
    child.kill('SIGTERM');
    agent.destroy();
  }
}

await main();
