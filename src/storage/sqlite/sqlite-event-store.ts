import type Database from 'better-sqlite3';
import { eventCluster, nowMicroTime, occurrenceChange } from '../../api/index.js';
import { marksKeptFrom, retentionRules } from '../archive-store.js';
import type { CoreEvent, OccurrenceStamp } from '../../api/index.js';
import type {
  ArchiveBatch,
  ArchiveBatchResult,
  ArchiveStore,
  ClusterBinding,
  ClusterIdentity,
  ObservedRange,
  OccurrencePage,
  OccurrenceQuery,
  ReasonCount,
  ReasonCountQuery,
  RetentionPolicy,
  RetentionResult,
  SourceCheckpoint,
} from '../archive-store.js';
import type {
  EventWatch,
  ListOptions,
  ListResult,
  ListedVersion,
  Preconditions,
  TryUpdate,
  UpdateOptions,
  UpdateResult,
  VersionList,
  WatchOptions,
  WriteOptions,
} from '../event-store.js';
import { StorageError, isStorageError } from '../errors.js';
import {
  DEFAULT_MAX_COUNT_REMAINING,
  Ticker,
  WatchHub,
  checkPreconditions,
  decodeEvent,
  encodeEvent,
  eventKey,
  fieldValue,
  keyOfEvent,
  listRevision,
  matchesFilter,
  microsOf,
  namespaceRange,
  planArchiveWrites,
  RemainingCounts,
  resolveCommonOptions,
  sameContent,
  selectsAll,
  withRevision,
} from '../shared/index.js';
import type { Change, ResolvedCommonOptions } from '../shared/index.js';
import { ArchiveTables } from './archive-tables.js';
import { Checkpointer } from './checkpointer.js';
import { checkArchiveFile, fileExists } from './file-check.js';
import { ListQueries, MAX_OBJECTS_AT_ONCE } from './list-query.js';
import { decodeObject, encodeObject } from './object-codec.js';
import { requireCjs } from '../../internal/index.js';
import type { ListRow, ListScope } from './list-query.js';
import { DEFAULT_CACHE_SIZE_MIB, DEFAULT_MAX_BATCH } from './options.js';
import type { FollowerWrite, SqliteEventStoreOptions, WriterLink } from './options.js';
import { CURRENT, Op, applySchema, nameHash, spanSeconds } from './schema.js';

/** SqliteDatabase is better-sqlite3's constructor, loaded through `require` (see `requireCjs`). */
const SqliteDatabase = requireCjs('better-sqlite3') as typeof Database;

interface CurrentRow {
  rv: number;
  /** object is the encoded event (`decodeObject`). */
  object: Buffer;
  expires_at: number | null;
}

interface ChangeRow {
  rv: number;
  key: string;
  op: number;
  object: Buffer;
  prev_rv: number | null;
  prev_object: Buffer | null;
}

interface Pending {
  /** run does one write inside the batch's transaction. It throws a StorageError only before writing anything. */
  run: (changes: Change[]) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

/** MAX_LIST_BATCH caps the rows a filtered list reads per query, as upstream caps its etcd pages. */
const MAX_LIST_BATCH = 10_000;
/** EXPIRY_BATCH and PURGE_BATCH bound the work of one sweep or purge step, so writers are never held up for long. */
const EXPIRY_BATCH = 1_000;
const PURGE_BATCH = 2_000;
/** RETENTION_STEP bounds the objects one retention step removes. */
const RETENTION_STEP = 5_000;
/** SIZE_CUT_CHUNK is how many of the oldest rows the size cap removes between two measurements of the file, so it removes little more than the excess. */
const SIZE_CUT_CHUNK = 50;
/** SIZE_PURGE_BUDGET bounds the history rows one size step purges, so a large window given up is purged over several steps, writers between them. */
const SIZE_PURGE_BUDGET = 20_000;
/** MARK_INTERVAL_MS is the resolution of the time-to-revision marks retention reads. */
const MARK_INTERVAL_MS = 1_000;

/** SAFETY_CHECKPOINT_PAGES (80 MiB of WAL) makes the writer checkpoint itself only if the checkpoint thread cannot keep up. */
const SAFETY_CHECKPOINT_PAGES = 20_000;
/** WAL_SIZE_LIMIT truncates the WAL file back to 64 MiB after a burst. */
const WAL_SIZE_LIMIT = 64 * 1024 * 1024;

const TYPES = { [Op.ADDED]: 'ADDED', [Op.MODIFIED]: 'MODIFIED', [Op.DELETED]: 'DELETED' } as const;

/** listedVersion is a listed row, decoded on demand; `decoded` (a filter's decoding) is handed out first rather than decoded again. */
function listedVersion(rv: number, object: () => Buffer, decoded?: CoreEvent): ListedVersion {
  let first = decoded;
  return {
    resourceVersion: rv,
    object: () => {
      const e = first ?? decodeEvent(decodeObject(object()), rv);
      first = undefined;
      return e;
    },
  };
}

/**
 * PageObjects reads the objects of a listed page's versions as they are asked for (those a server
 * has kept rendered never are). A miss right after the rows the last read brought reads twice as
 * many rows as the last (up to MAX_OBJECTS_AT_ONCE) in one statement: a page read cold is read in a
 * few statements instead of one per item, and the odd miss of a warm page reads its row alone.
 */
export class PageObjects {
  private readonly got = new Map<number, Buffer>();
  private run = 0;
  private readTo = -1;

