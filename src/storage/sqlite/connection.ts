/**
 * SqliteConnection owns a store's connections to its file and everything that
 * must change together with them: the revision counters, the group commit and
 * the watch hub it publishes to. The list, write, watch and retention parts of
 * `SqliteEventStore` each run over this one owner, so none of them opens,
 * commits or closes on its own.
 */
import type Database from 'better-sqlite3';
import { StorageError, isStorageError } from '../errors.js';
import { WatchHub, resolveCommonOptions } from '../shared/index.js';
import type { Change, ResolvedCommonOptions, Ticker } from '../shared/index.js';
import { requireCjs } from '../../internal/index.js';
import { ArchiveTables } from './archive-tables.js';
import { Checkpointer } from './checkpointer.js';
import { checkArchiveFile, fileExists } from './file-check.js';
import { ListQueries } from './list-query.js';
import { DEFAULT_CACHE_SIZE_MIB, DEFAULT_MAX_BATCH } from './options.js';
import type { FollowerWrite, SqliteEventStoreOptions, WriterLink } from './options.js';
import { Op, applySchema } from './schema.js';
import { SEARCH_TOKENIZER, SqliteSearch } from './search-index.js';
import { openSearchIndex } from './search-index-writer.js';
import type { SearchIndexWriter } from './search-index-writer.js';
import { prepareStatements } from './statements.js';
import type { Statements } from './statements.js';
import { storedTexts } from './texts.js';
import { internedValues } from './interned.js';
import type { StoredTexts } from './texts.js';

/** SqliteDatabase is better-sqlite3's constructor, loaded through `require` (see `requireCjs`). */
const SqliteDatabase = requireCjs('better-sqlite3') as typeof Database;

interface Pending {
  /** run does one write inside the batch's transaction. It throws a StorageError only before writing anything. */
  run: (changes: Change[]) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

/** MARK_INTERVAL_MS is the resolution of the time-to-revision marks retention reads. */
const MARK_INTERVAL_MS = 1_000;

/**
 * SEARCH_INDEX_DELAY_MS is how long a committed version waits at most, the writer being free, before the search
 * index's catch-up writes it (with every other waiting): the index's lag under a steady load, as a search reads the
 * versions above its high-water mark by scanning them. Longer makes larger batches (one FTS5 segment each, fewer
 * merges) for a longer scan; see docs/benchmarks.md.
 */
export const SEARCH_INDEX_DELAY_MS = 200;
/** SEARCH_INDEX_BATCH and SEARCH_INDEX_BATCH_BYTES start a catch-up at once: what a search's scan of the versions not indexed decodes stays bounded. */
const SEARCH_INDEX_BATCH = 8_192;
const SEARCH_INDEX_BATCH_BYTES = 8 * 1024 * 1024;

/** SAFETY_CHECKPOINT_PAGES (80 MiB of WAL) makes the writer checkpoint itself only if the checkpoint thread cannot keep up. */
const SAFETY_CHECKPOINT_PAGES = 20_000;
/** WAL_SIZE_LIMIT truncates the WAL file back to 64 MiB after a burst. */
const WAL_SIZE_LIMIT = 64 * 1024 * 1024;

/** CHANGE_TYPES names a version row's `op` as a watch event type. */
export const CHANGE_TYPES = { [Op.ADDED]: 'ADDED', [Op.MODIFIED]: 'MODIFIED', [Op.DELETED]: 'DELETED' } as const;

/**
 * LIST_CACHE_MIB bounds the page cache of the list connection: a page of 500
 * reads about 500 table pages (2 MiB), and a stream of every event would
 * otherwise fill the writer's whole cache with pages read once.
 */
const LIST_CACHE_MIB = 4;

/**
 * openListConnection opens a read-only connection for lists on a file. Reads and
 * commits run on the one thread, never interleaved, so it sees exactly what the
 * writer has committed. A memory database has no second connection.
 */
function openListConnection(path: string): Database.Database | undefined {
  if (path === ':memory:' || path === '') return undefined;
  const db = new SqliteDatabase(path, { readonly: true });
  db.pragma(`cache_size = -${LIST_CACHE_MIB * 1024}`);
  db.pragma('busy_timeout = 5000');
  return db;
}

/** tuneConnection sets what a writer's and a follower's connection share: the page cache, temporary tables in memory, and waiting out another connection's lock. */
function tuneConnection(db: Database.Database, options: Pick<SqliteEventStoreOptions, 'cacheSizeMiB'>): void {
  db.pragma(`cache_size = -${(options.cacheSizeMiB ?? DEFAULT_CACHE_SIZE_MIB) * 1024}`);
  db.pragma('temp_store = MEMORY');
  db.pragma('busy_timeout = 5000');
}

/** storageFailure wraps a driver error in the storage vocabulary: the file being unusable is Unreachable, anything else Internal. */
export function storageFailure(e: unknown): StorageError {
  if (isStorageError(e)) return e;
  const code = (e as { code?: unknown }).code;
  const message = e instanceof Error ? e.message : String(e);
  // A full disk is its own failure: it ends when space is freed, and the server names it (507) so an operator knows what to do.
  if (typeof code === 'string' && /^SQLITE_FULL/.test(code)) return new StorageError('NoSpace', `sqlite: ${message}`, { cause: e });
  const unreachable = typeof code === 'string' && /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|READONLY|CORRUPT|NOTADB|PERM)/.test(code);
  return new StorageError(unreachable ? 'Unreachable' : 'Internal', `sqlite: ${message}`, { cause: e });
}

