import type { CoreEvent, OccurrenceStamp } from '../api/index.js';

/**
 * Storage contract for events. Objects are stored in their core/v1 form (both
 * Event APIs are views of one stored object). Keys are `<namespace>/<name>`; key
 * order is the byte order of that whole string, like etcd's key order (so
 * `a-b/x` sorts before `a/x`; namespace then name for namespaces where neither
 * is a prefix of the other).
 *
 * A resourceVersion is a store-wide, strictly increasing integer. Every write
 * (create, update, delete, expiry) takes the next one. The store sets
 * `metadata.resourceVersion` on what it returns and ignores it on input;
 * everything else in metadata (uid, creationTimestamp) is the caller's. Objects
 * returned by create/get/list/update/delete belong to the caller.
 */

/** IndexedField names the fields a backend may use to narrow a list or watch with an index. */
export type IndexedField =
  | 'metadata.name'
  | 'involvedObject.kind'
  | 'involvedObject.namespace'
  | 'involvedObject.name'
  | 'involvedObject.uid'
  | 'reason'
  | 'type';

/**
 * EventFilter selects events. `predicate` is the whole truth and every backend
 * applies it; `fieldEquals` only repeats some of its equality requirements so a
 * backend can use indexes. A backend that ignores `fieldEquals` is still correct.
 */
export interface EventFilter {
  /** namespace limits the result to one namespace; undefined means all namespaces. */
  namespace?: string;
  fieldEquals?: Partial<Record<IndexedField, string>>;
  predicate?: (event: CoreEvent) => boolean;
  /**
   * predicateIsSelection says that `predicate` keeps exactly the events whose fields equal every value
   * of `fieldEquals` and whose labels `labelMatch` accepts (when given), and nothing else: a backend
   * that decides each of those fields exactly, on what it stores beside the object, may answer
   * without decoding the events to apply it.
   */
  predicateIsSelection?: boolean;
  /** labelMatch is the label selector's part of `predicate`, tested on `metadata.labels` (see predicateIsSelection). */
  labelMatch?: (labels: Readonly<Record<string, string>> | undefined) => boolean;
  /** activeIn keeps the events that happened within a window (see ActiveWindow). */
  activeIn?: ActiveWindow;
  /** anyOf keeps the events of some types, reasons or involved kinds (see AnyOf); every backend applies it, with its columns where it has them. */
  anyOf?: AnyOf;
}

/**
 * AnyOf keeps what has one of `types` (compared ignoring the case of ASCII
 * letters, as readers of `Warning` do: core/v1 does not validate the type),
 * one of `reasons`, or an involved (regarding) object of one of `kinds`: an OR
 * of the three lists, so a reader of failures asks for every Warning and a few
 * Normal reasons in one read. What matches none of them is left out; an AnyOf
 * with nothing listed keeps nothing.
 */
export interface AnyOf {
  types?: readonly string[];
  reasons?: readonly string[];
  kinds?: readonly string[];
}

/**
 * ActiveWindow selects the events whose span, from when they first happened to
 * when they last did (`eventFirstMs`, `eventLastMs`), meets [sinceMs, untilMs):
 * an event that last happened before `sinceMs`, or first at or after `untilMs`,
 * is left out, unless its reason is one of `alwaysReasons`. An event with no
 * time is kept. A store may use its indexes for this.
 */
export interface ActiveWindow {
  sinceMs?: number;
  untilMs?: number;
  alwaysReasons?: readonly string[];
}

