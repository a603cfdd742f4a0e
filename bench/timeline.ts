/**
 * Timeline benchmark over a SQLite archive, with baselines measured in the same run:
 *   - the timeline of one object over 24 hours (scope, decompression, summary,
 *     hints) vs the raw indexed SQLite query that fetches the same rows;
 *   - counts by reason for one hour across all namespaces (`countReasons`: the
 *     summary of a timeline with no object) vs the raw SQL aggregate over the
 *     occurrences' time index computing the same counts;
 *   - time to the first line of output: `kevents timeline --for` (all of it has to
 *     be computed first) and `kevents get events -A` (first page of 500).
 * Sizes default to 100,000 and 1,000,000 events, to show how each cost scales.
 *
 * The archive is filled the way the mirror fills it: batches of archive writes,
 * each event with the occurrence of its change, observed up to a few minutes
 * after it happened. A filled archive is kept under the system's temp folder,
 * named by its parameters, and reused by later runs (BENCH_FRESH=1 refills it).
 * Sizes above 1,000,000 are built from the 1,000,000 archive in SQL, as copies of
 * its rows under new event names (same times, namespaces, pods and reasons: each
 * object and each hour with proportionally more events), as filling them one
 * write at a time would take most of an hour.
 *
 * Run: node --import tsx bench/timeline.ts   (BENCH_SIZES=100000 for a quick run;
 * BENCH_BUILD_TIMELINE=1 also times the summary built from the whole timeline)
 */
import Database from 'better-sqlite3';
import { copyFileSync, existsSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CoreEvent } from '../src/api/index.js';
import { eventTable } from '../src/api/index.js';
import { formatTimeline, printTableAsKubectl } from '../src/print/index.js';
import { SqliteEventStore } from '../src/storage/sqlite/index.js';
import { decodeObject, encodeObject } from '../src/storage/shared/object-codec.js';
import { nameHash } from '../src/storage/sqlite/schema.js';
import { collectTimeline, countReasons, storeTimelineSource } from '../src/timeline/index.js';
import type { Timeline } from '../src/timeline/index.js';
import { seedSqliteArchive } from './support/seed-archive.js';

const SIZES = (process.env.BENCH_SIZES ?? '100000,1000000').split(',').map(Number);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const NAMESPACES = 100;
const PODS = 50_000;
const DAY = 86_400_000;
/** Events are spread over a week, so 24 hours hold a seventh of them and one hour 1/168. */
const SPAN = 7 * DAY;
const T0 = Date.UTC(2025, 0, 1);
const TARGET = 'checkout-5f7d8c9b6-m2x4z';

/** LAYOUT names what a cached archive was filled with: change it when makeEvent or the fill changes. */
const LAYOUT = 'v6';

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

