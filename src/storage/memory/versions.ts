/**
 * MemoryVersions owns a memory store's data, as `SqliteConnection` owns a
 * file's connection: every kept version of each key, the change log its
 * watchers read, and the revision counters. The list, write and retention parts
 * of `MemoryEventStore` run over this one owner.
 */
import { StorageError } from '../errors.js';
import { WatchHub, resolveCommonOptions } from '../shared/index.js';
import type { Change, ChangeLog, ResolvedCommonOptions, Ticker } from '../shared/index.js';
import { requireCjs } from '../../internal/index.js';
import type BTreeModule from 'sorted-btree';
import type { MemoryEventStoreOptions } from './options.js';

const BTree = (requireCjs('sorted-btree') as typeof BTreeModule).default;

/** compareKeys orders keys as the persistent backends' indexes do (by code unit). */
export const compareKeys = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Version is one kept version of a key. */
export interface Version {
  rv: number;
  json: string;
  deleted: boolean;
  expiresAt: number | undefined;
}

interface LogEntry {
  change: Change;
  at: number;
}

/** MemoryVersions holds a memory store's versions and change log, and answers whether the store is open. */
export class MemoryVersions {
  readonly o: ResolvedCommonOptions;
  /** versions holds every kept version of each key, oldest first. */
  readonly versions = new Map<string, Version[]>();
  /** keys is every key with a kept version, in key order (a B+ tree: inserting is O(log n), where a sorted array moves half of itself). */
  readonly keys = new BTree<string, true>(undefined, compareKeys);
  /** expiring is when each live key with a TTL expires. */
  readonly expiring = new Map<string, number>();
  readonly log: LogEntry[] = [];
  /** writtenAt is when each live key was last written, for retention. */
  readonly writtenAt = new Map<string, number>();
  rv = 0;
  compacted = 0;
  closed = false;
  readonly hub: WatchHub;
  /** tickers are the store's timers (expiry, compaction), stopped on close. */
  readonly tickers: Ticker[] = [];

  constructor(options: MemoryEventStoreOptions) {
    this.o = resolveCommonOptions(options);
    const changeLog: ChangeLog = {
      changesAfter: (after, limit) => this.changesAfter(after, limit),
      committedRv: () => this.rv,
      compactedRv: () => this.compacted,
    };
    this.hub = new WatchHub(changeLog, this.o.watchBufferSize);
  }

  /** run runs `fn` on an open store, as a promise. */
  run<T>(fn: () => T): Promise<T> {
    try {
      this.checkOpen();
      return Promise.resolve(fn());
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
  }

  /** checkOpen throws once the store is closed. */
  checkOpen(): void {
    if (this.closed) throw new StorageError('Unreachable', 'the store is closed');
  }

  /** close stops the timers and ends every watch. */
  close(): void {
    this.closed = true;
    for (const t of this.tickers) t.stop();
    this.hub.closeAll();
  }

  /** expiry is when a write with this TTL expires (undefined: never). */
  expiry(ttlSeconds: number | undefined): number | undefined {
    return ttlSeconds !== undefined && ttlSeconds > 0 ? this.o.clock.now() + ttlSeconds * 1000 : undefined;
  }

  /** live is the current version of `key`, unless it is deleted. */
  live(key: string): Version | undefined {
    const last = this.versions.get(key)?.at(-1);
    return last === undefined || last.deleted ? undefined : last;
  }

  /** visible is the state of `key` as of revision `at`, if it existed then. */
  visible(key: string, at: number): Version | undefined {
    const vs = this.versions.get(key);
    if (vs === undefined) return undefined;
    for (let i = vs.length - 1; i >= 0; i--) {
      const v = vs[i]!;
      if (v.rv <= at) return v.deleted ? undefined : v;
    }
    return undefined;
  }

  /** write appends a version of `key` at the next revision and publishes it to the watchers; it returns the revision. */
  write(key: string, type: Change['type'], json: string, prev: Version | undefined, expiresAt: number | undefined): number {
    const rv = ++this.rv;
    let vs = this.versions.get(key);
    if (vs === undefined) {
      vs = [];
      this.versions.set(key, vs);
      this.keys.set(key, true);
    }
    if (expiresAt !== undefined && type !== 'DELETED') this.expiring.set(key, expiresAt);
    else this.expiring.delete(key);
    vs.push({ rv, json, deleted: type === 'DELETED', expiresAt });
    if (type === 'DELETED') this.writtenAt.delete(key);
    else this.writtenAt.set(key, this.o.clock.now());
    const change: Change = { rv, type, key, json };
    if (prev !== undefined) {
      change.prevJson = prev.json;
      change.prevRv = prev.rv;
    }
    this.log.push({ change, at: this.o.clock.now() });
    this.hub.publish([change]);
    return rv;
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
}