  constructor(
    private readonly rvs: readonly number[],
    private readonly read: (rvs: number[]) => { rv: number; object: Buffer }[],
  ) {}

  object(i: number): Buffer | undefined {
    const rv = this.rvs[i]!;
    const kept = this.got.get(rv);
    if (kept !== undefined) {
      this.got.delete(rv);
      return kept;
    }
    this.run = i === this.readTo ? Math.min(this.run * 2, MAX_OBJECTS_AT_ONCE) : 1;
    const want = this.rvs.slice(i, i + this.run);
    this.readTo = i + want.length;
    let found: Buffer | undefined;
    for (const r of this.read(want)) {
      if (r.rv === rv) found = r.object;
      else this.got.set(r.rv, r.object);
    }
    return found;
  }
}

/** fieldsOf are the derived columns of an event's version row (see `FIELD_COLUMNS`). */
function fieldsOf(e: CoreEvent): Record<string, string | number | null> {
  return {
    involved_kind: fieldValue(e, 'involvedObject.kind'),
    involved_hash: nameHash(fieldValue(e, 'involvedObject.name')),
    reason: fieldValue(e, 'reason'),
    type: fieldValue(e, 'type'),
    ...spanSeconds(e),
    cluster: eventCluster(e) || null,
  };
}

/**
 * LIST_CACHE_MIB bounds the page cache of the list connection: a page of 500
 * reads about 500 table pages (2 MiB), and a stream of every event would
 * otherwise fill the writer's whole cache with pages read once.
 */
const LIST_CACHE_MIB = 4;
/** FOLLOW_BATCH is how many changes a follower reads from the file at a time while catching up. */
const FOLLOW_BATCH = 1_000;

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
function storageFailure(e: unknown): StorageError {
  if (isStorageError(e)) return e;
  const code = (e as { code?: unknown }).code;
  const message = e instanceof Error ? e.message : String(e);
  // A full disk is its own failure: it ends when space is freed, and the server names it (507) so an operator knows what to do.
  if (typeof code === 'string' && /^SQLITE_FULL/.test(code)) return new StorageError('NoSpace', `sqlite: ${message}`, { cause: e });
  const unreachable = typeof code === 'string' && /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|READONLY|CORRUPT|NOTADB|PERM)/.test(code);
  return new StorageError(unreachable ? 'Unreachable' : 'Internal', `sqlite: ${message}`, { cause: e });
}

