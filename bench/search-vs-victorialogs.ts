/**
 * Search against VictoriaLogs: the same generated events (bench/support/realistic-events.ts,
 * upstream's message formats) written in one run to a kevents archive (SQLite, or PostgreSQL
 * with BENCH_BACKEND=postgres) through the store's bulk path (`applyArchiveBatch`, as the
 * mirror writes) and pushed to a real
 * VictoriaLogs (scripts/sinks.mjs) through its JSON lines API (`_msg` the message, `_time`
 * the event's last time, the fields reason, type, namespace, kind, name, node, controller,
 * cluster as the query language reads them; the namespace is its stream). Then:
 *   - ingest time of each, and bytes on disk per event (VictoriaLogs' data folder after a
 *     flush; the kevents file after a checkpoint, and the search index's share of its pages;
 *     on PostgreSQL, every relation of the archive's schema after a VACUUM ANALYZE, and the
 *     search columns' and indexes' share);
 *   - 20 queries (rare and common words, phrases, fields, wildcards, time windows, negations,
 *     newest 100 of a common word in a namespace), each translated to LogsQL with the same
 *     meaning and the same limit, each run BENCH_RUNS times, interleaved with its LogsQL twin:
 *     p50/p99 and kevents ÷ VictoriaLogs, first with kevents' `ArchiveStore.search` in this
 *     process (what the route awaits) against VictoriaLogs over HTTP, then over HTTP on both
 *     sides (`kevents serve`'s search route, hits with their occurrences, as served);
 *   - a sanity check per query: both pages' hits, how many of them are the same events, and
 *     the hits in all (VictoriaLogs' count; kevents' when there are at most 1,000).
 *
 * A LogsQL word filter looks in `_msg` only and is case-sensitive, where a kevents word looks
 * in every text field, case-insensitively: a query is translated to the narrowest LogsQL that
 * means the same on these events (`i()` where a word occurs in more than one case, a field's
 * filter where it occurs outside the message, an OR over every field for "a word in any field"),
 * and the hit counts printed check it.
 *
 * Run: npm run build && nice -n 5 node --import tsx bench/search-vs-victorialogs.ts
 *   BENCH_EVENTS (100,000; a list such as 1000000,3000000 measures each size as the archive grows),
 *   BENCH_RUNS (20), BENCH_SKIP_HTTP=1 (no `kevents serve` pass), BENCH_MEASURE (the sizes of
 *   BENCH_EVENTS to measure; all by default), BENCH_FILL_ONLY=1 (write the kevents archives and stop),
 *   BENCH_BACKEND (sqlite; postgres writes the archive to KEVENTS_BENCH_POSTGRES, by default the test
 *   database on 127.0.0.1:55432, in the schema kevents_bench_vlogs_<layout>_<total>), BENCH_BASELINE_CLI (another
 *   build's dist/bin/kevents.js, e.g. main's: the HTTP pass serves the same archive with it too, its requests
 *   interleaved with the others'), BENCH_BASELINE_STORAGE (what the baseline build serves instead, e.g. a copy of
 *   the archive taken before this build opened it: a build that changes the layout on open would otherwise have
 *   both sides read its layout).
 *
 * The kevents archive at each size is cached under the system temp folder (by the sizes, the schema
 * and the generator's layout) as bench/timeline.ts caches its own, since writing it is the slow part:
 * a later run pushes the same events to VictoriaLogs only, and prints the ingest rate the fill measured.
 * A PostgreSQL archive is kept in its schema, which holds one size at a time (bench/support/postgres-archive.ts).
 * BENCH_FRESH=1 rebuilds them.
 */
import type { SearchField } from '../src/api/index.js';
import { parseSearchQuery, searchFieldValue, searchTimeMs } from '../src/api/index.js';
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CoreEvent } from '../src/api/index.js';
import type { SearchRequest } from '../src/storage/index.js';
import { SqliteEventStore } from '../src/storage/sqlite/index.js';
import { sinkPaths, startVictoriaLogs } from '../test/support/sink-servers.js';
import { startCli, stopCli } from './support/cli.js';
import { postgresArchive } from './support/postgres-archive.js';
import type { BenchArchive, Fill } from './support/postgres-archive.js';
import { ARCHIVE_END as END, ARCHIVE_SPAN_MS as SPAN_MS, archiveWrites, realisticArchive } from './support/realistic-events.js';