/**
 * SqliteConnection opens a store's file (as its writer, or as a follower of the
 * writer that has it open), commits queued writes in groups, reads the change
 * log for watchers, and closes it all in order.
 */
export class SqliteConnection {
  readonly o: ResolvedCommonOptions;
  private readonly maxBatch: number;
  db: Database.Database | undefined;
  /** listDb reads lists (a file's second connection), so that paging through every event churns its small cache, not the writer's. */
  private listDb: Database.Database | undefined;
  stmt!: Statements;
  /** texts reads and writes the long messages stored once (`texts.ts`) on the connection `stmt` runs on. */
  texts!: StoredTexts;
  lists!: ListQueries;
  /** searches answers the archive's search, on the connection lists read with. */
  searches!: SqliteSearch;
  /** searchIndex is set on a writer: it indexes the versions the writes insert, in catch-ups of their own (see `SearchIndexWriter`). */
  searchIndex: SearchIndexWriter | undefined;
  private readonly searchIndexDelayMs: number;
  /** indexTimer is the next catch-up of the search index, while one is due. */
  private indexTimer: { soon: boolean; handle: NodeJS.Timeout | NodeJS.Immediate } | undefined;
  /** indexFailure is the last failure of a catch-up, so that a lasting one is logged once. */
  private indexFailure: string | undefined;
  archive!: ArchiveTables;
  private lastMark = 0;
  readonly openError: StorageError | undefined;
  /** rv is the newest committed revision (while a batch runs, the newest it has allocated). */
  rv = 0;
  compacted = 0;
  private queue: Pending[] = [];
  private flushScheduled = false;
  closed = false;
  /** noSpace is true from a write refused for a full disk until the next commit. */
  private noSpace = false;
  /** checkpointFailure is the last failure the checkpoint thread reported, so that a lasting one is logged once. */
  private checkpointFailure: string | undefined;
  readonly hub: WatchHub;
  /** tickers are the store's timers (expiry, compaction), stopped first on close. */
  readonly tickers: Ticker[] = [];
  private checkpointer: Checkpointer | undefined;
  /** checkpointPath is the file the Checkpointer serves; it starts with the first write (a thread costs ~60 ms to start, and a store only read needs none). */
  private checkpointPath: string | undefined;
  /** writer is set on a follower: the store its writes go to (see `SqliteEventStoreOptions.writer`). */
  readonly writer: WriterLink | undefined;
  readonly onCommit: ((rv: number, compacted: number) => void) | undefined;