/** ListOptions tells `list` what to read. */
export interface ListOptions extends EventFilter {
  /**
   * resourceVersion: undefined (or 0) reads the latest state. With `match: 'Exact'`
   * the list is read as of that revision (a consistent snapshot;
   * ResourceVersionExpired if it is older than `oldestResourceVersion()`); with
   * `'NotOlderThan'` or no match the latest state is read. A revision newer than
   * the store's current one is TooLargeResourceVersion in every case.
   */
  resourceVersion?: number;
  match?: 'Exact' | 'NotOlderThan';
  /** limit caps the number of items; 0 or undefined means no limit. */
  limit?: number;
  /** startKey: only keys strictly greater than this `<namespace>/<name>` are returned. */
  startKey?: string;
  /** countRemaining asks for `remainingItemCount` when a page is cut by `limit`. */
  countRemaining?: boolean;
  /**
   * maxExamined lets a read stop once it has examined this many stored events (the ones its
   * filter then keeps or drops): the page ends early with `lastKey` at the last one examined,
   * so a caller can yield between reads. A backend may ignore it (and read to `limit`).
   */
  maxExamined?: number;
}

/** ListResult is one page of a list. */
export interface ListResult {
  items: CoreEvent[];
  /** resourceVersion is the revision the list was read at. */
  resourceVersion: number;
  /** lastKey is set when more items may follow: the key of the last item returned. */
  lastKey?: string;
  /**
   * remainingItemCount, when asked for and `lastKey` is set: items after this page
   * in the namespace (before fieldEquals and predicate). A backend may leave it
   * out when counting would be costly (the SQLite one past 100,000 items), as
   * upstream allows: clients treat it as a hint.
   */
  remainingItemCount?: number;
}

/**
 * ListedVersion is one item of `listVersions`: a stored version whose object is
 * decoded only when asked for.
 */
export interface ListedVersion {
  /**
   * resourceVersion names this version store-wide: no other version of any
   * object carries it, so a caller may keep what it derives from the object
   * (its wire bytes) under this number.
   */
  readonly resourceVersion: number;
  /** object decodes the version; each call returns an object of the caller's own. */
  object(): CoreEvent;
}

/** VersionList is a page of `listVersions`: a ListResult whose items are decoded on demand. */
export interface VersionList extends Omit<ListResult, 'items'> {
  items: ListedVersion[];
}

/**
 * Preconditions guard an update or delete. A failed one is ResourceVersionConflicts
 * with upstream's message (`Precondition failed: UID in precondition: …`); a
 * missing object has an empty uid and resourceVersion.
 */
export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

/** WriteOptions apply to every write. */
export interface WriteOptions {
  /** ttlSeconds: the object expires this long after this write; 0 or undefined keeps it. */
  ttlSeconds?: number;
  /**
   * occurrence asks a store with the archive capability (`ArchiveStore`) to
   * append an Occurrence in the same transaction when the write is an observed
   * change (`occurrenceChange`); other stores ignore it.
   */
  occurrence?: OccurrenceStamp;
}

/** UpdateOptions tell `guaranteedUpdate` how to behave. */
export interface UpdateOptions extends WriteOptions {
  preconditions?: Preconditions;
  /** allowCreate lets `tryUpdate` be called with `undefined` when the key does not exist. */
  allowCreate?: boolean;
}

/**
 * TryUpdate computes the new object from the current one (undefined when it does
 * not exist and `allowCreate` is set). It may be called more than once when a
 * concurrent writer wins; it must not have side effects. Throwing aborts the update.
 */
export type TryUpdate = (current: CoreEvent | undefined) => CoreEvent | Promise<CoreEvent>;

/** UpdateResult says what `guaranteedUpdate` did. */
export interface UpdateResult {
  object: CoreEvent;
  /** created is true when the key did not exist before. */
  created: boolean;
}

/**
 * StoreWatchEvent is one change delivered to a store watcher. Its objects are
 * shared by every watcher that receives the change and are frozen: read, never
 * modify (copy first).
 */
export interface StoreWatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  /** object is the new state; for DELETED, the last state, with the deletion's resourceVersion. */
  object: CoreEvent;
  /** prevObject is the state before this change, with its own resourceVersion: always set for MODIFIED and DELETED. */
  prevObject?: CoreEvent;
}

/**
 * WatchOptions tell `watch` where to start and what to deliver. With fieldEquals
 * or a predicate, a MODIFIED object that starts matching is delivered as ADDED,
 * and one that stops matching as DELETED carrying its previous state at the new
 * resourceVersion, as upstream's etcd3 watcher does.
 */
