/** The EventStore conformance suite's lists: pages, revisions, filters and continuations. */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { CoreEvent } from '../../api/index.js';
import type { EventStore, IndexedField } from '../event-store.js';
import { hasVersionedReads } from '../event-store.js';
import { fieldValue } from '../shared/index.js';
import { it, keys, listAll, rejectsWith, sampleEvent, storeCases } from './conformance-support.js';
import type { ConformanceSetup } from './conformance-support.js';

/** conformanceList registers the cases of `list`: key order, namespaces, limits and continuations at one revision, exact and latest reads, filters, and `listVersions` where offered. */
export function conformanceList(setup: ConformanceSetup): void {
  const { withStore } = storeCases(setup);
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
}
