/**
 * The occurrence reads of two SQLite archives side by side: the same archive in the layout before (indexes that end in
 * `id`) and after (`observed_us` last, the rowid ending each entry as before), each statement run on both in turn, so
 * load on the machine falls on both alike. The reads are those the occurrence indexes serve: pages in observed order
 * (`occ_time`, a timeline of everything and retention), one object's pages without a namespace (`occ_regarding`, a
 * Node's timeline) and in its namespace (`occ_regarding_ns`), and the search hits' first occurrences
 * (`firstOfEvents`). Neither file is changed: both are opened read-only, with better-sqlite3 and no kevents code that
 * would migrate them.
 *
 * Run: node --import tsx bench/sqlite-occurrence-indexes.ts BEFORE.db AFTER.db
 *   BENCH_RUNS (7), BENCH_OBJECTS (20: the objects with the most occurrences, each read whole).
 */
import Database from 'better-sqlite3';
import { firstOfEvents } from '../src/storage/sqlite/event-occurrences.js';
import { pct } from './support/https-load.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 20);
/** PAGE is a page of occurrences as `kevents serve` reads them. */
const PAGE = 500;

const COLUMNS = 'o.id, o.observed_us, o.count_before, o.count_after, o.cluster, o.observed_time, o.body, coalesce(v.object, p.object) AS object';
const JOINS = 'LEFT JOIN versions v ON o.body IS NULL AND v.rv = o.id LEFT JOIN past_versions p ON o.body IS NULL AND v.rv IS NULL AND p.rv = o.id';

/** pageSql is `ArchiveTables`' page statement for one index and its conditions. */
function pageSql(index: string, conds: string[]): string {
  return `SELECT ${COLUMNS} FROM occurrences o INDEXED BY ${index} ${JOINS} WHERE ${[...conds, '(o.observed_us, o.id) > (@t, @id)'].join(' AND ')} ORDER BY o.observed_us, o.id LIMIT ${PAGE}`;
}

type Read = (db: Database.Database) => number;

/** walk reads every page of a statement from the start, and returns the rows read. */
function walk(sql: string, params: Record<string, unknown>): Read {
  return (db) => {
    const stmt = db.prepare<Record<string, unknown>, { id: number; observed_us: number }>(sql);
    let t = -1;
    let id = -1;
    let rows = 0;
    for (;;) {
      const page = stmt.all({ ...params, t, id });
      rows += page.length;
      if (page.length < PAGE) return rows;
      t = page[page.length - 1]!.observed_us;
      id = page[page.length - 1]!.id;
    }
  };
}

function main(): void {
  const [beforePath, afterPath] = process.argv.slice(2);
  if (beforePath === undefined || afterPath === undefined) throw new Error('usage: sqlite-occurrence-indexes.ts BEFORE.db AFTER.db');
  const files = [beforePath, afterPath].map((path) => new Database(path, { readonly: true }));
  for (const db of files) {
    const forms = db.prepare<[], { sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'occurrences' ORDER BY name").all();
    console.log(`${db.name}: ${forms.map((f) => f.sql.replace(/^.* ON /, '')).join(', ')}`);
  }
  const top = files[0]!
    .prepare<[number], { hash: number; namespace: string; n: number }>(
      'SELECT regarding_hash AS hash, namespace, count(*) AS n FROM occurrences GROUP BY regarding_hash, namespace ORDER BY n DESC LIMIT ?',
    )
    .all(OBJECTS);
  const hits = files[0]!
    .prepare<[], { rv: number; key: string; hash: number; namespace: string }>(
      'SELECT v.rv, v.key, o.regarding_hash AS hash, o.namespace FROM occurrences o JOIN versions v ON v.rv = o.id ORDER BY o.observed_us DESC LIMIT 100',
    )
    .all();
  const events = JSON.stringify(hits.map((h, i) => [i, h.hash, h.namespace, h.key]));
  const reads: [string, Read][] = [
    ['every occurrence in observed order (occ_time)', walk(pageSql('occ_time', []), {})],
    [`the ${OBJECTS} busiest objects, all namespaces (occ_regarding)`, (db) => top.reduce((n, o) => n + walk(pageSql('occ_regarding', ['o.regarding_hash = @h']), { h: o.hash })(db), 0)],
    [
      `the ${OBJECTS} busiest objects in their namespace (occ_regarding_ns)`,
      (db) => top.reduce((n, o) => n + walk(pageSql('occ_regarding_ns', ['o.regarding_hash = @h', 'o.namespace = @ns']), { h: o.hash, ns: o.namespace })(db), 0),
    ],
    ['first occurrences of 100 search hits (firstOfEvents)', (db) => db.prepare(firstOfEvents(false)).all({ events, batch: 10 }).length],
  ];
  console.log(`\n| read | rows | before p50 / p99 ms | after p50 / p99 ms | after ÷ before (p50) |\n|---|---|---|---|---|`);
  for (const [name, read] of reads) {
    const times: number[][] = [[], []];
    const rows = files.map((db) => read(db));
    if (rows[0] !== rows[1]) throw new Error(`${name}: ${rows[0]} rows before, ${rows[1]} after`);
    for (let r = 0; r < RUNS; r++) {
      for (const [i, db] of files.entries()) {
        const t = performance.now();
        read(db);
        times[i]!.push(performance.now() - t);
      }
    }
    const [b, a] = times.map((t) => [...t].sort((x, y) => x - y));
    const f = (t: number[], p: number): string => pct(t, p).toFixed(2);
    console.log(`| ${name} | ${rows[0]} | ${f(b!, 50)} / ${f(b!, 99)} | ${f(a!, 50)} / ${f(a!, 99)} | ${(pct(a!, 50) / pct(b!, 50)).toFixed(2)}× |`);
  }
  for (const db of files) db.close();
}

main();
