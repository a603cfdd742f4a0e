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
  checkPreconditions,
  decodeEvent,
  encodeEvent,
  eventKey,
  keyOfEvent,
  matchesFilter,
  namespaceRange,
  resolveCommonOptions,
  sameContent,
} from '../shared/index.js';
import type { ResolvedCommonOptions } from '../shared/index.js';
import { COMPACT_REV_KEY, Compactor } from './compactor.js';
import { loadEtcdDriver, passThrough, toEtcdHost } from './driver.js';
import { etcdFailure, retryingKV, withRetry } from './etcd-errors.js';
import { EtcdWatch } from './etcd-watch.js';
import type { WatchSource } from './etcd-watch.js';
import { LeaseManager } from './lease-manager.js';
import {
  DEFAULT_LEASE_MAX_OBJECT_COUNT,
  DEFAULT_LEASE_REUSE_DURATION_SECONDS,
  DEFAULT_PREFIX,
  DEFAULT_REQUEST_TIMEOUT_MS,
  LEASE_REUSE_DURATION_PERCENT,
} from './options.js';
import type { EtcdClient, EtcdEventStoreOptions, EtcdKV, EtcdKeyValue, EtcdRangeRequest, EtcdRangeResponse } from './options.js';

/** MAX_LIST_BATCH caps the keys read per range while a filtered list fills its page, as upstream caps its etcd pages. */
const MAX_LIST_BATCH = 10_000;
/** LEASE_RETRIES: a write whose cached lease vanished (revoked, or etcd restored from a backup) asks for a fresh one once. */
const LEASE_RETRIES = 1;

function isLeaseNotFound(e: unknown): boolean {
  return /requested lease not found/.test(e instanceof Error ? e.message : String(e));
}

/** prefixEnd is the first key after every key that starts with `prefix`. */
function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]!++;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

/** CallerError carries what a caller's tryUpdate threw past the driver-error mapping, unchanged. */
class CallerError extends Error {
  constructor(readonly error: unknown) {
    super('tryUpdate failed');
  }
}

interface Current {
  kv: EtcdKeyValue | undefined;
  /** rv is the revision the read was served at. */
  rv: number;
}

/**
 * EtcdEventStore keeps events in etcd the way kube-apiserver does: one key per
 * event at `<prefix>/events/<namespace>/<name>`, resourceVersion = the etcd
 * revision of the write, compare-and-swap transactions for create, update and
 * delete, lists read at an exact revision, watches served by etcd watches, and
 * TTLs through leases shared between writes (see LeaseManager), so expiry is an
 * etcd delete that every watcher, on every replica, sees as DELETED. Several
 * stores (processes) over one etcd cluster see one history.
 *
 * etcd leases run in real time: `ttlSeconds` is wall-clock seconds whatever
 * `clock` is given (the clock drives the compaction timer only), and expiry
 * needs no sweep, so `expiryIntervalMs` is unused.
 */
export class EtcdEventStore implements EventStore {
  private readonly o: ResolvedCommonOptions;
  private readonly prefix: Buffer;
  private readonly clientPromise: Promise<EtcdClient>;
  /** kvPromise is the client's KV service with retries (see withRetry). */
  private readonly kvPromise: Promise<EtcdKV>;
  /** kv is kvPromise's value once it has one: calls then start at once rather than a turn of the promise queue later. */
  private kv: EtcdKV | undefined;
  private readonly ownsClient: boolean;
  private readonly leases: LeaseManager;
  private readonly compactor: Compactor;
  private readonly ticker: Ticker;
  private readonly watchers = new Set<EtcdWatch>();
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly source: WatchSource;
  /** rv is the newest revision this store has seen in any etcd response. */
  private rv = 0;
  private closed = false;

