/**
 * What the benches that load `kevents serve` over HTTPS share with one another:
 * a server under test (its address, token and processes), `kevents serve` over
 * SQLite (or, with BENCH_STORAGE=postgres://…, PostgreSQL: a fresh schema per
 * server) with TLS and a token file as the control plane has them, the events
 * the load creates, and the CPU time of a set of processes.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { childrenOf } from '../../test/support/processes.js';
import { benchDir, startCli, stopCli } from './cli.js';
import { kubeletFields } from './events.js';
import type { HttpsTarget } from './https-load.js';

/** Server is one server under test: where it is, and the processes whose memory and CPU count. */
export interface Server extends HttpsTarget {
  name: string;
  pids: () => number[];
  /** dbCpuSeconds is the CPU time of the PostgreSQL backends serving the server's connections (BENCH_STORAGE), so far. */
  dbCpuSeconds?: () => Promise<number>;
  /** prepare makes the namespaces the load writes into (kube-apiserver refuses events in a namespace that does not exist). */
  prepare: (namespaces: string[]) => Promise<void>;
  /**
   * restart stops the server and starts it again over the same data (its code not compiled; its caches empty,
   * but for what it fills before it is ready); `url` and `pids` may change.
   */
  restart: () => Promise<void>;
  stop: () => Promise<void>;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** STORAGE is BENCH_STORAGE, a PostgreSQL URL the servers store in (each in a schema of its own), or undefined for SQLite. */
const STORAGE = process.env.BENCH_STORAGE;
let schemas = 0;

/**
 * postgresStorage is a fresh schema's `--storage` URL, named by an application_name that finds its backends in
 * pg_stat_activity, and what reads those backends' CPU time (each connection is a process of its own on this machine;
 * a backend that ends counts up to its last reading).
 */
function postgresStorage(url: string): { storage: string; cpuSeconds: () => Promise<number> } {
  const name = `kevents_bench_${process.pid}_${++schemas}`;
  const storage = `${url}${url.includes('?') ? '&' : '?'}schema=${name}&application_name=${name}`;
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  // A backend the pool closes takes its CPU time with it: each keeps the last time read, so the sum never goes back.
  const seen = new Map<number, number>();
  const cpuSeconds = async (): Promise<number> => {
    const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [name]);
    for (const r of rows) {
      try {
        seen.set(r.pid, statSeconds(`/proc/${r.pid}/stat`));
      } catch {
        // A backend that ended between the query and the read.
      }
    }
    return [...seen.values()].reduce((a, b) => a + b, 0);
  };
  return { storage, cpuSeconds };
}

