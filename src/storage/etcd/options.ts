import type { CommonStoreOptions } from '../shared/index.js';

/*
 * The subset of the `etcd3` package the backend uses, declared by shape so the
 * storage core never imports the driver: an `Etcd3` instance satisfies
 * `EtcdClient`. 64-bit integers travel as decimal strings, as etcd3 returns them.
 */

/** EtcdResponseHeader is the part of etcd's response header the store reads. */
export interface EtcdResponseHeader {
  revision: string;
}

/** EtcdKeyValue is one stored key as etcd returns it. */
export interface EtcdKeyValue {
  key: Buffer;
  create_revision: string;
  mod_revision: string;
  version: string;
  value: Buffer;
  lease: string;
}

/** EtcdRangeRequest reads keys, optionally at a past revision. */
export interface EtcdRangeRequest {
  key: Buffer;
  range_end?: Buffer;
  limit?: number;
  revision?: number;
  count_only?: boolean;
  keys_only?: boolean;
}

/** EtcdRangeResponse is one page of keys. */
export interface EtcdRangeResponse {
  header: EtcdResponseHeader;
  kvs: EtcdKeyValue[];
  more: boolean;
  count: string;
}

/** EtcdCompare is one condition of a transaction. */
export interface EtcdCompare {
  key: Buffer;
  target: 'Version' | 'Mod';
  result: 'Equal';
  version?: number;
  mod_revision?: number;
}

/** EtcdRequestOp is one operation of a transaction branch. */
export interface EtcdRequestOp {
  request_range?: EtcdRangeRequest;
  request_put?: { key: Buffer; value: Buffer; lease?: string };
  request_delete_range?: { key: Buffer };
}

/** EtcdTxnRequest is an etcd transaction: if every compare holds, success runs, else failure. */
export interface EtcdTxnRequest {
  compare: EtcdCompare[];
  success: EtcdRequestOp[];
  failure: EtcdRequestOp[];
}

/** EtcdTxnResponse says which branch ran and what its operations returned. */
export interface EtcdTxnResponse {
  header: EtcdResponseHeader;
  succeeded: boolean;
  responses: { response_range?: EtcdRangeResponse | null }[];
}

/** EtcdKV is etcd's KV service. */
export interface EtcdKV {
  range(req: EtcdRangeRequest): Promise<EtcdRangeResponse>;
  txn(req: EtcdTxnRequest): Promise<EtcdTxnResponse>;
  compact(req: { revision: number }): Promise<{ header: EtcdResponseHeader }>;
}

/** EtcdLeases is etcd's Lease service. */
export interface EtcdLeases {
  leaseGrant(req: { TTL: number }): Promise<{ header: EtcdResponseHeader; ID: string; TTL: string }>;
}

/** EtcdEvent is one change in a watch response. */
export interface EtcdEvent {
  type: 'Put' | 'Delete';
  kv: EtcdKeyValue;
  prev_kv?: EtcdKeyValue | null;
}

/** EtcdWatchResponse is one message of a watch stream. */
export interface EtcdWatchResponse {
  header: EtcdResponseHeader;
  events: EtcdEvent[];
}

/**
 * EtcdWatcher is one etcd watch. It reconnects by itself after a lost
 * connection, starting again from `request.start_revision`.
 */
export interface EtcdWatcher {
  readonly request: { start_revision?: string | number };
  on(event: 'data', handler: (res: EtcdWatchResponse) => void): this;
  on(event: 'error', handler: (err: Error) => void): this;
  on(event: 'disconnected', handler: (err: Error) => void): this;
  cancel(): Promise<void>;
}

/** EtcdWatchBuilder describes a watch; `watcher()` attaches it at once, so no response can arrive before listeners are added. */
export interface EtcdWatchBuilder {
  inRange(range: { start: Buffer; end: Buffer }): this;
  withPreviousKV(): this;
  startRevision(revision: string): this;
  watcher(): EtcdWatcher;
}

/** EtcdClient is the shape of an `Etcd3` instance that the store uses. */
export interface EtcdClient {
  readonly kv: EtcdKV;
  readonly leaseClient: EtcdLeases;
  watch(): EtcdWatchBuilder;
  close(): void;
}

/** EtcdEventStoreOptions configure an EtcdEventStore: `endpoints` or `client` is required. */
export interface EtcdEventStoreOptions extends CommonStoreOptions {
  /** endpoints are the members' client URLs (`http://127.0.0.1:2379`) or `host:port`; the store opens and closes its own client. */
  endpoints?: string[];
  /** client is an etcd3 `Etcd3` the caller made and keeps: the store does not close it. */
  client?: EtcdClient;
  /** prefix roots the keys: events live at `<prefix>/events/<namespace>/<name>`. */
  prefix?: string;
  /** leaseReuseDurationSeconds caps how long a lease is shared (upstream's `--lease-reuse-duration-seconds`). */
  leaseReuseDurationSeconds?: number;
  /** leaseMaxObjectCount caps the objects attached to one lease. */
  leaseMaxObjectCount?: number;
  /** requestTimeoutMs bounds each call to etcd, so a member that hangs fails a request instead of stalling it. */
  requestTimeoutMs?: number;
}

/** DEFAULT_PREFIX is upstream's `--etcd-prefix`. */
export const DEFAULT_PREFIX = '/registry';
/** DEFAULT_LEASE_REUSE_DURATION_SECONDS is upstream's default: one lease serves the writes of up to a minute. */
export const DEFAULT_LEASE_REUSE_DURATION_SECONDS = 60;
/** LEASE_REUSE_DURATION_PERCENT: a lease is shared for at most 5% of the TTL, so events outlive their TTL by at most 5%. */
export const LEASE_REUSE_DURATION_PERCENT = 0.05;
/** DEFAULT_LEASE_MAX_OBJECT_COUNT is upstream's: expiring one lease deletes at most 1,000 keys in one etcd transaction. */
export const DEFAULT_LEASE_MAX_OBJECT_COUNT = 1_000;
/** DEFAULT_REQUEST_TIMEOUT_MS: long enough to ride out an etcd leader election, short enough that a hung member does not hang the API. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 15_000;
