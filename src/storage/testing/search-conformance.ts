import { parseSearchQuery, searchTimeMs } from '../../api/index.js';
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { CLUSTER_LABEL, formatMicroTime } from '../../api/index.js';
import type { CoreEvent } from '../../api/index.js';
import { FakeClock, noopLogger } from '../../internal/index.js';
import { isArchiveStore } from '../archive-store.js';
import type { ArchiveStore } from '../archive-store.js';
import type { EventStore } from '../event-store.js';
import { isStorageError } from '../errors.js';
import { countInHistogram, hasSearch, histogramBuckets } from '../search/index.js';
import type { SearchCapable, SearchCursor, SearchHit, SearchRequest } from '../search/index.js';
import { CONFORMANCE_ENV_DEFAULTS, it, storeCases } from './conformance-support.js';
import type { ConformanceEnv, ConformanceSetup } from './conformance-support.js';

type Searchable = ArchiveStore & SearchCapable;

const HOUR = 3_600_000;
const MINUTE = 60_000;

/** Fixture describes one event of the suite's archive: everything the query language reads. */
interface Fixture {
  ns: string;
  name: string;
  kind: string;
  object: string;
  reason: string;
  type: 'Normal' | 'Warning';
  message: string;
  /** lastAgoMs is how long before the suite's `now` the event last happened. */
  lastAgoMs: number;
  source?: { component?: string; host?: string };
  reportingComponent?: string;
  reportingInstance?: string;
  cluster?: string;
}

/**
 * FIXTURES are written in this order; newest first by last time they are
 * f and e (the same time: f's key `ops/f` sorts first), d, a, b, c, g.
 */
const FIXTURES: Fixture[] = [
  {
    ns: 'shop', name: 'a', kind: 'Pod', object: 'checkout-db-0', reason: 'FailedMount', type: 'Warning', lastAgoMs: HOUR, cluster: 'prod-eu',
    message: 'MountVolume.SetUp failed for volume "certs" : secret "checkout-tls" not found', source: { component: 'kubelet', host: 'worker-3' },
  },
  {
    ns: 'shop', name: 'b', kind: 'Pod', object: 'web-7d9', reason: 'FailedScheduling', type: 'Warning', lastAgoMs: 2 * HOUR,
    message: '0/3 nodes are available: 3 Insufficient cpu.', reportingComponent: 'default-scheduler', reportingInstance: 'sched-1',
  },
  {
    ns: 'ops', name: 'c', kind: 'Node', object: 'worker-3', reason: 'NodeNotReady', type: 'Normal', lastAgoMs: 3 * HOUR, cluster: 'prod-us',
    message: 'Node worker-3 status is now: NodeNotReady', source: { component: 'node-controller' },
  },
  {
    ns: 'shop', name: 'd', kind: 'Pod', object: 'checkout-db-1', reason: 'BackOff', type: 'Warning', lastAgoMs: 30 * MINUTE, cluster: 'prod-eu',
    message: 'Back-off restarting failed container db in pod checkout-db-1_shop(5d1c)', source: { component: 'kubelet', host: 'worker-4' },
  },
  {
    ns: 'shop', name: 'e', kind: 'Deployment', object: 'web', reason: 'ScalingReplicaSet', type: 'Normal', lastAgoMs: 0,
    message: 'Scaled up replica set web-7d9 to 3', source: { component: 'deployment-controller' },
  },
  {
    ns: 'ops', name: 'f', kind: 'Pod', object: 'certs-rotator', reason: 'Pulled', type: 'Normal', lastAgoMs: 0,
    message: 'Successfully pulled image "registry.k8s.io/certs:v1.2" in 1.2s', source: { component: 'kubelet', host: 'worker-3' },
  },
  {
    ns: 'ops', name: 'g', kind: 'Pod', object: 'prüfer', reason: 'Failed', type: 'Warning', lastAgoMs: 4 * HOUR,
    message: 'Überprüfung fehlgeschlagen: 証明書の期限切れ', source: { component: 'kubelet', host: 'worker-4' },
  },
];

