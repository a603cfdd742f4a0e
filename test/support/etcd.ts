import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from './ports.js';

/** ETCD_BINARY is the etcd server the tests run (Debian's etcd-server package); ETCD_BIN overrides it. */
export const ETCD_BINARY = process.env.ETCD_BIN ?? '/usr/bin/etcd';

/**
 * TIMING makes elections fast on loopback and brings etcd's least lease TTL
 * (1.5 election timeouts, rounded up to whole seconds) down to one second.
 */
const TIMING = ['--heartbeat-interval', '50', '--election-timeout', '500'];
const READY_TIMEOUT_MS = 20_000;

/** EtcdMember is one etcd server process of a test cluster. */
export interface EtcdMember {
  name: string;
  /** endpoint is the member's client URL, e.g. http://127.0.0.1:41234. */
  endpoint: string;
  peerUrl: string;
  /** running is false once the member was killed or stopped. */
  readonly running: boolean;
  /** kill stops the member with a signal (SIGKILL by default: a crash) and waits for it to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** restart starts a stopped member again on its ports and data, and waits until it is healthy. */
  restart(): Promise<void>;
  /** stderr is what the member logged. */
  stderr(): string;
}

/** EtcdCluster is a running test cluster of one or three members on loopback ports. */
export interface EtcdCluster {
  members: EtcdMember[];
  /** endpoints are the client URLs of every member. */
  endpoints: string[];
  /** stop ends every member still running and removes the data directories. */
  stop(): Promise<void>;
}

/** StartEtcdOptions shape a test cluster. */
export interface StartEtcdOptions {
  /** members: 1 (default) or 3. */
  members?: 1 | 3;
  /** dataRoot is where the data directories go; the system temp dir by default. */
  dataRoot?: string;
  /** extraArgs are appended to every member's arguments (a bench passes `--unsafe-no-fsync`). */
  extraArgs?: string[];
}

const running = new Set<ChildProcess>();
const dataDirs = new Set<string>();
process.once('exit', () => {
  // A test run that ends abruptly must not leave etcd servers or their data behind.
  for (const child of running) child.kill('SIGKILL');
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

function healthy(endpoint: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = get(`${endpoint}/health`, { timeout: 1_000 }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve(/"health":\s*"true"/.test(body)));
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
  });
}

function launch(name: string, dir: string, endpoint: string, peerUrl: string, initialCluster: string, extraArgs: string[]): EtcdMember {
  const args = [
    '--name', name,
    '--data-dir', join(dir, name),
    '--listen-client-urls', endpoint,
    '--advertise-client-urls', endpoint,
    '--listen-peer-urls', peerUrl,
    '--initial-advertise-peer-urls', peerUrl,
    '--initial-cluster', initialCluster,
    '--initial-cluster-state', 'new',
    '--initial-cluster-token', `kevents-test-${process.pid}`,
    '--logger', 'zap',
    '--log-outputs', 'stderr',
    '--log-level', 'error',
    ...TIMING,
    ...extraArgs,
  ];
  let err = '';
  let alive = false;
  let exited: Promise<void> = Promise.resolve();
  let child: ChildProcess | undefined;
  const spawnMember = (): void => {
    const c = spawn(ETCD_BINARY, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child = c;
    running.add(c);
    alive = true;
    c.stderr.on('data', (d: Buffer) => {
      if (err.length < 100_000) err += d.toString();
    });
    exited = new Promise<void>((resolve) =>
      c.once('exit', () => {
        alive = false;
        running.delete(c);
        resolve();
      }),
    );
  };
  spawnMember();
  return {
    name,
    endpoint,
    peerUrl,
    get running() {
      return alive;
    },
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (alive) child?.kill(signal);
      await exited;
    },
    async restart() {
      if (alive) throw new Error(`etcd member ${name} is still running`);
      spawnMember();
      const deadline = Date.now() + READY_TIMEOUT_MS;
      while (!(await healthy(endpoint))) {
        if (!alive) throw new Error(`etcd member ${name} exited during restart: ${err}`);
        if (Date.now() > deadline) throw new Error(`etcd member ${name} did not become healthy again: ${err}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stderr: () => err,
  };
}

async function startOnce(n: number, dataRoot: string, extraArgs: string[]): Promise<EtcdCluster> {
  const ports = await freePorts(2 * n);
  const dir = mkdtempSync(join(dataRoot, 'kevents-etcd-'));
  dataDirs.add(dir);
  const names = Array.from({ length: n }, (_, i) => `m${i}`);
  const peers = names.map((_, i) => `http://127.0.0.1:${ports[2 * i + 1]}`);
  const initialCluster = names.map((name, i) => `${name}=${peers[i]}`).join(',');
  const members = names.map((name, i) => launch(name, dir, `http://127.0.0.1:${ports[2 * i]}`, peers[i]!, initialCluster, extraArgs));
  const cluster: EtcdCluster = {
    members,
    endpoints: members.map((m) => m.endpoint),
    async stop() {
      await Promise.all(members.map((m) => m.kill('SIGTERM')));
      rmSync(dir, { recursive: true, force: true });
      dataDirs.delete(dir);
    },
  };
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const dead = members.find((m) => !m.running);
    if (dead !== undefined) {
      await cluster.stop();
      throw new Error(`etcd member ${dead.name} exited during start: ${dead.stderr()}`);
    }
    const health = await Promise.all(members.map((m) => healthy(m.endpoint)));
    if (health.every(Boolean)) return cluster;
    if (Date.now() > deadline) {
      await cluster.stop();
      throw new Error(`etcd did not become healthy within ${READY_TIMEOUT_MS} ms: ${members.map((m) => m.stderr()).join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * startEtcd runs a fresh etcd cluster (one member, or three) listening on free
 * 127.0.0.1 ports with its data in a new temporary directory, and resolves once
 * every member reports healthy (the cluster has a leader). A start that loses a
 * port race to another process is retried.
 */
export async function startEtcd(options: StartEtcdOptions = {}): Promise<EtcdCluster> {
  const n = options.members ?? 1;
  const dataRoot = options.dataRoot ?? tmpdir();
  let last: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(n, dataRoot, options.extraArgs ?? []);
    } catch (e) {
      last = e;
    }
  }
  throw last instanceof Error ? last : new Error(String(last));
}