function makeEvent(i: number, n: number): CoreEvent {
  const target = i % 5000 === 11;
  const ns = target ? 'payments' : `ns-${String(i % NAMESPACES).padStart(3, '0')}`;
  const pod = target ? TARGET : `pod-${(i * 7919) % PODS}`;
  const first = T0 + Math.floor((i / n) * SPAN);
  const count = i % 7 === 0 ? 1 + (i % 40) : 1;
  /** round is how many events the pod had before this one. */
  const round = Math.floor(i / (target ? 5000 : PODS));
  const warning = round > 0 && i % 5 === 0;
  return {
    kind: 'Event',
    apiVersion: 'v1',
    metadata: { namespace: ns, name: `${pod}.${(0x17a2b3c4d5e6f7an + BigInt(i) * 7919n).toString(16)}`, uid: `uid-${i}`, creationTimestamp: iso(first) },
    involvedObject: { kind: 'Pod', namespace: ns, name: pod, uid: `uid-${pod}`, apiVersion: 'v1', fieldPath: 'spec.containers{app}' },
    // A pod is scheduled once, at its first event; later ones are the kubelet's, in turn.
    reason: round === 0 ? 'Scheduled' : warning ? 'BackOff' : ['Pulled', 'Created', 'Started'][round % 3]!,
    message:
      round === 0
        ? `Successfully assigned ${ns}/${pod} to node-${i % 50}`
        : warning
          ? `Back-off restarting failed container app in pod ${pod}_${ns}(uid)`
          : 'Container image "registry.example/app:1.2.3" already present on machine',
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

/** fill writes the archive of n events to path (a page cache that holds the key indexes: a fill inserts in random key order). */
const fill = (path: string, n: number): Promise<void> => seedSqliteArchive(path, { n, makeEvent, log: console.log, cacheSizeMiB: 2048 });

/** TEMPLATE is the largest size filled through the store; larger ones copy its rows (BENCH_TEMPLATE to change it). */
const TEMPLATE = Number(process.env.BENCH_TEMPLATE ?? 1_000_000);

function archivePath(n: number): string {
  return join(tmpdir(), `kevents-bench-timeline-${LAYOUT}-${n}-${NAMESPACES}ns-${PODS}pods-${SPAN / DAY}d.db`);
}

/**
 * replicate builds an archive of `copies` times the template's events: copy c
 * has every row of the template, with event names and revisions made unique
 * (a text replacement in each decoded object), and every occurrence row with the
 * id of its copied version. Indexes are dropped during the copy and rebuilt after.
 */
function replicate(template: string, copies: number, path: string): void {
  const t0 = performance.now();
  const partial = `${path}.partial`;
  copyFileSync(template, partial);
  const db = new Database(partial);
  db.pragma('journal_mode = DELETE');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -1048576');
  const indexes = db.prepare<[], { name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL").all();
  for (const i of indexes) db.exec(`DROP INDEX ${i.name}`);
  const maxRv = (db.prepare('SELECT max(rv) AS m FROM versions').get() as { m: number }).m;
  db.function('kevents_rename', { deterministic: true }, (object: unknown, name: unknown, sfx: unknown) =>
    encodeObject(decodeObject(object as Buffer).replace(`"name":"${String(name)}"`, `"name":"${String(name)}${String(sfx)}"`)),
  );
  const copyVersions = db.prepare(`INSERT INTO versions (rv, key, op, object, prev_rv, superseded_rv, expires_at, involved_kind, involved_hash, reason, type, first_s, span_s)
    SELECT rv + @rvs, key || @sfx, op, kevents_rename(object, substr(key, instr(key, '/') + 1), @sfx),
      prev_rv, superseded_rv, expires_at, involved_kind, involved_hash, reason, type, first_s, span_s
    FROM versions WHERE rv <= @maxRv ORDER BY rv`);
  const copyOccurrences = db.prepare(`INSERT INTO occurrences (id, observed_us, namespace, regarding_hash, type, reason, count_before, count_after, seen_ms, cluster, observed_time)
    SELECT id + @rvs, observed_us, namespace, regarding_hash, type, reason, count_before, count_after, seen_ms, cluster, observed_time
    FROM occurrences WHERE id <= @maxRv ORDER BY id`);
  for (let c = 1; c < copies; c++) {
    const p = { rvs: c * maxRv, sfx: `x${c}`, maxRv };
    db.transaction(() => {
      copyVersions.run(p);
      copyOccurrences.run(p);
    })();
    console.log(`  copy ${c + 1} of ${copies}, ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }
  for (const i of indexes) db.exec(i.sql);
  console.log(`  indexes rebuilt, ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  db.pragma('journal_mode = WAL');
  db.close();
  renameSync(partial, path);
  console.log(`built ${(copies * TEMPLATE).toLocaleString('en')} events from ${copies} copies in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

async function run(n: number): Promise<Record<string, string | number>[]> {
  const path = archivePath(n);
  if (process.env.BENCH_FRESH === '1') rmSync(path, { force: true });
  if (existsSync(path)) console.log(`reusing ${path}`);
  else if (n > TEMPLATE && n % TEMPLATE === 0) {
    if (!existsSync(archivePath(TEMPLATE))) await fill(archivePath(TEMPLATE), TEMPLATE);
    replicate(archivePath(TEMPLATE), n / TEMPLATE, path);
  } else await fill(path, n);
  const store = new SqliteEventStore({ path });
  await store.ready();
  const raw = new Database(path, { readonly: true });

  // The object's busiest day: the 24 hours that end at its last event.
  const mid = T0 + SPAN / 2;
  const since = mid - DAY / 2;
  const until = mid + DAY / 2;
  const source = storeTimelineSource(store);
  const one = (): Promise<unknown> => collectTimeline({ source, for: { kind: 'Pod', name: TARGET, namespace: 'payments' }, since, until });
  const probe = await collectTimeline({ source, for: { kind: 'Pod', name: TARGET, namespace: 'payments' }, since, until });
  // The rows the timeline reads: the object's current events that happened in the window (on the span columns), and its Scheduled events.
  const rawOne = raw.prepare(
    "SELECT object FROM versions WHERE involved_hash = ? AND superseded_rv IS NULL AND op <> 3 AND (reason = (SELECT id FROM interned WHERE value = 'Scheduled') OR (first_s + span_s >= ? AND first_s < ?))",
  );
  const baseOne = (): unknown =>
    (rawOne.all(nameHash(TARGET), Math.floor(since / 1000), Math.ceil(until / 1000)) as { object: Buffer }[])
      .map((r) => JSON.parse(decodeObject(r.object)) as CoreEvent)
      .filter((e) => e.involvedObject.name === TARGET);
  await one();
  baseOne();
  const tOne = await sample(SAMPLES, one);
  const tBaseOne = await sample(SAMPLES, baseOne);

  // Counts by reason for one hour, every namespace, over the occurrences' time index.
  const hour = { since: mid, until: mid + 3_600_000 };
  const counts = (): Promise<unknown> => countReasons({ source, since: hour.since, until: hour.until });
  // The same two reads in raw SQL: the lag bounds of the window's hours, then the aggregate over the observed times they allow.
  const rawLag = raw.prepare<[number, number], { lo: number; hi: number }>('SELECT min(min_us) AS lo, max(max_us) AS hi FROM occurrence_lag WHERE hour BETWEEN ? AND ?');
  const rawCounts = raw.prepare<[number, number, number, number]>(
    // Grouped by the interned ids (schema 12), each group's values read as the store answers them.
    'SELECT (SELECT value FROM interned WHERE id = o.type) AS type, (SELECT value FROM interned WHERE id = o.reason) AS reason, sum(max(0, count_after - count_before)) AS n, min(seen_ms) AS first FROM occurrences o WHERE observed_us >= ? AND observed_us < ? AND seen_ms >= ? AND seen_ms < ? GROUP BY o.type, o.reason',
  );
  const baseCounts = (): unknown => {
    const lag = rawLag.get(Math.floor(hour.since / 3_600_000), Math.floor((hour.until - 1) / 3_600_000))!;
    return rawCounts.all(hour.since * 1000 + lag.lo, hour.until * 1000 + lag.hi, hour.since, hour.until);
  };
  // The first call reads the hour's pages into a cold cache: reported on its own, then samples as for one object.
  const tCountsCold = await sample(1, counts);
  baseCounts();
  const countSamples = Math.max(20, Math.floor(SAMPLES / 4));
  const tCounts = await sample(countSamples, counts);
  const tBaseCounts = await sample(countSamples, baseCounts);
  const built = process.env.BENCH_BUILD_TIMELINE === '1' ? await sample(1, () => collectTimeline({ source, since: hour.since, until: hour.until })) : undefined;

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
    row('counts by reason, 1 h, all namespaces (first call, cold cache)', tCountsCold),
    row('counts by reason, 1 h, all namespaces', tCounts, tBaseCounts),
    ...(built !== undefined ? [row('counts by reason, 1 h, from the whole timeline', built)] : []),
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
