/**
 * What the mirror benches do to their `kevents serve` source and read of the mirror: creating the
 * bench events over HTTP, and following the mirror's progress on its /metrics.
 */
import http from 'node:http';
import { kubeletEvent, sleep } from './cli.js';

// node:http with a keep-alive agent: fetch() costs the bench process several times the CPU per request,
// which on 2 cores the source and the mirror need.
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** create POSTs the i-th bench event to the source. */
export function create(base: string, i: number): Promise<void> {
  const e = kubeletEvent(i, Date.now());
  const ns = (e.metadata as { namespace: string }).namespace;
  const body = JSON.stringify(e);
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/api/v1/namespaces/${ns}/events`, { method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => (res.statusCode === 201 ? resolve() : reject(new Error(`create: ${res.statusCode} ${Buffer.concat(chunks).toString()}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** fill creates events from..from+n with 64 requests in flight, and says how many a second went. */
export async function fill(base: string, from: number, n: number): Promise<number> {
  let next = from;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < from + n) await create(base, next++);
    }),
  );
  return n / ((performance.now() - t0) / 1000);
}

/** metric reads one unlabelled metric of a kevents process. */
export async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}

/**
 * waitWritten polls the mirror until it has written `n` event versions; returns when the first and the last were seen.
 * It polls every 20 ms until the first write, then every 100 ms: a scrape of /metrics costs the mirror ~1 ms of
 * CPU (process metrics read /proc), 5% of it at 50 scrapes a second. Seeing the last write up to 100 ms late
 * only lowers the measured rate.
 */
export async function waitWritten(url: string, n: number): Promise<{ first: number; done: number }> {
  let first = 0;
  for (;;) {
    const w = await metric(url, 'kevents_mirror_events_written_total');
    if (w > 0 && first === 0) first = performance.now();
    if (w >= n) return { first, done: performance.now() };
    await sleep(first === 0 ? 20 : 100);
  }
}

