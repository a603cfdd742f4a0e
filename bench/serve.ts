/**
 * bench/serve.ts measures `kevents serve` against the targets of its issue, each
 * as a ratio to a baseline measured in the same run:
 *   creates/s from 64 keep-alive clients (SQLite store) vs a bare node:http server,
 *   driven by a Node client and, when Debian's wrk is installed, by wrk as well,
 *   a filtered list page out of many stored events (page 1 vs a deep page),
 *   memory while streaming every stored event, watch delivery latency to many
 *   watchers, time to ready,
 *   and the cost of an authenticated create (a bearer token from --token-auth-file) vs the
 *   same server without authentication, over HTTP and over HTTPS.
 * Run: npx tsx bench/serve.ts [--events 1000000] [--seconds 10] [--watchers 1000] [--only auth] [--rounds 3]
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequestGate, createTokenFileAuthenticator, groupAuthorizer } from '../src/auth/index.js';
import { noopLogger } from '../src/internal/index.js';
import { SqliteEventStore } from '../src/storage/sqlite/index.js';
import { hasWrk, runWrk } from './support/wrk.js';
import { watchBench } from './watch.js';

const CLI = fileURLToPath(new URL('../dist/bin/kevents.js', import.meta.url));
const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const EVENTS = Number(args.get('events') ?? 1_000_000);
const SECONDS = Number(args.get('seconds') ?? 10);
const WATCHERS = Number(args.get('watchers') ?? 1000);
const ROUNDS = Number(args.get('rounds') ?? 3);
const CONCURRENCY = 64;
const FILTERED_PLACES = 200;

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function startProcess(argv: string[], ready: RegExp): Promise<{ child: ChildProcess; url: string; startedAt: number }> {
  const startedAt = performance.now();
  const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = ready.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (c) => reject(new Error(`exited ${c}: ${out}`)));
  });
  return { child, url, startedAt };
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((r) => {
    child.once('exit', () => r());
    child.kill('SIGTERM');
  });
}

const BARE = `
const http = require('node:http');
http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const obj = JSON.parse(body.toString());
    const text = JSON.stringify(obj);
    res.writeHead(201, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  });
}).listen(0, '127.0.0.1', function () { console.log('listening on http://127.0.0.1:' + this.address().port); });
`;

let seq = 0;

function eventBody(i: number, ns = 'bench'): string {
  const t = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `pod-${i % 5000}.${i.toString(16)}-${process.pid}`, namespace: ns },
    involvedObject: { kind: 'Pod', namespace: ns, name: `pod-${i % 5000}`, apiVersion: 'v1' },
    reason: 'BackOff',
    message: `Back-off restarting failed container app in pod pod-${i % 5000}`,
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: t,
    lastTimestamp: t,
    count: 1,
    type: 'Warning',
  });
}

async function loadCreates(
  url: string,
  seconds: number,
  path: string,
  options: { token?: string; ca?: Buffer } = {},
): Promise<{ rate: number; p50: number; p99: number; errors: number }> {
  const secure = url.startsWith('https:');
  const agent = secure ? new https.Agent({ keepAlive: true, maxSockets: CONCURRENCY, ...(options.ca !== undefined ? { ca: options.ca } : {}) }) : new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const transport = secure ? https : http;
  const auth: Record<string, string> = options.token !== undefined ? { Authorization: `Bearer ${options.token}` } : {};
  const target = new URL(path, url);
  const lat: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  const one = (): Promise<void> =>
    new Promise((resolve) => {
      const body = eventBody(seq++);
      const t0 = performance.now();
      const req = transport.request(target, { method: 'POST', agent, headers: { ...auth, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 201) lat.push(performance.now() - t0);
          else errors++;
          resolve();
        });
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(body);
    });
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < end) await one();
  }));
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  lat.sort((a, b) => a - b);
  return { rate: lat.length / elapsed, p50: pct(lat, 50), p99: pct(lat, 99), errors };
}

function statusOf(url: string): Promise<number> {
  return new Promise((resolve) => {
    http.get(url, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', () => resolve(0));
  });
}

async function getJson(url: string): Promise<{ ms: number; json: any }> {
  const t0 = performance.now();
  const res = await fetch(url);
  const json = await res.json();
  return { ms: performance.now() - t0, json };
}

async function fill(path: string, n: number): Promise<void> {
  const store = new SqliteEventStore({ path, synchronous: 'NORMAL' });
  await store.ready();
  const t = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const batch = 2000;
  const started = performance.now();
  for (let i = 0; i < n; i += batch) {
    const writes: Promise<unknown>[] = [];
    for (let j = i; j < Math.min(n, i + batch); j++) {
      const ns = `ns-${j % 10}`;
      writes.push(store.create({
        apiVersion: 'v1', kind: 'Event',
        metadata: { name: `obj-${j % 20000}.${j.toString(16).padStart(8, '0')}`, namespace: ns, uid: `u-${j}`, creationTimestamp: t },
        involvedObject: { kind: 'Pod', namespace: ns, name: `obj-${j % 20000}`, apiVersion: 'v1' },
        reason: j % 7 === 0 ? 'FailedScheduling' : 'Pulled', message: `message ${j}`, source: { component: 'kubelet' },
        firstTimestamp: t, lastTimestamp: t, count: 1, type: j % 7 === 0 ? 'Warning' : 'Normal',
      }));
    }
    await Promise.all(writes);
    if ((i / batch) % 50 === 0) process.stderr.write(`  filled ${i + batch}/${n} (${Math.round((i + batch) / ((performance.now() - started) / 1000))}/s)\r`);
  }
  process.stderr.write('\n');
  await store.close();
}

function cpuSecondsOf(pid: number): number {
  // utime + stime of the process, from /proc (Linux), in clock ticks of 1/100 s.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssOf(pid: number): number {
  // Resident memory of the server process, from /proc (Linux).
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /VmRSS:\s+(\d+) kB/.exec(status);
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/**
 * authBench measures what authentication adds to a create: `kevents serve` with
 * and without `--token-auth-file` (each create carries a bearer token the gate
 * looks up and authorizes by group), over HTTP and over HTTPS, the two variants
 * alternating twice so that drift on a shared machine falls on both.
 */
