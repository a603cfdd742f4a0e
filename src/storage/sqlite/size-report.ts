import type Database from 'better-sqlite3';
import type { SizeRelation, SizeReport } from '../archive-store.js';
import { CURRENT } from './schema.js';

/**
 * GROWING_TABLES are the tables whose size follows the archive's history, the part a retention removes from:
 * the versions, the past versions occurrences keep, the occurrences, the long messages those refer to (`texts`), and
 * the search index (its FTS5 tables).
 */
const GROWING_TABLES = /^(versions|past_versions|occurrences|texts|search_fts.*)$/;

/**
 * sqliteSizeReport measures a SQLite archive: each table's and index's pages (SQLite's `dbstat`, which reads
 * every page of the file: seconds per GB), the events, versions and occurrences it holds, and, with a cutoff,
 * the occurrences observed before it and their share of the growing tables' bytes.
 */
export function sqliteSizeReport(db: Database.Database, retentionCutoffMs?: number): SizeReport {
  const owners = new Map(
    db
      .prepare<[], { name: string; tbl_name: string; type: string }>("SELECT name, tbl_name, type FROM sqlite_schema WHERE type IN ('table', 'index')")
      .all()
      .map((r) => [r.name, r]),
  );
  const relations: SizeRelation[] = db
    .prepare<[], { name: string; bytes: number }>('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name')
    .all()
    .map((r): SizeRelation => {
      const owner = owners.get(r.name);
      // SQLite's own b-trees (sqlite_schema, an autoindex) count where they are.
      return { name: r.name, table: owner?.tbl_name ?? r.name, kind: owner?.type === 'index' || r.name.startsWith('sqlite_autoindex') ? 'index' : 'table', bytes: r.bytes };
    })
    .sort((a, b) => b.bytes - a.bytes || a.name.localeCompare(b.name));
  const count = (sql: string, ...params: number[]): number => db.prepare<number[], { n: number }>(sql).get(...params)?.n ?? 0;
  const occurrences = count('SELECT count(*) AS n FROM occurrences');
  const report: SizeReport = {
    totalBytes: relations.reduce((n, r) => n + r.bytes, 0),
    relations,
    events: count(`SELECT count(*) AS n FROM versions WHERE ${CURRENT}`),
    versions: count('SELECT count(*) AS n FROM versions') + count('SELECT count(*) AS n FROM past_versions'),
    occurrences,
  };
  if (retentionCutoffMs !== undefined) {
    const old = count('SELECT count(*) AS n FROM occurrences WHERE observed_us < ?', retentionCutoffMs * 1000);
    const growing = relations.filter((r) => GROWING_TABLES.test(r.table)).reduce((n, r) => n + r.bytes, 0);
    report.retention = { cutoffMs: retentionCutoffMs, occurrences: old, bytes: occurrences === 0 ? 0 : Math.round((growing * old) / occurrences) };
  }
  return report;
}