function fixtureEvent(f: Fixture, nowMs: number): CoreEvent {
  const last = new Date(nowMs - f.lastAgoMs).toISOString();
  const e: CoreEvent = {
    kind: 'Event',
    apiVersion: 'v1',
    metadata: { namespace: f.ns, name: f.name, uid: `uid-${f.ns}-${f.name}`, ...(f.cluster !== undefined ? { labels: { [CLUSTER_LABEL]: f.cluster } } : {}) },
    involvedObject: { kind: f.kind, namespace: f.ns, name: f.object },
    reason: f.reason,
    message: f.message,
    type: f.type,
    count: 1,
    firstTimestamp: last,
    lastTimestamp: last,
  };
  if (f.source !== undefined) e.source = f.source;
  if (f.reportingComponent !== undefined) e.reportingComponent = f.reportingComponent;
  if (f.reportingInstance !== undefined) e.reportingInstance = f.reportingInstance;
  return e;
}

/** PREVIOUS_TEXT is what `e` said at revision 1 of `writeSearchArchive`'s archive, before it was updated to its fixture. */
const PREVIOUS_TEXT = 'Scaled down replica set web-old to 0';

/**
 * writeSearchArchive writes the suite's archive as a store of any schema
 * version writes it, with `now` the suite's reference time (a FakeClock's
 * start): `e` first with other text (revision 1, then superseded), every
 * fixture, then an event created and deleted. The schema fixtures
 * (test/support/schema-fixtures.ts) are this archive as each version stored it.
 */
export async function writeSearchArchive(store: EventStore, now: number): Promise<void> {
  const e = FIXTURES.find((f) => f.name === 'e')!;
  await store.create(fixtureEvent({ ...e, message: PREVIOUS_TEXT, lastAgoMs: HOUR }, now));
  for (const f of FIXTURES) {
    if (f === e) await store.guaranteedUpdate(f.ns, f.name, () => fixtureEvent(f, now));
    else await store.create(fixtureEvent(f, now));
  }
  await store.create(fixtureEvent({ ...FIXTURES[0]!, ns: 'ops', name: 'gone', message: 'deleted words' }, now));
  await store.delete('ops', 'gone');
}

function names(hits: SearchHit[]): string[] {
  return hits.map((h) => h.event.metadata.name!);
}

/**
 * runSearchConformance registers the behaviour of the archive's search
 * (docs/search.md) that every archive backend must have, whatever its index:
 * a case per feature of the query language, the order and its pages over one
 * snapshot, and hits leaving with the events (update, delete, expiry,
 * retention, compaction). It uses the same setup as the EventStore suite.
 */
