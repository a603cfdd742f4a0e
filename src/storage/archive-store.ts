import type { CoreEvent, Occurrence, OccurrenceField, OccurrenceStamp } from '../api/index.js';
import type { AnyOf, EventStore } from './event-store.js';

/**
 * The archive capability of a store: what the mirror and the archive API need
 * beyond the `EventStore` contract, in parts (`ArchiveWrites`, `ArchiveReads`,
 * `ArchiveRetention`) and beside them the optional `ReasonCounts` and
 * `SizeReporting` (and search's `SearchCapable`). A backend names those it
 * offers in its `implements`; callers check them with their type guards
 * (`isArchiveStore`, `hasReasonCounts`, ...). A backend without them still
 * serves events.
 *
 * Occurrences (of archive batches, and of writes with `WriteOptions.occurrence`)
 * are appended in the same transaction as the event write they
 * describe, and a source's checkpoint in the same transaction as the writes of
 * its batch, so a crash at any instant leaves the events, their occurrences
 * and the checkpoint consistent with each other.
 */

/** ArchiveDecision is what an ArchiveWrite does with the object it found at its key. */
export type ArchiveDecision =
  /** skip writes nothing (an already archived version). */
  | { action: 'skip' }
  /** write stores `object` at the key with no TTL; `occurrence` appends one occurrence of the change. */
  | { action: 'write'; object: CoreEvent; occurrence?: { countBefore: number; countAfter: number } }
  /** redirect asks for the same decision at another name of the same namespace (a different event holds this one). */
  | { action: 'redirect'; name: string };

/**
 * ArchiveWrite is one write of a batch. `decide` sees the current object at
 * `namespace/<name>` (undefined when absent) inside the batch's transaction:
 * first at `name`, then at each name it redirects to. It must be pure, as a
 * backend may call it again.
 */
export interface ArchiveWrite {
  namespace: string;
  name: string;
  decide(current: CoreEvent | undefined, name: string): ArchiveDecision;
}

/** SourceCheckpoint is how far the mirror of one source has durably got. */
export interface SourceCheckpoint {
  /** source identifies the mirrored source (its cluster name, else its server URL). */
  source: string;
  /** resourceVersion is the source's resourceVersion up to which every change is archived. */
  resourceVersion: string;
  /** updatedAt is when the checkpoint was written (RFC 3339, filled by the store). */
  updatedAt?: string;
}

/** ArchiveBatch is a group of writes committed together with an optional checkpoint. */
export interface ArchiveBatch {
  writes: ArchiveWrite[];
  /** checkpoint, when set, replaces the source's checkpoint in the same transaction as the writes. */
  checkpoint?: SourceCheckpoint;
  /** stamp is the observed time and cluster of the batch's occurrences. */
  stamp: OccurrenceStamp;
}

/** ArchiveBatchResult counts what a batch wrote. */
export interface ArchiveBatchResult {
  events: number;
  occurrences: number;
  skipped: number;
}

/** OccurrenceCursor is the keyset position of an occurrence: its observed time (epoch microseconds) and store-wide id. */
export interface OccurrenceCursor {
  observedMicros: number;
  id: number;
}

/** OccurrenceQuery selects occurrences, in (observed time, id) order. */
export interface OccurrenceQuery {
  /** namespace limits the result to one namespace; undefined means all. */
  namespace?: string;
  /** sinceMicros (inclusive) and untilMicros (exclusive) bound the observed time, in epoch microseconds. */
  sinceMicros?: number;
  untilMicros?: number;
  /** fieldEquals requires each field to equal the value (a backend may use indexes). */
  fieldEquals?: Partial<Record<OccurrenceField, string>>;
  /** predicate is the whole truth for anything fieldEquals does not say (e.g. `!=` terms). */
  predicate?: (o: Occurrence) => boolean;
  /** anyOf keeps the occurrences of some types, reasons or regarding kinds (see AnyOf); every backend applies it, with its columns where it has them. */
  anyOf?: AnyOf;
  /**
   * events keeps the occurrences of these events only, each named by its namespace and name (an occurrence's
   * `event`): a reader that holds the events it needs the history of (incidents, their failures) reads theirs and
   * no other's; a backend may seek each through its index of events. An event given as `read` (as EventRef's) may
   * stand for the version it was read at, which a backend then need not decode again.
   */
  events?: readonly { namespace: string; name: string; read?: CoreEvent | undefined }[];
  /** after starts strictly after this position. */
  after?: OccurrenceCursor;
  /** limit caps the items; 0 or undefined means no limit. */
  limit?: number;
}

