import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';

/**
 * checkArchiveFile refuses a damaged archive before anything reads or writes
 * it, throwing an Error whose message is SQLite's own. A page overwritten in
 * the middle of a file is otherwise found only when a request first reads that
 * page (and a mirror would append to a file it can no longer read back), and a
 * file cut to nothing would open as a new, empty archive. `PRAGMA quick_check`
 * reads every page once (about 2.5 s per GiB from the page cache, docs/reliability.md)
 * but skips the index-against-table comparison that makes `integrity_check`
 * seven times slower. A missing file (a new archive) is not checked.
 */
export function checkArchiveFile(db: Database.Database, path: string, existed: boolean): void {
  if (!existed || path === ':memory:' || path === '') return;
  // SQLite takes an empty file for an empty database; a file that existed is an archive that lost its contents.
  if (statSync(path).size === 0) throw new Error('the file is empty (0 bytes): not an archive; remove it to start a new one');
  const rows = db.pragma('quick_check(5)') as { quick_check: string }[];
  const problems = rows.map((r) => r.quick_check).filter((m) => m !== 'ok');
  if (problems.length > 0) throw new Error(`database disk image is malformed (quick_check: ${problems.join('; ').replace(/\s+/g, ' ')})`);
}

/** fileExists says whether an archive file is there before SQLite opens (and so creates) it. */
export function fileExists(path: string): boolean {
  if (path === ':memory:' || path === '') return false;
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
