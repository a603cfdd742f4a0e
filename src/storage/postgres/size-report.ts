import type { SizeRelation, SizeReport } from '../archive-store.js';
import type { PostgresConnection } from './connection.js';
import { CURRENT } from './schema.js';

/** GROWING_TABLES are the tables whose size follows the archive's history, the part a retention removes from (`texts`: the long messages its rows refer to). */
const GROWING_TABLES = new Set(['versions', 'occurrences', 'texts']);

/**
 * postgresSizeReport measures a PostgreSQL archive: each table's size (`pg_table_size`: its heap, TOAST and
 * free-space maps) and each index's (`pg_relation_size`) in the store's schema, the events, versions and
 * occurrences it holds (counted: a scan of each table), and, with a cutoff, the occurrences observed before it
 * and their share of the growing tables' bytes.
 */
export async function postgresSizeReport(c: PostgresConnection, retentionCutoffMs?: number): Promise<SizeReport> {
  const { pool } = await c.open();
  const rows = await c.query<{ name: string; owner: string; kind: string; bytes: string }>(pool, {
    text: `SELECT r.relname AS name, coalesce(t.relname, r.relname) AS owner, r.relkind AS kind,
        CASE WHEN r.relkind = 'i' THEN pg_relation_size(r.oid) ELSE pg_table_size(r.oid) END AS bytes
      FROM pg_class r JOIN pg_namespace n ON n.oid = r.relnamespace
      LEFT JOIN pg_index i ON i.indexrelid = r.oid LEFT JOIN pg_class t ON t.oid = i.indrelid
      WHERE n.nspname = $1 AND r.relkind IN ('r', 'p', 'i')`,
    values: [c.s],
  });
  const relations: SizeRelation[] = rows
    .map((r): SizeRelation => ({ name: r.name, table: r.owner, kind: r.kind === 'i' ? 'index' : 'table', bytes: Number(r.bytes) }))
    .sort((a, b) => b.bytes - a.bytes || a.name.localeCompare(b.name));
  const count = async (sql: string, values: unknown[] = []): Promise<number> => Number((await c.query<{ n: string }>(pool, { text: sql, values }))[0]?.n ?? 0);
  const occurrences = await count(`SELECT count(*) AS n FROM ${c.s}.occurrences`);
  const report: SizeReport = {
    totalBytes: relations.reduce((n, r) => n + r.bytes, 0),
    relations,
    events: await count(`SELECT count(*) AS n FROM ${c.s}.versions WHERE ${CURRENT}`),
    versions: await count(`SELECT count(*) AS n FROM ${c.s}.versions`),
    occurrences,
  };
  if (retentionCutoffMs !== undefined) {
    const old = await count(`SELECT count(*) AS n FROM ${c.s}.occurrences WHERE observed_us < $1`, [retentionCutoffMs * 1000]);
    const growing = relations.filter((r) => GROWING_TABLES.has(r.table)).reduce((n, r) => n + r.bytes, 0);
    report.retention = { cutoffMs: retentionCutoffMs, occurrences: old, bytes: occurrences === 0 ? 0 : Math.round((growing * old) / occurrences) };
  }
  return report;
}