  constructor(options: EtcdEventStoreOptions) {
    this.o = resolveCommonOptions(options);
    this.prefix = Buffer.from(`${(options.prefix ?? DEFAULT_PREFIX).replace(/\/+$/, '')}/events/`);
    this.ownsClient = options.client === undefined;
    this.clientPromise = options.client !== undefined ? Promise.resolve(options.client) : this.connect(options);
    const budgetMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.kvPromise = this.clientPromise.then((c) => (this.kv = retryingKV(c.kv, budgetMs)));
    // Surfaced by the first call (ready() or any other); a rejection nobody awaited yet is not an error.
    this.kvPromise.catch(() => undefined);
    this.leases = new LeaseManager({
      grant: async (ttl) => {
        const leases = (await this.clientPromise).leaseClient;
        // A duplicate grant only leaves an unused lease behind, so a grant retries like a read.
        const r = await withRetry(() => leases.leaseGrant({ TTL: ttl }), { write: false, budgetMs });
        this.observe(r.header.revision);
        return r.ID;
      },
      reuseDurationSeconds: options.leaseReuseDurationSeconds ?? DEFAULT_LEASE_REUSE_DURATION_SECONDS,
      reuseDurationPercent: LEASE_REUSE_DURATION_PERCENT,
      maxObjectCount: options.leaseMaxObjectCount ?? DEFAULT_LEASE_MAX_OBJECT_COUNT,
    });
    const observe = (revision: string): void => {
      this.observe(revision);
    };
    this.compactor = new Compactor(() => this.kvPromise, {
      clock: this.o.clock,
      logger: this.o.logger,
      windowMs: this.o.historyWindowSeconds * 1000,
      knownRv: () => this.rv,
      observe,
    });
    this.ticker = new Ticker(this.o.clock, this.o.compactIntervalMs, () => {
      if (!this.closed) this.compactor.tick();
    });
    const eventsEnd = prefixEnd(this.prefix);
    this.source = {
      client: () => this.clientPromise,
      range: (namespace) => {
        if (namespace === undefined) return { start: this.prefix, end: eventsEnd };
        const { low, high } = namespaceRange(namespace);
        return { start: this.etcdKey(low), end: this.etcdKey(high) };
      },
      prefixLength: this.prefix.length,
      bufferSize: this.o.watchBufferSize,
      compactedRv: () => this.compactor.oldest(),
      knownRv: () => this.rv,
      observe,
      failure: etcdFailure,
      ended: (w) => this.watchers.delete(w),
    };
  }

  /** leasesGranted is how many etcd leases this store has asked for. */
  get leasesGranted(): number {
    return this.leases.granted;
  }

  create(event: CoreEvent, options: WriteOptions = {}): Promise<CoreEvent> {
    return this.op(async (kv) => {
      const key = keyOfEvent(event);
      const k = this.etcdKey(key);
      const json = encodeEvent(event);
      const value = Buffer.from(json);
      const r = await this.withLease(options.ttlSeconds, (lease) =>
        kv.txn({
          compare: [{ key: k, target: 'Version', result: 'Equal', version: 0 }],
          success: [{ request_put: lease === undefined ? { key: k, value } : { key: k, value, lease } }],
          failure: [],
        }),
      );
      const rv = this.observe(r.header.revision);
      if (!r.succeeded) throw new StorageError('KeyExists', `${key} already exists`, { key, currentResourceVersion: rv });
      return decodeEvent(json, rv);
    });
  }