/** EventRef names one event whose occurrences are read: its namespace and name, and its uid and the name of the object it regards where it has them. */
export interface EventRef {
  namespace: string;
  name: string;
  uid?: string;
  regardingName?: string;
  /**
   * read is the event as the caller read it, with its resourceVersion (a search hit): a
   * backend that rebuilds an occurrence from the version it describes may take this one
   * for the occurrence of that version rather than decode it again. It is not changed, and
   * the occurrences share none of its objects.
   */
  read?: CoreEvent;
}

/**
 * EventOccurrencesQuery asks for the occurrences of several events at once (a
 * search page's hits): for each event, what `listOccurrences` answers for
 * `eventOccurrenceQuery(event, query)`.
 */
export interface EventOccurrencesQuery {
  events: readonly EventRef[];
  /** predicate keeps some of each event's occurrences (a search's window). */
  predicate?: (o: Occurrence) => boolean;
  /** limit caps each event's occurrences, the first in (observed time, id) order; 0 or undefined means no limit. */
  limit?: number;
}

/**
 * eventOccurrenceQuery is the OccurrenceQuery of one event of an
 * EventOccurrencesQuery: the occurrences of that namespace and event name, of
 * its uid when it has one, and of the object it regards when it names one (an
 * event's involvedObject never changes, upstream refuses the update, so every
 * occurrence of it names the object, and a backend reads them through its index
 * of objects instead of every occurrence).
 */
export function eventOccurrenceQuery(event: EventRef, query: Omit<EventOccurrencesQuery, 'events'>): OccurrenceQuery {
  const q: OccurrenceQuery = {
    namespace: event.namespace,
    fieldEquals: {
      'metadata.namespace': event.namespace,
      'event.name': event.name,
      ...(event.uid !== undefined && event.uid !== '' ? { 'event.uid': event.uid } : {}),
      ...(event.regardingName !== undefined && event.regardingName !== '' ? { 'regarding.name': event.regardingName } : {}),
    },
  };
  if (query.predicate !== undefined) q.predicate = query.predicate;
  if (query.limit !== undefined) q.limit = query.limit;
  return q;
}

/** OccurrencePage is one page of occurrences. */
export interface OccurrencePage {
  items: Occurrence[];
  /** next is set when more items may follow: the position of the last item returned. */
  next?: OccurrenceCursor;
}

/**
 * RetentionPolicy says what to drop: anything older than `olderThanMs` (epoch
 * ms) of every cluster without a cutoff of its own, anything of a cluster in
 * `clusters` older than that cluster's cutoff, and the oldest data while the
 * store exceeds `maxBytes`.
 */
export interface RetentionPolicy {
  olderThanMs?: number;
  /** clusters maps a cluster name (the `archive.kevents.io/cluster` label) to its own cutoff (epoch ms); its rows are dropped by that cutoff only. */
  clusters?: Readonly<Record<string, number>>;
  maxBytes?: number;
}

/**
 * RetentionRule is one cutoff of a policy and the rows it applies to: one
 * cluster's (`cluster`), or every row but those of the clusters in `except`
 * (rows of no cluster included).
 */
export type RetentionRule = { cutoffMs: number; cluster: string } | { cutoffMs: number; except: string[] };

/** retentionRules splits a policy's cutoffs into rules, each over rows no other rule covers. */
export function retentionRules(policy: RetentionPolicy): RetentionRule[] {
  const own = Object.entries(policy.clusters ?? {});
  const rules: RetentionRule[] = own.map(([cluster, cutoffMs]) => ({ cluster, cutoffMs }));
  if (policy.olderThanMs !== undefined) rules.push({ cutoffMs: policy.olderThanMs, except: own.map(([c]) => c) });
  return rules;
}

/**
 * marksKeptFrom is the time before which a policy needs no time-to-revision
 * mark: its oldest cutoff when it has a default one, as every row older than
 * that is then due; undefined (keep every mark) when it has per-cluster cutoffs
 * only, since the rows of the other clusters stay and a later policy may cut
 * them at any time.
 */
export function marksKeptFrom(policy: RetentionPolicy): number | undefined {
  if (policy.olderThanMs === undefined) return undefined;
  return Math.min(policy.olderThanMs, ...Object.values(policy.clusters ?? {}));
}

/** retentionRuleMatches tells whether a row of `cluster` ("" or undefined: none) falls under a rule. */
export function retentionRuleMatches(rule: RetentionRule, cluster: string | undefined): boolean {
  const c = cluster ?? '';
  return 'cluster' in rule ? c === rule.cluster : !rule.except.includes(c);
}

