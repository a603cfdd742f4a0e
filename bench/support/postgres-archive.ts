/**
 * The PostgreSQL side of bench/search-vs-victorialogs.ts: a kevents archive in a
 * schema of its own (`kevents_bench_vlogs_<layout>_<total>`), written through
 * `PostgresEventStore.applyArchiveBatch` and kept across runs (as
 * bench/search-postgres.ts keeps its BENCH_KEEP schema), with what each fill
 * measured in a small table beside it, and the archive's sizes as PostgreSQL
 * counts them.
 */
import pg from 'pg';
import type { ArchiveStore, SearchCapable } from '../../src/storage/index.js';
import { PostgresEventStore } from '../../src/storage/postgres/index.js';

/** BenchStore is what the bench needs of a store: the bulk path to write, the search to read, and close. */
export type BenchStore = Pick<ArchiveStore, 'applyArchiveBatch' | 'close'> & SearchCapable;

/** Fill is what writing the archive up to a size measured: its time through applyArchiveBatch, and the load average then. */
export interface Fill {
  keventsMs: number;
  load: string;
}

/** BenchArchive is the kevents side of a search bench run: where its archive at each size is written, kept and read. */
export interface BenchArchive {
  /** name says where the archive of `size` events is. */
  name(size: number): string;
  /** cachedFill is what the fill of the archive of `size` events measured when that archive is kept (undefined: it is not). */
  cachedFill(size: number): Promise<Fill | undefined>;
  /** resumeFrom is the largest kept size below the total a fill can go on from (0: none), the archive made ready for it. */
  resumeFrom(sizes: number[]): Promise<{ size: number; fill?: Fill }>;
  /** writer opens the store the fill writes to. */
  writer(): Promise<BenchStore>;
  /** save keeps the archive as it stands, `size` events written (the writer closed). */
  save(size: number, fill: Fill): Promise<void>;
  /** reader opens the archive of `size` events for the queries, migrated to this build's schema. */
  reader(size: number): Promise<BenchStore>;
  /** storage is `kevents serve --storage`'s value for the archive of `size` events. */
  storage(size: number): string;
  /** onDisk describes the archive's bytes: its total and the search index's share. */
  onDisk(events: number): Promise<{ bytes: number; text: string }>;
  /** end releases what the archive holds open. */
  end(): Promise<void>;
}

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

