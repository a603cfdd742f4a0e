import assert from 'node:assert/strict';
import { describe, it as nodeIt } from 'node:test';
import type { CoreEvent } from '../../api/index.js';
import { FakeClock } from '../../internal/index.js';
import type { Logger } from '../../internal/index.js';
import type { EventStore, EventWatch, IndexedField, StoreWatchEvent } from '../event-store.js';
import { hasVersionedReads } from '../event-store.js';
import { isStorageError } from '../errors.js';
import type { StorageError, StorageErrorCode } from '../errors.js';
import { fieldValue } from '../shared/index.js';
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
function it(name: string, fn: () => Promise<void>): void {
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

async function rejectsWith(p: Promise<unknown>, code: StorageErrorCode): Promise<unknown> {
  let caught: unknown;
  try {
    await p;
  } catch (e) {
    caught = e;
  }
  assert.ok(isStorageError(caught, code), `expected StorageError ${code}, got ${String(caught)}`);
  return caught;
}

function keys(items: CoreEvent[]): string[] {
  return items.map((e) => `${e.metadata.namespace}/${e.metadata.name}`);
}

function rvOf(e: CoreEvent): number {
  return Number(e.metadata.resourceVersion);
}

async function take(w: EventWatch, n: number): Promise<StoreWatchEvent[]> {
  const it = w[Symbol.asyncIterator]();
  const out: StoreWatchEvent[] = [];
  while (out.length < n) {
    const r = await it.next();
    if (r.done === true) break;
    out.push(r.value);
  }
  return out;
}

function brief(e: StoreWatchEvent): string {
  return `${e.type} ${e.object.metadata.namespace}/${e.object.metadata.name}@${e.object.metadata.resourceVersion}`;
}

async function listAll(store: EventStore, options: Parameters<EventStore['list']>[0]): Promise<{ items: CoreEvent[]; pages: number; rv: number }> {
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

/**
 * runEventStoreConformance registers the behaviour every EventStore backend must
 * have, as node:test cases. Each case builds a fresh store with `setup.create`.
 */
export function runEventStoreConformance(name: string, setup: ConformanceSetup): void {
  const open = async (): Promise<{ store: EventStore; env: ConformanceEnv }> => {
    const clock = new FakeClock();
    const env: ConformanceEnv = { clock, options: { clock, ...CONFORMANCE_ENV_DEFAULTS } };
    const store = await setup.create(env);
    await store.ready();
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

  void describe(`EventStore conformance: ${name}`, () => {
    void describe('create and get', () => {
      it(
        'stores an object, stamps a resourceVersion and reads it back',
        withStore(async (store) => {
          const input = sampleEvent('default', 'a');
          input.metadata.resourceVersion = '999';
          const created = await store.create(input);
          assert.ok(rvOf(created) > 0);
          assert.notEqual(created.metadata.resourceVersion, '999');
          const got = await store.get('default', 'a');
          assert.deepEqual(got, created);
          assert.equal(got.message, 'event a');
          assert.equal(await store.currentResourceVersion(), rvOf(created));
        }),
      );
      it(
        'refuses a taken key with KeyExists and keeps the first object',
        withStore(async (store) => {
          await store.create(sampleEvent('default', 'a'));
          await rejectsWith(store.create(sampleEvent('default', 'a', { message: 'second' })), 'KeyExists');
          assert.equal((await store.get('default', 'a')).message, 'event a');
        }),
      );
      it(
        'answers KeyNotFound for a missing key, also in another namespace',
        withStore(async (store) => {
          await store.create(sampleEvent('default', 'a'));
          await rejectsWith(store.get('default', 'b'), 'KeyNotFound');
          await rejectsWith(store.get('other', 'a'), 'KeyNotFound');
        }),
      );
      it(
        'refuses an object without namespace or name with InvalidObject',
        withStore(async (store) => {
          await rejectsWith(store.create(sampleEvent('', 'a')), 'InvalidObject');
          await rejectsWith(store.create(sampleEvent('default', '')), 'InvalidObject');
        }),
      );
      it(
        'does not keep a reference to the caller object',
        withStore(async (store) => {
          const input = sampleEvent('default', 'a');
          const created = await store.create(input);
          input.message = 'changed by caller';
          created.message = 'changed by caller';
          assert.equal((await store.get('default', 'a')).message, 'event a');
        }),
      );
    });

    void describe('resourceVersions', () => {
      it(
        'are store-wide and strictly increasing across every kind of write',
        withStore(async (store) => {
          const seen: number[] = [];
          seen.push(rvOf(await store.create(sampleEvent('a', 'x'))));
          seen.push(rvOf(await store.create(sampleEvent('b', 'y'))));
          seen.push(rvOf((await store.guaranteedUpdate('a', 'x', (e) => ({ ...e!, count: 2 }))).object));
          seen.push(rvOf(await store.delete('b', 'y')));
          seen.push(rvOf(await store.create(sampleEvent('b', 'y'))));
          for (let i = 1; i < seen.length; i++) assert.ok(seen[i]! > seen[i - 1]!, `revisions ${seen.join(',')}`);
          assert.equal(await store.currentResourceVersion(), seen.at(-1));
          const parallel = await Promise.all(Array.from({ length: 20 }, (_, i) => store.create(sampleEvent('p', `e${i}`))));
          assert.equal(new Set(parallel.map(rvOf)).size, 20);
          assert.equal(await store.currentResourceVersion(), Math.max(...parallel.map(rvOf)));
        }),
      );
    });

    void describe('list', () => {
      const names = ['b', 'a', 'c'];
      const namespaces = ['a-b', 'a', 'b', 'default'];
      const fill = async (store: EventStore): Promise<void> => {
        for (const ns of namespaces) for (const n of names) await store.create(sampleEvent(ns, n));
      };
      it(
        'returns one namespace in name order',
        withStore(async (store) => {
          await fill(store);
          const r = await store.list({ namespace: 'a' });
          assert.deepEqual(keys(r.items), ['a/a', 'a/b', 'a/c']);
          assert.equal(r.lastKey, undefined);
          assert.equal(r.resourceVersion, await store.currentResourceVersion());
        }),
      );
      it(
        'returns all namespaces in key order (byte order of <namespace>/<name>, like etcd)',
        withStore(async (store) => {
          await fill(store);
          const r = await store.list({});
          const expected = namespaces.flatMap((ns) => names.map((n) => `${ns}/${n}`)).sort();
          assert.deepEqual(keys(r.items), expected);
          assert.equal(expected[0], 'a-b/a', 'the case covers a namespace that is a prefix of another');
        }),
      );
      it(
        'says more follow a field-selected page while any key follows, kept by the selector or not (as etcd)',
        withStore(async (store) => {
          await store.create({ ...sampleEvent('default', 'a1'), type: 'Warning' });
          await store.create({ ...sampleEvent('default', 'a2'), type: 'Normal' });
          await store.create({ ...sampleEvent('default', 'b1'), type: 'Warning' });
          await store.create({ ...sampleEvent('default', 'b2'), type: 'Normal' });
          const warnings = { namespace: 'default', fieldEquals: { type: 'Warning' }, predicate: (e: CoreEvent) => e.type === 'Warning', limit: 1 };
          const first = await store.list(warnings);
          assert.deepEqual(keys(first.items), ['default/a1']);
          const second = await store.list({ ...warnings, startKey: first.lastKey!, resourceVersion: first.resourceVersion, match: 'Exact' });
          assert.deepEqual(keys(second.items), ['default/b1']);
          assert.equal(second.lastKey, 'default/b1', 'default/b2 follows: kube-apiserver answers a continue token');
          const third = await store.list({ ...warnings, startKey: second.lastKey, resourceVersion: first.resourceVersion, match: 'Exact' });
          assert.deepEqual(third.items, []);
          assert.equal(third.lastKey, undefined);
        }),
      );
      it(
        'pages with limit and startKey, and says when more follow',
        withStore(async (store) => {
          await fill(store);
          const all = await listAll(store, { limit: 5 });
          assert.deepEqual(keys(all.items), keys((await store.list({})).items));
          assert.equal(all.pages, 3);
          const exact = await listAll(store, { limit: 4 });
          assert.equal(exact.pages, 3, '12 items in pages of 4 end without an empty page');
          const ns = await listAll(store, { namespace: 'a-b', limit: 2 });
          assert.deepEqual(keys(ns.items), ['a-b/a', 'a-b/b', 'a-b/c']);
          const after = await store.list({ startKey: 'a/b' });
          assert.deepEqual(keys(after.items).slice(0, 2), ['a/c', 'b/a']);
        }),
      );
      it(
        'reads a consistent snapshot at an exact resourceVersion after later writes',
        withStore(async (store) => {
          for (let i = 0; i < 10; i++) await store.create(sampleEvent('default', `e${i}`));
          const first = await store.list({ limit: 4 });
          const snapshotKeys = keys((await store.list({})).items);
          const before = await store.get('default', 'e6');
          await store.create(sampleEvent('default', 'e55'));
          await store.guaranteedUpdate('default', 'e6', (e) => ({ ...e!, message: 'changed' }));
          await store.delete('default', 'e8');
          await store.delete('default', 'e9');
          await store.create(sampleEvent('default', 'e9', { message: 'recreated' }));
          const rest = await listAll(store, { limit: 3, startKey: first.lastKey!, resourceVersion: first.resourceVersion, match: 'Exact' });
          assert.deepEqual(keys([...first.items, ...rest.items]), snapshotKeys);
          assert.deepEqual(
            rest.items.find((e) => e.metadata.name === 'e6'),
            before,
          );
          assert.equal(rest.items.find((e) => e.metadata.name === 'e9')?.message, 'event e9');
          const whole = await store.list({ resourceVersion: first.resourceVersion, match: 'Exact' });
          assert.deepEqual(keys(whole.items), snapshotKeys);
          assert.equal(whole.resourceVersion, first.resourceVersion);
          const latest = await store.list({});
          assert.ok(keys(latest.items).includes('default/e55'));
          assert.ok(!keys(latest.items).includes('default/e8'));
          assert.equal(latest.items.find((e) => e.metadata.name === 'e6')?.message, 'changed');
        }),
      );
      it(
        'lists through listVersions, where offered, the page list reads, with each item decoded on demand',
        withStore(async (store) => {
          if (!hasVersionedReads(store)) return;
          await fill(store);
          await store.guaranteedUpdate('a', 'b', (e) => ({ ...e!, message: 'changed' }));
          for (const options of [{}, { namespace: 'a', limit: 2 }, { fieldEquals: { reason: 'Started' }, limit: 5 }, { predicate: (e: CoreEvent) => e.metadata.name !== 'b' }]) {
            const page = await store.list(options);
            const versions = await store.listVersions(options);
            assert.deepEqual(versions.items.map((v) => v.object()), page.items);
            assert.deepEqual(versions.items.map((v) => String(v.resourceVersion)), page.items.map((e) => e.metadata.resourceVersion));
            assert.deepEqual({ ...versions, items: [] }, { ...page, items: [] });
          }
          const [v] = (await store.listVersions({ limit: 1 })).items;
          const a = v!.object();
          a.message = 'a caller changed its copy';
          assert.notEqual(v!.object().message, a.message, 'each object() is the caller\'s own');
        }),
      );
      it(
        'reads the latest state for NotOlderThan and refuses a future revision with TooLargeResourceVersion',
        withStore(async (store) => {
          await store.create(sampleEvent('default', 'a'));
          const rv = await store.currentResourceVersion();
          await store.create(sampleEvent('default', 'b'));
          const r = await store.list({ resourceVersion: rv, match: 'NotOlderThan' });
          assert.equal(r.items.length, 2);
          assert.equal(r.resourceVersion, rv + 1);
          const e = (await rejectsWith(store.list({ resourceVersion: rv + 5, match: 'NotOlderThan' }), 'TooLargeResourceVersion')) as {
            resourceVersion?: number;
            currentResourceVersion?: number;
          };
          assert.equal(e.resourceVersion, rv + 5);
          assert.equal(e.currentResourceVersion, rv + 1);
          await rejectsWith(store.list({ resourceVersion: rv + 5, match: 'Exact' }), 'TooLargeResourceVersion');
          await rejectsWith(store.list({ resourceVersion: rv + 5 }), 'TooLargeResourceVersion');
        }),
      );
      it(
        'keeps the events active in a window (activeIn), with or without a field filter, and the reasons it always keeps',
        withStore(async (store) => {
          const at = (s: number): string => new Date(Date.UTC(2025, 0, 1) + s * 1000).toISOString().replace(/\.000Z$/, 'Z');
          const span = (name: string, first: number, last: number, extra: Partial<CoreEvent> = {}): CoreEvent =>
            sampleEvent('w', name, { involvedObject: { kind: 'Pod', namespace: 'w', name: 'web' }, firstTimestamp: at(first), lastTimestamp: at(last), ...extra });
          await store.create(span('before', 0, 99));
          await store.create(span('ends-at-since', 50, 100));
          await store.create(span('across', 50, 500));
          await store.create(span('inside', 200, 300));
          await store.create(span('starts-at-until', 400, 450));
          await store.create(span('after', 401, 900));
          await store.create(span('scheduled', 0, 0, { reason: 'Scheduled' }));
          await store.create(sampleEvent('w', 'timeless', { involvedObject: { kind: 'Pod', namespace: 'w', name: 'web' } }));
          // A series: eventTime first, series.lastObservedTime last.
          await store.create(
            sampleEvent('w', 'series', {
              involvedObject: { kind: 'Pod', namespace: 'w', name: 'web' },
              eventTime: at(10).replace('Z', '.000000Z'),
              series: { count: 3, lastObservedTime: at(150).replace('Z', '.000000Z') },
            }),
          );
          const window = { sinceMs: Date.parse(at(100)), untilMs: Date.parse(at(400)) };
          const names = async (options: Parameters<EventStore['list']>[0]): Promise<string[]> => (await listAll(store, options)).items.map((e) => e.metadata.name!);
          const expected = ['across', 'ends-at-since', 'inside', 'series', 'timeless'];
          assert.deepEqual(await names({ namespace: 'w', activeIn: window }), expected);
          assert.deepEqual(await names({ activeIn: window, fieldEquals: { 'involvedObject.name': 'web' } }), expected);
          assert.deepEqual(await names({ activeIn: window, fieldEquals: { 'involvedObject.name': 'web' }, limit: 2 }), expected, 'pages of 2');
          assert.deepEqual(await names({ activeIn: { ...window, alwaysReasons: ['Scheduled'] }, fieldEquals: { 'involvedObject.name': 'web' } }), [...expected, 'scheduled'].sort());
          assert.deepEqual(await names({ namespace: 'w', activeIn: { sinceMs: window.sinceMs } }), ['across', 'after', 'ends-at-since', 'inside', 'series', 'starts-at-until', 'timeless']);
          assert.deepEqual(await names({ namespace: 'w', activeIn: { untilMs: window.untilMs } }), ['across', 'before', 'ends-at-since', 'inside', 'scheduled', 'series', 'timeless']);
          // A later write moves the span: the window follows it.
          await store.guaranteedUpdate('w', 'before', (e) => ({ ...e!, count: 2, lastTimestamp: at(120) }));
          assert.deepEqual(await names({ activeIn: window, fieldEquals: { 'involvedObject.name': 'web' } }), ['across', 'before', 'ends-at-since', 'inside', 'series', 'timeless']);
        }),
      );
      it(
        'keeps the events of some types, reasons or involved kinds (anyOf), types compared ignoring ASCII case, with the other filters and in pages',
        withStore(async (store) => {
          const pod = (name: string): CoreEvent['involvedObject'] => ({ kind: 'Pod', namespace: 'f', name });
          await store.create(sampleEvent('f', 'warning', { type: 'Warning', reason: 'BackOff', involvedObject: pod('web') }));
          await store.create(sampleEvent('f', 'warning-lower', { type: 'warning', reason: 'Odd', involvedObject: pod('web') }));
          await store.create(sampleEvent('f', 'warning-upper', { type: 'WARNING', reason: 'Odd', involvedObject: pod('db') }));
          await store.create(sampleEvent('f', 'killing', { type: 'Normal', reason: 'Killing', involvedObject: pod('web') }));
          await store.create(sampleEvent('f', 'scaled', { type: 'Normal', reason: 'ScalingReplicaSet', involvedObject: { kind: 'Deployment', namespace: 'f', name: 'web' } }));
          await store.create(sampleEvent('f', 'pulled', { type: 'Normal', reason: 'Pulled', involvedObject: pod('web') }));
          await store.create(sampleEvent('f', 'started', { type: 'Normal', reason: 'Started', involvedObject: pod('db') }));
          await store.create(sampleEvent('f', 'typeless', { type: '', reason: 'Pulled', involvedObject: pod('db') }));
          await store.create(sampleEvent('g', 'elsewhere', { type: 'Warning', reason: 'BackOff', involvedObject: { kind: 'Pod', namespace: 'g', name: 'web' } }));
          const names = async (options: Parameters<EventStore['list']>[0]): Promise<string[]> => (await listAll(store, options)).items.map((e) => e.metadata.name!).sort();
          const failures = { types: ['Warning'], reasons: ['Killing'], kinds: ['Deployment'] };
          const expected = ['killing', 'scaled', 'warning', 'warning-lower', 'warning-upper'];
          assert.deepEqual(await names({ namespace: 'f', anyOf: failures }), expected);
          assert.deepEqual(await names({ namespace: 'f', anyOf: failures, limit: 2 }), expected, 'pages of 2');
          assert.deepEqual(await names({ anyOf: failures }), [...expected, 'elsewhere'].sort(), 'all namespaces');
          assert.deepEqual(await names({ namespace: 'f', anyOf: { types: ['warning'] } }), ['warning', 'warning-lower', 'warning-upper']);
          assert.deepEqual(await names({ namespace: 'f', anyOf: { reasons: ['Pulled', 'Nope'] } }), ['pulled', 'typeless']);
          assert.deepEqual(await names({ namespace: 'f', anyOf: { kinds: ['Deployment'] } }), ['scaled']);
          assert.deepEqual(await names({ namespace: 'f', anyOf: { types: [''] } }), ['typeless'], 'an empty type is a value like any other');
          assert.deepEqual(await names({ namespace: 'f', anyOf: {} }), [], 'nothing listed keeps nothing');
          assert.deepEqual(await names({ namespace: 'f', anyOf: { types: [], reasons: [], kinds: [] } }), []);
          assert.deepEqual(await names({ anyOf: failures, fieldEquals: { 'involvedObject.name': 'web' }, limit: 1 }), ['elsewhere', 'killing', 'scaled', 'warning', 'warning-lower']);
          assert.deepEqual(await names({ namespace: 'f', anyOf: failures, fieldEquals: { type: 'Normal' } }), ['killing', 'scaled']);
          assert.deepEqual(await names({ namespace: 'f', anyOf: failures, predicate: (e) => e.involvedObject.name === 'db' }), ['warning-upper']);
          const page = await store.list({ namespace: 'f', anyOf: failures, limit: 4 });
          assert.deepEqual(page.items.map((e) => e.metadata.name), ['killing', 'scaled', 'warning', 'warning-lower']);
          assert.equal(page.lastKey, 'f/warning-lower', 'a full page says more may follow');
          // A later write that changes the type moves the event in or out.
          await store.guaranteedUpdate('f', 'pulled', (e) => ({ ...e!, type: 'Warning' }));
          await store.guaranteedUpdate('f', 'killing', (e) => ({ ...e!, reason: 'Killed' }));
          assert.deepEqual(await names({ namespace: 'f', anyOf: failures }), ['pulled', 'scaled', 'warning', 'warning-lower', 'warning-upper']);
        }),
      );
      it(
        'keeps the failures active in a window (activeIn with anyOf), in pages, as each filter alone keeps them, and follows a write that moves an event',
        withStore(async (store) => {
          const at = (s: number): string => new Date(Date.UTC(2025, 0, 1) + s * 1000).toISOString().replace(/\.000Z$/, 'Z');
          const event = (ns: string, name: string, first: number, last: number, extra: Partial<CoreEvent> = {}): CoreEvent =>
            sampleEvent(ns, name, { type: 'Warning', reason: 'BackOff', involvedObject: { kind: 'Pod', namespace: ns, name: 'web' }, firstTimestamp: at(first), lastTimestamp: at(last), ...extra });
          for (const ns of ['a', 'b']) {
            await store.create(event(ns, 'before', 0, 99));
            await store.create(event(ns, 'ends-at-since', 50, 100));
            await store.create(event(ns, 'across', 50, 500));
            await store.create(event(ns, 'inside', 200, 300));
            await store.create(event(ns, 'inside-normal', 200, 300, { type: 'Normal', reason: 'Pulled' }));
            await store.create(event(ns, 'inside-killing', 200, 300, { type: 'Normal', reason: 'Killing' }));
            await store.create(event(ns, 'inside-owner', 200, 300, { type: 'Normal', reason: 'ScalingReplicaSet', involvedObject: { kind: 'Deployment', namespace: ns, name: 'web' } }));
            await store.create(event(ns, 'starts-at-until', 400, 450));
            await store.create(event(ns, 'after', 401, 900));
            await store.create(event(ns, 'scheduled-before', 0, 0, { type: 'Normal', reason: 'Scheduled' }));
            await store.create(sampleEvent(ns, 'timeless', { type: 'Warning', reason: 'Failed', involvedObject: { kind: 'Pod', namespace: ns, name: 'web' } }));
          }
          const window = { sinceMs: Date.parse(at(100)), untilMs: Date.parse(at(400)) };
          const failures = { types: ['warning'], reasons: ['Killing'], kinds: ['Deployment'] };
          const names = async (options: Parameters<EventStore['list']>[0]): Promise<string[]> =>
            (await listAll(store, options)).items.map((e) => `${e.metadata.namespace!}/${e.metadata.name!}`).sort();
          const both = async (options: Parameters<EventStore['list']>[0]): Promise<string[]> => {
            const inWindow = new Set(await names({ ...options, anyOf: undefined }));
            return (await names({ ...options, activeIn: undefined })).filter((n) => inWindow.has(n));
          };
          const inA = ['across', 'ends-at-since', 'inside', 'inside-killing', 'inside-owner', 'timeless'].map((n) => `a/${n}`);
          const inB = inA.map((n) => n.replace(/^a\//, 'b/'));
          for (const limit of [undefined, 1, 2, 5]) {
            const paged = limit === undefined ? {} : { limit };
            assert.deepEqual(await names({ activeIn: window, anyOf: failures, ...paged }), [...inA, ...inB], `all namespaces, pages of ${limit ?? 'any size'}`);
            assert.deepEqual(await names({ namespace: 'b', activeIn: window, anyOf: failures, ...paged }), inB, `one namespace, pages of ${limit ?? 'any size'}`);
          }
          assert.deepEqual(await names({ activeIn: window, anyOf: failures }), await both({ activeIn: window, anyOf: failures }));
          const sinceOnly = { sinceMs: window.sinceMs };
          assert.deepEqual(await names({ namespace: 'a', activeIn: sinceOnly, anyOf: failures }), [...inA, 'a/after', 'a/starts-at-until'].sort(), 'no end');
          assert.deepEqual(await names({ namespace: 'a', activeIn: window, anyOf: { reasons: ['Failed'] } }), ['a/timeless'], 'an event with no time may have happened in any window');
          assert.deepEqual(await names({ namespace: 'a', activeIn: { ...window, alwaysReasons: ['Scheduled'] }, anyOf: { ...failures, reasons: ['Killing', 'Scheduled'] } }), [...inA, 'a/scheduled-before'].sort(), 'a reason kept whenever it happened');
          assert.deepEqual(await names({ activeIn: window, anyOf: failures, fieldEquals: { reason: 'Killing' } }), ['a/inside-killing', 'b/inside-killing'], 'with a field');
          assert.deepEqual(await names({ activeIn: window, anyOf: {} }), [], 'nothing listed keeps nothing');
          // A later write moves the span, or the type, into or out of the window's failures.
          await store.guaranteedUpdate('a', 'before', (e) => ({ ...e!, count: 2, lastTimestamp: at(120) }));
          await store.guaranteedUpdate('a', 'inside', (e) => ({ ...e!, type: 'Normal' }));
          await store.guaranteedUpdate('a', 'inside-normal', (e) => ({ ...e!, type: 'Warning' }));
          assert.deepEqual(await names({ namespace: 'a', activeIn: window, anyOf: failures, limit: 2 }), ['a/across', 'a/before', 'a/ends-at-since', 'a/inside-killing', 'a/inside-normal', 'a/inside-owner', 'a/timeless']);
        }),
      );
      it(
        'filters with fieldEquals and predicate, filling each page across rows that do not match',
        withStore(async (store) => {
          for (let i = 0; i < 30; i++) {
            await store.create(sampleEvent('default', `e${String(i).padStart(2, '0')}`, { involvedObject: { kind: 'Pod', name: i % 3 === 0 ? 'web' : 'db' }, type: i % 2 === 0 ? 'Warning' : 'Normal' }));
          }
          const isWeb = (e: CoreEvent): boolean => e.involvedObject.name === 'web';
          const expected = ['e00', 'e03', 'e06', 'e09', 'e12', 'e15', 'e18', 'e21', 'e24', 'e27'];
          const indexed = await listAll(store, { fieldEquals: { 'involvedObject.name': 'web' }, predicate: isWeb, limit: 3 });
          assert.deepEqual(indexed.items.map((e) => e.metadata.name), expected);
          const predicateOnly = await listAll(store, { predicate: isWeb, limit: 4 });
          assert.deepEqual(predicateOnly.items.map((e) => e.metadata.name), expected);
          const both = await listAll(store, {
            fieldEquals: { 'involvedObject.name': 'web', type: 'Warning' },
            predicate: (e) => isWeb(e) && e.type === 'Warning',
            limit: 2,
          });
          assert.deepEqual(both.items.map((e) => e.metadata.name), ['e00', 'e06', 'e12', 'e18', 'e24']);
          const none = await store.list({ fieldEquals: { reason: 'Nope' }, predicate: (e) => e.reason === 'Nope', limit: 5 });
          assert.deepEqual(none.items, []);
          assert.equal(none.lastKey, undefined);
          const missing = await store.list({ fieldEquals: { 'involvedObject.uid': '' }, predicate: (e) => (e.involvedObject.uid ?? '') === '' });
          assert.equal(missing.items.length, 30, 'a missing field matches the empty value');
        }),
      );
      it(
        'lists a filter whose predicate is its fieldEquals and labelMatch (predicateIsSelection) page by page as the predicate alone does, at the latest revision and an older one',
        withStore(async (store) => {
          for (let i = 0; i < 24; i++) {
            const ns = i % 4 === 0 ? 'other' : 'default';
            const e = sampleEvent(ns, `e${String(i).padStart(2, '0')}`, {
              involvedObject: { kind: i % 3 === 0 ? 'Node' : 'Pod', name: `o${i % 2}` },
              reason: i % 5 === 0 ? 'BackOff' : 'Pulled',
              type: i % 2 === 0 ? 'Warning' : 'Normal',
            });
            if (i % 7 === 0) delete e.type;
            if (i % 3 !== 0) e.metadata.labels = i % 3 === 1 ? { tier: 'frontend' } : { tier: 'backend', x: '1' };
            await store.create(e);
          }
          const older = (await store.list({ limit: 1 })).resourceVersion;
          // Past the older revision: an event changes type and labels, one is deleted, one is added.
          await store.guaranteedUpdate('default', 'e02', (e) => ({ ...e!, type: 'Normal', metadata: { ...e!.metadata, labels: { tier: 'frontend' } } }));
          await store.delete('default', 'e06');
          await store.create(sampleEvent('default', 'e99', { type: 'Warning', reason: 'BackOff' }));
          const frontend = (l: Readonly<Record<string, string>> | undefined): boolean => l?.tier === 'frontend';
          const noX = (l: Readonly<Record<string, string>> | undefined): boolean => l?.x === undefined;
          const selections: [Partial<Record<IndexedField, string>>, ((l: Readonly<Record<string, string>> | undefined) => boolean)?][] = [
            [{ type: 'Warning' }],
            [{ type: '' }],
            [{ reason: 'BackOff' }],
            [{ reason: 'BackOff', type: 'Warning' }],
            [{ 'involvedObject.kind': 'Node' }],
            [{ 'metadata.name': 'e03' }],
            [{ 'involvedObject.name': 'o1' }],
            [{ type: 'Nope' }],
            [{}, frontend],
            [{}, noX],
            [{ type: 'Warning' }, frontend],
            [{ 'involvedObject.name': 'o1' }, noX],
          ];
          for (const [fieldEquals, labelMatch] of selections) {
            const predicate = (e: CoreEvent): boolean =>
              Object.entries(fieldEquals).every(([f, v]) => fieldValue(e, f as IndexedField) === v) && (labelMatch === undefined || labelMatch(e.metadata.labels));
            for (const namespace of ['default', undefined]) {
              for (const limit of [1, 2, 5, 50]) {
                for (const at of [undefined, older]) {
                  const pages = async (exact: boolean): Promise<string[]> => {
                    const out: string[] = [];
                    let startKey: string | undefined;
                    let rv = at;
                    for (let n = 0; n < 100; n++) {
                      const page = await store.list({
                        fieldEquals, predicate, limit,
                        ...(exact ? { predicateIsSelection: true, ...(labelMatch !== undefined ? { labelMatch } : {}) } : {}),
                        ...(namespace !== undefined ? { namespace } : {}),
                        ...(startKey !== undefined ? { startKey } : {}),
                        ...(rv !== undefined ? { resourceVersion: rv, match: 'Exact' as const } : {}),
                      });
                      rv ??= page.resourceVersion;
                      out.push(`${page.items.map((e) => `${e.metadata.name}@${e.metadata.resourceVersion}`).join(',')} | ${page.lastKey ?? '-'}`);
                      if (page.lastKey === undefined) break;
                      startKey = page.lastKey;
                    }
                    return out;
                  };
                  const want = await pages(false);
                  assert.deepEqual(await pages(true), want, `${JSON.stringify(fieldEquals)} ${labelMatch?.name ?? ''} in ${namespace ?? 'all'}, limit ${limit}, at ${at ?? 'latest'}`);
                }
              }
            }
          }
        }),
      );
      it(
        'may end a filtered page early at maxExamined, with a lastKey that reads on: every match once, in order',
        withStore(async (store) => {
          for (let i = 0; i < 30; i++) {
            await store.create(sampleEvent('default', `e${String(i).padStart(2, '0')}`, { involvedObject: { kind: 'Pod', name: i % 3 === 0 ? 'web' : 'db' } }));
          }
          const isWeb = (e: CoreEvent): boolean => e.involvedObject.name === 'web';
          const expected = ['e00', 'e03', 'e06', 'e09', 'e12', 'e15', 'e18', 'e21', 'e24', 'e27'];
          for (const limit of [4, undefined]) {
            const seen: string[] = [];
            let startKey: string | undefined;
            let rv: number | undefined;
            for (let pages = 0; ; pages++) {
              assert.ok(pages < 100, 'reading on never ends');
              const page = await store.list({
                predicate: isWeb,
                maxExamined: 5,
                ...(limit !== undefined ? { limit } : {}),
                ...(startKey !== undefined ? { startKey } : {}),
                ...(rv !== undefined ? { resourceVersion: rv, match: 'Exact' as const } : {}),
              });
              rv ??= page.resourceVersion;
              if (limit !== undefined) assert.ok(page.items.length <= limit);
              seen.push(...page.items.map((e) => e.metadata.name!));
              if (page.lastKey === undefined) break;
              startKey = page.lastKey;
            }
            assert.deepEqual(seen, expected, `limit ${String(limit)}`);
          }
        }),
      );
      it(
        'counts the remaining items when asked',
        withStore(async (store) => {
          for (let i = 0; i < 10; i++) await store.create(sampleEvent('default', `e${i}`));
          await store.create(sampleEvent('other', 'x'));
          const r = await store.list({ namespace: 'default', limit: 3, countRemaining: true });
          assert.equal(r.items.length, 3);
          assert.equal(r.remainingItemCount, 7);
          const r2 = await store.list({ namespace: 'default', limit: 3, countRemaining: true, startKey: r.lastKey!, resourceVersion: r.resourceVersion, match: 'Exact' });
          assert.equal(r2.remainingItemCount, 4);
          const all = await store.list({ limit: 3, countRemaining: true });
          assert.equal(all.remainingItemCount, 8);
          const last = await store.list({ namespace: 'default', limit: 10, countRemaining: true });
          assert.equal(last.lastKey, undefined);
          assert.equal(last.remainingItemCount, undefined);
        }),
      );
      it(
        'counts each page of a paged list at the list revision, whatever is written between the pages',
        withStore(async (store) => {
          for (let i = 0; i < 20; i++) await store.create(sampleEvent('default', `e${String(i).padStart(2, '0')}`));
          await store.create(sampleEvent('other', 'x'));
          const counts: (number | undefined)[] = [];
          let page = await store.list({ namespace: 'default', limit: 3, countRemaining: true });
          const at = page.resourceVersion;
          counts.push(page.remainingItemCount);
          let seen = page.items.length;
          let round = 0;
          for (; page.lastKey !== undefined; round++) {
            // Writes after the list's revision, before and after the page's last key, are not counted.
            await store.create(sampleEvent('default', `e${String(round).padStart(2, '0')}-new`));
            await store.create(sampleEvent('default', `z${round}`));
            if (round === 1) await store.delete('default', 'e19');
            page = await store.list({ namespace: 'default', limit: 3, countRemaining: true, startKey: page.lastKey, resourceVersion: at, match: 'Exact' });
            counts.push(page.remainingItemCount);
            seen += page.items.length;
          }
          assert.equal(seen, 20);
          assert.deepEqual(counts, [17, 14, 11, 8, 5, 2, undefined]);
          // A page read again, and one started afresh at the latest revision, count what they see.
          const fresh = await store.list({ namespace: 'default', limit: 3, countRemaining: true });
          assert.equal(round, 6);
          assert.equal(fresh.remainingItemCount, 20 + 2 * round - 1 - 3);
        }),
      );
    });

    void describe('guaranteedUpdate', () => {
      it(
        'applies tryUpdate to the current object and writes a new revision',
        withStore(async (store) => {
          const created = await store.create(sampleEvent('default', 'a'));
          let seen: CoreEvent | undefined;
          const r = await store.guaranteedUpdate('default', 'a', (cur) => {
            seen = cur;
            return { ...cur!, count: 2 };
          });
          assert.deepEqual(seen, created);
          assert.equal(r.created, false);
          assert.equal(r.object.count, 2);
          assert.ok(rvOf(r.object) > rvOf(created));
          assert.deepEqual(await store.get('default', 'a'), r.object);
        }),
      );
      it(
        'checks uid and resourceVersion preconditions',
        withStore(async (store) => {
          const created = await store.create(sampleEvent('default', 'a'));
          const bump = (e: CoreEvent | undefined): CoreEvent => ({ ...e!, count: (e!.count ?? 0) + 1 });
          const uidErr = await rejectsWith(store.guaranteedUpdate('default', 'a', bump, { preconditions: { uid: 'other' } }), 'ResourceVersionConflicts');
          assert.match((uidErr as Error).message, /^Precondition failed: UID in precondition: other, UID in object meta: uid-default-a$/);
          const rvErr = await rejectsWith(store.guaranteedUpdate('default', 'a', bump, { preconditions: { resourceVersion: '1000' } }), 'ResourceVersionConflicts');
          assert.match((rvErr as Error).message, /^Precondition failed: ResourceVersion in precondition: 1000,/);
          // The server words its 409 from these fields, not from the message.
          assert.deepEqual((uidErr as StorageError).precondition, { field: 'UID', expected: 'other', actual: 'uid-default-a' });
          assert.deepEqual((rvErr as StorageError).precondition, { field: 'ResourceVersion', expected: '1000', actual: created.metadata.resourceVersion });
          assert.equal(await store.currentResourceVersion(), rvOf(created));
          const ok = await store.guaranteedUpdate('default', 'a', bump, { preconditions: { uid: 'uid-default-a', resourceVersion: created.metadata.resourceVersion! } });
          assert.equal(ok.object.count, 2);
        }),
      );
      it(
        'answers KeyNotFound for a missing key unless allowCreate is set',
        withStore(async (store) => {
          await rejectsWith(store.guaranteedUpdate('default', 'a', (e) => e!), 'KeyNotFound');
          let seen: CoreEvent | undefined | 'not called' = 'not called';
          const r = await store.guaranteedUpdate(
            'default',
            'a',
            (cur) => {
              seen = cur;
              return sampleEvent('default', 'a');
            },
            { allowCreate: true },
          );
          assert.equal(seen, undefined);
          assert.equal(r.created, true);
          assert.deepEqual(await store.get('default', 'a'), r.object);
        }),
      );
      it(
        'retries tryUpdate when concurrent writers win, losing no update',
        withStore(async (store) => {
          await store.create(sampleEvent('default', 'a', { count: 0 }));
          const n = 12;
          const results = await Promise.all(
            Array.from({ length: n }, () =>
              store.guaranteedUpdate('default', 'a', async (cur) => {
                await new Promise((r) => setImmediate(r));
                return { ...cur!, count: (cur!.count ?? 0) + 1 };
              }),
            ),
          );
          assert.equal((await store.get('default', 'a')).count, n);
          assert.equal(new Set(results.map((r) => rvOf(r.object))).size, n);
        }),
      );
      it(
        'passes on what tryUpdate throws and writes nothing',
        withStore(async (store) => {
          await store.create(sampleEvent('default', 'a'));
          const rv = await store.currentResourceVersion();
          const boom = new Error('refused');
          await assert.rejects(
            store.guaranteedUpdate('default', 'a', () => {
              throw boom;
            }),
            (e) => e === boom,
          );
          assert.equal(await store.currentResourceVersion(), rv);
        }),
      );
      it(
        'refuses an update that renames the object with InvalidObject',
        withStore(async (store) => {
          await store.create(sampleEvent('default', 'a'));
          await rejectsWith(store.guaranteedUpdate('default', 'a', (e) => ({ ...e!, metadata: { ...e!.metadata, name: 'b' } })), 'InvalidObject');
        }),
      );
      it(
        'short-circuits an unchanged object: no new revision and no TTL renewal',
        withStore(async (store, env) => {
          const created = await store.create(sampleEvent('default', 'a'), { ttlSeconds: 10 });
          await env.clock.advance(6_000);
          const r = await store.guaranteedUpdate(
            'default',
            'a',
            (cur) => {
              // Same content built in another property order.
              const { message, reason, ...rest } = cur!;
              return { reason, message, ...rest, metadata: { ...cur!.metadata } };
            },
            { ttlSeconds: 10 },
          );
          assert.deepEqual(r.object, created);
          assert.equal(await store.currentResourceVersion(), rvOf(created));
          const w = store.watch({ resourceVersion: rvOf(created) });
          await env.clock.advance(5_000);
          const [gone] = await take(w, 1);
          w.stop();
          assert.equal(gone?.type, 'DELETED');
          await rejectsWith(store.get('default', 'a'), 'KeyNotFound');
        }),
      );
    });

    void describe('delete', () => {
      it(
        'removes the object and returns its last state at the deletion revision',
        withStore(async (store) => {
          const created = await store.create(sampleEvent('default', 'a'));
          const deleted = await store.delete('default', 'a');
          assert.equal(deleted.message, 'event a');
          assert.ok(rvOf(deleted) > rvOf(created));
          assert.equal(await store.currentResourceVersion(), rvOf(deleted));
          await rejectsWith(store.get('default', 'a'), 'KeyNotFound');
          await rejectsWith(store.delete('default', 'a'), 'KeyNotFound');
          assert.deepEqual((await store.list({})).items, []);
          const again = await store.create(sampleEvent('default', 'a', { message: 'again' }));
          assert.equal((await store.get('default', 'a')).message, 'again');
          assert.ok(rvOf(again) > rvOf(deleted));
        }),
      );
      it(
        'checks preconditions and keeps the object when they fail',
        withStore(async (store) => {
          const created = await store.create(sampleEvent('default', 'a'));
          await rejectsWith(store.delete('default', 'a', { preconditions: { uid: 'other' } }), 'ResourceVersionConflicts');
          await rejectsWith(store.delete('default', 'a', { preconditions: { resourceVersion: '12345' } }), 'ResourceVersionConflicts');
          assert.deepEqual(await store.get('default', 'a'), created);
          await store.delete('default', 'a', { preconditions: { uid: 'uid-default-a', resourceVersion: created.metadata.resourceVersion! } });
          await rejectsWith(store.get('default', 'a'), 'KeyNotFound');
        }),
      );
    });

    void describe('watch', () => {
      it(
        'starts now when no resourceVersion is given',
        withStore(async (store) => {
          await store.create(sampleEvent('default', 'before'));
          const w = store.watch({});
          await store.create(sampleEvent('default', 'after'));
          const [e] = await take(w, 1);
          w.stop();
          assert.equal(e && brief(e), `ADDED default/after@${await store.currentResourceVersion()}`);
        }),
      );
      it(
        'delivers ADDED, MODIFIED with prevObject, and DELETED with the last state at the deletion revision',
        withStore(async (store) => {
          const w = store.watch({});
          const created = await store.create(sampleEvent('default', 'a'));
          const updated = (await store.guaranteedUpdate('default', 'a', (e) => ({ ...e!, count: 5 }))).object;
          const deleted = await store.delete('default', 'a');
          const got = await take(w, 3);
          w.stop();
          assert.deepEqual(
            got.map((e) => e.type),
            ['ADDED', 'MODIFIED', 'DELETED'],
          );
          assert.deepEqual(got[0]!.object, created);
          assert.deepEqual(got[1]!.object, updated);
          assert.deepEqual(got[1]!.prevObject, created);
          assert.deepEqual(got[2]!.object, deleted);
          assert.equal(got[2]!.object.count, 5);
          assert.deepEqual(got[2]!.prevObject, updated);
          assert.ok(Object.isFrozen(got[0]!.object), 'watch objects are shared, so they are read-only');
        }),
      );
      it(
        'replays history from a revision, then streams live changes without gap or duplicate at the handover',
        withStore(async (store) => {
          const first = await store.create(sampleEvent('default', 'start'));
          for (let i = 0; i < 600; i++) await store.create(sampleEvent('default', `h${i}`));
          const w = store.watch({ resourceVersion: rvOf(first) });
          const it = w[Symbol.asyncIterator]();
          const got: number[] = [];
          let issued = 0;
          while (got.length < 700) {
            // Keep writing while the watcher is still reading history, so live changes race the replay.
            if (issued < 100) {
              issued += 2;
              void store.create(sampleEvent('default', `live${issued}`));
              void store.guaranteedUpdate('default', 'start', (e) => ({ ...e!, count: (e!.count ?? 0) + 1 }));
            }
            const r = await it.next();
            assert.equal(r.done, false);
            got.push(rvOf(r.value.object));
          }
          w.stop();
          const expected = Array.from({ length: 700 }, (_, i) => rvOf(first) + 1 + i);
          assert.deepEqual(got, expected);
        }),
      );
      it(
        'filters by namespace and predicate; objects that start or stop matching arrive as ADDED or DELETED',
        withStore(async (store) => {
          const warnings = store.watch({ namespace: 'a', fieldEquals: { type: 'Warning' }, predicate: (e) => e.type === 'Warning' });
          const inA = store.watch({ namespace: 'a' });
          await store.create(sampleEvent('b', 'x', { type: 'Warning' }));
          await store.create(sampleEvent('a', 'y'));
          const toWarning = await store.guaranteedUpdate('a', 'y', (e) => ({ ...e!, type: 'Warning' }));
          await store.guaranteedUpdate('a', 'y', (e) => ({ ...e!, count: 2 }));
          const toNormal = await store.guaranteedUpdate('a', 'y', (e) => ({ ...e!, type: 'Normal' }));
          await store.delete('a', 'y');
          const w = await take(warnings, 3);
          warnings.stop();
          assert.deepEqual(w.map(brief), [
            `ADDED a/y@${toWarning.object.metadata.resourceVersion}`,
            `MODIFIED a/y@${rvOf(toWarning.object) + 1}`,
            `DELETED a/y@${toNormal.object.metadata.resourceVersion}`,
          ]);
          assert.equal(w[2]!.object.type, 'Warning', 'a DELETED for leaving the filter carries the old object');
          const a = await take(inA, 5);
          inA.stop();
          assert.deepEqual(
            a.map((e) => e.type),
            ['ADDED', 'MODIFIED', 'MODIFIED', 'MODIFIED', 'DELETED'],
          );
        }),
      );
      it(
        'applies filters to replayed history too',
        withStore(async (store) => {
          const start = await store.currentResourceVersion();
          await store.create(sampleEvent('a', 'x'));
          await store.create(sampleEvent('b', 'x'));
          await store.create(sampleEvent('a', 'y', { reason: 'Killing' }));
          const w = store.watch({ resourceVersion: start, namespace: 'a', predicate: (e) => e.reason === 'Killing' });
          const [e] = await take(w, 1);
          w.stop();
          assert.equal(e && brief(e), `ADDED a/y@${start + 3}`);
        }),
      );
      it(
        'ends iteration on stop()',
        withStore(async (store) => {
          const w = store.watch({});
          const pending = take(w, 1);
          w.stop();
          assert.deepEqual(await pending, []);
        }),
      );
      it(
        'refuses to start from a compacted revision with ResourceVersionExpired',
        withStore(async (store, env) => {
          const a = await store.create(sampleEvent('default', 'a'));
          await store.guaranteedUpdate('default', 'a', (e) => ({ ...e!, count: 2 }));
          const kept = store.watch({ resourceVersion: rvOf(a) });
          assert.equal(await store.oldestResourceVersion(), 0);
          await env.clock.advance((env.options.historyWindowSeconds + 5) * 1000);
          const oldest = await store.oldestResourceVersion();
          assert.ok(oldest >= rvOf(a) + 1, `oldest ${oldest}`);
          await rejectsWith(take(store.watch({ resourceVersion: rvOf(a) }), 1), 'ResourceVersionExpired');
          await rejectsWith(take(kept, 1), 'ResourceVersionExpired');
          await rejectsWith(store.list({ resourceVersion: rvOf(a), match: 'Exact' }), 'ResourceVersionExpired');
          const fromOldest = store.watch({ resourceVersion: oldest });
          await store.create(sampleEvent('default', 'b'));
          assert.equal((await take(fromOldest, 1))[0]?.object.metadata.name, 'b');
          fromOldest.stop();
          assert.equal((await store.list({ resourceVersion: oldest, match: 'Exact' })).items[0]?.count, 2);
          assert.equal((await store.get('default', 'a')).count, 2, 'compaction keeps the current state');
        }),
      );
      it(
        'ends a watcher that does not read with WatcherTooSlow',
        withStore(async (store, env) => {
          const slow = store.watch({});
          const fine = store.watch({});
          const n = env.options.watchBufferSize * 3;
          // One write at a time, each read by `fine` before the next: the changes reach `slow` over
          // many turns, as a live feed does, and not as one burst (a store whose watch opens
          // asynchronously could otherwise be handed them all at once when it opens).
          for (let i = 0; i < n; i++) {
            await store.create(sampleEvent('default', `e${i}`));
            assert.equal((await take(fine, 1))[0]?.object.metadata.name, `e${i}`);
          }
          fine.stop();
          await rejectsWith(take(slow, n), 'WatcherTooSlow');
        }),
      );
    });

    void describe('TTL', () => {
      it(
        'expires an object: a delete that watchers see as DELETED',
        withStore(async (store, env) => {
          const created = await store.create(sampleEvent('default', 'a'), { ttlSeconds: 10 });
          await store.create(sampleEvent('default', 'forever'), { ttlSeconds: 0 });
          await store.create(sampleEvent('default', 'unset'));
          const w = store.watch({});
          await env.clock.advance(9_000);
          assert.equal((await store.get('default', 'a')).message, 'event a');
          await env.clock.advance(2_000);
          const [e] = await take(w, 1);
          assert.equal(e?.type, 'DELETED');
          assert.equal(e?.object.metadata.name, 'a');
          assert.ok(rvOf(e.object) > rvOf(created));
          await rejectsWith(store.get('default', 'a'), 'KeyNotFound');
          await env.clock.advance(100_000);
          assert.deepEqual(keys((await store.list({})).items), ['default/forever', 'default/unset']);
          await store.create(sampleEvent('default', 'later'));
          const [next] = await take(w, 1);
          w.stop();
          assert.equal(next?.object.metadata.name, 'later', 'nothing else expired');
        }),
      );
      it(
        'renews the TTL on every real write',
        withStore(async (store, env) => {
          await store.create(sampleEvent('default', 'a'), { ttlSeconds: 10 });
          await env.clock.advance(6_000);
          await store.guaranteedUpdate('default', 'a', (e) => ({ ...e!, count: 2 }), { ttlSeconds: 10 });
          await env.clock.advance(6_000);
          assert.equal((await store.get('default', 'a')).count, 2);
          const w = store.watch({});
          await env.clock.advance(5_000);
          const [e] = await take(w, 1);
          w.stop();
          assert.equal(e?.type, 'DELETED');
        }),
      );
    });

    if (setup.reopen !== undefined) {
      const reopen = setup.reopen.bind(setup);
      void describe('persistence', () => {
        it(
          'keeps data, revisions and history across close() and reopening',
          async () => {
            const { store, env } = await open();
            let again: EventStore | undefined;
            try {
              const a = await store.create(sampleEvent('default', 'a'));
              await store.guaranteedUpdate('default', 'a', (e) => ({ ...e!, count: 2 }));
              await store.create(sampleEvent('default', 'b'), { ttlSeconds: 10 });
              await store.delete('default', 'b');
              const rv = await store.currentResourceVersion();
              await store.close();
              again = await reopen(store, env);
              await again.ready();
              assert.equal(await again.currentResourceVersion(), rv);
              assert.equal((await again.get('default', 'a')).count, 2);
              await rejectsWith(again.get('default', 'b'), 'KeyNotFound');
              const w = again.watch({ resourceVersion: rvOf(a) });
              assert.deepEqual(
                (await take(w, 3)).map((e) => e.type),
                ['MODIFIED', 'ADDED', 'DELETED'],
              );
              w.stop();
              const c = await again.create(sampleEvent('default', 'c'));
              assert.equal(rvOf(c), rv + 1);
            } finally {
              if (again !== undefined) await setup.destroy(again);
              else await setup.destroy(store);
            }
          },
        );
      });
    }
  });
}