/** RetentionResult counts what one retention step removed. */
export interface RetentionResult {
  events: number;
  occurrences: number;
  /** more is true when the step stopped at its bound and another step would remove more. */
  more: boolean;
}

/** ReasonCountQuery selects the changes `countByReason` sums. */
export interface ReasonCountQuery {
  /** namespace limits the counts to one namespace; undefined means all. */
  namespace?: string;
  /** sinceMs (inclusive) and untilMs (exclusive) bound when each change happened (`occurrenceTimeMs`), Unix ms. */
  sinceMs: number;
  untilMs: number;
}

/** ObservedRange is a range of observed times, epoch microseconds (since inclusive, until exclusive). */
export interface ObservedRange {
  sinceMicros: number;
  untilMicros: number;
}

/** ReasonCount is the number of repeats of one type and reason, and when the first of them happened (Unix ms). */
export interface ReasonCount {
  type: string;
  reason: string;
  count: number;
  firstMs: number;
}

/** GO_ZERO_TIME_MS bounds the times taken as real: Go's zero time (0001-01-01) is how a missing time looks on some servers' wire. */
const GO_ZERO_TIME_MS = -62135596800000 + 1000;

/**
 * occurrenceTimeMs is when an occurrence's change happened, the time a timeline
 * row of it carries: the event's last-seen time after the change, else the time
 * it was observed (Unix ms).
 */
export function occurrenceTimeMs(o: Pick<Occurrence, 'lastSeen' | 'observedTime'>): number | undefined {
  for (const t of [o.lastSeen, o.observedTime]) {
    if (t === null || t === undefined || t === '') continue;
    const ms = Date.parse(t);
    if (!Number.isNaN(ms) && ms >= GO_ZERO_TIME_MS) return ms;
  }
  return undefined;
}

/** occurrenceRepeats is how many repeats an occurrence's change added: the count it raised, never negative. */
export function occurrenceRepeats(o: Pick<Occurrence, 'countBefore' | 'countAfter'>): number {
  return Math.max(0, o.countAfter - o.countBefore);
}

/** ClusterIdentity is a mirrored cluster as the archive knows it: a name bound to the UID of its `kube-system` namespace. */
export interface ClusterIdentity {
  name: string;
  uid: string;
}

/** ClusterBinding is what the archive held of an identity when `bindCluster` was asked to bind it. */
export interface ClusterBinding {
  /** boundUID is the UID the name was already bound to; undefined when the name was free (it is bound now). */
  boundUID?: string;
  /** otherNames are the other names the UID is bound to, sorted. */
  otherNames: string[];
}

/** ArchiveWrites is the archive's write side, what the mirror needs: batches with their checkpoint, and the cluster names it binds. */
export interface ArchiveWrites {
  /** applyArchiveBatch commits the writes, their occurrences and the checkpoint in one transaction; all or nothing. */
  applyArchiveBatch(batch: ArchiveBatch): Promise<ArchiveBatchResult>;
  /**
   * bindCluster binds a cluster's name to its UID, atomically with any other
   * replica binding the same name: a name is bound once, to one UID, for the
   * life of the archive. A name bound to another UID is left as it is (the
   * caller refuses to mirror under it); a UID may be bound under several names.
   */
  bindCluster(identity: ClusterIdentity): Promise<ClusterBinding>;
  /** getCheckpoint reads a source's checkpoint, undefined when it has none. */
  getCheckpoint(source: string): Promise<SourceCheckpoint | undefined>;
}

/** ArchiveReads is the archive's read side, what the archive API and timelines need: occurrences, and when they were observed. */
export interface ArchiveReads {
  /** listOccurrences reads a page of occurrences. */
  listOccurrences(query: OccurrenceQuery): Promise<OccurrencePage>;
  /**
   * listEventOccurrences reads the occurrences of several events in one call
   * (one statement where the backend can): one list per event, in the order
   * asked, each the items `listOccurrences(eventOccurrenceQuery(event, query))`
   * answers. A search page's hits read theirs so, not one query each.
   */
  listEventOccurrences(query: EventOccurrencesQuery): Promise<Occurrence[][]>;
  /**
   * observedRange is a range of observed time that holds every occurrence
   * whose change happened in the window (`occurrenceTimeMs`), null when none
   * did: how a reader bounds an `OccurrenceQuery` by when things happened,
   * however late they were observed.
   */
  observedRange(window: { sinceMs: number; untilMs: number }): Promise<ObservedRange | null>;
}