/** SIZES are the archive sizes measured, in one run: the archive grows from one to the next. */
const SIZES = (process.env.BENCH_EVENTS ?? '100000').split(',').map(Number).sort((a, b) => a - b);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const SKIP_HTTP = process.env.BENCH_SKIP_HTTP === '1';
const MEASURE = process.env.BENCH_MEASURE === undefined ? SIZES : process.env.BENCH_MEASURE.split(',').map(Number);
const FILL_ONLY = process.env.BENCH_FILL_ONLY === '1';
/** BASELINE_CLI is another build's `dist/bin/kevents.js`, served over the same archive and timed in the HTTP pass beside this one's. */
const BASELINE_CLI = process.env.BENCH_BASELINE_CLI;
/** BASELINE_STORAGE is the `--storage` the baseline build serves, when not the archive this build serves. */
const BASELINE_STORAGE = process.env.BENCH_BASELINE_STORAGE;
const BACKEND = process.env.BENCH_BACKEND ?? 'sqlite';
const POSTGRES = process.env.KEVENTS_BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:55432/test';
/** LAYOUT names what a cached archive holds: change it when realistic-events or the fill changes (a file of an older schema is migrated when first opened). */
const LAYOUT = 'v1';
/** BATCH is the events of one applyArchiveBatch (the mirror's batches are up to 1,000). */
const BATCH = 1000;
/** PUSH is the events of one push to VictoriaLogs. */
const PUSH = 10_000;
const LIMIT = 100;
const PUSH_PATH = '/insert/jsonline?_stream_fields=namespace&_msg_field=_msg&_time_field=_time';

/** archivePath is the cached kevents archive of the first `size` events of a `total`-event run. */
function archivePath(total: number, size: number): string {
  return join(tmpdir(), `kevents-bench-search-vlogs-${LAYOUT}-${total}-at-${size}.db`);
}

/** VL_FIELDS maps the query language's fields to the VictoriaLogs fields the bench pushes. */
const VL_FIELDS: [SearchField, string][] = [
  ['reason', 'reason'],
  ['type', 'type'],
  ['ns', 'namespace'],
  ['kind', 'kind'],
  ['name', 'name'],
  ['node', 'node'],
  ['controller', 'controller'],
  ['cluster', 'cluster'],
];

const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

/** logLine is one event as a VictoriaLogs JSON line. */
function logLine(e: CoreEvent): string {
  const line: Record<string, string> = { _time: new Date(searchTimeMs(e)).toISOString(), _msg: searchFieldValue(e, 'message') };
  for (const [field, name] of VL_FIELDS) line[name] = searchFieldValue(e, field);
  return JSON.stringify(line);
}

interface Query {
  name: string;
  q: string;
  logsql: string;
  namespace?: string;
}

