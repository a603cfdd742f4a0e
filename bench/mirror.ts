/**
 * Mirror benchmark: `kevents mirror` (the built CLI, as a process) archiving a
 * local `kevents serve` source into SQLite, with raw SQLite inserts of the same
 * events measured in the same run as the baseline.
 *
 *   - cold start: a mirror with an empty archive over BENCH_EVENTS (default
 *     100,000) live source events: process start, paginated list, commit;
 *   - ingest: events/s of that list path, and of the watch path (a restarted
 *     mirror catching up BENCH_EVENTS changes from its checkpoint), as a share of
 *     raw better-sqlite3 inserts (same JSON, 1,000 rows per transaction, WAL,
 *     synchronous NORMAL);
 *   - bytes on disk per archived event (event versions, occurrences, indexes);
 *   - resident memory of the mirror process while the source takes 1,000
 *     creates/s for BENCH_SECONDS (default 60).
 *
 * Run: npm run build && node --import tsx bench/mirror.ts
 */
import Database from 'better-sqlite3';
import type { ChildProcess } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, benchDir, rssMiB, sleep, startCli, stopCli } from './support/cli.js';
import { create, fill, metric, waitWritten } from './support/source.js';

const N = Number(process.env.BENCH_EVENTS ?? 100_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const RATE = 1_000;
/** MIRROR_NODE_ARGS are node options for the mirror processes only (BENCH_MIRROR_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"). */
const MIRROR_NODE_ARGS = (process.env.BENCH_MIRROR_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
const dir = benchDir('mirror');

/** start runs kevents (the mirror with MIRROR_NODE_ARGS) until its banner. */
function start(args: string[], banner: RegExp): Promise<{ child: ChildProcess; url: string; startedAt: number }> {
  return startCli(args, banner, args[0] === 'mirror' ? MIRROR_NODE_ARGS : []);
}

async function rawInserts(base: string): Promise<number> {
  // The same objects the mirror receives: read back from the source.
  const rows: [string, string][] = [];
  let cont = '';
  do {
    const page = (await (await fetch(`${base}/api/v1/events?limit=5000${cont === '' ? '' : `&continue=${cont}`}`)).json()) as {
      items: { metadata: { namespace: string; name: string } }[];
      metadata: { continue?: string };
    };
    for (const e of page.items) rows.push([`${e.metadata.namespace}/${e.metadata.name}`, JSON.stringify(e)]);
    cont = page.metadata.continue ?? '';
  } while (cont !== '');
  const db = new Database(join(dir, 'raw.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE t (key TEXT PRIMARY KEY, object TEXT NOT NULL)');
  const ins = db.prepare('INSERT INTO t (key, object) VALUES (?, ?)');
  const commit = db.transaction((chunk: [string, string][]) => {
    for (const r of chunk) ins.run(r[0], r[1]);
  });
  const t0 = performance.now();
  for (let i = 0; i < rows.length; i += 1000) commit(rows.slice(i, i + 1000));
  const rate = rows.length / ((performance.now() - t0) / 1000);
  db.close();
  return rate;
}

/** diskBytes measures the archive file, and what each table and index takes of it (SQLite's dbstat). */
function diskBytes(path: string): { file: number; used: number; byName: { name: string; bytes: number }[] } {
  let file = 0;
  for (const suffix of ['', '-wal']) if (existsSync(path + suffix)) file += statSync(path + suffix).size;
  const db = new Database(path, { readonly: true });
  const pages = db.pragma('page_count', { simple: true }) as number;
  const free = db.pragma('freelist_count', { simple: true }) as number;
  const size = db.pragma('page_size', { simple: true }) as number;
  const byName = db.prepare<[], { name: string; bytes: number }>('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC').all();
  db.close();
  return { file, used: (pages - free) * size, byName };
}

async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error('run "npm run build" first');
  console.log(`kevents mirror benchmark: ${N.toLocaleString('en')} source events, node ${process.version}`);
  const source = await start(['serve', '--listen', '127.0.0.1:0', '--storage', 'memory:', '--event-ttl', '0', '--log-level', 'error'], /listening on (http:\/\/\S+)/);
  const fillRate = await fill(source.url, 0, N);
  console.log(`source filled with ${N.toLocaleString('en')} events over HTTP (${Math.round(fillRate)}/s)`);

  const raw = await rawInserts(source.url);

  // Cold start: an empty archive over N live events.
  const archive = join(dir, 'archive.db');
  const mirrorArgs = ['mirror', '--source', source.url, '--to', `sqlite:${archive}`, '--listen', '127.0.0.1:0', '--log-level', 'error'];
  let mirror = await start(mirrorArgs, /readiness on (http:\/\/\S+)/);
  const cold = await waitWritten(mirror.url, N);
  const coldS = (cold.done - mirror.startedAt) / 1000;
  const listRate = N / ((cold.done - cold.first) / 1000);
  await stopCli(mirror.child);
  const disk = diskBytes(archive);

  // Watch path: N more changes while the mirror is down, caught up from its checkpoint.
  await fill(source.url, N, N);
  mirror = await start(mirrorArgs, /readiness on (http:\/\/\S+)/);
  const caught = await waitWritten(mirror.url, N);
  const watchRate = N / ((caught.done - caught.first) / 1000);

  // Memory at a steady 1,000 events/s.
  const samples: number[] = [rssMiB(mirror.child.pid!)];
  let i = 2 * N;
  const t0 = performance.now();
  let lastSample = t0;
  // Creates are paced by the clock, not by their answers, up to 256 in flight.
  const inFlight = new Set<Promise<void>>();
  let tick = 0;
  while (performance.now() - t0 < SECONDS * 1000) {
    tick++;
    for (let k = 0; k < RATE / 10 && inFlight.size < 256; k++) {
      const p = create(source.url, i++).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    if (performance.now() - lastSample >= 5_000) {
      samples.push(rssMiB(mirror.child.pid!));
      lastSample = performance.now();
    }
    await sleep(Math.max(0, t0 + tick * 100 - performance.now()));
  }
  await Promise.all(inFlight);
  const sentRate = (i - 2 * N) / ((performance.now() - t0) / 1000);
  const lag = await metric(mirror.url, 'kevents_mirror_watch_lag_seconds');
  await waitWritten(mirror.url, N + (i - 2 * N));
  await stopCli(mirror.child);
  await stopCli(source.child);

  console.table([
    { what: 'raw better-sqlite3 insert (key, object), 1,000 rows/commit', 'events/s': Math.round(raw), 'share of raw': '' },
    { what: 'mirror ingest, list path (cold start)', 'events/s': Math.round(listRate), 'share of raw': (listRate / raw).toFixed(2) },
    { what: 'mirror ingest, watch path (catch-up from checkpoint)', 'events/s': Math.round(watchRate), 'share of raw': (watchRate / raw).toFixed(2) },
  ]);
  console.log(`cold start over ${N.toLocaleString('en')} live events: ${coldS.toFixed(2)} s (process start to the last event committed)`);
  console.log(
    `on disk: ${(disk.file / N).toFixed(0)} bytes per event in the files, ${(disk.used / N).toFixed(0)} bytes per event in used pages ` +
      `(each event: its version row, one occurrence, indexes)`,
  );
  console.log(
    `  by table and index: ${disk.byName
      .filter((r) => r.bytes / N >= 1)
      .map((r) => `${r.name} ${(r.bytes / N).toFixed(0)}`)
      .join(', ')} bytes per event`,
  );
  console.log(
    `mirror RSS at ${Math.round(sentRate)} events/s for ${SECONDS} s: ${samples.map((s) => s.toFixed(0)).join(', ')} MiB ` +
      `(max ${Math.max(...samples).toFixed(0)} MiB); watch lag at the end ${lag.toFixed(2)} s`,
  );
}

await main();
process.exit(0);
