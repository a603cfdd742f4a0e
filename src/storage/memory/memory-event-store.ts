import type { CoreEvent } from '../../api/index.js';
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
import { StorageError } from '../errors.js';
import {
  Ticker,
  WatchHub,
  checkPreconditions,
  decodeEvent,
  encodeEvent,
  eventKey,
  keyOfEvent,
  listRevision,
  matchesFilter,
  namespaceRange,
  resolveCommonOptions,
  sameContent,
} from '../shared/index.js';
import type { Change, ChangeLog, ResolvedCommonOptions } from '../shared/index.js';
import type { MemoryEventStoreOptions } from './options.js';

interface Version {
  rv: number;
  json: string;
  deleted: boolean;
  expiresAt: number | undefined;
}

interface LogEntry {
  change: Change;
  at: number;
}

/**
 * MemoryEventStore keeps events and their history in process memory: for tests
 * and `--storage memory:`. It has the same semantics as the persistent backends
 * (revisions, snapshots, history window, TTL) and keeps nothing after exit.
 */
export class MemoryEventStore implements EventStore {
  private readonly o: ResolvedCommonOptions;
  /** versions holds every kept version of each key, oldest first. */
  private readonly versions = new Map<string, Version[]>();
  /** keys is every key with a kept version, sorted in key order. */
  private readonly keys: string[] = [];
  private readonly log: LogEntry[] = [];
  private rv = 0;
  private compacted = 0;
  private closed = false;
  private readonly hub: WatchHub;
  private readonly tickers: Ticker[];

  constructor(options: MemoryEventStoreOptions = {}) {
    this.o = resolveCommonOptions(options);
    const changeLog: ChangeLog = {
      changesAfter: (after, limit) => this.changesAfter(after, limit),
      committedRv: () => this.rv,
      compactedRv: () => this.compacted,
    };
    this.hub = new WatchHub(changeLog, this.o.watchBufferSize);
    this.tickers = [
      new Ticker(this.o.clock, this.o.expiryIntervalMs, () => this.expire()),
      new Ticker(this.o.clock, this.o.compactIntervalMs, () => this.compact()),
    ];
  }

  create(event: CoreEvent, options: WriteOptions = {}): Promise<CoreEvent> {
    return this.run(() => {
      const key = keyOfEvent(event);
      if (this.live(key) !== undefined) throw new StorageError('KeyExists', `${key} already exists`, { key, currentResourceVersion: this.rv });
      const json = encodeEvent(event);
      const rv = this.write(key, 'ADDED', json, undefined, this.expiry(options.ttlSeconds));
      return decodeEvent(json, rv);
    });
  }