// The time windows lie in what the smallest size holds (the generator spreads the events over the week by the
// final total), so that they hold the same hits at every size: the middle hour, and the last day but one hour.
const FIRST_END = END - 3_600_000 - SPAN_MS + (SIZES[0]! / SIZES[SIZES.length - 1]!) * SPAN_MS;
const onHour = (ms: number): number => Math.floor(ms / 3_600_000) * 3_600_000;
const MID = onHour(END - 3_600_000 - SPAN_MS + (FIRST_END - (END - 3_600_000 - SPAN_MS)) / 2);
const HOUR = { since: iso(MID), until: iso(MID + 3_600_000) };
const DAY = { since: iso(onHour(FIRST_END) - 25 * 3_600_000), until: iso(onHour(FIRST_END) - 3_600_000) };
const anyField = (word: string): string => `(${[word, ...VL_FIELDS.filter(([f]) => f !== 'type' && f !== 'cluster').map(([, n]) => `${n}:${word}`)].join(' OR ')})`;
const QUERIES: Query[] = [
  { name: 'rare word', q: 'x509', logsql: 'x509' },
  { name: 'rare phrase', q: '"certificate has expired"', logsql: '"certificate has expired"' },
  { name: 'rare word, in the reason', q: 'evicted', logsql: 'reason:Evicted' },
  { name: 'uncommon word', q: 'quota', logsql: 'quota' },
  { name: 'common word', q: 'container', logsql: 'i(container)' },
  { name: 'common word', q: 'image', logsql: 'i(image)' },
  { name: 'common phrase', q: '"back-off restarting failed container"', logsql: '"Back-off restarting failed container"' },
  { name: 'word in any field', q: 'checkout', logsql: anyField('checkout') },
  { name: 'field', q: 'reason:FailedScheduling', logsql: 'reason:=FailedScheduling' },
  { name: 'field + rare word', q: 'reason:FailedMount secret', logsql: 'reason:=FailedMount secret' },
  { name: 'field + word', q: 'kind:Deployment scaled', logsql: 'kind:=Deployment Scaled' },
  { name: 'field (node)', q: 'node:ip-10-0-3-17.ec2.internal', logsql: 'node:="ip-10-0-3-17.ec2.internal"' },
  { name: 'wildcard name', q: 'name:checkout-db-*', logsql: 'name:="checkout-db-"*' },
  { name: 'wildcard ns + word', q: 'ns:team-1* probe', logsql: 'namespace:="team-1"* probe' },
  { name: 'word, 1-hour window', q: `probe since:${HOUR.since} until:${HOUR.until}`, logsql: `_time:[${HOUR.since}, ${HOUR.until}) probe` },
  { name: 'common word, 1-day window', q: `container since:${DAY.since} until:${DAY.until}`, logsql: `_time:[${DAY.since}, ${DAY.until}) i(container)` },
  { name: 'negation', q: 'failed -container', logsql: 'i(failed) -i(container)' },
  { name: 'field negations', q: 'type:Warning -reason:BackOff -reason:Unhealthy', logsql: 'type:=Warning -reason:=BackOff -reason:=Unhealthy' },
  { name: 'newest 100 of a common word, 1 ns', q: 'image', namespace: 'team-7', logsql: '{namespace="team-7"} i(image)' },
  { name: 'newest 100, no words', q: '', logsql: '*' },
];

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/** vlText runs a LogsQL query over HTTP and returns its answer's text: what the HTTP pass times, as it times kevents' answer read as text. */
async function vlText(base: string, query: string, limit?: number): Promise<string> {
  const body = new URLSearchParams({ query, ...(limit !== undefined ? { limit: String(limit) } : {}) });
  const res = await fetch(`${base}/select/logsql/query`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: body.toString() });
  const text = await res.text();
  if (!res.ok) throw new Error(`VictoriaLogs ${res.status} for ${query}: ${text}`);
  return text;
}

/** vlQuery runs a LogsQL query over HTTP and returns its JSON lines. */
async function vlQuery(base: string, query: string, limit?: number): Promise<Record<string, string>[]> {
  return (await vlText(base, query, limit))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, string>);
}

async function vlCount(base: string, query: string): Promise<number> {
  const [row] = await vlQuery(base, `${query} | count() n`);
  return Number(row?.n ?? 0);
}

/** hitKey identifies a hit on both sides: its last time (ms) and message. */
const hitKey = (timeMs: number, message: string): string => `${timeMs}|${message}`;

function searchRequest(query: Query, limit = LIMIT): SearchRequest {
  const request: SearchRequest = { query: parseSearchQuery(query.q, { nowMs: END }), limit };
  if (query.namespace !== undefined) request.namespace = query.namespace;
  return request;
}

function searchUrl(base: string, query: Query): string {
  const path = query.namespace === undefined ? '' : `/namespaces/${query.namespace}`;
  return `${base}/apis/archive.kevents.io/v1alpha1${path}/search?${new URLSearchParams({ q: query.q, limit: String(LIMIT) }).toString()}`;
}

/** Timed is one side's latencies of one query. */
interface Timed {
  times: number[];
}

/** timeInterleaved runs each side once to warm, then RUNS rounds of one run each, one side after the other. */
async function timeInterleaved(sides: (() => Promise<unknown>)[]): Promise<Timed[]> {
  for (const side of sides) await side();
  const out: Timed[] = sides.map(() => ({ times: [] }));
  for (let i = 0; i < RUNS; i++) {
    for (const [j, side] of sides.entries()) {
      const t = performance.now();
      await side();
      out[j]!.times.push(performance.now() - t);
    }
  }
  return out;
}

