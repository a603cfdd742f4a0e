/**
 * Event metrics benchmark, two parts, each a ratio against a baseline measured in the same run:
 *
 *   - scrape: rendering 10,000 `kevents_events_total` series (the object's name labelled) through
 *     a prom-client Registry, as /metrics does, against prom-client's own Counter holding the same
 *     10,000 label sets in a Registry of its own; rounds alternate between the two;
 *   - ingest: `kevents mirror` (the built CLI) archiving BENCH_EVENTS (default 50,000) live events
 *     of a local `kevents serve` source into a fresh SQLite archive, with `--event-metrics` and
 *     without, BENCH_ROUNDS (default 3) rounds of each, alternating; the cost is the drop in
 *     events/s of the list path, medians compared.
 *
 * Run: npm run build && node --import tsx bench/metrics.ts (BENCH_PART=scrape or ingest runs one part)
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Counter, Registry } from 'prom-client';
import type { Metric } from 'prom-client';
import { nowMicroTime, occurrenceOf } from '../src/api/index.js';
import type { CoreEvent } from '../src/api/index.js';
import { createEventMetrics } from '../src/metrics/index.js';
import type { ExportChange } from '../src/storage/index.js';
import { CLI, benchDir, kubeletEvent, startCli, stopCli } from './support/cli.js';
import { fill, waitWritten } from './support/source.js';

const SERIES = 10_000;
const SCRAPES = Number(process.env.BENCH_SCRAPES ?? 300);
const N = Number(process.env.BENCH_EVENTS ?? 50_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LABELS = ['cluster', 'namespace', 'kind', 'name', 'reason', 'type', 'reporting_controller'] as const;

function change(i: number): ExportChange {
  const namespace = `ns-${i % 50}`;
  return {
    id: i + 1,
    observedMicros: 0,
    occurrence: {
      metadata: { name: `e${i}.1`, namespace },
      event: { name: `e${i}`, namespace },
      observedTime: '2025-01-01T00:00:00.000000Z',
      lastSeen: '2025-01-01T00:00:00.000000Z',
      countBefore: 0,
      countAfter: 1 + (i % 7),
      type: i % 3 === 0 ? 'Normal' : 'Warning',
      reason: ['BackOff', 'Unhealthy', 'Pulled', 'FailedMount'][i % 4]!,
      regarding: { kind: 'Pod', namespace, name: `web-${i}-7d9f8b6c4-x2v9k` },
      reportingController: 'kubelet',
      cluster: 'east',
    },
  };
}

/** cpuSeconds is the user and system CPU time a process has used (/proc/PID/stat, in clock ticks of 10 ms). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

const median = (xs: number[]): number => quantile(xs, 0.5);

async function scrapeBench(): Promise<void> {
  const ours = new Registry();
  const metrics = createEventMetrics({ labels: LABELS, maxSeries: SERIES, idleAfterMs: 0 });
  for (const c of metrics.collectables) ours.registerMetric(c as unknown as Metric);
  const theirs = new Registry();
  const counter = new Counter({ name: 'kevents_events_total', help: 'Occurrences of events.', labelNames: LABELS, registers: [theirs] });
  for (let i = 0; i < SERIES; i++) {
    const c = change(i);
    metrics.observe(c);
    const o = c.occurrence;
    counter.inc({ cluster: o.cluster!, namespace: o.event.namespace, kind: o.regarding.kind!, name: o.regarding.name!, reason: o.reason!, type: o.type!, reporting_controller: o.reportingController! }, o.countAfter);
  }
  const a = await ours.metrics();
  const b = await theirs.metrics();
  const lines = (t: string): number => t.split('\n').filter((l) => l.startsWith('kevents_events_total{')).length;
  if (lines(a) !== SERIES || lines(b) !== SERIES) throw new Error(`series: ${lines(a)} and ${lines(b)}, not ${SERIES}`);
  const times: { ours: number[]; theirs: number[] } = { ours: [], theirs: [] };
  for (let i = 0; i < 30; i++) {
    await ours.metrics();
    await theirs.metrics();
  }
  for (let i = 0; i < SCRAPES; i++) {
    for (const [name, r] of i % 2 === 0 ? ([['ours', ours], ['theirs', theirs]] as const) : ([['theirs', theirs], ['ours', ours]] as const)) {
      const t0 = performance.now();
      await r.metrics();
      times[name].push(performance.now() - t0);
    }
  }
  console.log(`scrape of ${SERIES.toLocaleString('en')} series (${(Buffer.byteLength(a) / 1e6).toFixed(2)} MB), ${SCRAPES} scrapes each, alternating:`);
  console.table([
    { registry: 'kevents event metrics (prom-client Registry)', 'p50 ms': median(times.ours).toFixed(2), 'p99 ms': quantile(times.ours, 0.99).toFixed(2) },
    { registry: "prom-client's own Counter, same series", 'p50 ms': median(times.theirs).toFixed(2), 'p99 ms': quantile(times.theirs, 0.99).toFixed(2) },
  ]);
  console.log(`ratio kevents / prom-client: p50 ${(median(times.ours) / median(times.theirs)).toFixed(2)}, p99 ${(quantile(times.ours, 0.99) / quantile(times.theirs, 0.99)).toFixed(2)}`);
}

async function ingestBench(): Promise<void> {
  const dir = benchDir('metrics');
  const source = await startCli(['serve', '--listen', '127.0.0.1:0', '--storage', 'memory:', '--event-ttl', '0', '--log-level', 'error'], /listening on (http:\/\/\S+)/);
  const fillRate = await fill(source.url, 0, N);
  console.log(`\ningest: source filled with ${N.toLocaleString('en')} events over HTTP (${Math.round(fillRate)}/s); ${ROUNDS} cold starts of each, alternating`);
  const rates: { off: number[]; on: number[] } = { off: [], on: [] };
  const cpu: { off: number[]; on: number[] } = { off: [], on: [] };
  let run = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
      const archive = join(dir, `archive-${run++}.db`);
      const args = ['mirror', '--source', source.url, '--to', `sqlite:${archive}`, '--listen', '127.0.0.1:0', '--log-level', 'error', ...(mode === 'on' ? ['--event-metrics'] : [])];
      const mirror = await startCli(args, /readiness on (http:\/\/\S+)/);
      const t = await waitWritten(mirror.url, N);
      rates[mode].push(N / ((t.done - t.first) / 1000));
      // CPU of the mirror process (start, list, commits and, with the flag, the counting, which is done when a commit returns), per 1,000 events.
      cpu[mode].push((cpuSeconds(mirror.child.pid!) / N) * 1e6);
      if (mode === 'on') {
        // The counting is part of the cost only if it kept up: every bench event is new with count 1, so the families sum to N.
        for (;;) {
          const text = await (await fetch(`${mirror.url}/metrics`)).text();
          const sum = text.split('\n').filter((l) => l.startsWith('kevents_events_total{')).reduce((s, l) => s + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
          if (sum >= N) break;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      await stopCli(mirror.child);
    }
  }
  await stopCli(source.child);
  console.table([
    { mirror: 'without --event-metrics', 'events/s (median)': Math.round(median(rates.off)), runs: rates.off.map((r) => Math.round(r)).join(', '), 'CPU ms per 1,000 events (median)': median(cpu.off).toFixed(1), 'CPU runs': cpu.off.map((c) => c.toFixed(1)).join(', ') },
    { mirror: 'with --event-metrics', 'events/s (median)': Math.round(median(rates.on)), runs: rates.on.map((r) => Math.round(r)).join(', '), 'CPU ms per 1,000 events (median)': median(cpu.on).toFixed(1), 'CPU runs': cpu.on.map((c) => c.toFixed(1)).join(', ') },
  ]);
  console.log(`cost of the event metrics on ingest: ${((1 - median(rates.on) / median(rates.off)) * 100).toFixed(1)}% of the events/s (ratio ${(median(rates.on) / median(rates.off)).toFixed(3)}), ${((median(cpu.on) / median(cpu.off) - 1) * 100).toFixed(1)}% more CPU per event`);
  // What the flag adds per archived change, timed alone in this process: the occurrence the mirror builds for it and its counting.
  const metrics = createEventMetrics();
  const stamp = { observedTime: nowMicroTime(), cluster: 'east' };
  const events = Array.from({ length: N }, (_, i) => kubeletEvent(i, Date.now()) as unknown as CoreEvent);
  const t0 = performance.now();
  for (const e of events) metrics.observe({ event: e, occurrence: occurrenceOf(e, { countBefore: 0, countAfter: 1 }, stamp, 0) });
  const perChangeMs = (performance.now() - t0) / N;
  console.log(`counting alone: ${(perChangeMs * 1000).toFixed(2)} µs per change, ${((perChangeMs / (median(cpu.off) / 1000)) * 100).toFixed(1)}% of the mirror's CPU per event without the flag`);
}

async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error('run "npm run build" first');
  console.log(`kevents event metrics benchmark, node ${process.version}`);
  const part = process.env.BENCH_PART ?? '';
  if (part !== 'ingest') await scrapeBench();
  if (part !== 'scrape') await ingestBench();
  process.exit(0);
}

void main();