  constructor(options: SqliteEventStoreOptions) {
    this.o = resolveCommonOptions(options);
    this.maxBatch = options.maxBatch !== undefined && options.maxBatch > 0 ? options.maxBatch : DEFAULT_MAX_BATCH;
    this.searchIndexDelayMs = options.searchIndexDelayMs ?? SEARCH_INDEX_DELAY_MS;
    this.hub = new WatchHub(
      {
        changesAfter: (after, limit) => this.changesAfter(after, limit),
        committedRv: () => this.rv,
        compactedRv: () => this.compacted,
      },
      this.o.watchBufferSize,
    );
    this.writer = options.writer;
    this.onCommit = options.onCommit;
    if (this.writer !== undefined) {
      this.openError = this.openFollower(options);
      return;
    }
    let db: Database.Database | undefined;
    try {
      const existed = fileExists(options.path);
      db = new SqliteDatabase(options.path);
      checkArchiveFile(db, options.path, existed);
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${options.synchronous === 'FULL' ? 'FULL' : 'NORMAL'}`);
      tuneConnection(db, options);
      // Checkpoints run in the Checkpointer's thread; this connection only checkpoints if that one falls far behind.
      db.pragma(`wal_autocheckpoint = ${SAFETY_CHECKPOINT_PAGES}`);
      db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
      applySchema(db, this.o.logger);
      this.searchIndex = openSearchIndex(db, this.o.logger);
      this.listDb = openListConnection(options.path);
      this.archive = new ArchiveTables(db, this.o.logger, this.listDb);
      this.stmt = prepareStatements(db);
      this.texts = storedTexts(db);
      this.lists = new ListQueries(this.listDb ?? db);
      this.searches = new SqliteSearch(this.listDb ?? db, SEARCH_TOKENIZER);
      this.loadRevisions();
      this.db = db;
    } catch (e) {
      this.listDb?.close();
      this.listDb = undefined;
      db?.close();
      // Not logged here: every call (first of all `ready`) rejects with it, and the CLI prints it as its one line.
      this.openError = new StorageError('Unreachable', `cannot open the archive ${options.path}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
      return;
    }
    this.checkpointPath = options.path !== ':memory:' && options.path !== '' ? options.path : undefined;
  }

  /** maintains is true for a writer that opened its file: only it expires, compacts and checkpoints. */
  get maintains(): boolean {
    return this.writer === undefined && this.openError === undefined;
  }

