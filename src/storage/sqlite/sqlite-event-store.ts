import type { CoreEvent, Occurrence } from '../../api/index.js';
import type {
  ArchiveBatch,
  ArchiveBatchResult,
  ArchiveReads,
  ArchiveRetention,
  ArchiveWrites,
  ClusterBinding,
  ClusterIdentity,
  EventOccurrencesQuery,
  ObservedRange,
  OccurrencePage,
  OccurrenceQuery,
  ReasonCount,
  ReasonCountQuery,
  ReasonCounts,
  RetentionPolicy,
  RetentionResult,
  SizeReport,
  SizeReporting,
  SourceCheckpoint,
} from '../archive-store.js';
import type {
  EventStore,
  EventWatch,
  ListedVersion,
  ListOptions,
  ListResult,
  Preconditions,
  TryUpdate,
  UpdateOptions,
  UpdateResult,
  VersionList,
  VersionedReads,
  WatchOptions,
  WriteOptions,
} from '../event-store.js';
import type { SearchCapable, SearchPage, SearchRequest } from '../search/index.js';
import { Ticker, listRevision } from '../shared/index.js';
import { SqliteConnection, storageFailure } from './connection.js';
import { SqliteLists } from './list.js';
import type { SqliteEventStoreOptions } from './options.js';
import { SqliteRetention } from './retention.js';
import type { SearchIndexLag } from './search-index-writer.js';
import { followCommit, followerRead } from './watch.js';
import { SqliteWrites } from './write.js';
import { sqliteSizeReport } from './size-report.js';

/**
 * SqliteEventStore keeps events in one SQLite file (WAL). Writes issued in the
 * same turn of the event loop are committed together in one transaction and
 * acknowledged only after that commit, so an acknowledged write survives a
 * crash of the process. Lists and watches read history from SQL (see `SCHEMA`);
 * the process holds no copy of the data, only bounded watch buffers.
 *
 * It composes its parts over one connection owner (`SqliteConnection`): lists
 * (`list.ts`), writes (`write.ts`), a follower's watch feed (`watch.ts`),
 * retention (`retention.ts`) and the search index (`search-index.ts`).
 */
export class SqliteEventStore implements EventStore, VersionedReads, ArchiveWrites, ArchiveReads, ArchiveRetention, ReasonCounts, SearchCapable, SizeReporting {
  private readonly c: SqliteConnection;
  private readonly lists: SqliteLists;
  private readonly writes: SqliteWrites;
  private readonly retention: SqliteRetention;

  constructor(options: SqliteEventStoreOptions) {
    this.c = new SqliteConnection(options);
    this.lists = new SqliteLists(this.c, options.maxCountRemaining);
    this.writes = new SqliteWrites(this.c);
    this.retention = new SqliteRetention(this.c, this.writes);
    if (!this.c.maintains) return;
    this.c.tickers.push(
      new Ticker(this.c.o.clock, this.c.o.expiryIntervalMs, () => this.retention.sweep()),
      new Ticker(this.c.o.clock, this.c.o.compactIntervalMs, () => this.retention.compact()),
    );
  }

  /**
   * followCommit tells a follower that its writer committed up to revision `rv`
   * (compaction point `compacted`): the follower reads what it has not seen from
   * the file and hands it to its watchers, in order. A writer calls it before it
   * acknowledges the writes of that commit, so a follower has published a write
   * before its client hears of it.
   */
  followCommit(rv: number, compacted: number): void {
    followCommit(this.c, rv, compacted);
  }

  create(event: CoreEvent, options: WriteOptions = {}): Promise<CoreEvent> {
    return this.writes.create(event, options);
  }

  /**
   * createEncoded is a follower's create on its writer: `json` is the event's
   * stored JSON (`encodeEvent`), written as it is; it resolves with the event's revision.
   */
  createEncoded(json: string, options: WriteOptions = {}): Promise<number> {
    return this.writes.createEncoded(json, options);
  }

  get(namespace: string, name: string): Promise<CoreEvent> {
    return this.lists.get(namespace, name);
  }

  async list(options: ListOptions): Promise<ListResult> {
    const { items, ...page } = await this.listVersions(options);
    return { ...page, items: items.map((v) => v.object()) };
  }

  listVersions(options: ListOptions): Promise<VersionList> {
    return this.lists.listVersions(options);
  }

  newestVersions(options: { limit: number; before?: number }): Promise<ListedVersion[]> {
    return this.lists.newestVersions(options);
  }

  guaranteedUpdate(namespace: string, name: string, tryUpdate: TryUpdate, options: UpdateOptions = {}): Promise<UpdateResult> {
    return this.writes.guaranteedUpdate(namespace, name, tryUpdate, options);
  }

