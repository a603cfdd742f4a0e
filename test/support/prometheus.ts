import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findPeers } from './control-plane.js';
import { freePorts } from './ports.js';
import { until } from './wait.js';

/**
 * The real Prometheus and Alertmanager the metrics and alerting tests run against, built by
 * scripts/peers.mjs from their Go modules, on loopback ports with short intervals (1 s scrapes
 * and rule evaluations) so that a test waits seconds, not minutes.
 */

/** PeerProcess is a running Prometheus or Alertmanager that a test can kill and start again on the same port and data. */
export interface PeerProcess {
  url: string;
  port: number;
  dir: string;
  /** output is what it printed (the last 200 kB). */
  output(): string;
  /** kill ends it with SIGKILL (its data stays); start brings it back on the same port. */
  kill(): Promise<void>;
  start(): Promise<void>;
  /** stop ends it and removes its folder. */
  stop(): Promise<void>;
}

function peerBinary(name: 'prometheus' | 'alertmanager'): string {
  const path = findPeers()[name];
  if (path === undefined) throw new Error(`the ${name} peer is missing from KEVENTS_PEERS: run "npm run --silent peers -- --json --only ${name}"`);
  return path;
}

async function peerProcess(name: 'prometheus' | 'alertmanager', dir: string, port: number, args: string[]): Promise<PeerProcess> {
  const url = `http://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let out = '';
  const start = async (): Promise<void> => {
    const c = spawn(peerBinary(name), args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (d: Buffer): void => {
      out = (out + d.toString()).slice(-200_000);
    };
    c.stdout.on('data', keep);
    c.stderr.on('data', keep);
    exited = new Promise((resolve) => c.once('exit', () => resolve()));
    child = c;
    await until(
      `${name} answers /-/ready`,
      async () => {
        if (c.exitCode !== null) throw new Error(`${name} exited with ${c.exitCode}: ${out}`);
        return (await fetch(`${url}/-/ready`).catch(() => undefined))?.ok === true;
      },
      60_000,
      100,
    );
  };
  const kill = async (): Promise<void> => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    url,
    port,
    dir,
    output: () => out,
    kill,
    start,
    async stop() {
      if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** AlertmanagerConfig is what the test Alertmanager does: notify one webhook, grouped as asked. */
export interface AlertmanagerConfig {
  webhookUrl: string;
  groupBy: string[];
  /** groupWaitSeconds is how long a new group collects alerts before its first notification. */
  groupWaitSeconds?: number;
}

/** startAlertmanager runs Alertmanager alone (no cluster) with one webhook receiver that is also told of resolutions. */
export async function startAlertmanager(o: AlertmanagerConfig): Promise<PeerProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-alertmanager-'));
  const [port] = await freePorts(1);
  writeFileSync(
    join(dir, 'alertmanager.yml'),
    [
      'route:',
      '  receiver: hook',
      `  group_by: [${o.groupBy.join(', ')}]`,
      `  group_wait: ${o.groupWaitSeconds ?? 1}s`,
      '  group_interval: 1s',
      '  repeat_interval: 1h',
      'receivers:',
      '  - name: hook',
      '    webhook_configs:',
      `      - url: ${o.webhookUrl}`,
      '        send_resolved: true',
      '',
    ].join('\n'),
  );
  return peerProcess('alertmanager', dir, port!, [
    `--config.file=${join(dir, 'alertmanager.yml')}`,
    `--storage.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    '--cluster.listen-address=',
    '--log.level=warn',
  ]);
}

/** PrometheusConfig names what the test Prometheus scrapes, its rules (YAML of rule groups) and its Alertmanager. */
export interface PrometheusConfig {
  targets: string[];
  rules?: string;
  alertmanager?: string;
}

/** startPrometheus runs Prometheus scraping `targets` every second and evaluating its rules every second. */
export async function startPrometheus(o: PrometheusConfig): Promise<PeerProcess & { query(promql: string, time?: number): Promise<PromSample[]> }> {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-prometheus-'));
  const [port] = await freePorts(1);
  const lines = ['global:', '  scrape_interval: 1s', '  scrape_timeout: 1s', '  evaluation_interval: 1s'];
  if (o.rules !== undefined) {
    writeFileSync(join(dir, 'rules.yml'), o.rules);
    lines.push('rule_files: [rules.yml]');
  }
  if (o.alertmanager !== undefined) lines.push('alerting:', '  alertmanagers:', `    - static_configs: [{targets: ['${new URL(o.alertmanager).host}']}]`);
  lines.push('scrape_configs:', '  - job_name: kevents', `    static_configs: [{targets: [${o.targets.map((t) => `'${t}'`).join(', ')}]}]`, '');
  writeFileSync(join(dir, 'prometheus.yml'), lines.join('\n'));
  const p = await peerProcess('prometheus', dir, port!, [
    `--config.file=${join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    '--log.level=warn',
  ]);
  return {
    ...p,
    async query(promql, time) {
      const q = new URLSearchParams({ query: promql });
      if (time !== undefined) q.set('time', String(time / 1000));
      const res = await fetch(`${p.url}/api/v1/query?${q.toString()}`);
      const body = (await res.json()) as { status: string; error?: string; data?: { result: { metric: Record<string, string>; value: [number, string] }[] } };
      if (body.status !== 'success') throw new Error(`query ${promql}: ${body.error ?? res.status}`);
      return (body.data?.result ?? []).map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
  };
}

/** PromSample is one element of an instant vector. */
export interface PromSample {
  metric: Record<string, string>;
  value: number;
}
