import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The real sink servers the export tests and benches deliver to: Kafka (KRaft,
 * the broker's jars from Maven Central), NATS with JetStream (Debian's
 * nats-server), VictoriaLogs (built from its Go module; it speaks Loki's push
 * API, and Loki itself is AGPL-licensed) and OpenSearch (a single node from its
 * Maven Central modules). `scripts/sinks.mjs` sets
 * them up; each server here runs from a fresh data directory on free loopback
 * ports and can be stopped and started again on them.
 */

const SINKS_SCRIPT = fileURLToPath(new URL('../../scripts/sinks.mjs', import.meta.url));

/** SinkPaths are what `scripts/sinks.mjs --json` prints. */
export interface SinkPaths {
  /** kafka.nodePath: the folder holding @confluentinc/kafka-javascript (for NODE_PATH), where it could be built. */
  kafka?: { version: string; classpath: string; java: string; nodePath?: string };
  victorialogs?: { version: string; bin: string };
  nats?: { version: string; bin: string };
  opensearch?: { version: string; classpath: string; java: string; main: string };
}

/** sinkPaths runs `scripts/sinks.mjs` for the servers asked (set-up is idempotent); a server it cannot set up is absent. */
export function sinkPaths(only: (keyof SinkPaths)[]): SinkPaths {
  const r = spawnSync(process.execPath, [SINKS_SCRIPT, '--json', '--only', only.join(',')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    return JSON.parse(r.stdout) as SinkPaths;
  } catch {
    return {};
  }
}

/** freePort asks the kernel for a free loopback port. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function waitForPort(port: number, child: ChildProcess, what: string, output: () => string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${what} exited: ${output().slice(-2000)}`);
    const open = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`${what} did not listen on ${port}: ${output().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const running = new Set<ChildProcess>();
/** dirs are the data directories of the servers, removed when the test process exits. */
export const dirs = new Set<string>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** SinkServer is one running sink server. */
export interface SinkServer {
  /** address is what a client connects to (host:port, or a URL for HTTP servers). */
  address: string;
  /** dir is the server's data directory (a bench measures its size). */
  dir: string;
  /** down stops the server (SIGKILL: a crash), keeping its data; up starts it again on the same ports. */
  down(): Promise<void>;
  up(): Promise<void>;
  stop(): Promise<void>;
  output(): string;
}

/**
 * serverProcess runs a server started by `start`, ready once `readyPort` takes connections, that
 * can be killed (down) and started again on the same ports (up), its data in `dir`.
 */
export function serverProcess(what: string, start: () => ChildProcess, readyPort: number, address: string, dir: string): Promise<SinkServer> {
  let child: ChildProcess | undefined;
  let out = '';
  const launch = async (): Promise<void> => {
    const c = start();
    child = c;
    running.add(c);
    c.stdout?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
    c.stderr?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
    c.once('exit', () => running.delete(c));
    await waitForPort(readyPort, c, what, () => out);
  };
  const kill = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (c === undefined || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  };
  return launch().then(() => ({
    address,
    dir,
    down: kill,
    up: launch,
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
      dirs.delete(dir);
    },
    output: () => out,
  }));
}