const ms = (x: number): string => (x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0));
const ratio = (a: number, b: number): string => `${(a / b).toFixed(a / b < 10 ? 2 : 0)}×`;

function row(query: Query, k: Timed, v: Timed): string {
  const [k50, k99, v50, v99] = [pct(k.times, 50), pct(k.times, 99), pct(v.times, 50), pct(v.times, 99)];
  return `| ${query.name} \`${query.q}\`${query.namespace !== undefined ? ` (ns ${query.namespace})` : ''} | ${ms(k50)} / ${ms(k99)} | ${ms(v50)} / ${ms(v99)} | ${ratio(k50, v50)} / ${ratio(k99, v99)} |`;
}

function duBytes(path: string): number {
  return Number(execFileSync('du', ['-sb', path], { encoding: 'utf8' }).split('\t')[0]);
}

/** Sized is what one archive size measured: its per-query rows over HTTP and in process, for the growth table. */
interface Sized {
  events: number;
  /** http holds, with BENCH_BASELINE_CLI, the baseline build's times too (`b`). */
  http: { k: Timed; v: Timed; b?: Timed }[];
  local: { k: Timed; v: Timed }[];
}

/** measure takes the figures of the archive as it stands (`events` written), with its writer closed. */
async function measure(events: number, archive: BenchArchive, logs: { address: string; dir: string }, ingest: { keventsMs: number; vlMs: number }, filledAt?: string): Promise<Sized> {
  console.log(`
== ${events.toLocaleString('en')} events (load average ${load()}) ==`);
  const flushStarted = performance.now();
  // Opening the archive first may have migrated it for minutes, past VictoriaLogs' idle keep-alive (a minute): the
  // pooled connection may be closed under this first request, which is then sent again on a new one.
  const flush = (): Promise<Response> => fetch(`${logs.address}/internal/force_flush`);
  await flush().catch(flush);
  ingest.vlMs += performance.now() - flushStarted;
  const disk = await archive.onDisk(events);
  // VictoriaLogs merges parts in the background: its size settles a few seconds after the flush.
  await new Promise((r) => setTimeout(r, 5000));
  const vlBytes = duBytes(logs.dir);
  const vlTotal = await vlCount(logs.address, '*');
  console.log(
    `ingest (${filledAt === undefined ? 'same run' : `kevents when its archive was cached, load average ${filledAt}`}; generation excluded): kevents ${Math.round(events / (ingest.keventsMs / 1000)).toLocaleString('en')} events/s (${(ingest.keventsMs / 1000).toFixed(0)} s), ` +
      `VictoriaLogs ${Math.round(events / (ingest.vlMs / 1000)).toLocaleString('en')} events/s (${(ingest.vlMs / 1000).toFixed(0)} s); VictoriaLogs holds ${vlTotal.toLocaleString('en')}`,
  );
  console.log(`on disk: ${disk.text}; VictoriaLogs ${(vlBytes / 1e6).toFixed(1)} MB = ${Math.round(vlBytes / events)} bytes/event; kevents ÷ VictoriaLogs ${(disk.bytes / vlBytes).toFixed(1)}×`);

  // The sanity check and the in-process pass, on one store.
  const reader = await archive.reader(events);
  console.log('\nhits (newest 100: kevents, VictoriaLogs, the same events; in all: VictoriaLogs, kevents when ≤ 1,000):');
  for (const query of QUERIES) {
    const [page, vl, total] = await Promise.all([reader.search(searchRequest(query)), vlQuery(logs.address, query.logsql, LIMIT), vlCount(logs.address, query.logsql)]);
    const theirs = new Set(vl.map((l) => hitKey(Date.parse(l._time!), l._msg ?? '')));
    const same = page.items.filter((h) => theirs.has(hitKey(searchTimeMs(h.event), h.event.message ?? ''))).length;
    // A full page may end within one instant whose hits both sides order differently (kevents by key, VictoriaLogs
    // by its own): those at the page's oldest instant may differ, every newer one may not.
    const oldest = Math.min(...vl.map((l) => Date.parse(l._time!)));
    const newer = vl.filter((l) => Date.parse(l._time!) > oldest).length;
    const sameNewer = page.items.filter((h) => searchTimeMs(h.event) > oldest && theirs.has(hitKey(searchTimeMs(h.event), h.event.message ?? ''))).length;
    const ours = total <= 1000 ? (await reader.search(searchRequest(query, 1000))).items.length : undefined;
    const agree = page.items.length === vl.length && (same === vl.length || (vl.length === LIMIT && sameNewer === newer)) && (ours === undefined || ours === total);
    console.log(`  ${query.name.padEnd(36)} ${String(page.items.length).padStart(4)} ${String(vl.length).padStart(4)} ${String(same).padStart(4)}   ${total.toLocaleString('en').padStart(10)} ${ours === undefined ? '' : ours.toLocaleString('en')}${agree ? '' : '   DIFFER'}`);
  }
  const local: Sized['local'] = [];
  for (const query of QUERIES) {
    const request = searchRequest(query);
    const [k, v] = await timeInterleaved([() => reader.search(request), () => vlQuery(logs.address, query.logsql, LIMIT)]);
    local.push({ k: k!, v: v! });
  }
  await reader.close();
  printTable(`kevents ArchiveStore.search in process against VictoriaLogs over HTTP, newest ${LIMIT}, ${RUNS} runs each (p50 / p99 ms):`, local);
  if (SKIP_HTTP) return { events, http: [], local };

  // Both sides' answers are read as text and not parsed: the time is the server's and the transfer's.
  const serveArgs = ['serve', '--listen', '127.0.0.1:0', '--storage', archive.storage(events), '--event-ttl', '0', '--log-level', 'error'];
  const serve = await startCli(serveArgs, /listening on (\S+)/);
  const baselineArgs = BASELINE_STORAGE === undefined ? serveArgs : serveArgs.map((a, i) => (serveArgs[i - 1] === '--storage' ? BASELINE_STORAGE : a));
  const baseline = BASELINE_CLI === undefined ? undefined : await startCli(baselineArgs, /listening on (\S+)/, [], BASELINE_CLI);
  const http: Sized['http'] = [];
  try {
    for (const query of QUERIES) {
      const get = (url: string) => async (): Promise<void> => {
        const res = await fetch(url);
        const text = await res.text();
        if (!res.ok) throw new Error(`kevents search ${res.status}: ${text}`);
      };
      const sides = [get(searchUrl(serve.url, query)), () => vlText(logs.address, query.logsql, LIMIT)];
      if (baseline !== undefined) sides.push(get(searchUrl(baseline.url, query)));
      const [k, v, b] = await timeInterleaved(sides);
      http.push({ k: k!, v: v!, ...(b !== undefined ? { b } : {}) });
    }
  } finally {
    await stopCli(serve.child);
    if (baseline !== undefined) await stopCli(baseline.child);
  }
  printTable(`over HTTP on both sides: kevents serve's search route (hits with their occurrences) against VictoriaLogs, newest ${LIMIT}, ${RUNS} runs each (p50 / p99 ms; load average ${load()}):`, http);
  return { events, http, local };
}