/** serverCertificate writes a CA and a server certificate for 127.0.0.1 signed by it (RSA 2048, as the control plane's) into `dir`. */
function serverCertificate(dir: string): void {
  openssl(dir, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=bench-ca']);
  writeFileSync(join(dir, 'tls.ext'), 'subjectAltName=IP:127.0.0.1\n');
  openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'tls.key', '-out', 'tls.csr', '-subj', '/CN=kevents']);
  openssl(dir, ['x509', '-req', '-in', 'tls.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'tls.crt', '-days', '1', '-extfile', 'tls.ext']);
}

/**
 * BARE_HTTPS is the baseline of a create: node:https with the same certificate, reading each body, parsing it and
 * writing it back as the 201 answer, keep-alive as `kevents serve` (no routing, checks, storage or metrics).
 */
const BARE_HTTPS = `
const https = require('node:https');
const { readFileSync } = require('node:fs');
https.createServer({ cert: readFileSync(process.argv[2]), key: readFileSync(process.argv[3]), keepAliveTimeout: 65000 }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const text = JSON.stringify(JSON.parse(Buffer.concat(chunks).toString()));
    res.writeHead(201, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  });
}).listen(0, '127.0.0.1', function () { console.log('listening on https://127.0.0.1:' + this.address().port); });
`;

/** startBareHttps runs BARE_HTTPS, the ceiling a create's rate is read as a share of (it answers creates only). */
export async function startBareHttps(dir = benchDir('bare')): Promise<Server> {
  serverCertificate(dir);
  const script = join(dir, 'bare.cjs');
  writeFileSync(script, BARE_HTTPS);
  const srv = await startCli([join(dir, 'tls.crt'), join(dir, 'tls.key')], /listening on (\S+)/, [], script);
  return {
    name: 'bare node:https',
    url: srv.url,
    token: 'unused',
    ca: readFileSync(join(dir, 'ca.crt')),
    pids: () => [srv.child.pid!],
    prepare: async () => {},
    restart: () => Promise.reject(new Error('the bare server is not restarted')),
    stop: () => stopCli(srv.child),
  };
}

/** startKevents runs `kevents serve` over SQLite (or BENCH_STORAGE) with TLS (an RSA 2048 certificate, as the control plane's) and a token file. */
export async function startKevents(extraFlags: string[], dir = benchDir('vs'), cli?: string, name = cli === undefined ? 'kevents' : 'kevents before'): Promise<Server> {
  serverCertificate(dir);
  const token = 'bench-writer-token-0123456789abcdef';
  writeFileSync(join(dir, 'tokens.csv'), `${token},bench,bench-uid,"kevents:writers"\n`);
  const db = STORAGE === undefined ? undefined : postgresStorage(STORAGE);
  const args = [
    'serve', '--listen', '127.0.0.1:0', '--storage', db?.storage ?? `sqlite:${join(dir, 'events.db')}`, '--log-level', 'error',
    '--tls-cert-file', join(dir, 'tls.crt'), '--tls-private-key-file', join(dir, 'tls.key'), '--token-auth-file', join(dir, 'tokens.csv'),
    ...extraFlags,
  ];
  const nodeArgs = (process.env.BENCH_KEVENTS_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  let srv = await startCli(args, /listening on (\S+)/, nodeArgs, cli);
  // With --workers the worker processes do the serving: their CPU and memory count too.
  let pids = [srv.child.pid!, ...childrenOf(srv.child.pid!)];
  const server: Server = {
    name,
    url: srv.url,
    token,
    ca: readFileSync(join(dir, 'ca.crt')),
    pids: () => pids,
    ...(db !== undefined ? { dbCpuSeconds: db.cpuSeconds } : {}),
    prepare: async () => {},
    restart: async () => {
      await stopCli(srv.child);
      srv = await startCli(args, /listening on (\S+)/, nodeArgs, cli);
      pids = [srv.child.pid!, ...childrenOf(srv.child.pid!)];
      server.url = srv.url;
    },
    stop: () => stopCli(srv.child),
  };
  return server;
}

export function eventBody(i: number, namespace: string, message?: string): string {
  const t = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const pod = `web-${(i * 7919) % 5000}-7d9f8b6c4-x2v9k`;
  const fields = kubeletFields(i, t);
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${pod}.${(0x17a2b3c4d5e6f7an + BigInt(i)).toString(16)}`, namespace },
    involvedObject: { kind: 'Pod', namespace, name: pod, uid: `7c3a${String(i % 5000).padStart(8, '0')}-1111-4222-8333-444455556666`, apiVersion: 'v1', fieldPath: 'spec.containers{app}' },
    ...fields,
    ...(message !== undefined ? { message } : {}),
  });
}

/**
 * statSeconds is the CPU time (user and system) in a /proc stat file (`/proc/PID/stat`,
 * `/proc/PID/task/TID/stat`), with `children` that of the children that have ended too.
 */
export function statSeconds(path: string, children = false): number {
  const f = readFileSync(path, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0)) / 100;
}

/** cpuSeconds is the CPU time (user and system) the processes have used so far. */
export function cpuSeconds(pids: number[]): number {
  return pids.reduce((sum, pid) => sum + statSeconds(`/proc/${pid}/stat`), 0);
}
