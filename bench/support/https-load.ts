/**
 * What bench/vs-kube-apiserver.ts sends to a server over HTTPS with a bearer token: one
 * request on a keep-alive agent, and a load of `clients` loops, each timing its requests,
 * summed up as a rate and latency percentiles.
 */
import https from 'node:https';

/** Answer is one response: status and body. */
export interface Answer {
  status: number;
  body: Buffer;
}

/** HttpsTarget is a server and the credentials every request carries. */
export interface HttpsTarget {
  url: string;
  token: string;
  ca: Buffer;
}

/** agentFor is a keep-alive agent trusting the target's CA, with `sockets` connections at most. */
export function agentFor(target: HttpsTarget, sockets: number): https.Agent {
  return new https.Agent({ keepAlive: true, maxSockets: sockets, ca: target.ca });
}

/** send makes one request and reads the whole answer. */
export function send(agent: https.Agent, target: HttpsTarget, method: string, path: string, options: { body?: string; accept?: string } = {}): Promise<Answer> {
  const headers: Record<string, string | number> = { Authorization: `Bearer ${target.token}`, Accept: options.accept ?? 'application/json' };
  if (options.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = Buffer.byteLength(options.body);
  }
  return new Promise((resolve, reject) => {
    const req = https.request(new URL(path, target.url), { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** pct is the p-th percentile of sorted values. */
export function pct(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** LoadResult is a load's rate (successful operations per second) and latencies in ms. */
export interface LoadResult {
  done: number;
  rate: number;
  p50: number;
  p99: number;
  errors: number;
  /** firstError is the first failure's text, to say why. */
  firstError?: string;
}

/**
 * runLoad runs `clients` loops of `op` until `more()` says stop; each op returns
 * how many operations it did (0: it failed) and is timed per operation.
 */
export async function runLoad(clients: number, more: () => boolean, op: (record: (ms: number) => void) => Promise<void>): Promise<LoadResult> {
  const lat: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (more()) {
        try {
          await op((ms) => lat.push(ms));
        } catch (e) {
          errors++;
          firstError ??= e instanceof Error ? e.message : String(e);
        }
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  return { done: lat.length, rate: lat.length / seconds, p50: pct(lat, 50), p99: pct(lat, 99), errors, ...(firstError !== undefined ? { firstError } : {}) };
}