function printTable(title: string, rows: { k: Timed; v: Timed; b?: Timed }[]): void {
  const base = rows.some((r) => r.b !== undefined);
  console.log(`\n${title}\n| query | kevents | VictoriaLogs | kevents ÷ VictoriaLogs |${base ? ' baseline build | its ÷ VictoriaLogs |' : ''}\n|---|---|---|---|${base ? '---|---|' : ''}`);
  for (const [i, r] of rows.entries()) {
    const b = r.b === undefined ? '' : ` ${ms(pct(r.b.times, 50))} / ${ms(pct(r.b.times, 99))} | ${ratio(pct(r.b.times, 50), pct(r.v.times, 50))} / ${ratio(pct(r.b.times, 99), pct(r.v.times, 99))} |`;
    console.log(row(QUERIES[i]!, r.k, r.v) + b);
  }
}

const load = (): string => loadavg().map((l) => l.toFixed(1)).join(' ');

/** sqliteArchive is the BenchArchive of SQLite files cached under the temp folder, one a size: a copy of the file being filled as it passes the size. */
function sqliteArchive(total: number): BenchArchive {
  const partial = `${archivePath(total, total)}.partial`;
  const kept = (size: number): Fill | undefined => {
    const file = archivePath(total, size);
    return existsSync(file) && existsSync(`${file}.json`) ? (JSON.parse(readFileSync(`${file}.json`, 'utf8')) as Fill) : undefined;
  };
  const open = async (path: string, cacheSizeMiB?: number): Promise<SqliteEventStore> => {
    const store = new SqliteEventStore({ path, ...(cacheSizeMiB !== undefined ? { cacheSizeMiB } : {}) });
    await store.ready();
    return store;
  };
  return {
    name: (size) => archivePath(total, size),
    cachedFill: (size) => Promise.resolve(process.env.BENCH_FRESH === '1' ? undefined : kept(size)),
    // A fill goes on from the largest smaller size cached by an earlier fill of the same total (the generator is
    // deterministic): its copy becomes the partial file, and the events it holds are generated again but not written.
    resumeFrom(sizes) {
      for (const suffix of ['', '-wal', '-shm']) rmSync(partial + suffix, { force: true });
      const size = Math.max(0, ...sizes.filter((n) => n < total && kept(n) !== undefined));
      if (size === 0) return Promise.resolve({ size });
      copyFileSync(archivePath(total, size), partial);
      return Promise.resolve({ size, fill: kept(size)! });
    },
    writer: () => open(partial, 1024),
    save(size, fill) {
      // A copy of the archive at this size, checkpointed first so the one file holds it; the last size is the file itself.
      const file = archivePath(total, size);
      const db = new Database(partial);
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.close();
      for (const suffix of ['-wal', '-shm']) rmSync(partial + suffix, { force: true });
      if (size === total) renameSync(partial, file);
      else copyFileSync(partial, file);
      writeFileSync(`${file}.json`, JSON.stringify(fill));
      console.log(`  cached ${file}`);
      return Promise.resolve();
    },
    reader: (size) => open(archivePath(total, size)),
    storage: (size) => `sqlite:${archivePath(total, size)}`,
    onDisk(events) {
      const file = archivePath(total, events);
      const db = new Database(file);
      db.pragma('wal_checkpoint(TRUNCATE)');
      const pages = db.prepare<[], { name: string; bytes: number }>('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name').all();
      db.close();
      const fileBytes = statSync(file).size;
      const indexBytes = pages.filter((p) => p.name.startsWith('search_') || p.name.startsWith('sqlite_autoindex_search_')).reduce((n, p) => n + p.bytes, 0);
      const freeBytes = fileBytes - pages.reduce((n, p) => n + p.bytes, 0);
      return Promise.resolve({
        bytes: fileBytes,
        text:
          `kevents ${(fileBytes / 1e6).toFixed(1)} MB = ${Math.round(fileBytes / events)} bytes/event (search index ${(indexBytes / 1e6).toFixed(1)} MB = ${Math.round(indexBytes / events)} bytes/event, ` +
          `+${((indexBytes / (fileBytes - indexBytes - freeBytes)) * 100).toFixed(0)}% on the rest; free pages ${(freeBytes / 1e6).toFixed(1)} MB)`,
      });
    },
    end: () => Promise.resolve(),
  };
}

