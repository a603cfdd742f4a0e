/**
 * The search's worst cases on the SQLite archive (issue #47): queries whose index
 * finds many candidates and keeps none, a histogram whose query SQL cannot decide
 * alone, a namespace that is no namespace. Each is answered as the route answers
 * it (`searchPage`: reads of 500 candidates with the event loop let go between
 * them), BENCH_RUNS times, and measured two ways: the whole answer (p50, ms) and
 * the longest the event loop was held meanwhile (the longest gap between two turns
 * of a timer running beside it),
 * which is what every other request of the server waits for.
 *
 * The archive is BENCH_EVENTS generated events (bench/support/realistic-events.ts)
 * written through `applyArchiveBatch`, kept in BENCH_DIR between runs.
 *
 * Run: node --import tsx bench/search-worst.ts   (BENCH_EVENTS=150000 BENCH_RUNS=5)
 */
import { parseSearchQuery } from '../src/api/index.js';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SearchRequest } from '../src/storage/index.js';
import { SqliteEventStore } from '../src/storage/sqlite/index.js';
import { searchPage } from '../src/server/archive/search-page.js';
import { ARCHIVE_END as END, ARCHIVE_SPAN_MS as SPAN_MS, archiveWrites, realisticArchive } from './support/realistic-events.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 150_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const DIR = process.env.BENCH_DIR ?? join(tmpdir(), 'kevents-bench-search-worst');

/** QUERIES are the worst cases: what each costs grows with the archive, not with its hits. */
const QUERIES: { name: string; q: string; histogram?: boolean }[] = [
  { name: '"ip" x250 (a phrase of one common word)', q: `"${Array(250).fill('ip').join(' ')}"` },
  { name: '"ip" x32', q: `"${Array(32).fill('ip').join(' ')}"` },
  { name: 'ns:team (no such namespace)', q: 'ns:team' },
  { name: 'container, histogram 1h over the week', q: 'container', histogram: true },
  { name: 'name:checkout*, histogram 1h over the week', q: 'name:checkout*', histogram: true },
  { name: 'x509 (rare)', q: 'x509' },
  { name: 'reason:FailedMount secret', q: 'reason:FailedMount secret' },
];

async function archive(): Promise<SqliteEventStore> {
  mkdirSync(DIR, { recursive: true });
  const path = join(DIR, `archive-${EVENTS}.db`);
  const fresh = !existsSync(path);
  const store = new SqliteEventStore({ path });
  await store.ready();
  if (fresh) {
    const started = performance.now();
    for (const events of realisticArchive(EVENTS, 1000)) await store.applyArchiveBatch({ writes: archiveWrites(events), stamp: {} });
    console.log(`filled ${EVENTS} events in ${((performance.now() - started) / 1000).toFixed(1)} s (${path})`);
  }
  return store;
}

/** loopProbe turns a 1 ms timer until stopped and tells the longest gap between two of its turns. */
function loopProbe(): { stop: () => Promise<number> } {
  let last = performance.now();
  let max = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    max = Math.max(max, now - last);
    last = now;
  }, 1);
  return {
    stop: async () => {
      // One more turn, so that a block at the very end is counted.
      await new Promise((r) => setTimeout(r, 2));
      clearInterval(timer);
      return max;
    },
  };
}

const p50 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const store = await archive();
console.log(`| query | hits | answer p50 ms | event loop held, max ms | status |`);
console.log(`|---|---|---|---|---|`);
for (const { name, q, histogram } of QUERIES) {
  const times: number[] = [];
  const held: number[] = [];
  let hits = 0;
  let status = 'ok';
  for (let i = 0; i < RUNS; i++) {
    const query = (() => {
      try {
        return parseSearchQuery(q, { nowMs: END });
      } catch (e) {
        status = (e as Error).message;
        return undefined;
      }
    })();
    if (query === undefined) break;
    const request: SearchRequest = { query, limit: 100 };
    if (histogram === true) request.histogram = { sinceMs: END - SPAN_MS - 3_600_000, untilMs: END, bucketMs: 3_600_000 };
    const probe = loopProbe();
    const started = performance.now();
    try {
      const page = await searchPage(store, request);
      hits = page.items.length;
    } catch (e) {
      status = (e as Error).message;
    }
    times.push(performance.now() - started);
    held.push(await probe.stop());
  }
  console.log(`| ${name} | ${hits} | ${times.length > 0 ? p50(times).toFixed(1) : '-'} | ${held.length > 0 ? Math.max(...held).toFixed(1) : '-'} | ${status.slice(0, 80)} |`);
}
await store.close();
