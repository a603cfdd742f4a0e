/**
 * A store's one owner of its etcd client: the KV service with retries, the
 * shared leases, the compactor, the watches it must end at close, and the
 * newest revision etcd has reported. The list, write and watch parts run their
 * calls through `op`, which refuses them after close and maps driver errors.
 */
import type { CoreEvent } from '../../api/index.js';
import { StorageError } from '../errors.js';
import { Ticker, decodeEvent, namespaceRange, resolveCommonOptions } from '../shared/index.js';
import type { ResolvedCommonOptions } from '../shared/index.js';
import { COMPACT_REV_KEY, Compactor } from './compactor.js';
import { loadEtcdDriver, passThrough, toEtcdHost } from './driver.js';
import { etcdFailure, retryingKV, withRetry } from './etcd-errors.js';
import { LeaseManager } from './lease-manager.js';
import {
  DEFAULT_LEASE_MAX_OBJECT_COUNT,
  DEFAULT_LEASE_REUSE_DURATION_SECONDS,
  DEFAULT_PREFIX,
  DEFAULT_REQUEST_TIMEOUT_MS,
  LEASE_REUSE_DURATION_PERCENT,
} from './options.js';
import type { EtcdClient, EtcdEventStoreOptions, EtcdKV, EtcdKeyValue, EtcdRangeRequest, EtcdRangeResponse } from './options.js';
import type { EtcdWatch, WatchSource } from './watch.js';

/** LEASE_RETRIES: a write whose cached lease vanished (revoked, or etcd restored from a backup) asks for a fresh one once. */
const LEASE_RETRIES = 1;

function isLeaseNotFound(e: unknown): boolean {
  return /requested lease not found/.test(e instanceof Error ? e.message : String(e));
}

/** prefixEnd is the first key after every key that starts with `prefix`. */
export function prefixEnd(prefix: Buffer): Buffer {
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
export class CallerError extends Error {
  constructor(readonly error: unknown) {
    super('tryUpdate failed');
  }
}

/** Current is one key as etcd answered a read of it. */
export interface Current {
  kv: EtcdKeyValue | undefined;
  /** rv is the revision the read was served at. */
  rv: number;
}

/** EtcdConnection owns a store's etcd client and what is shared by its reads, writes and watches. */
export class EtcdConnection {
  readonly o: ResolvedCommonOptions;
  /** prefix is the key prefix in front of `<namespace>/<name>`. */
  readonly prefix: Buffer;
  readonly leases: LeaseManager;
  readonly compactor: Compactor;
  readonly watchers = new Set<EtcdWatch>();
  readonly source: WatchSource;
  /** rv is the newest revision this store has seen in any etcd response. */
  rv = 0;
  closed = false;
  private readonly clientPromise: Promise<EtcdClient>;
  /** kvPromise is the client's KV service with retries (see withRetry). */
  private readonly kvPromise: Promise<EtcdKV>;
  /** kv is kvPromise's value once it has one: calls then start at once rather than a turn of the promise queue later. */
  private kv: EtcdKV | undefined;
  private readonly ownsClient: boolean;
  private readonly ticker: Ticker;
  private readonly inflight = new Set<Promise<unknown>>();

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

  /** close refuses new calls, ends every watch, waits for the calls under way and closes a client it made itself. */
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
  op<T>(fn: (kv: EtcdKV) => Promise<T>): Promise<T> {
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
  async withLease<T>(ttlSeconds: number | undefined, write: (lease: string | undefined) => Promise<T>): Promise<T> {
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

  /** read reads one key at the latest revision. */
  async read(kv: EtcdKV, key: string): Promise<Current> {
    const r = await kv.range({ key: this.etcdKey(key) });
    return { kv: r.kvs[0], rv: this.observe(r.header.revision) };
  }

  /** range reads keys; for an exact revision, etcd's own answers map to ResourceVersionExpired and TooLargeResourceVersion. */
  async range(kv: EtcdKV, req: EtcdRangeRequest, want: number | undefined): Promise<EtcdRangeResponse> {
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

  /** tooLarge is the error of a read at a revision etcd has not reached. */
  tooLarge(want: number, current: number): StorageError {
    return new StorageError('TooLargeResourceVersion', `Too large resource version: ${want}, current: ${current}`, {
      resourceVersion: want,
      currentResourceVersion: current,
    });
  }

  /** etcdKey is the etcd key of a `<namespace>/<name>` key. */
  etcdKey(key: string): Buffer {
    return Buffer.concat([this.prefix, Buffer.from(key)]);
  }

  /** decode is the event a key holds, at the revision it was last written. */
  decode(kv: EtcdKeyValue): CoreEvent {
    return decodeEvent(kv.value.toString(), Number(kv.mod_revision));
  }

  /** observe notes a revision etcd reported and returns it as a number. */
  observe(revision: string): number {
    const rv = Number(revision);
    if (rv > this.rv) this.rv = rv;
    return rv;
  }
}