/** startKafka runs a single-node KRaft broker (broker and controller in one process). */
export async function startKafka(paths: NonNullable<SinkPaths['kafka']>): Promise<SinkServer> {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-kafka-'));
  dirs.add(dir);
  const port = await freePort();
  const controller = await freePort();
  const props = join(dir, 'server.properties');
  writeFileSync(
    props,
    [
      'process.roles=broker,controller',
      'node.id=1',
      `controller.quorum.voters=1@127.0.0.1:${controller}`,
      `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controller}`,
      `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
      'controller.listener.names=CONTROLLER',
      'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
      'inter.broker.listener.name=PLAINTEXT',
      `log.dirs=${join(dir, 'data')}`,
      'num.partitions=3',
      'offsets.topic.replication.factor=1',
      'transaction.state.log.replication.factor=1',
      'transaction.state.log.min.isr=1',
      'group.initial.rebalance.delay.ms=0',
      'auto.create.topics.enable=true',
      '',
    ].join('\n'),
  );
  const log4j = join(dir, 'log4j.properties');
  writeFileSync(log4j, 'log4j.rootLogger=WARN, stderr\nlog4j.appender.stderr=org.apache.log4j.ConsoleAppender\nlog4j.appender.stderr.Target=System.err\nlog4j.appender.stderr.layout=org.apache.log4j.PatternLayout\nlog4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n\n');
  const jvm = ['-Xms256m', '-Xmx512m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', `-Dlog4j.configuration=file:${log4j}`, '-cp', paths.classpath];
  const format = spawnSync(paths.java, [...jvm, 'kafka.tools.StorageTool', 'format', '-t', randomUUID().replace(/-/g, '').slice(0, 22), '-c', props], { encoding: 'utf8' });
  if (format.status !== 0) throw new Error(`kafka storage format: ${format.stderr}${format.stdout}`);
  return serverProcess('kafka', () => spawn(paths.java, [...jvm, 'kafka.Kafka', props], { stdio: ['ignore', 'pipe', 'pipe'] }), port, `127.0.0.1:${port}`, dir);
}

/** startNats runs nats-server with JetStream, its store in a fresh directory; `args` adds options (`--user`, `--auth`). */
export async function startNats(paths: NonNullable<SinkPaths['nats']>, args: string[] = []): Promise<SinkServer> {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-nats-'));
  dirs.add(dir);
  const port = await freePort();
  return serverProcess('nats', () => spawn(paths.bin, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }), port, `127.0.0.1:${port}`, dir);
}

/**
 * startVictoriaLogs runs a single-node VictoriaLogs, its data in a fresh
 * directory, flushing to disk each second (the shortest interval it allows).
 * It acknowledges a push before it is on disk: a SIGKILL loses what it took in
 * its last few seconds, so a test that wants to keep everything waits that
 * long before `down()`.
 */
export async function startVictoriaLogs(paths: NonNullable<SinkPaths['victorialogs']>): Promise<SinkServer> {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-victorialogs-'));
  dirs.add(dir);
  const port = await freePort();
  const args = [
    `-httpListenAddr=127.0.0.1:${port}`,
    `-storageDataPath=${join(dir, 'data')}`,
    '-inmemoryDataFlushInterval=1s',
    '-retentionPeriod=100y',
    '-loggerLevel=WARN',
    '-http.shutdownDelay=0s',
  ];
  const server = await serverProcess('victorialogs', () => spawn(paths.bin, args, { stdio: ['ignore', 'pipe', 'pipe'] }), port, `http://127.0.0.1:${port}`, dir);
  const ready = async (): Promise<void> => {
    const deadline = Date.now() + 60_000;
    while (!(await fetch(`${server.address}/insert/loki/ready`).then((r) => r.ok, () => false))) {
      if (Date.now() > deadline) throw new Error(`victorialogs did not get ready: ${server.output().slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  await ready();
  return {
    ...server,
    async up() {
      await server.up();
      await ready();
    },
  };
}

/** startOpenSearch runs a single OpenSearch node (discovery.type single-node, no security plugin), its data in a fresh directory. */
export async function startOpenSearch(paths: NonNullable<SinkPaths['opensearch']>, options: { jvm?: string[] } = {}): Promise<SinkServer> {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-opensearch-'));
  dirs.add(dir);
  mkdirSync(join(dir, 'config'), { recursive: true });
  const port = await freePort();
  const transport = await freePort();
  // Tests want a quick start (C1 only, a small heap); a bench passes its own options.
  const jvm = [...(options.jvm ?? ['-Xms512m', '-Xmx512m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1']), '-Djava.awt.headless=true', '-cp', paths.classpath];
  const server = await serverProcess(
    'opensearch',
    () => spawn(paths.java, [...jvm, paths.main, dir, String(port), String(transport)], { stdio: ['ignore', 'pipe', 'pipe'] }),
    port,
    `http://127.0.0.1:${port}`,
    dir,
  );
  const up = (): Promise<void> => server.up();
  const ready = async (): Promise<void> => {
    // The port opens before the node recovered its indices: wait for a yellow (or green) cluster.
    const deadline = Date.now() + 90_000;
    for (;;) {
      const ok = await fetch(`${server.address}/_cluster/health?wait_for_status=yellow&timeout=5s`).then((r) => r.ok, () => false);
      if (ok) return;
      if (Date.now() > deadline) throw new Error(`opensearch did not get ready: ${server.output().slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  };
  await ready();
  return {
    ...server,
    async up() {
      await up();
      await ready();
    },
  };
}
