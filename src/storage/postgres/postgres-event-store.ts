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
  ListOptions,
  ListResult,
  Preconditions,
  TryUpdate,
  UpdateOptions,
  UpdateResult,
  WatchOptions,
  WriteOptions,
} from '../event-store.js';
import type { SearchCapable, SearchPage, SearchRequest } from '../search/index.js';
import { readEventOccurrences, readOccurrencePage } from '../shared/index.js';
import { cursorOf, decodeOccurrence } from './archive-tables.js';
import type { StoredOccurrence } from './archive-tables.js';
import type { Query } from './list-query.js';
import type { PgPool } from './options.js';
import { readTexts } from './texts.js';
import { PostgresConnection } from './connection.js';
import { PostgresLists } from './list.js';
import type { PostgresEventStoreOptions } from './options.js';
import { PostgresRetention } from './retention.js';
import { searchTimeoutOf } from './options.js';
import { NEWEST_FIRST, PostgresSearch } from './search-index.js';
import { watchFeed } from './watch.js';
import { PostgresWrites } from './write.js';
import { postgresSizeReport } from './size-report.js';

/** MAX_OCCURRENCE_BATCH caps the rows one occurrence page reads per query when a filter drops rows. */
const MAX_OCCURRENCE_BATCH = 5_000;

/**
 * PostgresEventStore keeps events in PostgreSQL, for archives and for several
 * `kevents serve` replicas over one database. Writes from concurrent callers
 * are grouped into one transaction per round of the write pipeline; every
 * replica's watchers see every change in revision order through LISTEN/NOTIFY
 * and the versions table (see ChangeFeed). Versions are kept MVCC style, so
 * exact lists and watches resume from any revision inside the history window.
 * It is an archive too (`ArchiveStore`): occurrences, source checkpoints and
 * archive batches are written by the same write function, in the transaction of
 * the writes they go with.
 *
 * It composes its parts over one connection owner (`PostgresConnection`), as
 * the SQLite backend does: lists (`list.ts`), writes (`write.ts`), watches
 * (`watch.ts`), retention (`retention.ts`) and the archive's search (`search.ts`).
 */
export class PostgresEventStore implements EventStore, ArchiveWrites, ArchiveReads, ArchiveRetention, ReasonCounts, SearchCapable, SizeReporting {
  private readonly c: PostgresConnection;
  private readonly lists: PostgresLists;
  private readonly writes: PostgresWrites;
  private readonly retention: PostgresRetention;
  private readonly searches: PostgresSearch;

  constructor(options: PostgresEventStoreOptions) {
    this.c = new PostgresConnection(options);
    this.lists = new PostgresLists(this.c);
    this.writes = new PostgresWrites(this.c);
    this.retention = new PostgresRetention(this.c);
    this.searches = new PostgresSearch(
      this.c.s,
      async () => {
        const m = this.c.state?.maintenance;
        if (m !== undefined) await Promise.all([m.sweeper.idle(), m.compactor.idle()]);
      },
      NEWEST_FIRST,
      searchTimeoutOf(options),
    );
  }

  create(event: CoreEvent, options: WriteOptions = {}): Promise<CoreEvent> {
    return this.writes.create(event, options);
  }

  get(namespace: string, name: string): Promise<CoreEvent> {
    return this.lists.get(namespace, name);
  }

  list(options: ListOptions): Promise<ListResult> {
    return this.lists.list(options);
  }

  guaranteedUpdate(namespace: string, name: string, tryUpdate: TryUpdate, options: UpdateOptions = {}): Promise<UpdateResult> {
    return this.writes.guaranteedUpdate(namespace, name, tryUpdate, options);
  }

  delete(namespace: string, name: string, options: { preconditions?: Preconditions } = {}): Promise<CoreEvent> {
    return this.writes.delete(namespace, name, options);
  }

  watch(options: WatchOptions): EventWatch {
    return watchFeed(this.c, options);
  }

  applyArchiveBatch(batch: ArchiveBatch): Promise<ArchiveBatchResult> {
    return this.writes.applyArchiveBatch(batch);
  }

  async bindCluster(identity: ClusterIdentity): Promise<ClusterBinding> {
    const c = this.c;
    const { pool } = await c.open();
    // A name taken by a replica at the same instant is read back by a second statement, which sees its commit.
    const inserted = await c.query<{ uid: string }>(pool, c.archive.bindCluster(identity, c.o.clock.now()));
    const boundUID = inserted.length > 0 ? undefined : (await c.query<{ uid: string }>(pool, c.archive.clusterUID(identity.name)))[0]?.uid;
    const names = await c.query<{ name: string }>(pool, c.archive.clusterNames(identity.uid));
    return { ...(boundUID !== undefined ? { boundUID } : {}), otherNames: names.map((r) => r.name).filter((n) => n !== identity.name) };
  }