  /**
   * openFollower opens a follower's one connection on a file its writer has opened
   * (and so checked and migrated): every read of the follower runs on it, and it
   * never writes. Nothing ticks here: expiry, compaction and checkpoints are the writer's.
   */
  private openFollower(options: SqliteEventStoreOptions): StorageError | undefined {
    let db: Database.Database | undefined;
    try {
      if (!fileExists(options.path)) throw new Error('no such file (a follower reads the file its writer opened)');
      db = new SqliteDatabase(options.path, { fileMustExist: true });
      tuneConnection(db, options);
      this.archive = new ArchiveTables(db);
      this.stmt = prepareStatements(db);
      this.texts = storedTexts(db);
      this.lists = new ListQueries(db);
      this.searches = new SqliteSearch(db, SEARCH_TOKENIZER);
      this.db = db;
      // A follower starts at the file's newest revision: what came before is history, read when a watch asks for it.
      this.loadRevisions();
      return undefined;
    } catch (e) {
      db?.close();
      this.db = undefined;
      return new StorageError('Unreachable', `cannot open the archive ${options.path}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
  }

  /** loadRevisions reads the file's newest revision and its compaction point, as a store opens it. */
  private loadRevisions(): void {
    this.compacted = this.stmt.getMeta.get('compacted')?.value ?? 0;
    // A file whose newest rows were all compacted away still remembers its revision through `compacted`.
    this.rv = Math.max(this.stmt.maxRv.get()?.rv ?? 0, this.compacted, this.stmt.maxOccurrenceId.get()?.id ?? 0);
  }

  /** remote sends a follower's write to its writer; StorageErrors come back as they were thrown there. */
  remote<T>(op: FollowerWrite, args: unknown[]): Promise<T> {
    return this.toWriter((w) => w.call(op, args) as Promise<T>);
  }

  /** toWriter hands a follower's write to its writer by `send`, once the store is known to be open. */
  toWriter<T>(send: (writer: WriterLink) => Promise<T>): Promise<T> {
    try {
      this.checkOpen();
    } catch (e) {
      return Promise.reject(storageFailure(e));
    }
    return send(this.writer!);
  }

  /** close stops the timers, commits what is queued, ends every watch, then closes the checkpoint thread and the connections. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.tickers) t.stop();
    while (this.queue.length > 0) this.flush();
    // The index catches up with what is committed (bounded by the batch); what it cannot, the next open does.
    this.cancelIndexTimer();
    this.catchUpIndex();
    this.hub.closeAll();
    await this.checkpointer?.stop();
    this.checkpointer = undefined;
    try {
      this.listDb?.close();
      this.listDb = undefined;
      this.db?.close();
    } catch (e) {
      throw storageFailure(e);
    } finally {
      this.db = undefined;
    }
  }

  /** checkOpen is the writer's connection, or the reason the store cannot be used. */
  checkOpen(): Database.Database {
    if (this.openError !== undefined) throw this.openError;
    if (this.db === undefined || this.closed) throw new StorageError('Unreachable', 'the store is closed');
    return this.db;
  }

  /** read runs a read on an open store, failing in the storage vocabulary. */
  read<T>(fn: () => T): Promise<T> {
    try {
      this.checkOpen();
      return Promise.resolve(fn());
    } catch (e) {
      return Promise.reject(storageFailure(e));
    }
  }

  /** expiry is when a write with this TTL expires (null: never). */
  expiry(ttlSeconds: number | undefined): number | null {
    return ttlSeconds !== undefined && ttlSeconds > 0 ? this.o.clock.now() + ttlSeconds * 1000 : null;
  }

  /** enqueue adds a write to the next group commit; the promise settles after that commit. */
  enqueue<T>(run: (changes: Change[]) => T): Promise<T> {
    try {
      this.checkOpen();
    } catch (e) {
      return Promise.reject(storageFailure(e));
    }
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, resolve: resolve as (v: unknown) => void, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        // setImmediate runs after the I/O of this loop turn, so requests read together commit together.
        setImmediate(() => {
          this.flushScheduled = false;
          this.flush();
        });
      }
    });
  }

  /** flush commits one batch of queued writes in a single transaction, then publishes and acknowledges them. */
  private flush(): void {
    if (this.queue.length === 0) return;
    const batch = this.queue.length <= this.maxBatch ? this.queue : this.queue.slice(0, this.maxBatch);
    this.queue = this.queue.length <= this.maxBatch ? [] : this.queue.slice(this.maxBatch);
    if (this.queue.length > 0 && !this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        this.flush();
      });
    }
    const db = this.db;
    if (db === undefined) {
      const e = this.openError ?? new StorageError('Unreachable', 'the store is closed');
      for (const p of batch) p.reject(e);
      return;
    }
    if (this.checkpointer === undefined && this.checkpointPath !== undefined && !this.closed) {
      this.checkpointer = new Checkpointer(this.checkpointPath, (message) => {
        // The thread retries every few hundred milliseconds: a failure that lasts (a full disk) is logged once.
        if (message === this.checkpointFailure) return;
        this.checkpointFailure = message;
        this.o.logger.warn('sqlite checkpoint failed', { error: message });
      });
    }
    const before = this.rv;
    const changes: Change[] = [];
    const outcomes: { ok: boolean; value: unknown }[] = [];
    try {
      db.exec('BEGIN IMMEDIATE');
      for (const p of batch) {
        try {
          outcomes.push({ ok: true, value: p.run(changes) });
        } catch (e) {
          if (!isStorageError(e)) throw e;
          outcomes.push({ ok: false, value: e });
        }
      }
      const now = this.o.clock.now();
      if (now - this.lastMark >= MARK_INTERVAL_MS) {
        this.archive.mark(now, this.rv);
        this.lastMark = now;
      }
      db.exec('COMMIT');
      if (this.noSpace) {
        this.noSpace = false;
        this.checkpointFailure = undefined;
        this.o.logger.info('sqlite: writes are stored again', { path: this.checkpointPath });
      }
    } catch (e) {
      if (db.inTransaction) db.exec('ROLLBACK');
      this.searchIndex?.discard();
      this.rv = before;
      this.archive.loadLags();
      // The values the batch interned went with it.
      internedValues(db).forget();
      // A size cut may have moved the compaction point in the rolled back transaction.
      this.compacted = this.stmt.getMeta.get('compacted')?.value ?? 0;
      const failure = storageFailure(e);
      if (failure.code !== 'NoSpace') this.o.logger.error('sqlite write batch failed', { writes: batch.length, error: failure });
      else if (!this.noSpace) {
        // Once per episode: a full disk fails every batch until someone frees space.
        this.noSpace = true;
        this.o.logger.error('sqlite: the disk is full: writes are refused (507) until space is freed; reads are served', { path: this.checkpointPath, error: failure.message });
      }
      for (const p of batch) p.reject(failure);
      return;
    }
    this.hub.publish(changes);
    this.onCommit?.(this.rv, this.compacted);
    this.scheduleIndex(true);
    batch.forEach((p, i) => {
      const o = outcomes[i]!;
      if (o.ok) p.resolve(o.value);
      else p.reject(o.value as Error);
    });
  }

  /**
   * scheduleIndex plans the search index's next catch-up: at once when what waits is past a batch (or the queue
   * was lost), else SEARCH_INDEX_DELAY_MS after the oldest waiting commit. `committed` tells of a commit just made;
   * after a failed catch-up (`failed`) the next waits SEARCH_INDEX_DELAY_MS whatever waits, so that a lasting
   * failure (a full disk) is retried a few times a second rather than in a loop.
   */
  scheduleIndex(committed = false, failed = false): void {
    const index = this.searchIndex;
    if (index === undefined || this.closed) return;
    if (committed) index.committed(this.o.clock.now());
    const w = index.waiting;
    if (!w.lost && w.versions === 0) return;
    const now = !failed && (w.lost || w.versions >= SEARCH_INDEX_BATCH || w.bytes >= SEARCH_INDEX_BATCH_BYTES);
    if (this.indexTimer !== undefined) {
      if (!now || this.indexTimer.soon) return;
      this.cancelIndexTimer();
    }
    const run = (): void => {
      this.indexTimer = undefined;
      this.scheduleIndex(false, !this.catchUpIndex());
    };
    const handle = now ? setImmediate(run) : setTimeout(run, this.searchIndexDelayMs);
    // A store only waiting to index keeps no process alive: the next open catches up.
    handle.unref();
    this.indexTimer = { soon: now, handle };
  }

  private cancelIndexTimer(): void {
    const t = this.indexTimer;
    if (t === undefined) return;
    if (t.soon) clearImmediate(t.handle as NodeJS.Immediate);
    else clearTimeout(t.handle as NodeJS.Timeout);
    this.indexTimer = undefined;
  }

  /**
   * catchUpIndex writes what waits of the search index in a transaction of its own, off the writes' path: a write
   * commits its version and is answered, and the index follows. A failure leaves the versions unindexed (a search
   * scans them) and is retried: the index reads them back from the file. It returns false when it failed.
   */
  catchUpIndex(): boolean {
    const index = this.searchIndex;
    const db = this.db;
    if (index === undefined || db === undefined) return true;
    const w = index.waiting;
    if (!w.lost && w.versions === 0) return true;
    try {
      db.exec('BEGIN IMMEDIATE');
      index.write(this.rv);
      db.exec('COMMIT');
      index.written(this.o.clock.now());
      this.indexFailure = undefined;
      return true;
    } catch (e) {
      if (db.inTransaction) db.exec('ROLLBACK');
      index.discard();
      const failure = storageFailure(e);
      if (failure.message !== this.indexFailure) this.o.logger.error('sqlite: the search index could not catch up; searches scan the versions written since', { error: failure });
      this.indexFailure = failure.message;
      return false;
    }
  }

  /** changesAfter reads up to `limit` changes of the log after revision `after`, each with the version it replaced. */
  changesAfter(after: number, limit: number): Change[] {
    this.checkOpen();
    return this.stmt.changesAfter.all(after, limit).map((r) => {
      const change: Change = { rv: r.rv, type: CHANGE_TYPES[r.op as 1 | 2 | 3], key: r.key, json: this.texts.json(r.object) };
      if (r.prev_rv !== null && r.prev_object !== null) {
        change.prevJson = this.texts.json(r.prev_object);
        change.prevRv = r.prev_rv;
      }
      return change;
    });
  }
}
