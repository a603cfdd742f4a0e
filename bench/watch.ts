/**
 * bench/watch.ts measures watch delivery of `kevents serve`: many watchers of one
 * namespace that resume from resourceVersion 1 (so each first replays the history
 * written before it), then receive a steady stream of creates; latency is the
 * time from a create being sent to its frame being read by a watcher. A second
 * figure follows one stalled watcher (it never reads) and the server's memory.
 * bench/serve.ts runs watchBench on the server it has just loaded with creates;
 * run alone, this script writes `--history` events first.
 * Run: npx tsx bench/watch.ts [--watchers 1000] [--seconds 10] [--history 60000] [--storage sqlite|memory] [--baseline other/dist/bin/kevents.js]
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { SqliteEventStore } from '../src/storage/sqlite/index.js';

const CLI = fileURLToPath(new URL('../dist/bin/kevents.js', import.meta.url));

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function tickBody(i: number, message: string): string {
  return JSON.stringify({
    metadata: { name: `w.${i}`, namespace: 'watched' },
    involvedObject: { kind: 'Pod', namespace: 'watched', name: 'w' },
    reason: 'Tick', message, type: 'Normal',
  });
}

/** SENT marks the send time in a tick's message; a watcher finds it in the raw bytes it reads. */
const SENT = Buffer.from('"message":"sent ');
const QUOTE = 0x22;
const NEWLINE = 0x0a;

/**
 * openRawWatch opens one watch on its own socket and records, for each tick it
 * reads, the time from its send to now. The watchers read raw bytes and look
 * only for the send time (no HTTP parser, no decoding of the frames): 1,000 of
 * them share the machine's two cores with the server, and a full client per
 * watcher took more CPU than the server it measured. The server writes whole
 * frames in each chunk, so a tick is never cut by chunk framing, only by TCP
 * segments, which `carry` joins.
 */
function openRawWatch(target: URL, lat: number[]): Promise<Socket | undefined> {
  return new Promise((resolve) => {
    const sock = connect(Number(target.port), target.hostname);
    let carry: Buffer | undefined;
    let started = false;
    sock.setNoDelay(true);
    sock.on('connect', () => sock.write(`GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nAccept: application/json\r\n\r\n`));
    sock.on('data', (d: Buffer) => {
      if (!started) {
        started = true;
        resolve(d.subarray(0, 12).toString('latin1') === 'HTTP/1.1 200' ? sock : undefined);
      }
      const now = performance.timeOrigin + performance.now();
      const buf = carry === undefined ? d : Buffer.concat([carry, d]);
      let pos = 0;
      for (;;) {
        const at = buf.indexOf(SENT, pos);
        if (at < 0) break;
        const end = buf.indexOf(QUOTE, at + SENT.length);
        if (end < 0) break;
        lat.push(now - Number(buf.toString('latin1', at + SENT.length, end)));
        pos = end + 1;
      }
      // Frames end in a newline: only a frame cut by a TCP segment leaves bytes to join to the next read.
      const lastNewline = buf.lastIndexOf(NEWLINE);
      const keepFrom = Math.max(pos, lastNewline + 1);
      carry = keepFrom < buf.length ? Buffer.from(buf.subarray(keepFrom)) : undefined;
    });
    sock.on('error', () => {
      if (!started) resolve(undefined);
      started = true;
    });
  });
}

/** watchBench opens `watchers` watches from resourceVersion 1 and creates `rate` events per second for `seconds`. */
export async function watchBench(url: string, watchers: number, rate: number, seconds: number): Promise<{ p50: number; p99: number; delivered: number; expected: number }> {
  const lat: number[] = [];
  const target = new URL('/api/v1/namespaces/watched/events?watch=true&resourceVersion=1', url);
  const socks = (await Promise.all(Array.from({ length: watchers }, () => openRawWatch(target, lat)))).filter((s) => s !== undefined);
  const open = socks.length;
  const writer = new http.Agent({ keepAlive: true, maxSockets: 8 });
  let sent = 0;
  let writeErrors = 0;
  const interval = 1000 / rate;
  const started = performance.now();
  while (performance.now() - started < seconds * 1000) {
    const due = started + sent * interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const i = sent++;
    const body = tickBody(i, `sent ${performance.timeOrigin + performance.now()}`);
    const req = http.request(new URL('/api/v1/namespaces/watched/events', url), { method: 'POST', agent: writer, headers: { 'Content-Type': 'application/json' } }, (res) => res.resume());
    req.on('error', () => writeErrors++);
    req.end(body);
  }
  await new Promise((r) => setTimeout(r, 2000));
  for (const sock of socks) sock.destroy();
  writer.destroy();
  lat.sort((a, b) => a - b);
  return { p50: pct(lat, 50), p99: pct(lat, 99), delivered: lat.length, expected: (sent - writeErrors) * open };
}