export function runSearchConformance(name: string, setup: ConformanceSetup): void {
  const { open } = storeCases(setup, { is: (s): s is Searchable => isArchiveStore(s) && hasSearch(s), message: `${name} answers the archive's search` });
  /** withArchive opens a store holding FIXTURES; `now` is the fixtures' reference time. */
  const withArchive = (fn: (store: Searchable, env: ConformanceEnv, now: number) => Promise<void>) => async (): Promise<void> => {
    const { store, env } = await open();
    try {
      const now = env.clock.now();
      for (const f of FIXTURES) await store.create(fixtureEvent(f, now));
      await fn(store, env, now);
    } finally {
      await setup.destroy(store);
    }
  };
  const request = (q: string, now: number, extra: Partial<SearchRequest> = {}): SearchRequest => ({ query: parseSearchQuery(q, { nowMs: now }), limit: 100, ...extra });
  const searchAll = async (store: Searchable, q: string, now: number, extra: Partial<SearchRequest> = {}): Promise<SearchHit[]> => {
    const page = await store.search(request(q, now, extra));
    assert.equal(page.next, undefined, 'one page holds the whole result');
    return page.items;
  };

  void describe(`Search conformance: ${name}`, () => {
    // [query, the hits newest first]
    const cases: [string, string, string[]][] = [
      ['an empty query finds every event, newest first, ties by key', '', ['f', 'e', 'd', 'a', 'b', 'c', 'g']],
      ['a word, in any text field', 'certs', ['f', 'a']],
      ['a word in any case', 'CERTS', ['f', 'a']],
      ['a whole word only', 'cert', []],
      ['a phrase, its words in order', '"failed container"', ['d']],
      ['a phrase in another order', '"container failed"', []],
      ['a word with punctuation as a phrase', 'checkout-db', ['d', 'a']],
      ['every word of a query', 'checkout tls', ['a']],
      ['words found in different fields', 'kubelet certs', ['f', 'a']],
      ['exclusion of a word', '-certs', ['e', 'd', 'b', 'c', 'g']],
      ['exclusion of a phrase', 'checkout -"back off"', ['a']],
      ['unicode words in any case', 'ÜBERPRÜFUNG', ['g']],
      ['a reason', 'reason:FailedMount', ['a']],
      ['a type', 'type:normal', ['f', 'e', 'c']],
      ['a namespace', 'ns:ops', ['f', 'c', 'g']],
      ['a kind', 'kind:node', ['c']],
      ['a name', 'name:checkout-db-1', ['d']],
      ['a node, from source.host', 'node:worker-3', ['f', 'a']],
      ['a node, from reportingInstance', 'node:sched-1', ['b']],
      ['a controller, from source.component', 'controller:kubelet', ['f', 'd', 'a', 'g']],
      ['a controller, from reportingComponent', 'controller:default-scheduler', ['b']],
      ['a cluster', 'cluster:prod-eu', ['d', 'a']],
      ['a name with a wildcard', 'name:checkout-db-*', ['d', 'a']],
      ['a reason with a wildcard', 'reason:Failed*', ['a', 'b', 'g']],
      ['a cluster with a wildcard', 'cluster:prod-*', ['d', 'a', 'c']],
      ['a quoted value is literal', 'name:"checkout-db-*"', []],
      ['an excluded field', '-ns:shop', ['f', 'c', 'g']],
      ['an excluded field with a wildcard', 'type:warning -name:checkout-*', ['b', 'g']],
      ['a word and a field', 'certs reason:FailedMount', ['a']],
      ['a duration since (inclusive)', 'since:1h', ['f', 'e', 'd', 'a']],
      ['until (exclusive)', 'until:1h', ['b', 'c', 'g']],
      ['a window of a word', 'worker since:3h until:30m', ['a', 'c']],
    ];
    for (const [what, q, want] of cases) {
      it(`finds ${what}: ${q}`, withArchive(async (store, _env, now) => assert.deepEqual(names(await searchAll(store, q, now)), want)));
    }

    if (setup.openPrevious !== undefined) {
      const migrated = async (which: 'previous' | 'unindexed'): Promise<void> => {
        const clock = new FakeClock();
        const env: ConformanceEnv = { clock, options: { clock, ...CONFORMANCE_ENV_DEFAULTS } };
        const lines: string[] = [];
        const logger = { ...noopLogger, info: (msg: string, fields?: Record<string, unknown>) => lines.push(`${msg} ${JSON.stringify(fields ?? {})}`) };
        const store = (await setup.openPrevious!(env, logger, which)) as Searchable;
        try {
          await store.ready();
          assert.ok(isArchiveStore(store) && hasSearch(store), `${name} answers the archive's search`);
          const now = clock.now();
          for (const [what, q, want] of cases) assert.deepEqual(names(await searchAll(store, q, now)), want, `${what}: ${q}`);
          assert.deepEqual(names(await searchAll(store, '"web-old"', now, { resourceVersion: 1 })), ['e'], 'the history is indexed too');
          assert.deepEqual(names(await searchAll(store, '"web-old"', now)), []);
          assert.deepEqual(names(await searchAll(store, 'deleted', now)), [], 'a deleted event is no hit');
          // The build of the index says how far it is and what it took (the CLI's logger writes to stderr).
          if (which === 'unindexed') assert.ok(lines.some((l) => /search index/.test(l)), `the index's build is logged: ${JSON.stringify(lines)}`);
          await store.create(fixtureEvent({ ...FIXTURES[0]!, name: 'after', message: 'written after the migration' }, now));
          assert.deepEqual(names(await searchAll(store, 'migration', now)), ['after'], 'the index is kept from then on');
        } finally {
          await setup.destroy(store);
        }
      };
      it('finds every event of an archive the previous schema version wrote, with its history', () => migrated('previous'));
      it('finds every event of an archive written before the search index, indexed when first opened, its progress logged', () => migrated('unindexed'));
    }

    it(
      'finds a keyword value whole when its words are common to other values',
      withArchive(async (store, _env, now) => {
        // Values that share the fixtures' words (worker, 3, node, controller), or whose words joined are another's.
        const extra: [string, string, string, string, number][] = [
          ['k1', 'team-7', 'worker-3-b', 'node-controller-2', 10],
          ['k2', 'team-71', 'worker-3', 'node-controller', 20],
          ['k3', 'team7-1', 'worker-34', 'controller-node', 30],
          ['k4', 'team-7', 'worker.3', 'node-controller', 40],
        ];
        for (const [name, ns, host, component, ago] of extra) {
          await store.create(fixtureEvent({ ...FIXTURES[0]!, ns, name, lastAgoMs: ago * MINUTE, message: 'node status', source: { component, host } }, now));
        }
        const want: [string, string[]][] = [
          ['node:worker-3', ['f', 'k2', 'a']],
          ['node:WORKER-3-b', ['k1']],
          ['node:worker-34', ['k3']],
          ['node:worker.3', ['k4']],
          ['controller:node-controller', ['k2', 'k4', 'c']],
          ['controller:controller-node', ['k3']],
          ['ns:team-7', ['k1', 'k4']],
          ['ns:team-71', ['k2']],
          ['ns:team7-1 node:worker-34', ['k3']],
          ['node:worker-3* status', ['k1', 'k2', 'k3']],
          ['worker34', []],
          ['status -worker34', ['k1', 'k2', 'k3', 'k4', 'c']],
        ];
        for (const [q, hits] of want) assert.deepEqual(names(await searchAll(store, q, now)), hits, q);
        assert.deepEqual(names(await searchAll(store, 'status', now, { namespace: 'team-7' })), ['k1', 'k4']);
      }),
    );

    // An index that follows the writes (SQLite's) holds the archive but what was written a moment ago: a search
    // finds both, in one order, across pages and in the histogram. A backend whose index changes with its data has no
    // moment between: the same cases hold.
    it(
      'finds what was written a moment ago beside what the index holds, in one order, paged and counted',
      withArchive(async (store, _env, now) => {
        await setup.settle?.(store);
        await store.create(fixtureEvent({ ...FIXTURES[0]!, name: 'h', object: 'certs-new', lastAgoMs: -MINUTE, message: 'volume certs renewed a moment ago' }, now));
        await store.create(fixtureEvent({ ...FIXTURES[2]!, name: 'i', object: 'worker-5', lastAgoMs: 90 * MINUTE, message: 'Node worker-5 status is now: NodeNotReady' }, now));
        await store.guaranteedUpdate('shop', 'd', (cur) => ({ ...cur!, message: 'Back-off pulling image certs-loader' }));
        await store.delete('shop', 'b');
        const all = ['h', 'f', 'e', 'd', 'a', 'i', 'c', 'g'];
        assert.deepEqual(names(await searchAll(store, '', now)), all);
        assert.deepEqual(names(await searchAll(store, 'certs', now)), ['h', 'f', 'd', 'a']);
        assert.deepEqual(names(await searchAll(store, '"failed container"', now)), [], 'the text an update replaced a moment ago is no hit');
        assert.deepEqual(names(await searchAll(store, 'insufficient', now)), [], 'an event deleted a moment ago is no hit');
        assert.deepEqual(names(await searchAll(store, 'reason:NodeNotReady', now)), ['i', 'c']);
        assert.deepEqual(names(await searchAll(store, 'certs -renewed type:Warning', now)), ['d', 'a']);
        assert.deepEqual(names(await searchAll(store, 'status since:2h', now, { namespace: 'ops' })), ['i']);
        for (const limit of [1, 2, 3, 5]) {
          const seen: string[] = [];
          let after: SearchCursor | undefined;
          for (let pages = 0; ; pages++) {
            assert.ok(pages < 10, 'the pages end');
            const page = await store.search(request('', now, { limit, ...(after !== undefined ? { after } : {}) }));
            seen.push(...names(page.items));
            if (page.next === undefined) break;
            after = page.next;
          }
          assert.deepEqual(seen, all, `limit ${limit}`);
        }
        const histogram = { sinceMs: now - 4 * HOUR, untilMs: now + HOUR, bucketMs: HOUR };
        for (const q of ['', 'certs', 'status', 'reason:NodeNotReady']) {
          const want = histogramBuckets(histogram);
          for (const hit of await searchAll(store, q, now)) countInHistogram(want, histogram, searchTimeMs(hit.event));
          assert.deepEqual((await store.search(request(q, now, { limit: 1, histogram }))).histogram, want, q);
        }
        await setup.settle?.(store);
        assert.deepEqual(names(await searchAll(store, '', now)), all, 'the same once indexed');
        assert.deepEqual(names(await searchAll(store, 'certs', now)), ['h', 'f', 'd', 'a']);
      }),
    );

    it(
      'bounds the window by RFC 3339 times',
      withArchive(async (store, _env, now) => {
        const at = (ms: number): string => new Date(ms).toISOString();
        assert.deepEqual(names(await searchAll(store, `since:${at(now - 2 * HOUR)} until:${at(now - 30 * MINUTE)}`, now)), ['a', 'b']);
      }),
    );

    it(
      'names the fields each hit matched',
      withArchive(async (store, _env, now) => {
        const hits = await searchAll(store, 'certs type:Normal', now);
        assert.deepEqual(hits.map((h) => `${h.event.metadata.name}:${h.matched.join(',')}`), ['f:message,type,name']);
        const worker = await searchAll(store, 'worker-3', now);
        assert.deepEqual(worker.map((h) => `${h.event.metadata.name}:${h.matched.join(',')}`), ['f:node', 'a:node', 'c:message,name']);
      }),
    );

    it(
      'returns the stored events as a list does',
      withArchive(async (store, _env, now) => {
        const [hit] = await searchAll(store, 'name:checkout-db-0', now);
        const stored = await store.get('shop', 'a');
        assert.deepEqual(hit?.event, stored);
      }),
    );

    it(
      'keeps to one namespace',
      withArchive(async (store, _env, now) => {
        assert.deepEqual(names(await searchAll(store, '', now, { namespace: 'ops' })), ['f', 'c', 'g']);
        assert.deepEqual(names(await searchAll(store, 'certs', now, { namespace: 'shop' })), ['a']);
        assert.deepEqual(names(await searchAll(store, '', now, { namespace: 'none' })), []);
      }),
    );

    it(
      'pages the same order at every limit',
      withArchive(async (store, _env, now) => {
        for (const limit of [1, 2, 3, 6, 7]) {
          const seen: string[] = [];
          let after: SearchCursor | undefined;
          let rv: number | undefined;
          for (let pages = 0; ; pages++) {
            assert.ok(pages < 10, 'the pages end');
            const page = await store.search(request('', now, { limit, ...(after !== undefined ? { after } : {}), ...(rv !== undefined ? { resourceVersion: rv } : {}) }));
            assert.ok(page.items.length <= limit);
            rv ??= page.resourceVersion;
            assert.equal(page.resourceVersion, rv, 'every page reads the first page\'s revision');
            seen.push(...names(page.items));
            if (page.next === undefined) break;
            assert.equal(page.items.length, limit, 'a page that says more follow is full');
            after = page.next;
          }
          assert.deepEqual(seen, ['f', 'e', 'd', 'a', 'b', 'c', 'g'], `limit ${limit}`);
        }
      }),
    );

    it(
      'reads every page of a search at its first page\'s snapshot, whatever is written between pages',
      withArchive(async (store, _env, now) => {
        const first = await store.search(request('', now, { limit: 2 }));
        assert.deepEqual(names(first.items), ['f', 'e']);
        await store.create(fixtureEvent({ ...FIXTURES[0]!, name: 'h', lastAgoMs: -HOUR }, now));
        await store.guaranteedUpdate('shop', 'd', (cur) => ({ ...cur!, message: 'moved on', lastTimestamp: new Date(now + 2 * HOUR).toISOString() }));
        await store.delete('shop', 'a');
        const rest: string[] = [];
        let after = first.next;
        while (after !== undefined) {
          const page = await store.search(request('', now, { limit: 2, after, resourceVersion: first.resourceVersion }));
          rest.push(...names(page.items));
          after = page.next;
        }
        assert.deepEqual(rest, ['d', 'a', 'b', 'c', 'g']);
        const back = await store.search(request('failed container', now, { resourceVersion: first.resourceVersion }));
        assert.deepEqual(names(back.items), ['d'], 'the snapshot has the old text');
        assert.deepEqual(names(await searchAll(store, '', now)), ['d', 'h', 'f', 'e', 'b', 'c', 'g'], 'a new search reads the latest');
      }),
    );

    it(
      'keeps hits in step with updates, deletes and expiry',
      withArchive(async (store, env, now) => {
        await store.guaranteedUpdate('shop', 'b', (cur) => ({ ...cur!, message: 'pod web-7d9 bound to worker-9', reason: 'Scheduled' }));
        assert.deepEqual(names(await searchAll(store, 'insufficient', now)), []);
        assert.deepEqual(names(await searchAll(store, 'worker-9 reason:scheduled', now)), ['b']);
        await store.delete('ops', 'f');
        assert.deepEqual(names(await searchAll(store, 'certs', now)), ['a']);
        await store.create(fixtureEvent({ ...FIXTURES[0]!, name: 'ttl', message: 'fleeting words' }, now), { ttlSeconds: 5 });
        assert.deepEqual(names(await searchAll(store, 'fleeting', now)), ['ttl']);
        await env.clock.advance(5_000 + 2 * env.options.expiryIntervalMs);
        assert.deepEqual(names(await searchAll(store, 'fleeting', now)), [], 'an expired event is no hit');
      }),
    );

    it(
      'refuses a snapshot older than the history with ResourceVersionExpired',
      withArchive(async (store, env, now) => {
        const first = await store.search(request('', now, { limit: 2 }));
        await store.delete('shop', 'd');
        await env.clock.advance((env.options.historyWindowSeconds + 5) * 1000);
        let caught: unknown;
        try {
          await store.search(request('', now, { limit: 2, after: first.next!, resourceVersion: first.resourceVersion }));
        } catch (e) {
          caught = e;
        }
        assert.ok(isStorageError(caught, 'ResourceVersionExpired'), `expected ResourceVersionExpired, got ${String(caught)}`);
        assert.deepEqual(names(await searchAll(store, 'checkout-db', now)), ['a'], 'compaction leaves no hit of a deleted event');
      }),
    );

    it(
      'loses the hits of the events retention removes',
      withArchive(async (store, env, now) => {
        const archived = (n: string): CoreEvent => fixtureEvent({ ...FIXTURES[4]!, name: n, message: `rotated certs ${n}` }, now);
        // A second apart from the fixtures: a backend may find what was written by a time through marks of a second's resolution.
        await env.clock.advance(1000);
        const t0 = env.clock.now();
        await store.applyArchiveBatch({ writes: [{ namespace: 'shop', name: 'old', decide: () => ({ action: 'write', object: archived('old') }) }], stamp: {} });
        await env.clock.advance(10_000);
        await store.applyArchiveBatch({ writes: [{ namespace: 'shop', name: 'new', decide: () => ({ action: 'write', object: archived('new') }) }], stamp: {} });
        await env.clock.advance(10_000);
        assert.deepEqual(names(await searchAll(store, 'rotated', now)).sort(), ['new', 'old']);
        for (let step = 0; step < 20; step++) if (!(await store.enforceRetention({ olderThanMs: t0 + 5_000 })).more) break;
        assert.deepEqual(names(await searchAll(store, 'rotated', now)), ['new']);
      }),
    );

    it(
      'pages the same hits in the same order when a page may end short at maxExamined',
      withArchive(async (store, _env, now) => {
        for (const [, q] of cases) {
          const all = names(await searchAll(store, q, now));
          const seen: string[] = [];
          let after: SearchCursor | undefined;
          let rv: number | undefined;
          for (let pages = 0; ; pages++) {
            assert.ok(pages < 20, `the pages of ${q} end`);
            const page = await store.search(request(q, now, { limit: 2, maxExamined: 1, ...(after !== undefined ? { after, resourceVersion: rv! } : {}) }));
            assert.ok(page.items.length <= 2);
            rv ??= page.resourceVersion;
            seen.push(...names(page.items));
            if (page.next === undefined) break;
            after = page.next;
          }
          assert.deepEqual(seen, all, q);
        }
      }),
    );

    it(
      'counts exactly the hits of each query per bucket, with edges inside a second',
      withArchive(async (store, _env, now) => {
        // Two events a few hundred ms either side of a bucket's edge, in one second.
        const edge = now - 3 * HOUR - 250;
        for (const [name, ms] of [['x', edge - 150], ['y', edge + 150]] as const) {
          const e = fixtureEvent({ ...FIXTURES[3]!, name, lastAgoMs: 0 }, now);
          delete e.firstTimestamp;
          delete e.lastTimestamp;
          e.eventTime = formatMicroTime(ms)!;
          await store.create(e);
        }
        const histogram = { sinceMs: now - 4 * HOUR - 250, untilMs: now + HOUR - 250, bucketMs: HOUR };
        for (const q of [...cases.map(([, q]) => q), 'checkout -certs', 'reason:backoff', 'ns:sh*', '-type:warning', 'type:warning -reason:Failed*']) {
          const want = histogramBuckets(histogram);
          for (const hit of await searchAll(store, q, now)) countInHistogram(want, histogram, searchTimeMs(hit.event));
          const page = await store.search(request(q, now, { limit: 1, histogram }));
          assert.deepEqual(page.histogram, want, q);
        }
      }),
    );

    it(
      'counts the hits of the whole search per bucket, whatever the page',
      withArchive(async (store, _env, now) => {
        const histogram = { sinceMs: now - 4 * HOUR, untilMs: now + HOUR, bucketMs: HOUR };
        const all = await store.search(request('', now, { limit: 1, histogram }));
        assert.deepEqual(all.histogram?.map((b) => [b.startMs - now, b.hits]), [[-4 * HOUR, 1], [-3 * HOUR, 1], [-2 * HOUR, 1], [-HOUR, 2], [0, 2]]);
        const certs = await store.search(request('certs', now, { limit: 1, histogram }));
        assert.deepEqual(certs.histogram?.map((b) => b.hits), [0, 0, 0, 1, 1]);
        assert.equal(certs.items.length, 1);
        const none = await store.search(request('', now, { limit: 1 }));
        assert.equal(none.histogram, undefined, 'only when asked for');
      }),
    );
  });
}