  /**
   * writeIfAt is an update's compare-and-swap, as etcd's: it writes `next` as `key`
   * only while the key's current version is still `expectRv` (null: absent), and
   * resolves with the new revision, or undefined when another write came first.
   * `previous` is the version `next` was made from (for its occurrence).
   */
  writeIfAt(key: string, expectRv: number | null, next: CoreEvent, previous: CoreEvent | null, options: WriteOptions = {}): Promise<number | undefined> {
    return this.writes.writeIfAt(key, expectRv, next, previous, options);
  }

  delete(namespace: string, name: string, options: { preconditions?: Preconditions } = {}): Promise<CoreEvent> {
    return this.writes.delete(namespace, name, options);
  }

  watch(options: WatchOptions): EventWatch {
    return this.c.hub.watch(options);
  }

  applyArchiveBatch(batch: ArchiveBatch): Promise<ArchiveBatchResult> {
    return this.writes.applyArchiveBatch(batch);
  }

  bindCluster(identity: ClusterIdentity): Promise<ClusterBinding> {
    return this.writes.bindCluster(identity);
  }

  getCheckpoint(source: string): Promise<SourceCheckpoint | undefined> {
    return this.c.read(() => this.c.archive.getCheckpoint(source));
  }

  async listOccurrences(query: OccurrenceQuery): Promise<OccurrencePage> {
    try {
      this.c.checkOpen();
      return await this.c.archive.list(query);
    } catch (e) {
      throw storageFailure(e);
    }
  }

  async listEventOccurrences(query: EventOccurrencesQuery): Promise<Occurrence[][]> {
    try {
      this.c.checkOpen();
      return await this.c.archive.listEventOccurrences(query);
    } catch (e) {
      throw storageFailure(e);
    }
  }

  countByReason(query: ReasonCountQuery): Promise<ReasonCount[]> {
    return this.c.read(() => this.c.archive.countByReason(query));
  }

  observedRange(window: { sinceMs: number; untilMs: number }): Promise<ObservedRange | null> {
    return this.c.read(() => this.c.archive.observedRange(window.sinceMs, window.untilMs));
  }

  /** search walks the file's search index (`search-index.ts`) at the request's revision, or the latest. */
  async search(request: SearchRequest): Promise<SearchPage> {
    const page = await this.c.read(() =>
      followerRead(this.c, () => {
        const at = listRevision({ ...(request.resourceVersion !== undefined ? { resourceVersion: request.resourceVersion } : {}), match: 'Exact' }, this.c.rv, this.c.compacted);
        return this.c.searches.search(request, at);
      }),
    );
    if (request.histogram === undefined) return page;
    // The histogram reads between turns of the event loop; a store closed meanwhile ends it in the storage vocabulary.
    const pause = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.c.read(() => undefined));
    try {
      page.histogram = await this.c.searches.histogram(request, page.resourceVersion, pause);
    } catch (e) {
      throw storageFailure(e);
    }
    return page;
  }

  /**
   * catchUpSearchIndex writes the search index's waiting entries now rather than within SEARCH_INDEX_DELAY_MS, on
   * the store that writes the file (a follower's writer catches up on its own).
   */
  catchUpSearchIndex(): Promise<void> {
    return this.c.read(() => void this.c.catchUpIndex());
  }

  /** searchIndexLag is the histogram of the search index's lag behind the writes (`SearchIndexLag`), on the store that writes the file. */
  searchIndexLag(): SearchIndexLag | undefined {
    return this.c.searchIndex?.lag();
  }

  enforceRetention(policy: RetentionPolicy): Promise<RetentionResult> {
    return this.retention.enforceRetention(policy);
  }

  archiveBytes(): Promise<number> {
    // The writer's search index first: its size is part of the archive's, and its entries are written in a moment anyway.
    return this.c.read(() => (this.c.catchUpIndex(), this.c.archive.usedBytes()));
  }

  sizeReport(options: { retentionCutoffMs?: number } = {}): Promise<SizeReport> {
    return this.c.read(() => {
      if (this.c.db === undefined) throw new Error('the store is closed');
      return sqliteSizeReport(this.c.db, options.retentionCutoffMs);
    });
  }

  currentResourceVersion(): Promise<number> {
    return this.c.read(() => followerRead(this.c, () => this.c.rv));
  }

  oldestResourceVersion(): Promise<number> {
    return this.c.read(() => followerRead(this.c, () => this.c.compacted));
  }

  ready(): Promise<void> {
    return this.c.read(() => undefined);
  }

  close(): Promise<void> {
    return this.c.close();
  }
}