  get(namespace: string, name: string): Promise<CoreEvent> {
    return this.run(() => {
      const key = eventKey(namespace, name);
      const v = this.live(key);
      if (v === undefined) throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: this.rv });
      return decodeEvent(v.json, v.rv);
    });
  }

  list(options: ListOptions): Promise<ListResult> {
    return this.run(() => {
      const at = listRevision(options, this.rv, this.compacted);
      const { low, high } = options.namespace === undefined ? { low: '', high: undefined } : namespaceRange(options.namespace);
      const from = options.startKey !== undefined && options.startKey > low ? options.startKey : low;
      const limit = options.limit !== undefined && options.limit > 0 ? options.limit : Infinity;
      const items: CoreEvent[] = [];
      let i = this.upperBound(from);
      for (; i < this.keys.length && items.length < limit; i++) {
        const key = this.keys[i]!;
        if (high !== undefined && key >= high) break;
        const v = this.visible(key, at);
        if (v === undefined) continue;
        const event = decodeEvent(v.json, v.rv);
        if (matchesFilter(event, options)) items.push(event);
      }
      const result: ListResult = { items, resourceVersion: at };
      if (items.length >= limit) {
        let remaining = 0;
        for (; i < this.keys.length; i++) {
          const key = this.keys[i]!;
          if (high !== undefined && key >= high) break;
          if (this.visible(key, at) === undefined) continue;
          remaining++;
          if (options.countRemaining !== true) break;
        }
        if (remaining > 0) {
          const last = items[items.length - 1]!;
          result.lastKey = eventKey(last.metadata.namespace!, last.metadata.name!);
          if (options.countRemaining === true) result.remainingItemCount = remaining;
        }
      }
      return result;
    });
  }

  async guaranteedUpdate(namespace: string, name: string, tryUpdate: TryUpdate, options: UpdateOptions = {}): Promise<UpdateResult> {
    const key = eventKey(namespace, name);
    for (;;) {
      this.checkOpen();
      const cur = this.live(key);
      if (cur === undefined && options.allowCreate !== true) {
        throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: this.rv });
      }
      const current = cur === undefined ? undefined : decodeEvent(cur.json, cur.rv);
      checkPreconditions(key, current, options.preconditions, this.rv);
      const next = await tryUpdate(current);
      this.checkOpen();
      // Someone else wrote in the meantime: start again from their version, as etcd's compare-and-swap does.
      if (this.live(key)?.rv !== cur?.rv) continue;
      if (keyOfEvent(next) !== key) throw new StorageError('InvalidObject', `the updated object is not ${key}`, { key });
      const json = encodeEvent(next);
      if (cur !== undefined && sameContent(json, cur.json)) return { object: decodeEvent(cur.json, cur.rv), created: false };
      const rv = this.write(key, cur === undefined ? 'ADDED' : 'MODIFIED', json, cur, this.expiry(options.ttlSeconds));
      return { object: decodeEvent(json, rv), created: cur === undefined };
    }
  }

  delete(namespace: string, name: string, options: { preconditions?: Preconditions } = {}): Promise<CoreEvent> {
    return this.run(() => {
      const key = eventKey(namespace, name);
      const cur = this.live(key);
      if (cur === undefined) throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: this.rv });
      checkPreconditions(key, decodeEvent(cur.json, cur.rv), options.preconditions, this.rv);
      const rv = this.write(key, 'DELETED', cur.json, cur, undefined);
      return decodeEvent(cur.json, rv);
    });
  }

  watch(options: WatchOptions): EventWatch {
    return this.hub.watch(options);
  }

  currentResourceVersion(): Promise<number> {
    return this.run(() => this.rv);
  }

  oldestResourceVersion(): Promise<number> {
    return this.run(() => this.compacted);
  }

  ready(): Promise<void> {
    return this.run(() => undefined);
  }

  close(): Promise<void> {
    this.closed = true;
    for (const t of this.tickers) t.stop();
    this.hub.closeAll();
    return Promise.resolve();
  }

  private run<T>(fn: () => T): Promise<T> {
    try {
      this.checkOpen();
      return Promise.resolve(fn());
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
  }

  private checkOpen(): void {
    if (this.closed) throw new StorageError('Unreachable', 'the store is closed');
  }

  private expiry(ttlSeconds: number | undefined): number | undefined {
    return ttlSeconds !== undefined && ttlSeconds > 0 ? this.o.clock.now() + ttlSeconds * 1000 : undefined;
  }

  private live(key: string): Version | undefined {
    const last = this.versions.get(key)?.at(-1);
    return last === undefined || last.deleted ? undefined : last;
  }

  /** visible is the state of `key` as of revision `at`, if it existed then. */
  private visible(key: string, at: number): Version | undefined {
    const vs = this.versions.get(key);
    if (vs === undefined) return undefined;
    for (let i = vs.length - 1; i >= 0; i--) {
      const v = vs[i]!;
      if (v.rv <= at) return v.deleted ? undefined : v;
    }
    return undefined;
  }

  private write(key: string, type: Change['type'], json: string, prev: Version | undefined, expiresAt: number | undefined): number {
    const rv = ++this.rv;
    let vs = this.versions.get(key);
    if (vs === undefined) {
      vs = [];
      this.versions.set(key, vs);
      this.keys.splice(this.upperBound(key), 0, key);
    }
    vs.push({ rv, json, deleted: type === 'DELETED', expiresAt });
    const change: Change = { rv, type, key, json };
    if (prev !== undefined) {
      change.prevJson = prev.json;
      change.prevRv = prev.rv;
    }
    this.log.push({ change, at: this.o.clock.now() });
    this.hub.publish([change]);
    return rv;
  }

  /** upperBound is the index of the first key greater than `key`. */
  private upperBound(key: string): number {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.keys[mid]! <= key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private changesAfter(after: number, limit: number): Change[] {
    let lo = 0;
    let hi = this.log.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.log[mid]!.change.rv <= after) lo = mid + 1;
      else hi = mid;
    }
    return this.log.slice(lo, lo + limit).map((e) => e.change);
  }

  private expire(): void {
    if (this.closed) return;
    const now = this.o.clock.now();
    for (const key of [...this.keys]) {
      const v = this.live(key);
      if (v?.expiresAt !== undefined && v.expiresAt <= now) this.write(key, 'DELETED', v.json, v, undefined);
    }
  }

  private compact(): void {
    if (this.closed) return;
    const horizon = this.o.clock.now() - this.o.historyWindowSeconds * 1000;
    let n = 0;
    while (n < this.log.length && this.log[n]!.at <= horizon) n++;
    if (n === 0) return;
    const upTo = this.log[n - 1]!.change.rv;
    this.log.splice(0, n);
    this.compacted = Math.max(this.compacted, upTo);
    for (let i = this.keys.length - 1; i >= 0; i--) {
      const key = this.keys[i]!;
      const vs = this.versions.get(key)!;
      // A version is needed while it may be visible at a revision after the compaction point.
      let drop = 0;
      while (drop + 1 < vs.length && vs[drop + 1]!.rv <= upTo) drop++;
      if (drop > 0) vs.splice(0, drop);
      if (vs.length === 1 && vs[0]!.deleted && vs[0]!.rv <= upTo) {
        this.versions.delete(key);
        this.keys.splice(i, 1);
      }
    }
  }
}
