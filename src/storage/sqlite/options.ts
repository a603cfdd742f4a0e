import type { CommonStoreOptions } from '../shared/index.js';
import type { WriteOptions } from '../event-store.js';

/** SqliteEventStoreOptions configure a SqliteEventStore; only `path` is required. */
export interface SqliteEventStoreOptions extends CommonStoreOptions {
  /** path is the database file; its `-wal` and `-shm` companions sit next to it. */
  path: string;
  /**
   * synchronous is SQLite's durability level. NORMAL (the default) makes every
   * acknowledged write survive a crash of the process (kill -9): in WAL mode a
   * committed transaction is in the WAL file before the write is acknowledged.
   * FULL also syncs the WAL to disk on every commit, so writes survive power loss
   * and machine crashes too, at a lower commit rate.
   */
  synchronous?: 'NORMAL' | 'FULL';
  /** cacheSizeMiB bounds SQLite's page cache: memory stays flat however many events are stored. */
  cacheSizeMiB?: number;
  /**
   * maxCountRemaining bounds the work of `countRemaining`: with more items left
   * than this, `remainingItemCount` is left out (counting is a scan of the rest).
   */
  maxCountRemaining?: number;
  /**
   * searchIndexDelayMs is how long a committed version waits at most for its search index entry, the writer being
   * free (`SEARCH_INDEX_DELAY_MS`); searches scan the versions not indexed yet, so it never hides a hit.
   */
  searchIndexDelayMs?: number;
  /** maxBatch caps the writes committed in one transaction, so one commit never stalls the process for long. */
  maxBatch?: number;
  /**
   * writer makes this store a follower of another process's store over the same file
   * (`kevents serve --workers`): it reads the file itself, sends every write to the
   * writer, and learns of commits through `followCommit`. It never writes the file.
   */
  writer?: WriterLink;
  /** onCommit hears the newest committed revision and the compaction point after each commit (the writer of followers). */
  onCommit?: (rv: number, compacted: number) => void;
}

/**
 * WriterLink carries a follower's writes to the store that owns the file: `call`
 * runs the named write (see `FollowerWrite`) with plain-data arguments there and
 * settles with its result, or rejects with its StorageError.
 */
export interface WriterLink {
  call(op: FollowerWrite, args: unknown[]): Promise<unknown>;
  /**
   * createEncoded, where the link has it, is a create sent as the event's stored
   * JSON, settling with its revision: the writer's `createEncoded`. Cheaper to
   * carry than `call('create')` (which sends the event and returns it).
   */
  createEncoded?(json: string, options: WriteOptions): Promise<number>;
}

/** FollowerWrite names the writes a follower sends: the store's methods of those names (`writeIfAt` for an update's compare-and-swap). */
export type FollowerWrite = 'create' | 'createEncoded' | 'delete' | 'writeIfAt' | 'applyArchiveBatch' | 'bindCluster' | 'enforceRetention';

/** DEFAULT_CACHE_SIZE_MIB holds the upper index levels and hot pages of a few million events. */
export const DEFAULT_CACHE_SIZE_MIB = 32;
/** DEFAULT_MAX_BATCH is large enough that 64 concurrent writers share one commit. */
export const DEFAULT_MAX_BATCH = 1_000;