async function authBench(dir: string, push: (...r: [string, string, string][]) => number): Promise<void> {
  const tokens = join(dir, 'tokens.csv');
  const lines = Array.from({ length: 1000 }, (_, i) => `token-${i}-${'x'.repeat(32)},user-${i},uid-${i},"kevents:${i % 2 === 0 ? 'writers' : 'readers'}"`);
  writeFileSync(tokens, `${lines.join('\n')}\n`);
  const token = `token-998-${'x'.repeat(32)}`;
  const ca = join(dir, 'ca.key');
  const run = (a: string[]): void => void execFileSync('openssl', a, { stdio: 'ignore' });
  run(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', ca, '-out', join(dir, 'ca.crt'), '-days', '1', '-subj', '/CN=bench-ca']);
  run(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', join(dir, 'tls.key'), '-out', join(dir, 'tls.csr'), '-subj', '/CN=kevents']);
  writeFileSync(join(dir, 'tls.ext'), 'subjectAltName=IP:127.0.0.1\n');
  run(['x509', '-req', '-in', join(dir, 'tls.csr'), '-CA', join(dir, 'ca.crt'), '-CAkey', ca, '-CAcreateserial', '-out', join(dir, 'tls.crt'), '-days', '1', '-extfile', join(dir, 'tls.ext')]);
  const caPem = readFileSync(join(dir, 'ca.crt'));
  const useWrk = hasWrk();
  const tls = ['--tls-cert-file', join(dir, 'tls.crt'), '--tls-private-key-file', join(dir, 'tls.key')];
  const path = '/api/v1/namespaces/bench/events';
  // The server's CPU time per create is the cost: unlike the rate, it hardly moves when other
  // processes take the cores for a while.
  const measure = async (name: string, flags: string[], withToken: boolean): Promise<{ rate: number; cpuUs: number; errors: number }> => {
    const srv = await startProcess([CLI, 'serve', '--listen', '127.0.0.1:0', '--storage', `sqlite:${join(dir, `auth-${name}.db`)}`, '--log-level', 'error', ...flags], /listening on (\S+)/);
    try {
      const options = { ...(withToken ? { token } : {}), ca: caPem };
      await loadCreates(srv.url, 2, path, options);
      const cpu0 = cpuSecondsOf(srv.child.pid!);
      const t0 = performance.now();
      let r: { rate: number; errors: number };
      let requests: number;
      if (useWrk) {
        const w = await runWrk(`${srv.url}${path}`, { seconds: SECONDS, connections: CONCURRENCY, ...(withToken ? { token } : {}) });
        r = w;
        requests = w.requests;
      } else {
        r = await loadCreates(srv.url, SECONDS, path, options);
        requests = r.rate * ((performance.now() - t0) / 1000);
      }
      return { rate: r.rate, cpuUs: ((cpuSecondsOf(srv.child.pid!) - cpu0) * 1e6) / requests, errors: r.errors };
    } finally {
      await stop(srv.child);
    }
  };
  const client = useWrk ? 'wrk -c64' : '64 keep-alive Node clients';
  for (const [scheme, extra] of [['HTTP', []], ['HTTPS', tls]] as const) {
    const plain: number[] = [];
    const authed: number[] = [];
    const plainCpu: number[] = [];
    const authedCpu: number[] = [];
    let errors = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const a = await measure(`${scheme}-plain-${round}`, [...extra], false);
      const b = await measure(`${scheme}-token-${round}`, [...extra, '--token-auth-file', tokens], true);
      plain.push(a.rate);
      authed.push(b.rate);
      plainCpu.push(a.cpuUs);
      authedCpu.push(b.cpuUs);
      errors += a.errors + b.errors;
    }
    const median = (xs: number[]): number => {
      const s = [...xs].sort((x, y) => x - y);
      return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
    };
    const p = median(plain);
    const t = median(authed);
    const pc = median(plainCpu);
    const tc = median(authedCpu);
    const us = (xs: number[]): string => xs.map((x) => x.toFixed(0)).join(', ');
    push([`creates over ${scheme}, ${client}, no authentication`, `${pc.toFixed(0)} µs CPU`, `server CPU per create, median of ${us(plainCpu)}; ${p.toFixed(0)} creates/s (median of ${us(plain)})`]);
    if (scheme === 'HTTP') {
      // The gate alone, in this process: what a token adds to a create, without the noise of two servers.
      const file = createTokenFileAuthenticator({ path: tokens, logger: noopLogger });
      const gate = createRequestGate({ authenticators: [file], authorizers: [groupAuthorizer], logger: noopLogger });
      const req = { method: 'POST', url: path, headers: { authorization: `Bearer ${token}` } } as unknown as http.IncomingMessage;
      const n = 200_000;
      const admit = (): void => {
        if (gate.admit(req) !== undefined) throw new Error('the bench token was refused (or not at once)');
      };
      for (let i = 0; i < 20_000; i++) admit();
      const g0 = process.cpuUsage();
      for (let i = 0; i < n; i++) admit();
      const g = process.cpuUsage(g0);
      file.close();
      const gateUs = (g.user + g.system) / n;
      push(['authentication and authorization of one create (the gate, in-process)', `${gateUs.toFixed(2)} µs CPU`, `${((100 * gateUs) / pc).toFixed(2)}% of a create's server CPU without authentication`]);
    }
    push([
      `creates over ${scheme}, ${client}, bearer token (1,000-token file)`,
      `${tc.toFixed(0)} µs CPU`,
      `median of ${us(authedCpu)}: ${tc >= pc ? '+' : ''}${((tc / pc - 1) * 100).toFixed(1)}% per create over no authentication; ${t.toFixed(0)} creates/s (median of ${us(authed)}); errors ${errors}`,
    ]);
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-bench-'));
  const rows: [string, string, string][] = [];
  const push = rows.push.bind(rows);
  rows.push = (...r: [string, string, string][]): number => {
    for (const [a, b, c] of r) process.stderr.write(`  ${a}: ${b} (${c})\n`);
    return push(...r);
  };
  try {
    if (args.get('only') === 'auth') {
      await authBench(dir, rows.push);
      return;
    }
    // 1. Creates: bare node:http baseline, then kevents serve on SQLite.
    const bare = await startProcess(['-e', BARE], /listening on (\S+)/);
    await loadCreates(bare.url, 2, '/'); // warm-up
    const base = await loadCreates(bare.url, SECONDS, '/');
    // The same load from wrk, a C load generator: on 2 cores a Node client takes CPU the server needs.
    const useWrk = hasWrk();
    if (!useWrk) process.stderr.write('  wrk not found (apt-get install wrk): creates are measured with the Node client only\n');
    const wrkBase = useWrk ? await runWrk(bare.url + '/', { seconds: SECONDS, connections: CONCURRENCY }) : undefined;
    await stop(bare.child);
    // The watch fan-out below opens every watcher from 127.0.0.1: the per-address cap (a sixteenth) is lifted to the whole cap.
    const srv = await startProcess([CLI, 'serve', '--listen', '127.0.0.1:0', '--storage', `sqlite:${join(dir, 'creates.db')}`, '--log-level', 'error', '--max-connections-per-address', '4096'], /listening on (\S+)/);
    await loadCreates(srv.url, 2, '/api/v1/namespaces/bench/events');
    const kev = await loadCreates(srv.url, SECONDS, '/api/v1/namespaces/bench/events');
    const wrkKev = useWrk ? await runWrk(`${srv.url}/api/v1/namespaces/bench/events`, { seconds: SECONDS, connections: CONCURRENCY }) : undefined;
    rows.push(['creates/s, 64 keep-alive clients (bare node:http)', base.rate.toFixed(0), `p50 ${base.p50.toFixed(1)} ms, p99 ${base.p99.toFixed(1)} ms`]);
    rows.push(['creates/s, 64 keep-alive clients (kevents serve, SQLite)', kev.rate.toFixed(0), `p50 ${kev.p50.toFixed(1)} ms, p99 ${kev.p99.toFixed(1)} ms, errors ${kev.errors}, ${((100 * kev.rate) / base.rate).toFixed(0)}% of bare`]);
    if (wrkBase !== undefined && wrkKev !== undefined) {
      rows.push(['creates/s, wrk -c64 (bare node:http)', wrkBase.rate.toFixed(0), `p50 ${wrkBase.p50.toFixed(1)} ms, p99 ${wrkBase.p99.toFixed(1)} ms`]);
      rows.push(['creates/s, wrk -c64 (kevents serve, SQLite)', wrkKev.rate.toFixed(0), `p50 ${wrkKev.p50.toFixed(1)} ms, p99 ${wrkKev.p99.toFixed(1)} ms, errors ${wrkKev.errors}, ${((100 * wrkKev.rate) / wrkBase.rate).toFixed(0)}% of bare`]);
    }

    // 2. Watch delivery to many watchers on the same server.
    const w = await watchBench(srv.url, WATCHERS, 200, SECONDS);
    rows.push([`watch delivery, ${WATCHERS} watchers x 200 events/s`, `p99 ${w.p99.toFixed(1)} ms`, `p50 ${w.p50.toFixed(1)} ms, delivered ${w.delivered}/${w.expected}`]);
    await stop(srv.child);

    // 3. Ready time on an empty store.
    const empty = join(dir, 'empty.db');
    const r0 = performance.now();
    const readySrv = await startProcess([CLI, 'serve', '--listen', '127.0.0.1:0', '--storage', `sqlite:${empty}`, '--log-level', 'error'], /listening on (\S+)/);
    // node:http, already loaded here: a first fetch() would load undici inside the timed span.
    while ((await statusOf(`${readySrv.url}/readyz`)) !== 200);
    const readyMs = performance.now() - r0;
    await stop(readySrv.child);
    const n0 = performance.now();
    const nodeOnly = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => nodeOnly.once('exit', r));
    const nodeMs = performance.now() - n0;
    rows.push(['ready after start (empty SQLite store)', `${readyMs.toFixed(0)} ms`, `a bare "node -e 0" takes ${nodeMs.toFixed(0)} ms`]);

    // 4. Lists over many stored events.
    const big = join(dir, 'big.db');
    process.stderr.write(`filling ${EVENTS} events...\n`);
    await fill(big, EVENTS);
    const listSrv = await startProcess([CLI, 'serve', '--listen', '127.0.0.1:0', '--storage', `sqlite:${big}`, '--event-ttl', '0', '--log-level', 'error'], /listening on (\S+)/);
    const rssIdle = rssOf(listSrv.child.pid!);
    const times = async (path: string, n = 50): Promise<number[]> => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await getJson(listSrv.url + path)).ms);
      return out.sort((a, b) => a - b);
    };
    // The first request after start reads a cold cache and compiles the list path: reported on its own.
    const cold = (await getJson(`${listSrv.url}/api/v1/events?limit=500&fieldSelector=reason%3DFailedScheduling`)).ms;
    for (let i = 0; i < 3; i++) await getJson(`${listSrv.url}/api/v1/events?limit=500&fieldSelector=type%3DNormal`);
    const head = await getJson(`${listSrv.url}/api/v1/namespaces/ns-3/events?limit=1`);
    const rv = Number(head.json.metadata.resourceVersion);
    const tokenAt = (start: string): string => Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start })).toString('base64url');
    // Filtered pages from 200 different places in the keyspace, so no sample rereads the page before it
    // (and a p99 is not simply the slowest of a few samples).
    const filtered: number[] = [];
    for (let i = 0; i < FILTERED_PLACES; i++) {
      const start = `ns-${i % 10}/obj-${(i * 7919) % 20000}\u0000`;
      filtered.push((await getJson(`${listSrv.url}/api/v1/events?limit=500&fieldSelector=reason%3DFailedScheduling&continue=${tokenAt(start)}`)).ms);
    }
    filtered.sort((a, b) => a - b);
    const first = await times('/api/v1/namespaces/ns-3/events?limit=500');
    const deepTimes = await times(`/api/v1/events?limit=500&continue=${tokenAt(`ns-8/obj-9000\u0000`)}`);
    rows.push([`filtered list page of 500 (fieldSelector reason) of ${EVENTS}, ${FILTERED_PLACES} places`, `p99 ${pct(filtered, 99).toFixed(1)} ms`, `p50 ${pct(filtered, 50).toFixed(1)} ms; the first request after start (cold) ${cold.toFixed(1)} ms`]);
    rows.push(['list page 1 of a namespace (500)', `p99 ${pct(first, 99).toFixed(1)} ms`, `p50 ${pct(first, 50).toFixed(1)} ms`]);
    rows.push([`list page deep in the keyspace (~page ${Math.round((EVENTS * 0.85) / 500)})`, `p99 ${pct(deepTimes, 99).toFixed(1)} ms`, `p50 ${pct(deepTimes, 50).toFixed(1)} ms`]);
    // Stream every event page by page and watch the server's resident memory.
    let token: string | undefined;
    let count = 0;
    // Memory before the stream: after start (idle) and after the lists above (warm: the list path compiled, caches filled).
    const rssWarm = rssOf(listSrv.child.pid!);
    let peak = rssWarm;
    const s0 = performance.now();
    do {
      const page = await getJson(`${listSrv.url}/api/v1/events?limit=500${token ? `&continue=${token}` : ''}`);
      count += page.json.items.length;
      token = page.json.metadata.continue;
      peak = Math.max(peak, rssOf(listSrv.child.pid!));
    } while (token);
    const streamS = (performance.now() - s0) / 1000;
    rows.push([`stream all ${count} events in pages of 500`, `${streamS.toFixed(1)} s`, `server RSS peak ${peak.toFixed(0)} MB: +${(peak - rssWarm).toFixed(0)} MB over ${rssWarm.toFixed(0)} MB before the stream, +${(peak - rssIdle).toFixed(0)} MB over ${rssIdle.toFixed(0)} MB just after start`]);
    await stop(listSrv.child);

    // 5. What authentication adds to a create.
    await authBench(dir, rows.push);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    const w1 = Math.max(...rows.map((r) => r[0].length));
    const w2 = Math.max(...rows.map((r) => r[1].length));
    console.log(`kevents serve bench (${new Date().toISOString()}, node ${process.version}, ${SECONDS}s runs)`);
    for (const [a, b, c] of rows) console.log(`${a.padEnd(w1)}  ${b.padStart(w2)}  ${c}`);
  }
}

await main();