  async getCheckpoint(source: string): Promise<SourceCheckpoint | undefined> {
    const { pool } = await this.c.open();
    const [row] = await this.c.query<{ resource_version: string; updated_at: string }>(pool, this.c.archive.checkpoint(source));
    if (row === undefined) return undefined;
    return { source, resourceVersion: row.resource_version, updatedAt: new Date(Number(row.updated_at)).toISOString().replace(/\.\d{3}Z$/, 'Z') };
  }

  async listOccurrences(q: OccurrenceQuery): Promise<OccurrencePage> {
    const { pool } = await this.c.open();
    return this.readOccurrences(pool, q);
  }

  /**
   * listEventOccurrences reads the occurrences of a search page's hits (the search route's only use) under the
   * search's statement_timeout, as the search itself: a statement that takes longer fails the request with Timeout.
   */
  async listEventOccurrences(query: EventOccurrencesQuery): Promise<Occurrence[][]> {
    const { pool } = await this.c.open();
    return this.searches.underTimeout(pool, (client) =>
      readEventOccurrences(query, MAX_OCCURRENCE_BATCH, {
        // Every event is read by its name (`occ_event`), whether or not it names the object it regards.
        batchable: () => true,
        readFirst: async (events, batch) =>
          (await this.occurrenceRows<StoredOccurrence & { i: number }>(client, this.c.archive.firstOfEvents(events, batch))).map(({ row, occurrence }) => ({
            index: row.i,
            occurrence,
            at: cursorOf(row),
          })),
        list: (q) => this.readOccurrences(client, q),
      }),
    );
  }

  private readOccurrences(pool: Pick<PgPool, 'query'>, q: OccurrenceQuery): Promise<OccurrencePage> {
    return readOccurrencePage(q, MAX_OCCURRENCE_BATCH, async (after, batch) =>
      (await this.occurrenceRows(pool, this.c.archive.page(q, after, batch))).map(({ row, occurrence }) => ({ occurrence, at: cursorOf(row) })),
    );
  }

  /** occurrenceRows reads occurrence rows and decodes them, with the messages they refer to (each read once). */
  private async occurrenceRows<R extends StoredOccurrence>(pool: Pick<PgPool, 'query'>, q: Query): Promise<{ row: R; occurrence: Occurrence }[]> {
    const rows = await this.c.query<R>(pool, q);
    const texts = await readTexts(pool, this.c.s, rows.map((r) => r.text_rv));
    return rows.map((row) => ({ row, occurrence: decodeOccurrence(row, texts) }));
  }

  async countByReason(q: ReasonCountQuery): Promise<ReasonCount[]> {
    const range = await this.observedRange(q);
    if (range === null) return [];
    const { pool } = await this.c.open();
    const rows = await this.c.query<{ type: string; reason: string; count: string; first_ms: string }>(pool, this.c.archive.countByReason(q, range));
    return rows.map((r) => ({ type: r.type, reason: r.reason, count: Number(r.count), firstMs: Number(r.first_ms) }));
  }

  async observedRange(window: { sinceMs: number; untilMs: number }): Promise<ObservedRange | null> {
    const { pool } = await this.c.open();
    if (!(window.untilMs > window.sinceMs)) return null;
    const [lag] = await this.c.query<{ lo: string | null; hi: string | null }>(pool, this.c.archive.lagOver(window.sinceMs, window.untilMs));
    if (lag === undefined || lag.lo === null || lag.hi === null) return null;
    return { sinceMicros: window.sinceMs * 1000 + Number(lag.lo), untilMicros: window.untilMs * 1000 + Number(lag.hi) };
  }

  /** search reads the search index (`search.ts`) at the request's revision, or the latest, in one snapshot. */
  async search(request: SearchRequest): Promise<SearchPage> {
    const { pool } = await this.c.open();
    return this.searches.search(pool, request);
  }

  enforceRetention(policy: RetentionPolicy): Promise<RetentionResult> {
    return this.retention.enforceRetention(policy);
  }

  archiveBytes(): Promise<number> {
    return this.retention.archiveBytes();
  }

  sizeReport(options: { retentionCutoffMs?: number } = {}): Promise<SizeReport> {
    return postgresSizeReport(this.c, options.retentionCutoffMs);
  }

  async currentResourceVersion(): Promise<number> {
    const { pool } = await this.c.open();
    const [row] = await this.c.query<{ value: string }>(pool, { text: `SELECT value FROM ${this.c.s}.meta WHERE name = 'revision'`, values: [] });
    return Number(row?.value ?? 0);
  }

  async oldestResourceVersion(): Promise<number> {
    const { pool, maintenance } = await this.c.open();
    // A compaction this replica has started answers first, so the answer reflects the time the caller sees.
    await maintenance.compactor.idle();
    const [row] = await this.c.query<{ value: string }>(pool, { text: `SELECT value FROM ${this.c.s}.meta WHERE name = 'compacted'`, values: [] });
    return Number(row?.value ?? 0);
  }

  async ready(): Promise<void> {
    await this.c.open();
  }

  close(): Promise<void> {
    return this.c.close();
  }
}