export interface WatchOptions extends EventFilter {
  /**
   * resourceVersion: deliver every change after this revision (history first, then
   * live changes, with no gap or repeat at the handover); undefined starts now. A
   * revision above the current one waits for it.
   */
  resourceVersion?: number;
}

/**
 * EventWatch is a running watch. Iterate it for changes in resourceVersion order.
 * Iteration ends after `stop()`, or rejects with a StorageError
 * (`ResourceVersionExpired` when the start revision is gone from the history,
 * `WatcherTooSlow` when the consumer fell too far behind, `Unreachable`).
 */
export interface EventWatch extends AsyncIterable<StoreWatchEvent> {
  stop(): void;
}

/**
 * EventStore is the contract every storage backend fulfils: the verbs of
 * kube-apiserver's storage.Interface that the REST layer calls (Create, Get,
 * GetList, GuaranteedUpdate, Delete, Watch, and the revisions and readiness it
 * reports), nothing more. A collection delete is the REST layer's list and
 * deletes, as upstream's registry store does it; upstream's Count has no caller
 * here. What only some backends offer is a capability interface of its own
 * (`VersionedReads` here; the archive's in archive-store.ts, search's in
 * search/), which a backend class names in its `implements` and a caller checks
 * with the capability's type guard.
 */
export interface EventStore {
  /** create stores a new object; KeyExists if the key is taken, InvalidObject without namespace or name. */
  create(event: CoreEvent, options?: WriteOptions): Promise<CoreEvent>;
  /** get reads the current state of one object; KeyNotFound if absent. */
  get(namespace: string, name: string): Promise<CoreEvent>;
  /** list reads a page of objects in key order. */
  list(options: ListOptions): Promise<ListResult>;
  /**
   * guaranteedUpdate reads, applies `tryUpdate` and writes, retrying on conflicts.
   * A result equal to the current object (property order aside) writes nothing:
   * no new revision, no TTL renewal. Renaming the object is InvalidObject.
   */
  guaranteedUpdate(namespace: string, name: string, tryUpdate: TryUpdate, options?: UpdateOptions): Promise<UpdateResult>;
  /** delete removes one object and returns its last state at the deletion's resourceVersion; KeyNotFound if absent. */
  delete(namespace: string, name: string, options?: { preconditions?: Preconditions }): Promise<CoreEvent>;
  /** watch streams changes after a revision. */
  watch(options: WatchOptions): EventWatch;
  /** currentResourceVersion is the newest revision the store has written. */
  currentResourceVersion(): Promise<number>;
  /** oldestResourceVersion is the oldest revision a watch (or an exact list) may still start from; 0 until history is first compacted. */
  oldestResourceVersion(): Promise<number>;
  /** ready resolves when the store can serve requests. */
  ready(): Promise<void>;
  /** close releases the backend and ends every watch; pending writes are settled and durable when it resolves. Later calls fail with Unreachable. */
  close(): Promise<void>;
}

/**
 * VersionedReads is the capability of a store whose resourceVersions each name
 * one stored version, so that a caller may keep what it derives from a version
 * (the render cache's wire bytes) under that number. `hasVersionedReads` checks it.
 */
export interface VersionedReads {
  /**
   * listVersions reads the page `list` would, but leaves each item encoded until
   * its `object()` is called: a caller that keeps wire bytes by resourceVersion
   * then skips decoding what it already holds.
   */
  listVersions(options: ListOptions): Promise<VersionList>;
  /**
   * newestVersions reads the current version of up to `limit` objects, newest
   * first, each older than `before` (a resourceVersion) when given, in whatever
   * order reads them fastest: what a cache of renderings warms first.
   */
  newestVersions(options: { limit: number; before?: number }): Promise<ListedVersion[]>;
}

/** hasVersionedReads tells whether a store offers `VersionedReads`. */
export function hasVersionedReads<S extends object>(store: S): store is S & VersionedReads {
  const s = store as Partial<VersionedReads>;
  return typeof s.listVersions === 'function' && typeof s.newestVersions === 'function';
}
