/**
 * Timeline benchmark over a SQLite archive, with baselines measured in the same run:
 *   - the timeline of one object over 24 hours (scope, decompression, summary,
 *     hints) vs the raw indexed SQLite query that fetches the same rows;
 *   - counts by reason for one hour across all namespaces (a timeline with no
 *     object) vs a raw SQL scan computing the same counts;
 *   - time to the first line of output: `kevents timeline --for` (all of it has to
 *     be computed first) and `kevents get events -A` (first page of 500).
 * Sizes default to 100,000 and 1,000,000 events, to show how each cost scales.
 *
 * Run: node --import tsx bench/timeline.ts   (BENCH_SIZES=100000 for a quick run)
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CoreEvent } from '../src/api/index.js';
import { eventTable, printTableAsKubectl } from '../src/api/index.js';
import { SqliteEventStore } from '../src/storage/sqlite/index.js';
import { collectTimeline, formatTimeline, storeTimelineSource } from '../src/timeline/index.js';
import type { Timeline } from '../src/timeline/index.js';

const SIZES = (process.env.BENCH_SIZES ?? '100000,1000000').split(',').map(Number);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const NAMESPACES = 100;
const PODS = 50_000;
const DAY = 86_400_000;
/** Events are spread over a week, so 24 hours hold a seventh of them and one hour 1/168. */
const SPAN = 7 * DAY;
const T0 = Date.UTC(2025, 0, 1);
const TARGET = 'checkout-5f7d8c9b6-m2x4z';

const dir = mkdtempSync(join(tmpdir(), 'kevents-bench-timeline-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

function makeEvent(i: number, n: number): CoreEvent {
  const target = i % 5000 === 11;
  const ns = target ? 'payments' : `ns-${String(i % NAMESPACES).padStart(3, '0')}`;
  const pod = target ? TARGET : `pod-${(i * 7919) % PODS}`;
  const first = T0 + Math.floor((i / n) * SPAN);
  const count = i % 7 === 0 ? 1 + (i % 40) : 1;
  const warning = i % 5 === 0;
  return {
    kind: 'Event',
    apiVersion: 'v1',
    metadata: { namespace: ns, name: `${pod}.${(0x17a2b3c4d5e6f7an + BigInt(i) * 7919n).toString(16)}`, uid: `uid-${i}`, creationTimestamp: iso(first) },
    involvedObject: { kind: 'Pod', namespace: ns, name: pod, uid: `uid-${pod}`, apiVersion: 'v1', fieldPath: 'spec.containers{app}' },
    reason: warning ? 'BackOff' : ['Pulled', 'Created', 'Started', 'Scheduled'][i % 4]!,
    message: warning ? `Back-off restarting failed container app in pod ${pod}_${ns}(uid)` : 'Container image "registry.example/app:1.2.3" already present on machine',
    source: { component: 'kubelet', host: `node-${i % 50}` },
    firstTimestamp: iso(first),
    lastTimestamp: iso(first + (count - 1) * 30_000),
    count,
    type: warning ? 'Warning' : 'Normal',
    reportingComponent: 'kubelet',
    reportingInstance: `node-${i % 50}`,
  };
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

async function sample(n: number, fn: () => unknown): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

const f2 = (x: number): string => x.toFixed(2);

async function run(n: number): Promise<Record<string, string | number>[]> {
  const path = join(dir, `archive-${n}.db`);
  const store = new SqliteEventStore({ path });
  await store.ready();
  const t0 = performance.now();
  for (let i = 0; i < n; i += 1000) {
    const batch: Promise<CoreEvent>[] = [];
    for (let j = i; j < Math.min(n, i + 1000); j++) batch.push(store.create(makeEvent(j, n)));
    await Promise.all(batch);
  }
  console.log(`filled ${n.toLocaleString('en')} events in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const raw = new Database(path, { readonly: true });

  // The object's busiest day: the 24 hours that end at its last event.
  const mid = T0 + SPAN / 2;
  const since = mid - DAY / 2;
  const until = mid + DAY / 2;
  const source = storeTimelineSource(store);
  const one = (): Promise<unknown> => collectTimeline({ source, for: { kind: 'Pod', name: TARGET, namespace: 'payments' }, since, until });
  const probe = await collectTimeline({ source, for: { kind: 'Pod', name: TARGET, namespace: 'payments' }, since, until });
  const rawOne = raw.prepare('SELECT object FROM versions WHERE involved_name = ? AND superseded_rv IS NULL AND op <> 3');
  const baseOne = (): unknown => (rawOne.all(TARGET) as { object: string }[]).map((r) => JSON.parse(r.object) as CoreEvent);
  await one();
  baseOne();
  const tOne = await sample(SAMPLES, one);
  const tBaseOne = await sample(SAMPLES, baseOne);

  // Counts by reason for one hour, every namespace: no time index, so both sides scan.
  const hour = { since: mid, until: mid + 3_600_000 };
  const counts = async (): Promise<unknown> => (await collectTimeline({ source, since: hour.since, until: hour.until })).summary.reasons;
  const rawCounts = raw.prepare(
    "SELECT reason, sum(json_extract(object, '$.count')) AS n FROM versions WHERE superseded_rv IS NULL AND op <> 3 AND json_extract(object, '$.lastTimestamp') >= ? AND json_extract(object, '$.firstTimestamp') < ? GROUP BY reason",
  );
  const baseCounts = (): unknown => rawCounts.all(iso(hour.since), iso(hour.until));
  const countSamples = Math.max(3, Math.floor(SAMPLES / 40));
  const tCounts = await sample(countSamples, counts);
  const tBaseCounts = await sample(countSamples, baseCounts);

  // First line of output.
  const firstTimeline = async (): Promise<unknown> => formatTimeline((await one()) as Timeline, { format: 'table' }).split('\n', 1)[0];
  const firstGet = async (): Promise<unknown> => {
    const page = await store.list({ limit: 500 });
    return printTableAsKubectl(eventTable(page.items, { now: Date.now() }), { withNamespace: true }).split('\n', 1)[0];
  };
  const tFirstTimeline = await sample(SAMPLES, firstTimeline);
  const tFirstGet = await sample(SAMPLES, firstGet);

  raw.close();
  await store.close();
  const row = (what: string, xs: number[], base?: number[]): Record<string, string | number> => ({
    events: n,
    what,
    'p50 ms': f2(pct(xs, 50)),
    'p99 ms': f2(pct(xs, 99)),
    ...(base !== undefined ? { 'baseline p50 ms': f2(pct(base, 50)), 'x baseline': (pct(xs, 50) / pct(base, 50)).toFixed(1) } : {}),
  });
  return [
    row(`timeline of one pod, 24 h (${probe.rows.length} rows)`, tOne, tBaseOne),
    row('counts by reason, 1 h, all namespaces', tCounts, tBaseCounts),
    row('first line: kevents timeline --for', tFirstTimeline),
    row('first line: kevents get events -A (500)', tFirstGet),
  ];
}

async function main(): Promise<void> {
  console.log(`timeline benchmark: sizes ${SIZES.map((s) => s.toLocaleString('en')).join(', ')}, node ${process.version}`);
  const rows: Record<string, string | number>[] = [];
  for (const n of SIZES) rows.push(...(await run(n)));
  console.table(rows);
  console.log('targets (issue 6, at 10,000,000 events): one object over 24 h p99 < 50 ms; counts by reason for 1 h < 500 ms; first line < 200 ms');
}

await main();
