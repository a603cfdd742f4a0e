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
  SourceCheckpoint,
} from '../archive-store.js';
import type {
  EventStore,
  EventWatch,
  ListOptions,
  ListResult,
  Preconditions,
  TryUpdate,
  UpdateOptions,
  UpdateResult,
  WatchOptions,
  WriteOptions,
} from '../event-store.js';
import { scanSearch } from '../search/index.js';
import type { SearchCapable, SearchPage, SearchRequest } from '../search/index.js';
import { Ticker } from '../shared/index.js';
import { MemoryArchive } from './archive-tables.js';
import { getAt, listAt } from './list.js';
import type { MemoryEventStoreOptions } from './options.js';
import { MemoryRetention } from './retention.js';
import { MemoryVersions } from './versions.js';
import { MemoryWrites } from './write.js';

/**
 * MemoryEventStore keeps events and their history in process memory: for tests
 * and `--storage memory:`. It has the same semantics as the persistent backends
 * (revisions, snapshots, history window, TTL) and keeps nothing after exit.
 *
 * Its parts read side by side with the SQLite and PostgreSQL backends': the data
 * (`versions.ts`, in place of a connection), lists (`list.ts`), writes
 * (`write.ts`), retention (`retention.ts`) and the archive (`archive-tables.ts`).
 */
export class MemoryEventStore implements EventStore, ArchiveWrites, ArchiveReads, ArchiveRetention, ReasonCounts, SearchCapable {
  private readonly v: MemoryVersions;
  private readonly archive: MemoryArchive;
  private readonly writes: MemoryWrites;
  private readonly retention: MemoryRetention;

  constructor(options: MemoryEventStoreOptions = {}) {
    this.v = new MemoryVersions(options);
    this.archive = new MemoryArchive(this.v.o);
    this.writes = new MemoryWrites(this.v, this.archive);
    this.retention = new MemoryRetention(this.v, this.archive);
    this.v.tickers.push(
      new Ticker(this.v.o.clock, this.v.o.expiryIntervalMs, () => this.retention.expire()),
      new Ticker(this.v.o.clock, this.v.o.compactIntervalMs, () => this.retention.compact()),
    );
  }

  create(event: CoreEvent, options: WriteOptions = {}): Promise<CoreEvent> {
    return this.writes.create(event, options);
  }

  get(namespace: string, name: string): Promise<CoreEvent> {
    return this.v.run(() => getAt(this.v, namespace, name));
  }

  list(options: ListOptions): Promise<ListResult> {
    return this.v.run(() => listAt(this.v, options));
  }

  guaranteedUpdate(namespace: string, name: string, tryUpdate: TryUpdate, options: UpdateOptions = {}): Promise<UpdateResult> {
    return this.writes.guaranteedUpdate(namespace, name, tryUpdate, options);
  }

  delete(namespace: string, name: string, options: { preconditions?: Preconditions } = {}): Promise<CoreEvent> {
    return this.writes.delete(namespace, name, options);
  }

  watch(options: WatchOptions): EventWatch {
    return this.v.hub.watch(options);
  }

  currentResourceVersion(): Promise<number> {
    return this.v.run(() => this.v.rv);
  }

  oldestResourceVersion(): Promise<number> {
    return this.v.run(() => this.v.compacted);
  }

  ready(): Promise<void> {
    return this.v.run(() => undefined);
  }

  close(): Promise<void> {
    this.v.close();
    return Promise.resolve();
  }

  applyArchiveBatch(batch: ArchiveBatch): Promise<ArchiveBatchResult> {
    return this.writes.applyArchiveBatch(batch);
  }

  bindCluster(identity: ClusterIdentity): Promise<ClusterBinding> {
    return this.v.run(() => this.archive.bindCluster(identity));
  }

  getCheckpoint(source: string): Promise<SourceCheckpoint | undefined> {
    return this.v.run(() => this.archive.getCheckpoint(source));
  }

  listOccurrences(query: OccurrenceQuery): Promise<OccurrencePage> {
    return this.v.run(() => this.archive.listOccurrences(query));
  }

  listEventOccurrences(query: EventOccurrencesQuery): Promise<Occurrence[][]> {
    return this.v.run(() => this.archive.listEventOccurrences(query));
  }

  enforceRetention(policy: RetentionPolicy): Promise<RetentionResult> {
    return this.retention.enforceRetention(policy);
  }

  archiveBytes(): Promise<number> {
    return this.v.run(() => this.retention.bytes());
  }

  observedRange(window: { sinceMs: number; untilMs: number }): Promise<ObservedRange | null> {
    return this.v.run(() => this.archive.observedRange(window));
  }

  countByReason(query: ReasonCountQuery): Promise<ReasonCount[]> {
    return this.v.run(() => this.archive.countByReason(query));
  }

  /** search answers by a scan of the snapshot (`scanSearch`): the memory store holds what a test or a demo writes, not an archive to index. */
  search(request: SearchRequest): Promise<SearchPage> {
    return scanSearch(this, request);
  }
}