/** postgresArchive is the BenchArchive of a PostgreSQL schema for a run of `total` events. */
export function postgresArchive(o: { url: string; layout: string; total: number; fresh: boolean }): BenchArchive {
  const schema = `kevents_bench_vlogs_${o.layout}_${o.total}`;
  const admin = new pg.Pool({ connectionString: o.url, max: 2 });
  const open = async (): Promise<PostgresEventStore> => {
    const store = new PostgresEventStore({ connectionString: o.url, schema, poolSize: 4 });
    await store.ready();
    return store;
  };
  const revision = async (): Promise<number> => {
    const { rows } = await admin.query<{ t: string | null }>('SELECT to_regclass($1) AS t', [`${schema}.meta`]);
    if (rows[0]?.t == null) return -1;
    const { rows: r } = await admin.query<{ value: string }>(`SELECT value FROM ${schema}.meta WHERE name = 'revision'`);
    return Number(r[0]?.value ?? 0);
  };
  // A size is kept while the schema holds exactly what was written at it: its revision then is the schema's now.
  const fills = async (): Promise<Map<number, Fill & { revision: number }>> => {
    const { rows } = await admin.query<{ t: string | null }>('SELECT to_regclass($1) AS t', [`${schema}.bench_fills`]);
    if (rows[0]?.t == null) return new Map();
    const { rows: r } = await admin.query<{ size: string; kevents_ms: number; load: string; revision: string }>(`SELECT size, kevents_ms, load, revision FROM ${schema}.bench_fills`);
    return new Map(r.map((x) => [Number(x.size), { keventsMs: x.kevents_ms, load: x.load, revision: Number(x.revision) }]));
  };
  let fresh = o.fresh;
  return {
    name: (size) => `PostgreSQL schema ${schema} (${size.toLocaleString('en')} events)`,
    async cachedFill(size) {
      if (fresh) return undefined;
      const f = (await fills()).get(size);
      return f !== undefined && f.revision === (await revision()) ? { keventsMs: f.keventsMs, load: f.load } : undefined;
    },
    async resumeFrom(sizes) {
      const now = await revision();
      const kept = fresh ? [] : [...(await fills())].filter(([n, f]) => f.revision === now && n < o.total && sizes.includes(n));
      const [size, f] = kept.sort((a, b) => b[0] - a[0])[0] ?? [0, undefined];
      if (size === 0) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      fresh = false;
      return f === undefined ? { size } : { size, fill: { keventsMs: f.keventsMs, load: f.load } };
    },
    writer: open,
    async save(size, fill) {
      await admin.query(`CREATE TABLE IF NOT EXISTS ${schema}.bench_fills (size bigint PRIMARY KEY, kevents_ms double precision NOT NULL, load text NOT NULL, revision bigint NOT NULL)`);
      await admin.query(
        `INSERT INTO ${schema}.bench_fills VALUES ($1, $2, $3, $4) ON CONFLICT (size) DO UPDATE SET kevents_ms = excluded.kevents_ms, load = excluded.load, revision = excluded.revision`,
        [size, fill.keventsMs, fill.load, await revision()],
      );
      // The statistics and the visibility map a long-running archive has from autovacuum, before it is measured.
      await admin.query(`VACUUM ANALYZE ${schema}.versions`);
      await admin.query(`VACUUM ANALYZE ${schema}.occurrences`);
    },
    reader: open,
    storage: () => `${o.url}${o.url.includes('?') ? '&' : '?'}schema=${schema}`,
    async onDisk(events) {
      const { rows } = await admin.query<{ name: string; kind: string; bytes: string }>(
        `SELECT c.relname AS name, c.relkind AS kind, pg_relation_size(c.oid) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relkind IN ('r', 'i') AND c.relname <> 'bench_fills'`,
        [schema],
      );
      const { rows: t } = await admin.query<{ toast: string; vectors: string; times: string }>(
        `SELECT (SELECT sum(pg_table_size(c.oid) - pg_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r' AND c.relname <> 'bench_fills') AS toast,
                (SELECT sum(pg_column_size(search)) FROM ${schema}.versions) AS vectors, (SELECT sum(pg_column_size(last_ms)) FROM ${schema}.versions) AS times`,
        [schema],
      );
      const bytes = (p: (r: { name: string; kind: string }) => boolean): number => rows.filter(p).reduce((n, r) => n + Number(r.bytes), 0);
      const versions = bytes((r) => r.name === 'versions');
      const occurrences = bytes((r) => r.name === 'occurrences');
      const heaps = bytes((r) => r.kind === 'r');
      const indexes = bytes((r) => r.kind === 'i');
      const searchIndexes = bytes((r) => r.name === 'search_words' || r.name === 'search_time' || r.name === 'search_reason');
      // TOAST, the free space and visibility maps of every table.
      const toast = Number(t[0]!.toast);
      const columns = Number(t[0]!.vectors) + Number(t[0]!.times);
      const total = heaps + indexes + toast;
      const search = searchIndexes + columns;
      const per = (n: number): string => `${Math.round(n / events)} bytes/event`;
      return {
        bytes: total,
        text:
          `kevents ${mb(total)} = ${per(total)}: versions ${mb(versions)}, occurrences ${mb(occurrences)}, other tables ${mb(heaps - versions - occurrences)}, TOAST and maps ${mb(toast)}, ` +
          `indexes ${mb(indexes)} (${rows.filter((r) => r.kind === 'i').sort((a, b) => Number(b.bytes) - Number(a.bytes)).slice(0, 6).map((r) => `${r.name} ${mb(Number(r.bytes))}`).join(', ')}, …); ` +
          `search: the GIN ${mb(bytes((r) => r.name === 'search_words'))}, the time b-tree ${mb(bytes((r) => r.name === 'search_time'))}, ` +
          `the reason and time b-tree ${mb(bytes((r) => r.name === 'search_reason'))}, the vector and last_ms columns ${mb(columns)} = ${mb(search)} = ${per(search)}, ` +
          `+${((search / (total - search)) * 100).toFixed(0)}% on the rest`,
      };
    },
    end: () => admin.end(),
  };
}