/** ArchiveRetention is the archive's maintenance: what `kevents mirror` and `kevents serve` run with `--retention` and `--max-size`. */
export interface ArchiveRetention {
  /**
   * enforceRetention removes one bounded step of expired data: occurrences by
   * observed time, events whose last archived write is older than the cutoff
   * (through the delete path, so watchers see DELETED). Indexed deletes only.
   */
  enforceRetention(policy: RetentionPolicy): Promise<RetentionResult>;
  /** archiveBytes is the space the data uses (for `maxBytes`), as the backend measures it. */
  archiveBytes(): Promise<number>;
}

/**
 * ReasonCounts is the capability of an archive that counts without reading
 * events: `countByReason` sums by type and reason the repeats
 * (`occurrenceRepeats`) of the occurrences whose change happened in the window
 * (`occurrenceTimeMs`), with no need to decode the occurrences either: what a
 * timeline's summary counts when the archive holds the history of every event,
 * as it does of every write it recorded. `hasReasonCounts` checks it.
 */
export interface ReasonCounts {
  /** countByReason counts a window's repeats by type and reason. */
  countByReason(query: ReasonCountQuery): Promise<ReasonCount[]>;
}

/**
 * ArchiveStore is an EventStore with the archive capability, its three parts
 * together (a backend that archives also reads and expires what it archived);
 * `isArchiveStore` checks it.
 */
export type ArchiveStore = EventStore & ArchiveWrites & ArchiveReads & ArchiveRetention;

/** SizeRelation is one table or index of an archive and the bytes it takes. */
export interface SizeRelation {
  name: string;
  /** table is the table the relation belongs to: its own name for a table, the indexed table's for an index. */
  table: string;
  kind: 'table' | 'index';
  bytes: number;
}

/** SizeReport is what an archive's data takes, by table and index, and what it holds (`kevents archive stats`). */
export interface SizeReport {
  /** totalBytes is the sum of the relations' bytes (the file's pages in use, for SQLite). */
  totalBytes: number;
  /** relations are the archive's tables and indexes, largest first. */
  relations: SizeRelation[];
  /** events counts the events the archive holds now (their current versions). */
  events: number;
  /** versions counts every stored version: current, history, and the past versions occurrences keep. */
  versions: number;
  occurrences: number;
  /**
   * retention, when asked about a cutoff, is what a retention of that cutoff would remove: the occurrences
   * observed before it, and their share of the bytes of the tables that grow with the archive (an estimate).
   */
  retention?: { cutoffMs: number; occurrences: number; bytes: number };
}

/** SizeReporting is the capability of an archive that reports its size (`hasSizeReport`). */
export interface SizeReporting {
  /** sizeReport measures the archive: each relation's bytes, what it holds and, with `retentionCutoffMs`, what a retention would free. */
  sizeReport(options?: { retentionCutoffMs?: number }): Promise<SizeReport>;
}

/** hasSizeReport tells whether a store reports its size. */
export function hasSizeReport<S extends object>(store: S): store is S & SizeReporting {
  return typeof (store as Partial<SizeReporting>).sizeReport === 'function';
}

/** hasReasonCounts tells whether a store offers `countByReason`. */
export function hasReasonCounts<S extends object>(store: S): store is S & ReasonCounts {
  return typeof (store as Partial<ReasonCounts>).countByReason === 'function';
}

/** hasArchiveReads tells whether a store reads occurrences. */
export function hasArchiveReads<S extends object>(store: S): store is S & ArchiveReads {
  const s = store as Partial<ArchiveReads>;
  return typeof s.listOccurrences === 'function' && typeof s.listEventOccurrences === 'function' && typeof s.observedRange === 'function';
}

/** hasArchiveWrites tells whether a store takes archive batches and checkpoints. */
export function hasArchiveWrites<S extends object>(store: S): store is S & ArchiveWrites {
  const s = store as Partial<ArchiveWrites>;
  return typeof s.applyArchiveBatch === 'function' && typeof s.getCheckpoint === 'function' && typeof s.bindCluster === 'function';
}

/** hasRetention tells whether a store enforces a retention policy. */
export function hasRetention<S extends object>(store: S): store is S & ArchiveRetention {
  const s = store as Partial<ArchiveRetention>;
  return typeof s.enforceRetention === 'function' && typeof s.archiveBytes === 'function';
}

/** isArchiveStore tells whether a store has the archive capability, all its parts. */
export function isArchiveStore(store: EventStore): store is ArchiveStore {
  return hasArchiveWrites(store) && hasArchiveReads(store) && hasRetention(store);
}

/** MAX_REDIRECTS bounds the redirects of one ArchiveWrite, so a decide function that loops is an error, not a hang. */
export const MAX_REDIRECTS = 4;