function prepareStatements(db: Database.Database) {
  return {
    current: db.prepare<[string], CurrentRow>(`SELECT rv, object, expires_at FROM versions INDEXED BY cur_key WHERE key = ? AND ${CURRENT}`),
    insert: db.prepare(
      `INSERT INTO versions (rv, key, op, object, prev_rv, expires_at, involved_kind, involved_hash, reason, type, first_s, span_s, cluster)
       VALUES (@rv, @key, @op, @object, @prev_rv, @expires_at, @involved_kind, @involved_hash, @reason, @type, @first_s, @span_s, @cluster)`,
    ),
    supersede: db.prepare<[number, number]>('UPDATE versions SET superseded_rv = ? WHERE rv = ?'),
    tombstone: db.prepare<[number, number]>(
      `INSERT INTO versions (rv, key, op, object, prev_rv, involved_kind, involved_hash, reason, type)
       SELECT ?, key, ${Op.DELETED}, object, rv, involved_kind, involved_hash, reason, type FROM versions WHERE rv = ?`,
    ),
    changesAfter: db.prepare<[number, number], ChangeRow>(
      `SELECT v.rv, v.key, v.op, v.object, v.prev_rv, p.object AS prev_object
       FROM versions v LEFT JOIN versions p ON p.rv = v.prev_rv WHERE v.rv > ? ORDER BY v.rv LIMIT ?`,
    ),
    expired: db.prepare<[number, number], { rv: number; key: string }>(
      `SELECT rv, key FROM versions INDEXED BY cur_expiry WHERE ${CURRENT} AND expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at LIMIT ?`,
    ),
    maxRv: db.prepare<[], { rv: number | null }>('SELECT max(rv) AS rv FROM versions'),
    // Occurrence ids are revisions; those of files written before schema 3 were a sequence of their own, never ahead of the revisions.
    maxOccurrenceId: db.prepare<[], { id: number | null }>('SELECT max(id) AS id FROM occurrences'),
    getMeta: db.prepare<[string], { value: number }>('SELECT value FROM meta WHERE name = ?'),
    setMeta: db.prepare<[string, number]>('INSERT INTO meta(name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value'),
    checkpoint: db.prepare<[number, number]>('INSERT OR REPLACE INTO checkpoints(at, rv) VALUES (?, ?)'),
    horizon: db.prepare<[number], { at: number; rv: number }>('SELECT at, rv FROM checkpoints WHERE at <= ? ORDER BY at DESC LIMIT 1'),
    dropCheckpoints: db.prepare<[number]>('DELETE FROM checkpoints WHERE at < ?'),
    supersededUpTo: db.prepare<[number, number], { rv: number }>(
      'SELECT rv FROM versions INDEXED BY superseded WHERE superseded_rv IS NOT NULL AND superseded_rv <= ? LIMIT ?',
    ),
    // A superseded version an occurrence describes keeps its object in past_versions.
    keepPast: db.prepare<{ rv: number }>(
      'INSERT OR IGNORE INTO past_versions (rv, object) SELECT rv, object FROM versions WHERE rv = @rv AND EXISTS (SELECT 1 FROM occurrences WHERE id = @rv AND body IS NULL)',
    ),
    dropVersion: db.prepare<[number]>('DELETE FROM versions WHERE rv = ?'),
    purgeTombstones: db.prepare<[number, number]>(
      `DELETE FROM versions WHERE rv IN (SELECT rv FROM versions INDEXED BY tombstones WHERE op = ${Op.DELETED} AND rv <= ? LIMIT ?)`,
    ),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

/**
 * SqliteEventStore keeps events in one SQLite file (WAL). Writes issued in the
 * same turn of the event loop are committed together in one transaction and
 * acknowledged only after that commit, so an acknowledged write survives a
 * crash of the process. Lists and watches read history from SQL (see `SCHEMA`);
 * the process holds no copy of the data, only bounded watch buffers.
 */
export class SqliteEventStore implements ArchiveStore {
  private readonly o: ResolvedCommonOptions;
  private readonly maxBatch: number;
  private readonly maxCount: number;
  private readonly remaining = new RemainingCounts();
  private db: Database.Database | undefined;
  /** listDb reads lists (a file's second connection), so that paging through every event churns its small cache, not the writer's. */
  private listDb: Database.Database | undefined;
  private stmt!: Statements;
  private lists!: ListQueries;
  private archive!: ArchiveTables;
  private lastMark = 0;
  private observed: { time: string; micros: number } | undefined;
  private readonly openError: StorageError | undefined;
  /** rv is the newest committed revision (while a batch runs, the newest it has allocated). */
  private rv = 0;
  private compacted = 0;
  private queue: Pending[] = [];
  private flushScheduled = false;
  private sweeping = false;
  private purging = false;
  private closed = false;
  /** noSpace is true from a write refused for a full disk until the next commit. */
  private noSpace = false;
  /** checkpointFailure is the last failure the checkpoint thread reported, so that a lasting one is logged once. */
  private checkpointFailure: string | undefined;
  private readonly hub: WatchHub;
  private readonly tickers: Ticker[] = [];
  private checkpointer: Checkpointer | undefined;
  /** checkpointPath is the file the Checkpointer serves; it starts with the first write (a thread costs ~60 ms to start, and a store only read needs none). */
  private checkpointPath: string | undefined;
  /** writer is set on a follower: the store its writes go to (see `SqliteEventStoreOptions.writer`). */
  private readonly writer: WriterLink | undefined;
  private readonly onCommit: ((rv: number, compacted: number) => void) | undefined;

  constructor(options: SqliteEventStoreOptions) {
    this.o = resolveCommonOptions(options);
    this.maxBatch = options.maxBatch !== undefined && options.maxBatch > 0 ? options.maxBatch : DEFAULT_MAX_BATCH;
    this.maxCount = options.maxCountRemaining !== undefined && options.maxCountRemaining > 0 ? options.maxCountRemaining : DEFAULT_MAX_COUNT_REMAINING;
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
      applySchema(db);
      this.archive = new ArchiveTables(db);
      this.stmt = prepareStatements(db);
      this.listDb = openListConnection(options.path);
      this.lists = new ListQueries(this.listDb ?? db);
      this.loadRevisions();
      this.db = db;
    } catch (e) {
      db?.close();
      // Not logged here: every call (first of all `ready`) rejects with it, and the CLI prints it as its one line.
      this.openError = new StorageError('Unreachable', `cannot open the archive ${options.path}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
      return;
    }
    this.checkpointPath = options.path !== ':memory:' && options.path !== '' ? options.path : undefined;
    this.tickers.push(
      new Ticker(this.o.clock, this.o.expiryIntervalMs, () => this.sweep()),
      new Ticker(this.o.clock, this.o.compactIntervalMs, () => this.compact()),
    );
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
      this.lists = new ListQueries(db);
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

  /**
   * followCommit tells a follower that its writer committed up to revision `rv`
   * (compaction point `compacted`): the follower reads what it has not seen from
   * the file and hands it to its watchers, in order. A writer calls it before it
   * acknowledges the writes of that commit, so a follower has published a write
   * before its client hears of it.
   */
  followCommit(rv: number, compacted: number): void {
    if (this.writer === undefined || this.db === undefined || this.closed) return;
    try {
      this.catchUp(rv, compacted);
    } catch (e) {
      this.o.logger.error('sqlite follower could not read new commits', { error: storageFailure(e) });
    }
  }

  /** catchUp publishes every change committed to the file past this follower's revision. */
  private catchUp(rv = 0, compacted?: number): void {
    if (this.hub.size === 0) {
      // No watcher to hand changes to: the revision alone moves (a watch that starts later reads its history from the file).
      this.rv = Math.max(this.rv, rv > 0 ? rv : (this.stmt.maxRv.get()?.rv ?? 0));
    } else {
      for (;;) {
        const changes = this.changesAfter(this.rv, FOLLOW_BATCH);
        if (changes.length > 0) {
          this.rv = changes[changes.length - 1]!.rv;
          this.hub.publish(changes);
        }
        if (changes.length < FOLLOW_BATCH) break;
      }
      // A revision with no version (an occurrence's) moves the follower too.
      this.rv = Math.max(this.rv, rv);
    }
    this.compacted = Math.max(this.compacted, compacted ?? this.stmt.getMeta.get('compacted')?.value ?? 0);
  }

  /** followerRead runs a read of a follower in one snapshot of the file, after publishing what that snapshot holds past the follower's revision. */
  private followerRead<T>(fn: () => T): T {
    if (this.writer === undefined) return fn();
    return this.db!.transaction(() => {
      this.catchUp();
      return fn();
    })();
  }

  /** remote sends a follower's write to its writer; StorageErrors come back as they were thrown there. */
  private remote<T>(op: FollowerWrite, args: unknown[]): Promise<T> {
    return this.toWriter((w) => w.call(op, args) as Promise<T>);
  }

  /** toWriter hands a follower's write to its writer by `send`, once the store is known to be open. */
  private toWriter<T>(send: (writer: WriterLink) => Promise<T>): Promise<T> {
    try {
      this.checkOpen();
    } catch (e) {
      return Promise.reject(storageFailure(e));
    }
    return send(this.writer!);
  }

  async create(event: CoreEvent, options: WriteOptions = {}): Promise<CoreEvent> {
    if (this.writer !== undefined) {
      const createEncoded = this.writer.createEncoded?.bind(this.writer);
      if (createEncoded === undefined) return this.remote<CoreEvent>('create', [event, options]);
      // The event crosses as its stored JSON (the writer would write that), and only its revision comes back.
      return withRevision(event, await this.toWriter(() => createEncoded(encodeEvent(event), options)));
    }
    return withRevision(event, await this.insertNew(event, encodeEvent(event), options));
  }

  /**
   * createEncoded is a follower's create on its writer: `json` is the event's
   * stored JSON (`encodeEvent`), written as it is; it resolves with the event's revision.
   */
  createEncoded(json: string, options: WriteOptions = {}): Promise<number> {
    let event: CoreEvent;
    try {
      event = JSON.parse(json) as CoreEvent;
    } catch (e) {
      return Promise.reject(new StorageError('Internal', `a follower sent an event that is not JSON: ${(e as Error).message}`));
    }
    return this.insertNew(event, json, options);
  }

  /** insertNew writes `event` (stored as `json`) as a new key in the next group commit and resolves with its revision. */
  private insertNew(event: CoreEvent, json: string, options: WriteOptions): Promise<number> {
    const key = keyOfEvent(event);
    const object = encodeObject(json);
    const fields = fieldsOf(event);
    const expiresAt = this.expiry(options.ttlSeconds);
    return this.enqueue((changes) => {
      if (this.stmt.current.get(key) !== undefined) {
        throw new StorageError('KeyExists', `${key} already exists`, { key, currentResourceVersion: this.rv });
      }
      const rv = ++this.rv;
      this.stmt.insert.run({ rv, key, op: Op.ADDED, object, prev_rv: null, expires_at: expiresAt, ...fields });
      changes.push({ rv, type: 'ADDED', key, json });
      if (options.occurrence !== undefined) this.appendOccurrence(event, rv, occurrenceChange(undefined, event), options.occurrence);
      return rv;
    });
  }

  get(namespace: string, name: string): Promise<CoreEvent> {
    return this.read(() => {
      const key = eventKey(namespace, name);
      const row = this.stmt.current.get(key);
      if (row === undefined) throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: this.rv });
      return decodeEvent(decodeObject(row.object), row.rv);
    });
  }

  async list(options: ListOptions): Promise<ListResult> {
    const { items, ...page } = await this.listVersions(options);
    return { ...page, items: items.map((v) => v.object()) };
  }

  listVersions(options: ListOptions): Promise<VersionList> {
    return this.read(() => this.followerRead(() => this.listAt(options)));
  }

  private listAt(options: ListOptions): VersionList {
    const at = listRevision(options, this.rv, this.compacted);
    const { low, high } = options.namespace === undefined ? { low: '', high: undefined } : namespaceRange(options.namespace);
    const scope: ListScope = { at, latest: at === this.rv, high, fieldEquals: options.fieldEquals, activeIn: options.activeIn };
    const limit = options.limit !== undefined && options.limit > 0 ? options.limit : Infinity;
    let start = options.startKey !== undefined && options.startKey > low ? options.startKey : low;
    const from = start;
    let batch = Math.min(limit + 1, MAX_LIST_BATCH);
    const items: ListedVersion[] = [];
    // Without a filter past the key range every row is an item: it stays encoded until asked for.
    const all = selectsAll(options);
    let more = false;
    for (;;) {
      const rows = all ? this.lists.pageKeys(scope, start, batch) : this.lists.page(scope, start, batch);
      const objects = all ? new PageObjects(rows.map((r) => r.rv), (rvs) => this.lists.objects(rvs)) : undefined;
      for (const [i, row] of rows.entries()) {
        if (items.length >= limit) {
          more = true;
          break;
        }
        start = row.key;
        if (objects !== undefined) {
          items.push(this.unread(row.rv, () => objects.object(i)));
          continue;
        }
        const object = (row as ListRow).object;
        const event = decodeEvent(decodeObject(object), row.rv);
        if (matchesFilter(event, options)) items.push(listedVersion(row.rv, () => object, event));
      }
      if (more) break;
      if (items.length >= limit) {
        // As against etcd, any key past the last item means more, whether or not the selector would keep it
        // (the field selector's rows were filtered in SQL: the keys it left out count too).
        more = this.lists.pageKeys({ ...scope, fieldEquals: undefined, activeIn: undefined }, start, 1).length > 0;
        break;
      }
      if (rows.length < batch) break;
      // A filter dropped rows: read further in larger steps, as upstream does against etcd.
      batch = Math.min(batch * 2, MAX_LIST_BATCH);
    }
    const result: VersionList = { items, resourceVersion: at };
    if (more) {
      result.lastKey = start;
      if (options.countRemaining === true) {
        const remaining = this.remaining.carried(at, high, from, all ? items.length : undefined) ?? this.lists.count(scope, start, this.maxCount);
        this.remaining.remember(at, high, start, remaining);
        if (remaining !== undefined) result.remainingItemCount = remaining;
      }
    }
    return result;
  }

  /**
   * unread is a listed version whose object is read when asked for. The row stays: a version
   * visible at a list's revision is purged only once compaction passes that revision, a history
   * window after the list; were it gone, the answer is that the revision has expired.
   */
  private unread(rv: number, read: () => Buffer | undefined = () => this.lists.object(rv)): ListedVersion {
    return listedVersion(rv, () => {
      const object = read();
      if (object === undefined) throw new StorageError('ResourceVersionExpired', `the version at revision ${rv} has been compacted`, { resourceVersion: rv });
      return object;
    });
  }

  async guaranteedUpdate(namespace: string, name: string, tryUpdate: TryUpdate, options: UpdateOptions = {}): Promise<UpdateResult> {
    const key = eventKey(namespace, name);
    for (;;) {
      const cur = await this.read(() => this.stmt.current.get(key));
      if (cur === undefined && options.allowCreate !== true) {
        throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: this.rv });
      }
      const curJson = cur === undefined ? undefined : decodeObject(cur.object);
      const current = cur === undefined ? undefined : decodeEvent(curJson!, cur.rv);
      checkPreconditions(key, current, options.preconditions, this.rv);
      const next = await tryUpdate(current);
      if (keyOfEvent(next) !== key) throw new StorageError('InvalidObject', `the updated object is not ${key}`, { key });
      const json = encodeEvent(next);
      if (curJson !== undefined && sameContent(json, curJson)) {
        const still = await this.read(() => this.stmt.current.get(key));
        if (still?.rv === cur!.rv) return { object: decodeEvent(curJson, cur!.rv), created: false };
        continue;
      }
      const writeOptions: WriteOptions = {};
      if (options.ttlSeconds !== undefined) writeOptions.ttlSeconds = options.ttlSeconds;
      if (options.occurrence !== undefined) writeOptions.occurrence = options.occurrence;
      const rv =
        this.writer !== undefined
          ? await this.remote<number | undefined>('writeIfAt', [key, cur?.rv ?? null, next, current ?? null, writeOptions])
          : await this.casWrite(key, cur?.rv ?? null, json, next, current ?? null, writeOptions);
      if (rv === undefined || rv === null) continue;
      return { object: decodeEvent(json, rv), created: cur === undefined };
    }
  }

  /**
   * writeIfAt is an update's compare-and-swap, as etcd's: it writes `next` as `key`
   * only while the key's current version is still `expectRv` (null: absent), and
   * resolves with the new revision, or undefined when another write came first.
   * `previous` is the version `next` was made from (for its occurrence).
   */
  writeIfAt(key: string, expectRv: number | null, next: CoreEvent, previous: CoreEvent | null, options: WriteOptions = {}): Promise<number | undefined> {
    if (this.writer !== undefined) return this.remote('writeIfAt', [key, expectRv, next, previous, options]);
    if (keyOfEvent(next) !== key) return Promise.reject(new StorageError('InvalidObject', `the updated object is not ${key}`, { key }));
    return this.casWrite(key, expectRv, encodeEvent(next), next, previous, options);
  }

  private casWrite(key: string, expectRv: number | null, json: string, next: CoreEvent, previous: CoreEvent | null, options: WriteOptions): Promise<number | undefined> {
    const object = encodeObject(json);
    const fields = fieldsOf(next);
    const expiresAt = this.expiry(options.ttlSeconds);
    return this.enqueue((changes) => {
      const now = this.stmt.current.get(key);
      // Compare-and-swap on the revision read before tryUpdate, as etcd does; a lost race retries.
      if ((now?.rv ?? null) !== expectRv) return undefined;
      const rv = ++this.rv;
      if (now !== undefined) this.stmt.supersede.run(rv, now.rv);
      const op = now === undefined ? Op.ADDED : Op.MODIFIED;
      this.stmt.insert.run({ rv, key, op, object, prev_rv: now?.rv ?? null, expires_at: expiresAt, ...fields });
      const change: Change = { rv, type: TYPES[op], key, json };
      if (now !== undefined) {
        change.prevJson = decodeObject(now.object);
        change.prevRv = now.rv;
      }
      changes.push(change);
      if (options.occurrence !== undefined) this.appendOccurrence(next, rv, occurrenceChange(previous ?? undefined, next), options.occurrence);
      return rv;
    });
  }

  async delete(namespace: string, name: string, options: { preconditions?: Preconditions } = {}): Promise<CoreEvent> {
    if (this.writer !== undefined) return this.remote<CoreEvent>('delete', [namespace, name, options]);
    const key = eventKey(namespace, name);
    const { rv, json } = await this.enqueue((changes) => {
      const cur = this.stmt.current.get(key);
      if (cur === undefined) throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: this.rv });
      const json = decodeObject(cur.object);
      checkPreconditions(key, decodeEvent(json, cur.rv), options.preconditions, this.rv);
      return { rv: this.tombstone(key, cur, changes, json), json };
    });
    return decodeEvent(json, rv);
  }

  watch(options: WatchOptions): EventWatch {
    return this.hub.watch(options);
  }

  applyArchiveBatch(batch: ArchiveBatch): Promise<ArchiveBatchResult> {
    if (this.writer !== undefined) return this.remote('applyArchiveBatch', [batch]);
    return this.enqueue((changes) => {
      // Decide everything before writing: a run may throw only before it writes (it shares its transaction with other writers).
      // Each key is read once: the plan and the writes share what was found.
      const found = new Map<string, { row: CurrentRow; json: string } | undefined>();
      const lookup = (key: string): { row: CurrentRow; json: string } | undefined => {
        if (found.has(key)) return found.get(key);
        const row = this.stmt.current.get(key);
        const entry = row === undefined ? undefined : { row, json: decodeObject(row.object) };
        found.set(key, entry);
        return entry;
      };
      const { planned, skipped } = planArchiveWrites(batch.writes, (key) => {
        const entry = lookup(key);
        return entry === undefined ? undefined : decodeEvent(entry.json, entry.row.rv);
      });
      let events = 0;
      let occurrences = 0;
      for (const p of planned) {
        const json = encodeEvent(p.object);
        const now = lookup(p.key);
        if (now !== undefined && sameContent(json, now.json)) continue;
        const rv = ++this.rv;
        if (now !== undefined) this.stmt.supersede.run(rv, now.row.rv);
        const op = now === undefined ? Op.ADDED : Op.MODIFIED;
        const object = encodeObject(json);
        this.stmt.insert.run({ rv, key: p.key, op, object, prev_rv: now?.row.rv ?? null, expires_at: null, ...fieldsOf(p.object) });
        found.set(p.key, { row: { rv, object, expires_at: null }, json });
        const change: Change = { rv, type: TYPES[op], key: p.key, json };
        if (now !== undefined) {
          change.prevJson = now.json;
          change.prevRv = now.row.rv;
        }
        changes.push(change);
        events++;
        if (p.occurrence !== undefined) {
          this.appendOccurrence(p.object, rv, p.occurrence, batch.stamp);
          occurrences++;
        }
      }
      if (batch.checkpoint !== undefined) this.archive.setCheckpoint(batch.checkpoint, this.o.clock.now());
      return { events, occurrences, skipped: skipped + planned.length - events };
    });
  }

  bindCluster(identity: ClusterIdentity): Promise<ClusterBinding> {
    if (this.writer !== undefined) return this.remote('bindCluster', [identity]);
    return this.enqueue(() => this.archive.bindCluster(identity, this.o.clock.now()));
  }

  getCheckpoint(source: string): Promise<SourceCheckpoint | undefined> {
    return this.read(() => this.archive.getCheckpoint(source));
  }

  async listOccurrences(query: OccurrenceQuery): Promise<OccurrencePage> {
    try {
      this.checkOpen();
      return await this.archive.list(query);
    } catch (e) {
      throw storageFailure(e);
    }
  }

  countByReason(query: ReasonCountQuery): Promise<ReasonCount[]> {
    return this.read(() => this.archive.countByReason(query));
  }

  observedRange(window: { sinceMs: number; untilMs: number }): Promise<ObservedRange | null> {
    return this.read(() => this.archive.observedRange(window.sinceMs, window.untilMs));
  }

  enforceRetention(policy: RetentionPolicy): Promise<RetentionResult> {
    if (this.writer !== undefined) return this.remote('enforceRetention', [policy]);
    return this.enqueue((changes) => {
      let events = 0;
      let occurrences = 0;
      let more = false;
      for (const rule of retentionRules(policy)) {
        const dropped = this.archive.dropOccurrencesBefore(rule, RETENTION_STEP);
        const rows = this.archive.writtenBefore(rule, RETENTION_STEP);
        events += this.retire(rows, changes);
        occurrences += dropped;
        more ||= dropped >= RETENTION_STEP || rows.length >= RETENTION_STEP;
      }
      const keptFrom = marksKeptFrom(policy);
      if (keptFrom !== undefined) this.archive.pruneMarks(keptFrom);
      if (policy.maxBytes !== undefined && policy.maxBytes > 0) {
        const cut = this.cutForSize(policy.maxBytes, changes);
        events += cut.events;
        occurrences += cut.occurrences;
        more ||= cut.more;
      }
      return { events, occurrences, more };
    });
  }

  /** retire deletes, through the delete path, each listed event still at the version listed; it returns how many it deleted. */
  private retire(rows: { rv: number; key: string }[], changes: Change[]): number {
    let n = 0;
    for (const { rv, key } of rows) {
      const cur = this.stmt.current.get(key);
      if (cur === undefined || cur.rv !== rv) continue;
      this.tombstone(key, cur, changes);
      n++;
    }
    return n;
  }

  /**
   * cutForSize brings the file's pages in use under `maxBytes`, within one step's
   * bounds. Deleted rows free their pages only once purged, and a purge waits for
   * the compaction point to pass them, so a store over its cap first gives up its
   * history window (compacting to the newest revision: a watch resumed from before
   * it is answered 410, as after any compaction). Then, while still over, it
   * removes the oldest data in revision order, an event's older occurrences
   * before the event itself, and purges what that deleted at once, so every
   * measurement sees the space freed.
   */
  private cutForSize(maxBytes: number, changes: Change[]): RetentionResult {
    const cut: RetentionResult = { events: 0, occurrences: 0, more: false };
    if (this.archive.usedBytes() <= maxBytes) return cut;
    let purgeBudget = SIZE_PURGE_BUDGET;
    const purgeAll = (): boolean => {
      this.compactTo(this.rv);
      for (let n = 1; n > 0 && purgeBudget > 0; purgeBudget -= n) n = this.purgeStep();
      return purgeBudget > 0;
    };
    if (!purgeAll()) return { ...cut, more: true };
    while (this.archive.usedBytes() > maxBytes) {
      if (cut.events + cut.occurrences >= RETENTION_STEP) return { ...cut, more: true };
      const occ = this.archive.oldestOccurrences(SIZE_CUT_CHUNK);
      const ev = this.archive.oldestEvents(SIZE_CUT_CHUNK);
      if (occ.length + ev.length === 0) break;
      // The chunk is the oldest SIZE_CUT_CHUNK of both, by revision; an occurrence's id is its version's revision, so it goes before (or with) its event.
      const last = [...occ.map((o) => o.id), ...ev.map((e) => e.rv)].sort((a, b) => a - b)[Math.min(SIZE_CUT_CHUNK, occ.length + ev.length) - 1]!;
      cut.occurrences += this.archive.dropOccurrences(occ.filter((o) => o.id <= last));
      cut.events += this.retire(ev.filter((e) => e.rv <= last), changes);
      if (!purgeAll()) return { ...cut, more: true };
    }
    return cut;
  }

  /** compactTo moves the compaction point to `rv` inside the running write (a rollback restores it: see `flush`). */
  private compactTo(rv: number): void {
    if (rv <= this.compacted) return;
    this.stmt.setMeta.run('compacted', rv);
    this.compacted = rv;
  }

  archiveBytes(): Promise<number> {
    return this.read(() => this.archive.usedBytes());
  }

  private appendOccurrence(event: CoreEvent, rv: number, change: { countBefore: number; countAfter: number } | undefined, stamp: OccurrenceStamp): void {
    if (change === undefined) return;
    const time = stamp.observedTime ?? nowMicroTime(this.o.clock);
    // A batch shares one stamp: its time is parsed once.
    if (this.observed?.time !== time) this.observed = { time, micros: microsOf(time) };
    this.archive.append(event, rv, change, this.observed, stamp);
  }

  currentResourceVersion(): Promise<number> {
    return this.read(() => this.followerRead(() => this.rv));
  }

  oldestResourceVersion(): Promise<number> {
    return this.read(() => this.followerRead(() => this.compacted));
  }

  ready(): Promise<void> {
    return this.read(() => undefined);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.tickers) t.stop();
    while (this.queue.length > 0) this.flush();
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

  private checkOpen(): Database.Database {
    if (this.openError !== undefined) throw this.openError;
    if (this.db === undefined || this.closed) throw new StorageError('Unreachable', 'the store is closed');
    return this.db;
  }

  private read<T>(fn: () => T): Promise<T> {
    try {
      this.checkOpen();
      return Promise.resolve(fn());
    } catch (e) {
      return Promise.reject(storageFailure(e));
    }
  }

  private expiry(ttlSeconds: number | undefined): number | null {
    return ttlSeconds !== undefined && ttlSeconds > 0 ? this.o.clock.now() + ttlSeconds * 1000 : null;
  }

  private tombstone(key: string, cur: CurrentRow, changes: Change[], json = decodeObject(cur.object)): number {
    const rv = ++this.rv;
    this.stmt.supersede.run(rv, cur.rv);
    this.stmt.tombstone.run(rv, cur.rv);
    changes.push({ rv, type: 'DELETED', key, json, prevJson: json, prevRv: cur.rv });
    return rv;
  }

  /** enqueue adds a write to the next group commit; the promise settles after that commit. */
  private enqueue<T>(run: (changes: Change[]) => T): Promise<T> {
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
      this.rv = before;
      this.archive.loadLags();
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
    batch.forEach((p, i) => {
      const o = outcomes[i]!;
      if (o.ok) p.resolve(o.value);
      else p.reject(o.value as Error);
    });
  }

  private changesAfter(after: number, limit: number): Change[] {
    this.checkOpen();
    return this.stmt.changesAfter.all(after, limit).map((r) => {
      const change: Change = { rv: r.rv, type: TYPES[r.op as 1 | 2 | 3], key: r.key, json: decodeObject(r.object) };
      if (r.prev_rv !== null && r.prev_object !== null) {
        change.prevJson = decodeObject(r.prev_object);
        change.prevRv = r.prev_rv;
      }
      return change;
    });
  }

  /** sweep deletes expired events through the write path, so each expiry is a revision that watchers see as DELETED. */
  private sweep(): void {
    if (this.sweeping || this.db === undefined) return;
    const now = this.o.clock.now();
    let rows: { rv: number; key: string }[];
    try {
      rows = this.stmt.expired.all(now, EXPIRY_BATCH);
    } catch (e) {
      this.o.logger.error('sqlite expiry sweep failed', { error: storageFailure(e) });
      return;
    }
    if (rows.length === 0) return;
    this.sweeping = true;
    const writes = rows.map(({ rv, key }) =>
      this.enqueue((changes) => {
        const cur = this.stmt.current.get(key);
        // The event may have been renewed or deleted since the sweep read it.
        if (cur === undefined || cur.rv !== rv || cur.expires_at === null || cur.expires_at > now) return;
        this.tombstone(key, cur, changes);
      }),
    );
    void Promise.allSettled(writes).then((results) => {
      this.sweeping = false;
      const failed = results.find((r) => r.status === 'rejected');
      if (failed !== undefined) this.o.logger.warn('sqlite expiry failed', { error: failed.reason });
      else if (rows.length === EXPIRY_BATCH) this.sweep();
    });
  }

  /**
   * compact moves the compaction point to the newest revision older than the
   * history window (found through checkpoints, one per tick) and starts purging
   * rows that no revision after that point can see.
   */
  private compact(): void {
    if (this.db === undefined) return;
    try {
      const now = this.o.clock.now();
      this.stmt.checkpoint.run(now, this.rv);
      const h = this.stmt.horizon.get(now - this.o.historyWindowSeconds * 1000);
      if (h !== undefined && h.rv > this.compacted) {
        this.db.transaction(() => {
          this.stmt.setMeta.run('compacted', h.rv);
          this.stmt.dropCheckpoints.run(h.at);
        })();
        this.compacted = h.rv;
        this.onCommit?.(this.rv, this.compacted);
      }
      this.purge();
    } catch (e) {
      this.o.logger.error('sqlite compaction failed', { error: storageFailure(e) });
    }
  }

  private purge(): void {
    if (this.purging || this.db === undefined) return;
    if (this.purgeStep() === 0) return;
    this.purging = true;
    setImmediate(() => {
      this.purging = false;
      try {
        this.purge();
      } catch (e) {
        this.o.logger.error('sqlite purge failed', { error: storageFailure(e) });
      }
    });
  }

  /** purgeStep deletes up to PURGE_BATCH superseded versions (keeping the objects occurrences describe) and PURGE_BATCH tombstones up to the compaction point. */
  private purgeStep(): number {
    const db = this.checkOpen();
    const superseded = this.stmt.supersededUpTo.all(this.compacted, PURGE_BATCH);
    db.transaction(() => {
      for (const { rv } of superseded) {
        this.stmt.keepPast.run({ rv });
        this.stmt.dropVersion.run(rv);
      }
    })();
    return superseded.length + this.stmt.purgeTombstones.run(this.compacted, PURGE_BATCH).changes;
  }
}
