import type { CoreEvent } from '../api/index.js';

/**
 * Storage contract for events. Objects are stored in their core/v1 form (both
 * Event APIs are views of one stored object). Keys are `<namespace>/<name>`; key
 * order is namespace, then name (byte order), like etcd's key order.
 *
 * A resourceVersion is a store-wide, strictly increasing integer. Every write
 * (create, update, delete, expiry) takes the next one. The store sets
 * `metadata.resourceVersion` on what it returns; everything else in metadata
 * (uid, creationTimestamp) is the caller's.
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
}

/** ListOptions tells `list` what to read. */
export interface ListOptions extends EventFilter {
  /**
   * resourceVersion: undefined reads the latest state. With `match: 'Exact'` the
   * list is read as of that revision (a consistent snapshot); with
   * `'NotOlderThan'` the latest state is read and must be at least that revision.
   */
  resourceVersion?: number;
  match?: 'Exact' | 'NotOlderThan';
  /** limit caps the number of items; 0 or undefined means no limit. */
  limit?: number;
  /** startKey: only keys strictly greater than this `<namespace>/<name>` are returned. */
  startKey?: string;
  /** countRemaining asks for `remainingItemCount` when a page is cut by `limit`. */
  countRemaining?: boolean;
}

/** ListResult is one page of a list. */
export interface ListResult {
  items: CoreEvent[];
  /** resourceVersion is the revision the list was read at. */
  resourceVersion: number;
  /** lastKey is set when more items may follow: the key of the last item returned. */
  lastKey?: string;
  /** remainingItemCount, when asked for and known: items after this page (before the predicate). */
  remainingItemCount?: number;
}

/** Preconditions guard an update or delete. */
export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

/** WriteOptions apply to every write. */
export interface WriteOptions {
  /** ttlSeconds: the object expires this long after this write; 0 or undefined keeps it. */
  ttlSeconds?: number;
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

/** StoreWatchEvent is one change delivered to a store watcher. */
export interface StoreWatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  /** object is the new state; for DELETED, the last state, with the deletion's resourceVersion. */
  object: CoreEvent;
  /** prevObject is the state before this change (MODIFIED and DELETED), when the backend knows it. */
  prevObject?: CoreEvent;
}

/** WatchOptions tell `watch` where to start. */
export interface WatchOptions extends EventFilter {
  /** resourceVersion: deliver every change after this revision; undefined starts now. */
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

/** EventStore is the contract every storage backend fulfils. */
export interface EventStore {
  /** create stores a new object; KeyExists if the key is taken. */
  create(event: CoreEvent, options?: WriteOptions): Promise<CoreEvent>;
  /** get reads the current state of one object; KeyNotFound if absent. */
  get(namespace: string, name: string): Promise<CoreEvent>;
  /** list reads a page of objects in key order. */
  list(options: ListOptions): Promise<ListResult>;
  /** guaranteedUpdate reads, applies `tryUpdate` and writes, retrying on conflicts. */
  guaranteedUpdate(namespace: string, name: string, tryUpdate: TryUpdate, options?: UpdateOptions): Promise<UpdateResult>;
  /** delete removes one object and returns its last state; KeyNotFound if absent. */
  delete(namespace: string, name: string, options?: { preconditions?: Preconditions }): Promise<CoreEvent>;
  /** watch streams changes after a revision. */
  watch(options: WatchOptions): EventWatch;
  /** currentResourceVersion is the newest revision the store has written. */
  currentResourceVersion(): Promise<number>;
  /** oldestResourceVersion is the oldest revision a watch may still start from. */
  oldestResourceVersion(): Promise<number>;
  /** ready resolves when the store can serve requests. */
  ready(): Promise<void>;
  /** close releases the backend; pending acknowledged writes are durable when it resolves. */
  close(): Promise<void>;
}
