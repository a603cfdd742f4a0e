import type Database from 'better-sqlite3';
import type { DeadLetter, ExportChange, ExportLog, SinkPosition } from '../export-log.js';
import { StorageError } from '../errors.js';
import { decodeEvent } from '../shared/index.js';
import { requireCjs } from '../../internal/index.js';
import { decodeOccurrence } from './archive-tables.js';
import type { OccurrenceRow } from './archive-tables.js';
import { storedTexts } from './texts.js';
import { checkArchiveFile } from './file-check.js';

const SqliteDatabase = requireCjs('better-sqlite3') as typeof Database;

/**
 * EXPORT_SCHEMA holds what sinks keep in the archive: a position (and policy
 * state) per sink, and the records sinks refused for good. The log itself is
 * the `occurrences` table, read by its primary key.
 */
export const EXPORT_SCHEMA = `
CREATE TABLE IF NOT EXISTS export_positions (sink TEXT PRIMARY KEY, position INTEGER NOT NULL, state TEXT, updated_at INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS export_dead_letters (id INTEGER PRIMARY KEY, sink TEXT NOT NULL, change_id INTEGER NOT NULL, record TEXT NOT NULL, error TEXT NOT NULL, attempts INTEGER NOT NULL, at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS export_dead_letters_sink ON export_dead_letters(sink, id);
`;

/** SqliteExportLogOptions configure a SqliteExportLog. */
export interface SqliteExportLogOptions {
  /** path is the archive file a SqliteEventStore writes (in this process or another). */
  path: string;
  now?: () => number;
}

/**
 * SqliteExportLog reads the export log of an SQLite archive on a connection of
 * its own, so an exporter may run beside the store in one process or in a
 * process of its own (WAL: readers never block the writer). It writes only its
 * own tables, in short transactions.
 */
export class SqliteExportLog implements ExportLog {
  private db: Database.Database | undefined;
  private readonly now: () => number;
  private readonly stmt;

  constructor(options: SqliteExportLogOptions) {
    this.now = options.now ?? Date.now;
    let db: Database.Database | undefined;
    try {
      db = new SqliteDatabase(options.path, { fileMustExist: true });
      db.pragma('busy_timeout = 5000');
      checkArchiveFile(db, options.path, true);
      const hasLog = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'occurrences'").get() !== undefined;
      if (!hasLog) throw new Error('the file holds no archive (start kevents serve or kevents mirror on it first)');
      db.exec(EXPORT_SCHEMA);
    } catch (e) {
      db?.close();
      throw new StorageError('Unreachable', `cannot open the archive ${options.path}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
    this.db = db;
    this.stmt = {
      read: db.prepare<[number, number], OccurrenceRow>(
        `SELECT o.id, o.observed_us, o.count_before, o.count_after, o.cluster, o.cluster_uid, o.observed_time, o.body, coalesce(v.object, p.object) AS object
         FROM occurrences o
         LEFT JOIN versions v ON v.rv = o.id
         LEFT JOIN past_versions p ON v.rv IS NULL AND p.rv = o.id
         WHERE o.id > ? ORDER BY o.id LIMIT ?`,
      ),
      head: db.prepare<[], { id: number | null }>('SELECT max(id) AS id FROM occurrences'),
      pending: db.prepare<[number, number], { n: number }>('SELECT count(*) AS n FROM (SELECT id FROM occurrences WHERE id > ? ORDER BY id LIMIT ?)'),
      getPosition: db.prepare<[string], { position: number; state: string | null; updated_at: number }>(
        'SELECT position, state, updated_at FROM export_positions WHERE sink = ?',
      ),
      setPosition: db.prepare<[string, number, string | null, number]>(
        `INSERT INTO export_positions (sink, position, state, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT(sink) DO UPDATE SET position = excluded.position, state = excluded.state, updated_at = excluded.updated_at`,
      ),
      addDeadLetter: db.prepare<[string, number, string, string, number, number]>(
        'INSERT INTO export_dead_letters (sink, change_id, record, error, attempts, at) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      deadLetters: db.prepare<[string, number], { change_id: number; record: string; error: string; attempts: number; at: number }>(
        'SELECT change_id, record, error, attempts, at FROM export_dead_letters WHERE sink = ? ORDER BY id LIMIT ?',
      ),
    };
  }

  read(after: number, limit: number): Promise<ExportChange[]> {
    return this.run(() => {
      const texts = storedTexts(this.db!);
      return this.stmt.read.all(after, limit).map((row) => {
        const event = row.object !== null ? decodeEvent(texts.json(row.object), row.id) : undefined;
        const change: ExportChange = { id: row.id, observedMicros: row.observed_us, occurrence: decodeOccurrence(row, texts, event) };
        if (event !== undefined) change.event = event;
        return change;
      });
    });
  }

  head(): Promise<number> {
    return this.run(() => this.stmt.head.get()?.id ?? 0);
  }

  pending(after: number, cap: number): Promise<number> {
    return this.run(() => this.stmt.pending.get(after, cap)?.n ?? 0);
  }

  getPosition(sink: string): Promise<SinkPosition | undefined> {
    return this.run(() => {
      const row = this.stmt.getPosition.get(sink);
      if (row === undefined) return undefined;
      const p: SinkPosition = { position: row.position, updatedAt: row.updated_at };
      if (row.state !== null) p.state = row.state;
      return p;
    });
  }

  commit(sink: string, update: { position: number; state?: string | undefined; deadLetters?: DeadLetter[] }): Promise<void> {
    return this.run(() => {
      const db = this.db!;
      const at = this.now();
      db.transaction(() => {
        for (const d of update.deadLetters ?? []) this.stmt.addDeadLetter.run(sink, d.changeId, d.record, d.error, d.attempts, d.at ?? at);
        this.stmt.setPosition.run(sink, update.position, update.state ?? null, at);
      }).immediate();
    });
  }

  deadLetters(sink: string, limit: number): Promise<DeadLetter[]> {
    return this.run(() =>
      this.stmt.deadLetters.all(sink, limit).map((r) => ({ sink, changeId: r.change_id, record: r.record, error: r.error, attempts: r.attempts, at: r.at })),
    );
  }

  close(): Promise<void> {
    this.db?.close();
    this.db = undefined;
    return Promise.resolve();
  }

  private run<T>(fn: () => T): Promise<T> {
    if (this.db === undefined) return Promise.reject(new StorageError('Unreachable', 'the export log is closed'));
    try {
      return Promise.resolve(fn());
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      const busy = typeof code === 'string' && /^SQLITE_(BUSY|LOCKED|IOERR|FULL|READONLY)/.test(code);
      return Promise.reject(new StorageError(busy ? 'Unreachable' : 'Internal', `sqlite export log: ${e instanceof Error ? e.message : String(e)}`, { cause: e }));
    }
  }
}