  get(namespace: string, name: string): Promise<CoreEvent> {
    return this.op(async (kv) => {
      const key = eventKey(namespace, name);
      const cur = await this.read(kv, key);
      if (cur.kv === undefined) throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: cur.rv });
      return this.decode(cur.kv);
    });
  }

  list(options: ListOptions): Promise<ListResult> {
    return this.op(async (kv) => {
      const want = options.resourceVersion !== undefined && options.resourceVersion > 0 ? options.resourceVersion : undefined;
      const exact = want !== undefined && options.match === 'Exact';
      const { low, high } = options.namespace === undefined ? { low: '', high: undefined } : namespaceRange(options.namespace);
      const end = high === undefined ? prefixEnd(this.prefix) : this.etcdKey(high);
      // Keys strictly after startKey: the NUL byte is the least key above it.
      let from = options.startKey !== undefined && options.startKey > low ? this.etcdKey(`${options.startKey}\0`) : this.etcdKey(low);
      const limit = options.limit !== undefined && options.limit > 0 ? options.limit : Infinity;
      let batch = Math.min(limit, MAX_LIST_BATCH);
      let at = exact ? want : undefined;
      const items: CoreEvent[] = [];
      let lastKey: Buffer | undefined;
      let more = false;
      for (;;) {
        const r = await this.range(kv, { key: from, range_end: end, limit: batch, ...(at !== undefined ? { revision: at } : {}) }, want);
        if (at === undefined) {
          at = Number(r.header.revision);
          if (want !== undefined && want > at) throw this.tooLarge(want, at);
        }
        let i = 0;
        for (; i < r.kvs.length && items.length < limit; i++) {
          const kv = r.kvs[i]!;
          lastKey = kv.key;
          const event = this.decode(kv);
          if (matchesFilter(event, options)) items.push(event);
        }
        if (i < r.kvs.length || (items.length >= limit && r.more)) {
          more = true;
          break;
        }
        if (!r.more) break;
        // A filter dropped keys: read further, in larger steps, at the same revision, as upstream does.
        from = Buffer.concat([lastKey!, Buffer.from([0])]);
        batch = Math.min(batch * 2, MAX_LIST_BATCH);
      }
      const result: ListResult = { items, resourceVersion: at };
      if (more && lastKey !== undefined) {
        result.lastKey = lastKey.subarray(this.prefix.length).toString();
        if (options.countRemaining === true) {
          const r = await this.range(kv, { key: Buffer.concat([lastKey, Buffer.from([0])]), range_end: end, revision: at, count_only: true }, want);
          result.remainingItemCount = Number(r.count);
        }
      }
      return result;
    });
  }

  guaranteedUpdate(namespace: string, name: string, tryUpdate: TryUpdate, options: UpdateOptions = {}): Promise<UpdateResult> {
    return this.op(async (kv) => {
      const key = eventKey(namespace, name);
      const k = this.etcdKey(key);
      let cur = await this.read(kv, key);
      for (;;) {
        if (cur.kv === undefined && options.allowCreate !== true) {
          throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: cur.rv });
        }
        const current = cur.kv === undefined ? undefined : this.decode(cur.kv);
        checkPreconditions(key, current, options.preconditions, cur.rv);
        let next: CoreEvent;
        try {
          next = await tryUpdate(current);
        } catch (e) {
          throw new CallerError(e);
        }
        if (keyOfEvent(next) !== key) throw new StorageError('InvalidObject', `the updated object is not ${key}`, { key });
        const json = encodeEvent(next);
        const modRevision = cur.kv === undefined ? 0 : Number(cur.kv.mod_revision);
        const unchanged = cur.kv !== undefined && sameContent(json, cur.kv.value.toString());
        const value = Buffer.from(json);
        // Compare-and-swap on the revision read before tryUpdate; a lost race retries on the state etcd hands back.
        const r = await this.withLease(unchanged ? undefined : options.ttlSeconds, (lease) =>
          kv.txn({
            compare: [{ key: k, target: 'Mod', result: 'Equal', mod_revision: modRevision }],
            success: unchanged ? [] : [{ request_put: lease === undefined ? { key: k, value } : { key: k, value, lease } }],
            failure: [{ request_range: { key: k } }],
          }),
        );
        const rv = this.observe(r.header.revision);
        if (!r.succeeded) {
          cur = { kv: r.responses[0]?.response_range?.kvs[0], rv };
          continue;
        }
        // An unchanged object writes nothing: no revision, no TTL renewal.
        if (unchanged) return { object: this.decode(cur.kv!), created: false };
        return { object: decodeEvent(json, rv), created: cur.kv === undefined };
      }
    });
  }

  delete(namespace: string, name: string, options: { preconditions?: Preconditions } = {}): Promise<CoreEvent> {
    return this.op(async (kv) => {
      const key = eventKey(namespace, name);
      const k = this.etcdKey(key);
      let cur = await this.read(kv, key);
      for (;;) {
        if (cur.kv === undefined) throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: cur.rv });
        checkPreconditions(key, this.decode(cur.kv), options.preconditions, cur.rv);
        const r = await kv.txn({
          compare: [{ key: k, target: 'Mod', result: 'Equal', mod_revision: Number(cur.kv.mod_revision) }],
          success: [{ request_delete_range: { key: k } }],
          failure: [{ request_range: { key: k } }],
        });
        const rv = this.observe(r.header.revision);
        if (r.succeeded) return decodeEvent(cur.kv.value.toString(), rv);
        cur = { kv: r.responses[0]?.response_range?.kvs[0], rv };
      }
    });
  }

  watch(options: WatchOptions): EventWatch {
    const { resourceVersion, ...filter } = options;
    const w = new EtcdWatch(this.source, filter, resourceVersion ?? this.rv, resourceVersion === undefined);
    if (this.closed) w.fail(new StorageError('Unreachable', 'the store is closed'));
    else this.watchers.add(w);
    return w;
  }

  currentResourceVersion(): Promise<number> {
    return this.op(async (kv) => {
      const r = await kv.range({ key: Buffer.from(COMPACT_REV_KEY), count_only: true });
      return this.observe(r.header.revision);
    });
  }

  oldestResourceVersion(): Promise<number> {
    return this.op(() => this.compactor.oldest());
  }

  async ready(): Promise<void> {
    await this.currentResourceVersion();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.ticker.stop();
    for (const w of [...this.watchers]) w.stop();
    await Promise.allSettled([...this.inflight]);
    if (!this.ownsClient) return;
    try {
      (await this.clientPromise).close();
    } catch {
      // A client that never connected has nothing to close.
    }
  }

  private async connect(options: EtcdEventStoreOptions): Promise<EtcdClient> {
    const endpoints = options.endpoints ?? [];
    if (endpoints.length === 0) throw new StorageError('Unreachable', 'an etcd store needs endpoints or a client');
    const { Etcd3 } = await loadEtcdDriver();
    const timeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    return new Etcd3({
      hosts: endpoints.map(toEtcdHost),
      faultHandling: { host: () => passThrough, global: passThrough },
      // Lists and watch catch-ups can exceed gRPC's default 4 MiB message limit.
      grpcOptions: { 'grpc.max_receive_message_length': -1 },
      defaultCallOptions: (context) => (context.isStream ? {} : { deadline: new Date(Date.now() + timeout) }),
    });
  }

  /** op runs one call against etcd: refused after close, counted so close() can wait for it, and its errors mapped. */
  private op<T>(fn: (kv: EtcdKV) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new StorageError('Unreachable', 'the store is closed'));
    // Every fn is an async function, so it reports a failure as a rejection, never by throwing.
    const started = this.kv !== undefined ? fn(this.kv) : this.kvPromise.then(fn);
    const p = started.catch((e: unknown) => {
      if (e instanceof CallerError) {
        // What tryUpdate threw goes back to the caller as it was.
        throw e.error;
      }
      throw etcdFailure(e);
    });
    this.inflight.add(p);
    void p.then(
      () => this.inflight.delete(p),
      () => this.inflight.delete(p),
    );
    return p;
  }

  /** withLease runs a write with a shared lease for `ttlSeconds` (none for 0 or undefined), once more with a new lease if etcd lost the cached one. */
  private async withLease<T>(ttlSeconds: number | undefined, write: (lease: string | undefined) => Promise<T>): Promise<T> {
    const ttl = ttlSeconds !== undefined && ttlSeconds > 0 ? Math.ceil(ttlSeconds) : 0;
    for (let attempt = 0; ; attempt++) {
      const lease = ttl > 0 ? await this.leases.getLease(ttl) : undefined;
      try {
        return await write(lease);
      } catch (e) {
        if (lease === undefined || attempt >= LEASE_RETRIES || !isLeaseNotFound(e)) throw e;
        this.leases.forget(lease);
      }
    }
  }

  private async read(kv: EtcdKV, key: string): Promise<Current> {
    const r = await kv.range({ key: this.etcdKey(key) });
    return { kv: r.kvs[0], rv: this.observe(r.header.revision) };
  }

  /** range reads keys; for an exact revision, etcd's own answers map to ResourceVersionExpired and TooLargeResourceVersion. */
  private async range(kv: EtcdKV, req: EtcdRangeRequest, want: number | undefined): Promise<EtcdRangeResponse> {
    try {
      const r = await kv.range(req);
      this.observe(r.header.revision);
      return r;
    } catch (e) {
      const mapped = etcdFailure(e);
      if (mapped.code === 'TooLargeResourceVersion' && want !== undefined) {
        const now = await kv.range({ key: Buffer.from(COMPACT_REV_KEY), count_only: true });
        throw this.tooLarge(want, this.observe(now.header.revision));
      }
      if (mapped.code === 'ResourceVersionExpired' && want !== undefined) {
        throw new StorageError('ResourceVersionExpired', `resourceVersion ${want} is older than the oldest kept revision`, {
          resourceVersion: want,
          currentResourceVersion: this.rv,
          cause: e,
        });
      }
      throw mapped;
    }
  }

  private tooLarge(want: number, current: number): StorageError {
    return new StorageError('TooLargeResourceVersion', `Too large resource version: ${want}, current: ${current}`, {
      resourceVersion: want,
      currentResourceVersion: current,
    });
  }

  private etcdKey(key: string): Buffer {
    return Buffer.concat([this.prefix, Buffer.from(key)]);
  }

  private decode(kv: EtcdKeyValue): CoreEvent {
    return decodeEvent(kv.value.toString(), Number(kv.mod_revision));
  }

  /** observe notes a revision etcd reported and returns it as a number. */
  private observe(revision: string): number {
    const rv = Number(revision);
    if (rv > this.rv) this.rv = rv;
    return rv;
  }
}
