/**
 * What every part of the EventStore conformance suite shares: how a backend
 * takes part (ConformanceSetup), the windows the cases are written against,
 * and the helpers the cases read with.
 */
import assert from 'node:assert/strict';
import { it as nodeIt } from 'node:test';
import type { CoreEvent } from '../../api/index.js';
import { FakeClock } from '../../internal/index.js';
import type { Logger } from '../../internal/index.js';
import type { EventStore, EventWatch, StoreWatchEvent } from '../event-store.js';
import { isStorageError } from '../errors.js';
import type { StorageErrorCode } from '../errors.js';
import type { CommonStoreOptions } from '../shared/index.js';

/** ConformanceEnv is what the suite hands a backend's factory: the options every store under test must be built with. */
export interface ConformanceEnv {
  clock: FakeClock;
  /** options carry the clock and short intervals and windows so the suite drives TTL and compaction without sleeping. */
  options: Required<Pick<CommonStoreOptions, 'clock' | 'historyWindowSeconds' | 'compactIntervalMs' | 'expiryIntervalMs' | 'watchBufferSize'>>;
}

/** ConformanceSetup is how one backend takes part in the suite. */
export interface ConformanceSetup {
  create(env: ConformanceEnv): Promise<EventStore>;
  /** destroy closes a store (if still open) and removes whatever it left behind. */
  destroy(store: EventStore): Promise<void>;
  /** reopen opens the data of a closed store again; only persistent backends have it. */
  reopen?(closed: EventStore, env: ConformanceEnv): Promise<EventStore>;
  /**
   * openPrevious opens, with the current store and `logger`, a copy of an archive
   * (`writeSearchArchive`'s events, kept as a fixture) that an earlier schema
   * version wrote: the one before the current (`previous`), or the last one
   * before the search index (`unindexed`). Only backends with a schema to migrate have it.
   */
  openPrevious?(env: ConformanceEnv, logger: Logger, which: 'previous' | 'unindexed'): Promise<EventStore>;
  /**
   * settle brings a store's search index up to date with its writes, for a backend whose index follows them
   * (SQLite): the search suite's "written a moment ago" cases then search an archive part indexed, part not.
   */
  settle?(store: EventStore): Promise<void>;
}

/** CONFORMANCE_ENV_DEFAULTS are the windows the suite's cases are written against. */
export const CONFORMANCE_ENV_DEFAULTS = {
  historyWindowSeconds: 60,
  compactIntervalMs: 1_000,
  expiryIntervalMs: 1_000,
  watchBufferSize: 32,
} as const;

/** it bounds every case so that a lost wake-up fails the case instead of hanging the run. */
export function it(name: string, fn: () => Promise<void>): void {
  void nodeIt(name, { timeout: 20_000 }, fn);
}

/** sampleEvent builds a core/v1 event for the suite. */
export function sampleEvent(namespace: string, name: string, extra: Partial<CoreEvent> = {}): CoreEvent {
  return {
    kind: 'Event',
    apiVersion: 'v1',
    metadata: { namespace, name, uid: `uid-${namespace}-${name}` },
    involvedObject: { kind: 'Pod', namespace, name: `pod-${name}` },
    reason: 'Started',
    message: `event ${name}`,
    type: 'Normal',
    count: 1,
    ...extra,
  };
}

/** rejectsWith awaits a promise that must fail with a StorageError of `code`, and returns the error. */
export async function rejectsWith(p: Promise<unknown>, code: StorageErrorCode): Promise<unknown> {
  let caught: unknown;
  try {
    await p;
  } catch (e) {
    caught = e;
  }
  assert.ok(isStorageError(caught, code), `expected StorageError ${code}, got ${String(caught)}`);
  return caught;
}

/** keys are the `<namespace>/<name>` keys of events, in their order. */
export function keys(items: CoreEvent[]): string[] {
  return items.map((e) => `${e.metadata.namespace}/${e.metadata.name}`);
}

/** rvOf is an event's resourceVersion as a number. */
export function rvOf(e: CoreEvent): number {
  return Number(e.metadata.resourceVersion);
}

/** take reads the next `n` changes of a watch (fewer if it ends). */
export async function take(w: EventWatch, n: number): Promise<StoreWatchEvent[]> {
  const it = w[Symbol.asyncIterator]();
  const out: StoreWatchEvent[] = [];
  while (out.length < n) {
    const r = await it.next();
    if (r.done === true) break;
    out.push(r.value);
  }
  return out;
}

/** brief is a change as one comparable line: type, key and resourceVersion. */
export function brief(e: StoreWatchEvent): string {
  return `${e.type} ${e.object.metadata.namespace}/${e.object.metadata.name}@${e.object.metadata.resourceVersion}`;
}

/** listAll reads a list page by page at the first page's revision, checking that each page but the last is full. */
export async function listAll(store: EventStore, options: Parameters<EventStore['list']>[0]): Promise<{ items: CoreEvent[]; pages: number; rv: number }> {
  const items: CoreEvent[] = [];
  let startKey: string | undefined;
  let rv: number | undefined;
  let pages = 0;
  for (;;) {
    const page = await store.list({
      ...options,
      ...(startKey !== undefined ? { startKey } : {}),
      ...(rv !== undefined ? { resourceVersion: rv, match: 'Exact' as const } : {}),
    });
    pages++;
    rv ??= page.resourceVersion;
    if (options.limit !== undefined) assert.ok(page.items.length <= options.limit);
    items.push(...page.items);
    if (page.lastKey === undefined) return { items, pages, rv };
    assert.equal(page.items.length, options.limit, 'a page that says more follow is full');
    startKey = page.lastKey;
  }
}

/** StoreCases are how a part of the suite opens a fresh store for each case. */
export interface StoreCases<S extends EventStore> {
  open: () => Promise<{ store: S; env: ConformanceEnv }>;
  /** withStore runs a case on a fresh store and destroys the store after it, whatever the outcome. */
  withStore: (fn: (store: S, env: ConformanceEnv) => Promise<void>) => () => Promise<void>;
}

/** Capability is what a suite asserts of each store it opens: a type guard, and what the assertion says. */
export interface Capability<S extends EventStore> {
  is: (store: EventStore) => store is S;
  message: string;
}

/**
 * storeCases builds a backend's StoreCases: each store made by `setup.create`
 * with a fresh FakeClock, and ready; with `capability`, asserted to have it.
 */
export function storeCases(setup: ConformanceSetup): StoreCases<EventStore>;
export function storeCases<S extends EventStore>(setup: ConformanceSetup, capability: Capability<S>): StoreCases<S>;
export function storeCases(setup: ConformanceSetup, capability?: Capability<EventStore>): StoreCases<EventStore> {
  const open = async (): Promise<{ store: EventStore; env: ConformanceEnv }> => {
    const clock = new FakeClock();
    const env: ConformanceEnv = { clock, options: { clock, ...CONFORMANCE_ENV_DEFAULTS } };
    const store = await setup.create(env);
    await store.ready();
    if (capability !== undefined) assert.ok(capability.is(store), capability.message);
    return { store, env };
  };
  const withStore = (fn: (store: EventStore, env: ConformanceEnv) => Promise<void>) => async (): Promise<void> => {
    const { store, env } = await open();
    try {
      await fn(store, env);
    } finally {
      await setup.destroy(store);
    }
  };
  return { open, withStore };
}