/** post creates one event and resolves when it is answered (or failed). */
function post(agent: http.Agent, target: URL, body: string): Promise<void> {
  return new Promise<void>((resolve) => {
    const r = http.request(target, { method: 'POST', agent, headers: { 'Content-Type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    r.on('error', () => resolve());
    r.end(body);
  });
}

function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/**
 * stalledWatcher opens one watch whose client never reads, writes large events
 * for `seconds`, and reports the server's memory and how the watch ended.
 */
export async function stalledWatcher(url: string, pid: number, seconds: number): Promise<{ rssBefore: number; rssPeak: number; rssAfter: number; ended: string; sentBytes: number }> {
  const rssBefore = rssOf(pid);
  let ended = 'still open';
  let received = '';
  let stalled: http.IncomingMessage | undefined;
  const req = http.get(new URL('/api/v1/namespaces/stalled/events?watch=true', url), (res) => {
    res.pause();
    stalled = res;
  });
  req.on('error', () => (ended = 'socket error'));
  await new Promise((r) => setTimeout(r, 200));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const message = 'x'.repeat(8000);
  let sentBytes = 0;
  let rssPeak = rssBefore;
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (performance.now() - t0 < seconds * 1000) {
      const i = next++;
      const body = JSON.stringify({
        metadata: { name: `s.${i}`, namespace: 'stalled' },
        involvedObject: { kind: 'Pod', namespace: 'stalled', name: 's' },
        reason: 'Big', message, type: 'Normal',
      });
      sentBytes += body.length;
      await post(agent, new URL('/api/v1/namespaces/stalled/events', url), body);
      if (i % 50 === 0) rssPeak = Math.max(rssPeak, rssOf(pid));
    }
  }));
  agent.destroy();
  // The stalled client now reads what was left for it, so the end of the stream can be seen.
  const rssAfter = rssOf(pid);
  stalled?.on('data', (d: Buffer) => (received = (received + d.toString()).slice(-4096)));
  stalled?.on('end', () => (ended = /"type":"ERROR".*"reason":"(\w+)"/.exec(received)?.[1] ?? 'ended without ERROR'));
  stalled?.on('close', () => {
    if (ended === 'still open') ended = 'closed';
  });
  stalled?.resume();
  for (let i = 0; i < 100 && ended === 'still open'; i++) await new Promise((r) => setTimeout(r, 100));
  req.destroy();
  return { rssBefore, rssPeak, rssAfter, ended, sentBytes };
}

function cpuSecondsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

async function startServer(cli: string, storage: string): Promise<{ child: ChildProcess; url: string }> {
  // SERVER_NODE_ARGS passes flags such as --cpu-prof to the server process.
  const nodeArgs = (process.env.SERVER_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  // Every watcher comes from 127.0.0.1: lift the per-address cap (a sixteenth) to the whole cap. A --baseline build older than that cap knows no such flag.
  const perAddress = cli === CLI ? ['--max-connections-per-address', '4096'] : [];
  const child = spawn(process.execPath, [...nodeArgs, cli, 'serve', '--listen', '127.0.0.1:0', '--storage', storage, '--log-level', 'error', ...perAddress], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (c) => reject(new Error(`exited ${c}: ${out}`)));
  });
  return { child, url };
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((r) => {
    child.once('exit', () => r());
    child.kill('SIGTERM');
  });
}