async function main(): Promise<void> {
  const total = SIZES[SIZES.length - 1]!;
  const archive =
    BACKEND === 'postgres' ? postgresArchive({ url: POSTGRES, layout: LAYOUT, total, fresh: process.env.BENCH_FRESH === '1' }) : sqliteArchive(total);
  if (BACKEND !== 'postgres' && BACKEND !== 'sqlite') throw new Error(`BENCH_BACKEND is sqlite or postgres, not ${BACKEND}`);
  // A run that measures the smaller sizes only needs only their archives.
  const needed = FILL_ONLY ? SIZES : SIZES.filter((n) => n <= Math.max(...MEASURE));
  const fills = new Map<number, Fill>();
  for (const n of needed) {
    const fill = await archive.cachedFill(n);
    if (fill !== undefined) fills.set(n, fill);
  }
  const cached = needed.every((n) => fills.has(n));
  const paths = FILL_ONLY ? undefined : sinkPaths(['victorialogs']).victorialogs;
  if (!FILL_ONLY && paths === undefined) throw new Error('scripts/sinks.mjs --only victorialogs could not set VictoriaLogs up');
  const logs = paths === undefined ? undefined : await startVictoriaLogs(paths);
  const last = Math.max(...(FILL_ONLY || !cached ? SIZES : MEASURE));

  // Ingest: the same batches to both, one after the other, each side's time summed; the figures at each size.
  console.log(
    `${cached ? 'the kevents archives are cached; writing' : `filling ${archive.name(total)} (applyArchiveBatch, ${BATCH} a batch)${FILL_ONLY ? '' : ' and'}`} ` +
      `${FILL_ONLY ? '' : `${SIZES.filter((n) => n <= last).map((n) => n.toLocaleString('en')).join(', then ')} events to VictoriaLogs ${paths!.version} (JSON lines, ${PUSH} a push)`} …; load average ${load()}`,
  );
  const ingest = { keventsMs: 0, vlMs: 0 };
  const resume = cached ? { size: 0 } : await archive.resumeFrom(SIZES);
  const resumeAt = resume.size;
  if (resume.fill !== undefined) {
    fills.set(resumeAt, resume.fill);
    ingest.keventsMs = resume.fill.keventsMs;
    console.log(`  going on from ${archive.name(resumeAt)}`);
  }
  let store = cached ? undefined : await archive.writer();
  let lines: string[] = [];
  let written = 0;
  let nextReport = 1_000_000;
  const sized: Sized[] = [];
  const push = async (): Promise<void> => {
    const t = performance.now();
    const res = await fetch(`${logs!.address}${PUSH_PATH}`, { method: 'POST', headers: { 'Content-Type': 'application/stream+json' }, body: lines.join('\n') });
    if (!res.ok) throw new Error(`VictoriaLogs push: ${res.status} ${await res.text()}`);
    ingest.vlMs += performance.now() - t;
    lines = [];
  };
  // The generator spreads the events over the week by the final total: a smaller size is the oldest part of the archive.
  for (const events of realisticArchive(total, BATCH)) {
    if (store !== undefined && written >= resumeAt) {
      const t = performance.now();
      await store.applyArchiveBatch({ writes: archiveWrites(events), stamp: {} });
      ingest.keventsMs += performance.now() - t;
    }
    if (logs !== undefined) {
      for (const e of events) lines.push(logLine(e));
      if (lines.length >= PUSH) await push();
    }
    written += events.length;
    if (written >= nextReport) {
      console.log(`  ${written.toLocaleString('en')}: kevents ${(ingest.keventsMs / 1000).toFixed(0)} s, VictoriaLogs ${(ingest.vlMs / 1000).toFixed(0)} s; load average ${load()}`);
      nextReport += 1_000_000;
    }
    if (!SIZES.includes(written)) continue;
    if (store !== undefined && written > resumeAt) {
      await store.close();
      const fill: Fill = { keventsMs: ingest.keventsMs, load: load() };
      fills.set(written, fill);
      await archive.save(written, fill);
    }
    if (logs !== undefined && lines.length > 0) await push();
    if (logs !== undefined && MEASURE.includes(written)) {
      // An archive cached by an older build is migrated to this one's schema before it is measured.
      await (await archive.reader(written)).close();
      ingest.keventsMs = fills.get(written)!.keventsMs;
      sized.push(await measure(written, archive, logs, ingest, cached ? fills.get(written)!.load : undefined));
    }
    if (written >= last) break;
    if (store !== undefined && written > resumeAt) store = await archive.writer();
  }
  await archive.end();
  if (logs === undefined) return;
  if (sized.length > 1) {
    const pick = SKIP_HTTP ? 'local' : 'http';
    console.log(`\ngrowth (${pick === 'http' ? 'over HTTP' : 'in process'}; p50 / p99 ms, kevents then VictoriaLogs):`);
    console.log(`| query | ${sized.map((s) => s.events.toLocaleString('en')).join(' | ')} |\n|---|${sized.map(() => '---|').join('')}`);
    for (const [i, query] of QUERIES.entries()) {
      const cells = sized.map((s) => {
        const { k, v } = s[pick][i]!;
        return `${ms(pct(k.times, 50))} / ${ms(pct(k.times, 99))}; ${ms(pct(v.times, 50))} / ${ms(pct(v.times, 99))}`;
      });
      console.log(`| ${query.name} \`${query.q.slice(0, 40)}\` | ${cells.join(' | ')} |`);
    }
  }
  await logs.stop();
}

await main();