async function writeHistory(cli: string, path: string, n: number): Promise<void> {
  // The history is written by the build under test, so its SQLite schema is the one that build reads.
  const { SqliteEventStore: Store } = (await import(new URL('../storage/sqlite/index.js', pathToFileURL(cli)).href)) as { SqliteEventStore: typeof SqliteEventStore };
  const store = new Store({ path, synchronous: 'NORMAL' });
  await store.ready();
  const t = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  for (let i = 0; i < n; i += 2000) {
    const writes: Promise<unknown>[] = [];
    for (let j = i; j < Math.min(n, i + 2000); j++) {
      writes.push(store.create({
        apiVersion: 'v1', kind: 'Event',
        metadata: { name: `pod-${j % 5000}.${j.toString(16)}`, namespace: 'bench', uid: `u-${j}`, creationTimestamp: t },
        involvedObject: { kind: 'Pod', namespace: 'bench', name: `pod-${j % 5000}`, apiVersion: 'v1' },
        reason: 'BackOff', message: `Back-off restarting failed container app in pod pod-${j % 5000}`, source: { component: 'kubelet', host: 'node-1' },
        firstTimestamp: t, lastTimestamp: t, count: 1, type: 'Warning',
      }));
    }
    await Promise.all(writes);
  }
  await store.close();
}

async function postHistory(url: string, n: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < n) {
      const i = next++;
      const body = JSON.stringify({
        metadata: { name: `pod-${i % 5000}.${i.toString(16)}`, namespace: 'bench' },
        involvedObject: { kind: 'Pod', namespace: 'bench', name: `pod-${i % 5000}` },
        reason: 'BackOff', message: `Back-off restarting failed container app in pod pod-${i % 5000}`, type: 'Warning',
      });
      await post(agent, new URL('/api/v1/namespaces/bench/events', url), body);
    }
  }));
  agent.destroy();
}

async function main(): Promise<void> {
  const args = new Map<string, string>();
  for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
  const watchers = Number(args.get('watchers') ?? 1000);
  const seconds = Number(args.get('seconds') ?? 10);
  const history = Number(args.get('history') ?? 60_000);
  // --storage memory isolates delivery from the disk: on a busy machine SQLite commits can dominate.
  const memory = args.get('storage') === 'memory';
  const dir = mkdtempSync(join(tmpdir(), 'kevents-watch-bench-'));
  try {
    const runs: [string, string][] = [['', CLI]];
    // --baseline another/dist/bin/kevents.js measures a second build in the same run, first.
    const baseline = args.get('baseline');
    if (baseline !== undefined) runs.unshift([' [baseline]', baseline]);
    let srv: { child: ChildProcess; url: string } | undefined;
    for (const [label, cli] of runs) {
      if (srv !== undefined) await stop(srv.child);
      const db = join(dir, `watch${label === '' ? '' : '-base'}.db`);
      if (!memory) await writeHistory(cli, db, history);
      srv = await startServer(cli, memory ? 'memory:' : `sqlite:${db}`);
      if (memory) await postHistory(srv.url, history);
      const cpu0 = cpuSecondsOf(srv.child.pid!);
      const own0 = process.cpuUsage();
      const w = await watchBench(srv.url, watchers, 200, seconds);
      const serverCpu = cpuSecondsOf(srv.child.pid!) - cpu0;
      const own = process.cpuUsage(own0);
      console.log(
        `watch delivery${label}, ${watchers} watchers x 200 events/s (${memory ? 'memory' : 'SQLite'}, after ${history} events of history)  p99 ${w.p99.toFixed(1)} ms  ` +
          `p50 ${w.p50.toFixed(1)} ms, delivered ${w.delivered}/${w.expected}; CPU s server ${serverCpu.toFixed(1)}, clients ${((own.user + own.system) / 1e6).toFixed(1)}`,
      );
    }
    srv = srv!;
    const s = await stalledWatcher(srv.url, srv.child.pid!, seconds);
    console.log(
      `stalled watcher, ${(s.sentBytes / 1048576).toFixed(0)} MB of events written  server RSS ${s.rssBefore.toFixed(0)} MB before, peak ${s.rssPeak.toFixed(0)} MB, ${s.rssAfter.toFixed(0)} MB after; watch: ${s.ended}`,
    );
    await stop(srv.child);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
