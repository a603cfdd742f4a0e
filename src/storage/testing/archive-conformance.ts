import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { CLUSTER_LABEL, formatMicroTime } from '../../api/index.js';
import type { CoreEvent, Occurrence } from '../../api/index.js';
import { eventOccurrenceQuery, hasReasonCounts, isArchiveStore, occurrenceTimeMs } from '../archive-store.js';
import type { ArchiveStore, ArchiveWrite, EventOccurrencesQuery, EventRef, OccurrenceQuery, ReasonCount } from '../archive-store.js';
import type { EventStore, StoreWatchEvent } from '../event-store.js';
import { it, sampleEvent, storeCases } from './conformance-support.js';
import type { ConformanceEnv, ConformanceSetup } from './conformance-support.js';

/** upsert is the simplest archive write: store `object` and append an occurrence when its count changed. */
function upsert(object: CoreEvent): ArchiveWrite {
  return {
    namespace: object.metadata.namespace!,
    name: object.metadata.name!,
    decide: (current) => ({
      action: 'write',
      object,
      occurrence: { countBefore: current?.count ?? 0, countAfter: object.count ?? 1 },
    }),
  };
}

const HOUR = 3_600_000;

/** noise is `length` characters that no compressor shrinks much, the same for the same seed. */
function noise(seed: number, length: number): string {
  let x = (seed * 2_654_435_761 + 1) >>> 0;
  let out = '';
  while (out.length < length) {
    x = (Math.imul(x, 1_664_525) + 1_013_904_223) >>> 0;
    out += (x >>> 8).toString(36);
  }
  return out.slice(0, length);
}
const T = Date.UTC(2025, 5, 1, 12);

function at(ms: number): string {
  return new Date(ms).toISOString();
}

/** timed is an event that last happened at `lastMs` with `count` repeats. */
function timed(namespace: string, name: string, reason: string, count: number, lastMs: number, type = 'Warning'): CoreEvent {
  return sampleEvent(namespace, name, { reason, type, count, firstTimestamp: at(T - 10 * HOUR), lastTimestamp: at(lastMs) });
}

function sortedCounts(counts: ReasonCount[]): string[] {
  return counts.map((c) => `${c.type}/${c.reason}=${c.count}@${c.firstMs - T}`).sort();
}

function summary(o: Occurrence): string {
  return `${o.event.namespace}/${o.event.name} ${o.countBefore}->${o.countAfter}`;
}

async function allOccurrences(store: ArchiveStore, q: OccurrenceQuery = {}): Promise<Occurrence[]> {
  const out: Occurrence[] = [];
  let after = q.after;
  for (;;) {
    const page = await store.listOccurrences({ ...q, ...(after !== undefined ? { after } : {}) });
    if (q.limit !== undefined) assert.ok(page.items.length <= q.limit);
    out.push(...page.items);
    if (page.next === undefined) return out;
    assert.equal(page.items.length, q.limit, 'a page that says more follow is full');
    after = page.next;
  }
}

/**
 * runArchiveStoreConformance registers the behaviour of the archive capability
 * (occurrences, batches with checkpoints, retention) that every ArchiveStore
 * backend must have. It uses the same setup as the EventStore suite.
 */
export function runArchiveStoreConformance(name: string, setup: ConformanceSetup): void {
  const { open, withStore } = storeCases(setup, { is: isArchiveStore, message: `${name} has the archive capability` });

  void describe(`ArchiveStore conformance: ${name}`, () => {
    it(
      'records an occurrence for each observed change of a local write, and none for metadata-only writes',
      withStore(async (store, env) => {
        const stamp = { occurrence: {} };
        await store.create(sampleEvent('ns', 'a', { count: 1 }), stamp);
        await env.clock.advance(1000);
        await store.guaranteedUpdate('ns', 'a', (cur) => ({ ...cur!, count: 2 }), stamp);
        await store.guaranteedUpdate('ns', 'a', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { x: 'y' } } }), stamp);
        await store.guaranteedUpdate('ns', 'a', (cur) => ({ ...cur!, message: 'new text' }), stamp);
        await store.guaranteedUpdate('ns', 'a', (cur) => ({ ...cur!, count: 3 }));
        await store.create(sampleEvent('ns', 'b'));
        const all = await allOccurrences(store);
        assert.deepEqual(all.map(summary), ['ns/a 0->1', 'ns/a 1->2', 'ns/a 2->2']);
        assert.equal(all[0]!.observedTime, formatMicroTime(env.clock.now() - 1000));
        assert.equal(all[2]!.message, 'new text');
        assert.equal(all[0]!.event.uid, 'uid-ns-a');
        assert.equal(all[0]!.regarding.name, 'pod-a');
        assert.notEqual(all[0]!.metadata.name, all[1]!.metadata.name);
      }),
    );

    it(
      'reads a long message repeated by local and archived writes back whole: get, lists at each revision, watch with previous objects, occurrences after its deletion',
      withStore(async (store) => {
        // Long enough for a backend to keep it once (SQLite and PostgreSQL do), short enough for any request.
        const long = noise(11, 20_000);
        const other = noise(12, 20_000);
        const stamp = { occurrence: {} };
        const first = Number((await store.create(sampleEvent('ns', 'long', { count: 1, message: long }), stamp)).metadata.resourceVersion);
        const watch = store.watch({ resourceVersion: first, namespace: 'ns' });
        const messages = [long];
        const write = async (i: number, message: string, archived: boolean): Promise<void> => {
          if (archived) {
            const cur = await store.get('ns', 'long');
            await store.applyArchiveBatch({ writes: [upsert({ ...cur, count: i, message })], stamp: {} });
          } else await store.guaranteedUpdate('ns', 'long', (cur) => ({ ...cur!, count: i, message }), stamp);
          messages.push(message);
        };
        for (let i = 2; i <= 6; i++) await write(i, long, false);
        for (let i = 7; i <= 10; i++) await write(i, long, true);
        for (let i = 11; i <= 13; i++) await write(i, other, i % 2 === 0);
        await write(14, long, false);
        await write(15, 'short now', false);
        const last = Number((await store.get('ns', 'long')).metadata.resourceVersion);
        assert.equal((await store.get('ns', 'long')).message, 'short now');
        const seen: CoreEvent[] = [];
        for await (const ev of watch) {
          assert.equal(ev.type, 'MODIFIED');
          assert.equal(ev.prevObject?.message, seen.at(-1)?.message ?? long, `the previous object of ${ev.object.count}`);
          seen.push(ev.object);
          if (Number(ev.object.metadata.resourceVersion) === last) break;
        }
        watch.stop();
        assert.deepEqual(
          seen.map((e) => e.message),
          messages.slice(1),
          'each change holds its message',
        );
        for (const v of [{ rv: first, message: long }, ...seen.map((e) => ({ rv: Number(e.metadata.resourceVersion), message: e.message }))]) {
          const page = await store.list({ namespace: 'ns', resourceVersion: v.rv, match: 'Exact' });
          assert.equal(page.items[0]?.message, v.message, `the list at ${v.rv}`);
        }
        await store.delete('ns', 'long');
        const occurrences = await allOccurrences(store, { fieldEquals: { 'event.name': 'long' }, namespace: 'ns' });
        assert.deepEqual(
          occurrences.map((o) => o.message),
          messages,
          'each occurrence holds the message of its version, after the event is gone',
        );
      }),
    );

    it(
      'binds a cluster name to one UID; a UID may have several names',
      withStore(async (store) => {
        assert.deepEqual(await store.bindCluster({ name: 'prod', uid: 'u1' }), { otherNames: [] });
        assert.deepEqual(await store.bindCluster({ name: 'prod', uid: 'u1' }), { boundUID: 'u1', otherNames: [] });
        assert.deepEqual(await store.bindCluster({ name: 'prod', uid: 'u2' }), { boundUID: 'u1', otherNames: [] }, 'a bound name keeps its UID');
        assert.deepEqual(await store.bindCluster({ name: 'prod', uid: 'u2' }), { boundUID: 'u1', otherNames: [] }, 'a refused binding writes nothing');
        assert.deepEqual(await store.bindCluster({ name: 'prod-eu', uid: 'u1' }), { otherNames: ['prod'] });
        assert.deepEqual(await store.bindCluster({ name: 'a-prod', uid: 'u1' }), { otherNames: ['prod', 'prod-eu'] });
        assert.deepEqual(await store.bindCluster({ name: 'staging', uid: 'u2' }), { otherNames: [] });
      }),
    );

    it(
      'commits a batch with its occurrences and checkpoint; archived events have no TTL and reach watchers',
      withStore(async (store, env) => {
        const rv0 = await store.currentResourceVersion();
        const w = store.watch({ resourceVersion: rv0 });
        const result = await store.applyArchiveBatch({
          writes: [upsert(sampleEvent('ns', 'a', { count: 1 })), upsert(sampleEvent('ns', 'b', { count: 4 }))],
          checkpoint: { source: 'src', resourceVersion: '17' },
          stamp: { observedTime: formatMicroTime(env.clock.now())!, cluster: 'east', clusterUID: 'uid-east' },
        });
        assert.deepEqual(result, { events: 2, occurrences: 2, skipped: 0 });
        assert.equal((await store.getCheckpoint('src'))?.resourceVersion, '17');
        assert.equal(await store.getCheckpoint('other'), undefined);
        const occ = await allOccurrences(store);
        assert.deepEqual(occ.map(summary), ['ns/a 0->1', 'ns/b 0->4']);
        assert.equal(occ[0]!.cluster, 'east');
        assert.equal(occ[1]!.clusterUID, 'uid-east');
        const seen: StoreWatchEvent[] = [];
        for await (const e of w) {
          seen.push(e);
          if (seen.length === 2) break;
        }
        w.stop();
        assert.deepEqual(seen.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED a', 'ADDED b']);
        env.clock.set(env.clock.now() + 10 * 24 * 3600 * 1000);
        await env.clock.advance(5_000);
        assert.equal((await store.get('ns', 'a')).count, 1);
      }),
    );

    it(
      'skips, redirects, and writes a key twice in one batch with one occurrence each',
      withStore(async (store, env) => {
        await store.applyArchiveBatch({ writes: [upsert(sampleEvent('ns', 'a', { count: 1 }))], stamp: {} });
        const other = sampleEvent('ns', 'a', { count: 1 });
        other.metadata.uid = 'someone-else';
        const redirected: ArchiveWrite = {
          namespace: 'ns',
          name: 'a',
          decide: (cur, at) =>
            cur !== undefined && cur.metadata.uid !== 'someone-else'
              ? { action: 'redirect', name: `${at}.2` }
              : { action: 'write', object: { ...other, metadata: { ...other.metadata, name: at } }, occurrence: { countBefore: 0, countAfter: 1 } },
        };
        const r = await store.applyArchiveBatch({
          writes: [
            { namespace: 'ns', name: 'a', decide: () => ({ action: 'skip' }) },
            redirected,
            upsert(sampleEvent('ns', 'c', { count: 1 })),
            upsert(sampleEvent('ns', 'c', { count: 2 })),
          ],
          stamp: { observedTime: formatMicroTime(env.clock.now())! },
        });
        assert.deepEqual(r, { events: 3, occurrences: 3, skipped: 1 });
        assert.equal((await store.get('ns', 'a.2')).metadata.uid, 'someone-else');
        assert.equal((await store.get('ns', 'a')).metadata.uid, 'uid-ns-a');
        assert.equal((await store.get('ns', 'c')).count, 2);
        assert.deepEqual((await allOccurrences(store)).map(summary), ['ns/a 0->1', 'ns/a.2 0->1', 'ns/c 0->1', 'ns/c 1->2']);
      }),
    );

    it(
      'writes nothing of a batch whose decide throws, and keeps the previous checkpoint',
      withStore(async (store) => {
        await store.applyArchiveBatch({ writes: [], checkpoint: { source: 's', resourceVersion: '5' }, stamp: {} });
        const failing: ArchiveWrite = {
          namespace: 'ns',
          name: 'z',
          decide: () => {
            throw new Error('boom');
          },
        };
        await assert.rejects(
          store.applyArchiveBatch({ writes: [upsert(sampleEvent('ns', 'y')), failing], checkpoint: { source: 's', resourceVersion: '9' }, stamp: {} }),
        );
        assert.equal((await store.getCheckpoint('s'))?.resourceVersion, '5');
        assert.deepEqual((await store.list({})).items, []);
        assert.deepEqual(await allOccurrences(store), []);
      }),
    );

    it(
      'lists occurrences by namespace, time window and fields, in pages that add up to the whole',
      withStore(async (store, env) => {
        const t0 = env.clock.now();
        for (let i = 0; i < 12; i++) {
          const ns = i % 2 === 0 ? 'even' : 'odd';
          const e = sampleEvent(ns, `e${i}`, { reason: i % 3 === 0 ? 'BackOff' : 'Started', type: i % 3 === 0 ? 'Warning' : 'Normal' });
          await store.applyArchiveBatch({ writes: [upsert(e)], stamp: { observedTime: formatMicroTime(t0 + i * 1000)!, cluster: i < 6 ? 'a' : 'b' } });
        }
        const names = (os: Occurrence[]): string[] => os.map((o) => o.event.name);
        assert.deepEqual(names(await allOccurrences(store)), Array.from({ length: 12 }, (_, i) => `e${i}`));
        assert.deepEqual(names(await allOccurrences(store, { namespace: 'odd' })), ['e1', 'e3', 'e5', 'e7', 'e9', 'e11']);
        const window = { sinceMicros: (t0 + 3000) * 1000, untilMicros: (t0 + 7000) * 1000 };
        assert.deepEqual(names(await allOccurrences(store, window)), ['e3', 'e4', 'e5', 'e6']);
        assert.deepEqual(names(await allOccurrences(store, { fieldEquals: { reason: 'BackOff' } })), ['e0', 'e3', 'e6', 'e9']);
        assert.deepEqual(names(await allOccurrences(store, { fieldEquals: { 'regarding.name': 'pod-e4', 'regarding.kind': 'Pod' } })), ['e4']);
        assert.deepEqual(names(await allOccurrences(store, { fieldEquals: { cluster: 'b', type: 'Warning' } })), ['e6', 'e9']);
        assert.deepEqual(names(await allOccurrences(store, { predicate: (o) => o.cluster !== 'a', namespace: 'even' })), ['e6', 'e8', 'e10']);
        for (const limit of [1, 2, 5, 11]) {
          assert.deepEqual(names(await allOccurrences(store, { limit })), names(await allOccurrences(store)), `limit ${limit}`);
          assert.deepEqual(names(await allOccurrences(store, { ...window, limit, namespace: 'even' })), ['e4', 'e6'], `window, limit ${limit}`);
        }
      }),
    );

    it(
      'reads several events\' occurrences at once as listOccurrences reads each (listEventOccurrences)',
      withStore(async (store, env) => {
        const t0 = env.clock.now();
        const web0 = (ns: string): CoreEvent['involvedObject'] => ({ kind: 'Pod', namespace: ns, name: 'web-0' });
        const writes: [CoreEvent, number][] = [];
        // The same object's name in two namespaces, two events about one object, an event recreated under its name
        // with a new uid, and one that names no object: what the backends' one read must tell apart.
        for (let c = 1; c <= 5; c++) writes.push([sampleEvent('a', 'web', { count: c, involvedObject: web0('a') }), c]);
        for (let c = 1; c <= 3; c++) writes.push([sampleEvent('b', 'web', { count: c, involvedObject: web0('b') }), 10 + c]);
        for (let c = 1; c <= 2; c++) writes.push([sampleEvent('a', 'db', { count: c, involvedObject: web0('a') }), 20 + c]);
        writes.push([sampleEvent('a', 'again', { count: 1 }), 30]);
        writes.push([sampleEvent('a', 'again', { count: 2, metadata: { namespace: 'a', name: 'again', uid: 'uid-new' } }), 31]);
        writes.push([sampleEvent('a', 'again', { count: 3, metadata: { namespace: 'a', name: 'again', uid: 'uid-new' } }), 32]);
        for (let c = 1; c <= 2; c++) writes.push([sampleEvent('b', 'loose', { count: c, involvedObject: { kind: 'Node', name: '' } }), 40 + c]);
        // Interleaved in time, so each event's occurrences are not the rows next to each other.
        writes.sort((x, y) => (x[1] % 10) - (y[1] % 10) || x[1] - y[1]);
        for (const [i, [e]] of writes.entries()) await store.applyArchiveBatch({ writes: [upsert(e)], stamp: { observedTime: formatMicroTime(t0 + i * 1000)! } });
        const events: EventRef[] = [
          { namespace: 'a', name: 'web', uid: 'uid-a-web', regardingName: 'web-0' },
          { namespace: 'b', name: 'web', uid: 'uid-b-web', regardingName: 'web-0' },
          { namespace: 'a', name: 'db', regardingName: 'web-0' },
          { namespace: 'a', name: 'again', uid: 'uid-new', regardingName: 'pod-again' },
          { namespace: 'a', name: 'again', uid: 'uid-a-again', regardingName: 'pod-again' },
          { namespace: 'b', name: 'loose', uid: 'uid-b-loose' },
          { namespace: 'a', name: 'web', uid: 'uid-a-web', regardingName: 'web-0' },
          { namespace: 'a', name: 'absent', regardingName: 'web-0' },
          { namespace: 'c', name: 'web', regardingName: 'web-0' },
        ];
        const queries: [string, Omit<EventOccurrencesQuery, 'events'>][] = [
          ['no limit', {}],
          ['limit 1', { limit: 1 }],
          ['limit 2', { limit: 2 }],
          // The first read of a backend takes each event's first three rows here, all of them refused for web in a:
          // the rest is read after them.
          ['limit 2, the later repeats', { limit: 2, predicate: (o) => o.countAfter >= 4 || o.event.name !== 'web' }],
        ];
        for (const [what, q] of queries) {
          const got = await store.listEventOccurrences({ events, ...q });
          const each = await Promise.all(events.map(async (e) => (await store.listOccurrences(eventOccurrenceQuery(e, q))).items));
          assert.deepEqual(got, each, what);
        }
        const all = await store.listEventOccurrences({ events });
        assert.deepEqual(
          all.map((os) => os.map(summary).join(', ')),
          [
            'a/web 0->1, a/web 1->2, a/web 2->3, a/web 3->4, a/web 4->5',
            'b/web 0->1, b/web 1->2, b/web 2->3',
            'a/db 0->1, a/db 1->2',
            'a/again 1->2, a/again 2->3',
            'a/again 0->1',
            'b/loose 0->1, b/loose 1->2',
            'a/web 0->1, a/web 1->2, a/web 2->3, a/web 3->4, a/web 4->5',
            '',
            '',
          ],
        );
        // With each event as read (a search hit), whose own version's occurrence a backend may rebuild from it: the same.
        const read = await Promise.all(events.map(async (e) => ({ ...e, read: await store.get(e.namespace, e.name).catch(() => undefined) })));
        assert.ok(read.filter((e) => e.read !== undefined).length >= 5);
        const withRead = await store.listEventOccurrences({ events: read.map(({ read: r, ...e }) => (r === undefined ? e : { ...e, read: r })) });
        assert.deepEqual(withRead, all);
        for (const [i, os] of withRead.entries()) {
          for (const o of os) assert.notEqual(o.regarding, read[i]!.read?.involvedObject, 'an occurrence shares no object with the event read');
        }
        const later = await store.listEventOccurrences({ events: events.slice(0, 1), limit: 2, predicate: (o) => o.countAfter >= 4 });
        assert.deepEqual(later.map((os) => os.map(summary)), [['a/web 3->4', 'a/web 4->5']]);
        assert.deepEqual(await store.listEventOccurrences({ events: [] }), []);

        // Compacted: the versions the occurrences describe are past, and the events repeat again after it. Read as
        // search hits (each with the version read), every event's occurrences are still what listOccurrences gives.
        await env.clock.advance(120_000);
        for (let c = 6; c <= 7; c++) {
          await store.applyArchiveBatch({ writes: [upsert(sampleEvent('a', 'web', { count: c, involvedObject: web0('a') }))], stamp: { observedTime: formatMicroTime(t0 + 200_000 + c)! } });
        }
        const hits = await Promise.all(events.map(async (e) => ({ ...e, read: await store.get(e.namespace, e.name).catch(() => undefined) })));
        for (const [what, q] of queries) {
          const got = await store.listEventOccurrences({ events: hits.map(({ read: r, ...e }) => (r === undefined ? e : { ...e, read: r })), ...q });
          const each = await Promise.all(events.map(async (e) => (await store.listOccurrences(eventOccurrenceQuery(e, q))).items));
          assert.deepEqual(got, each, `compacted, ${what}`);
        }
        assert.equal((await store.listEventOccurrences({ events: hits.slice(0, 1).map(({ read: r, ...e }) => ({ ...e, read: r! })) }))[0]!.map(summary).join(', '), 'a/web 0->1, a/web 1->2, a/web 2->3, a/web 3->4, a/web 4->5, a/web 5->6, a/web 6->7');
      }),
    );

    it(
      'lists the occurrences of some types, reasons or regarding kinds (anyOf), with the window, the namespace and in pages',
      withStore(async (store, env) => {
        const t0 = env.clock.now();
        const kinds = ['Warning', 'warning', 'Normal', 'Normal', 'Normal'];
        const reasons = ['BackOff', 'Odd', 'Killing', 'Pulled', 'ScalingReplicaSet'];
        for (let i = 0; i < 10; i++) {
          const ns = i % 2 === 0 ? 'even' : 'odd';
          const involvedObject = { kind: i % 5 === 4 ? 'Deployment' : 'Pod', namespace: ns, name: `obj-${i}` };
          const e = sampleEvent(ns, `e${i}`, { type: kinds[i % 5]!, reason: reasons[i % 5]!, involvedObject });
          await store.applyArchiveBatch({ writes: [upsert(e)], stamp: { observedTime: formatMicroTime(t0 + i * 1000)! } });
        }
        // A repeat of e2 that is no longer Killing: the occurrence carries the type and reason of its version.
        await store.applyArchiveBatch({
          writes: [upsert(sampleEvent('even', 'e2', { type: 'Normal', reason: 'Pulled', count: 2, involvedObject: { kind: 'Pod', namespace: 'even', name: 'obj-2' } }))],
          stamp: { observedTime: formatMicroTime(t0 + 10_000)! },
        });
        const names = (os: Occurrence[]): string[] => os.map((o) => `${o.event.name}:${o.reason}`);
        const failures = { types: ['Warning'], reasons: ['Killing'] };
        assert.deepEqual(names(await allOccurrences(store, { anyOf: failures })), ['e0:BackOff', 'e1:Odd', 'e2:Killing', 'e5:BackOff', 'e6:Odd', 'e7:Killing']);
        assert.deepEqual(names(await allOccurrences(store, { anyOf: { ...failures, kinds: ['Deployment'] } })), [
          'e0:BackOff', 'e1:Odd', 'e2:Killing', 'e4:ScalingReplicaSet', 'e5:BackOff', 'e6:Odd', 'e7:Killing', 'e9:ScalingReplicaSet',
        ]);
        assert.deepEqual(names(await allOccurrences(store, { anyOf: { reasons: ['Pulled'] } })), ['e3:Pulled', 'e8:Pulled', 'e2:Pulled']);
        assert.deepEqual(names(await allOccurrences(store, { anyOf: {} })), []);
        const window = { sinceMicros: (t0 + 1000) * 1000, untilMicros: (t0 + 7000) * 1000 };
        for (const limit of [undefined, 1, 2, 3]) {
          assert.deepEqual(names(await allOccurrences(store, { ...window, anyOf: failures, ...(limit !== undefined ? { limit } : {}) })), ['e1:Odd', 'e2:Killing', 'e5:BackOff', 'e6:Odd'], `limit ${limit}`);
          assert.deepEqual(names(await allOccurrences(store, { namespace: 'odd', anyOf: failures, ...(limit !== undefined ? { limit } : {}) })), ['e1:Odd', 'e5:BackOff', 'e7:Killing'], `odd, limit ${limit}`);
        }
        assert.deepEqual(names(await allOccurrences(store, { anyOf: failures, fieldEquals: { 'regarding.name': 'obj-5' } })), ['e5:BackOff']);
      }),
    );

    it(
      'lists the occurrences of some events only (events), each once, with the window, the namespace, anyOf and in pages',
      withStore(async (store, env) => {
        const t0 = env.clock.now();
        for (let i = 0; i < 6; i++) {
          const ns = i % 2 === 0 ? 'even' : 'odd';
          const involvedObject = { kind: 'Pod', namespace: ns, name: `obj-${i}` };
          for (let count = 1; count <= 2; count++) {
            const e = sampleEvent(ns, `e${i}`, { type: i % 3 === 0 ? 'Warning' : 'Normal', count, involvedObject });
            await store.applyArchiveBatch({ writes: [upsert(e)], stamp: { observedTime: formatMicroTime(t0 + i * 1000 + count)! } });
          }
        }
        const names = (os: Occurrence[]): string[] => os.map((o) => `${o.event.namespace}/${o.event.name}:${o.countAfter}`);
        // One listed twice, one of a namespace that has no such event, one that never was.
        const events = [
          { namespace: 'even', name: 'e0' },
          { namespace: 'odd', name: 'e3' },
          { namespace: 'odd', name: 'e0' },
          { namespace: 'even', name: 'e4' },
          { namespace: 'even', name: 'e0' },
          { namespace: 'even', name: 'e9' },
        ];
        for (const limit of [undefined, 1, 2, 3]) {
          const paged = limit !== undefined ? { limit } : {};
          assert.deepEqual(names(await allOccurrences(store, { events, ...paged })), ['even/e0:1', 'even/e0:2', 'odd/e3:1', 'odd/e3:2', 'even/e4:1', 'even/e4:2'], `limit ${limit}`);
          assert.deepEqual(names(await allOccurrences(store, { events, anyOf: { types: ['warning'] }, ...paged })), ['even/e0:1', 'even/e0:2', 'odd/e3:1', 'odd/e3:2'], `anyOf, limit ${limit}`);
        }
        assert.deepEqual(names(await allOccurrences(store, { events, sinceMicros: (t0 + 3000) * 1000, untilMicros: (t0 + 4002) * 1000 })), ['odd/e3:1', 'odd/e3:2', 'even/e4:1']);
        assert.deepEqual(names(await allOccurrences(store, { events, namespace: 'odd' })), ['odd/e3:1', 'odd/e3:2']);
        assert.deepEqual(names(await allOccurrences(store, { events, fieldEquals: { 'regarding.name': 'obj-4' } })), ['even/e4:1', 'even/e4:2']);
        assert.deepEqual(names(await allOccurrences(store, { events: [] })), [], 'no event, no occurrence');
        // With each event as read (incidents' failures), whose own version's occurrence a backend may rebuild from it:
        // the same occurrences, whole, sharing no object with the events given.
        const read = await Promise.all(events.map(async (e) => ({ ...e, read: await store.get(e.namespace, e.name).catch(() => undefined) })));
        assert.ok(read.filter((e) => e.read !== undefined).length >= 4);
        for (const limit of [undefined, 1, 3]) {
          const paged = limit !== undefined ? { limit } : {};
          const withRead = await allOccurrences(store, { events: read, anyOf: { types: ['warning'] }, ...paged });
          assert.deepEqual(withRead, await allOccurrences(store, { events, anyOf: { types: ['warning'] }, ...paged }), `as read, limit ${limit}`);
          for (const o of withRead) assert.ok(read.every((e) => e.read?.involvedObject !== o.regarding), 'an occurrence shares no object with an event given');
        }
      }),
    );

    it(
      'retention drops occurrences and events older than the cutoff, leaving newer ones',
      withStore(async (store, env) => {
        const t0 = env.clock.now();
        await store.applyArchiveBatch({ writes: [upsert(sampleEvent('ns', 'old')), upsert(sampleEvent('ns', 'renewed'))], stamp: {} });
        await env.clock.advance(10_000);
        await store.applyArchiveBatch({ writes: [upsert(sampleEvent('ns', 'new')), upsert(sampleEvent('ns', 'renewed', { count: 2 }))], stamp: {} });
        await env.clock.advance(10_000);
        const rv = await store.currentResourceVersion();
        const w = store.watch({ resourceVersion: rv });
        let removed = { events: 0, occurrences: 0 };
        for (;;) {
          const r = await store.enforceRetention({ olderThanMs: t0 + 5_000 });
          removed = { events: removed.events + r.events, occurrences: removed.occurrences + r.occurrences };
          if (!r.more) break;
        }
        assert.deepEqual(removed, { events: 1, occurrences: 2 });
        assert.deepEqual((await store.list({})).items.map((e) => e.metadata.name), ['new', 'renewed']);
        assert.deepEqual((await allOccurrences(store)).map(summary), ['ns/new 0->1', 'ns/renewed 1->2']);
        for await (const e of w) {
          assert.equal(`${e.type} ${e.object.metadata.name}`, 'DELETED old');
          break;
        }
        w.stop();
      }),
    );

    it(
      'per-cluster retention drops only its cluster\'s rows; the default cutoff spares the clusters that have their own',
      withStore(async (store, env) => {
        const from = (cluster: string | undefined, name: string, count = 1): CoreEvent =>
          sampleEvent('ns', name, { count, ...(cluster !== undefined ? { metadata: { namespace: 'ns', name, uid: `uid-${name}`, labels: { [CLUSTER_LABEL]: cluster } } } : {}) });
        // A second apart: retention finds what was written by a time through marks of a second's resolution.
        // Each phase writes one event per cluster (`local` for none), named after both, then lets 10 s pass.
        const phase = async (age: string, clusters: (string | undefined)[]): Promise<number> => {
          const at = env.clock.now();
          for (const cluster of clusters) {
            await store.applyArchiveBatch({ writes: [upsert(from(cluster, `${cluster ?? 'local'}-${age}`))], stamp: cluster !== undefined ? { cluster } : {} });
            await env.clock.advance(1_000);
          }
          await env.clock.advance(10_000);
          return at;
        };
        const t0 = await phase('old', ['prod', 'dev', 'stage', undefined]);
        const t1 = await phase('mid', ['prod', 'dev', 'stage', undefined]);
        await phase('new', ['prod', 'dev']);
        const run = async (policy: Parameters<ArchiveStore['enforceRetention']>[0]): Promise<{ events: number; occurrences: number }> => {
          const removed = { events: 0, occurrences: 0 };
          for (;;) {
            const r = await store.enforceRetention(policy);
            removed.events += r.events;
            removed.occurrences += r.occurrences;
            if (!r.more) return removed;
          }
        };
        const names = async (): Promise<string[]> => (await store.list({})).items.map((e) => e.metadata.name!).sort();
        const occurred = async (): Promise<string[]> => (await allOccurrences(store)).map((o) => `${o.cluster ?? '-'}/${o.event.name}`).sort();
        // Only dev's rows older than t1 + 5 s: the others, older still, stay.
        assert.deepEqual(await run({ clusters: { dev: t1 + 5_000 } }), { events: 2, occurrences: 2 });
        assert.deepEqual(await names(), ['dev-new', 'local-mid', 'local-old', 'prod-mid', 'prod-new', 'prod-old', 'stage-mid', 'stage-old']);
        assert.deepEqual(await occurred(), ['-/local-mid', '-/local-old', 'dev/dev-new', 'prod/prod-mid', 'prod/prod-new', 'prod/prod-old', 'stage/stage-mid', 'stage/stage-old']);
        // The default cutoff (t1 + 5 s) passes over prod, which keeps its own (t0 + 5 s): the other clusters and local writes lose their old rows.
        assert.deepEqual(await run({ olderThanMs: t1 + 5_000, clusters: { prod: t0 + 5_000 } }), { events: 5, occurrences: 5 });
        assert.deepEqual(await names(), ['dev-new', 'prod-mid', 'prod-new']);
        assert.deepEqual(await occurred(), ['dev/dev-new', 'prod/prod-mid', 'prod/prod-new']);
      }),
    );

    it(
      'retention by size removes the oldest data until the store fits',
      withStore(async (store, env) => {
        // The cap halves the data, not what an empty store already takes (a file's schema pages).
        const empty = await store.archiveBytes();
        for (let i = 0; i < 40; i++) {
          await store.applyArchiveBatch({ writes: [upsert(sampleEvent('ns', `e${String(i).padStart(2, '0')}`, { message: noise(i, 2000) }))], stamp: {} });
          await env.clock.advance(1000);
        }
        const before = await store.archiveBytes();
        assert.ok(before > 0);
        const cap = Math.floor((empty + before) / 2);
        for (let step = 0; step < 50; step++) {
          const r = await store.enforceRetention({ maxBytes: cap });
          if (r.events + r.occurrences === 0) break;
        }
        const names = (await store.list({})).items.map((e) => e.metadata.name!);
        assert.ok(names.length > 0 && names.length < 40, `kept ${names.length}`);
        assert.equal(names.at(-1), 'e39', 'the newest event stays');
        assert.ok(!names.includes('e00'), 'the oldest event goes');
      }),
    );

    it(
      'retention by size holds the cap within the history window, however often events repeat',
      withStore(async (store, env) => {
        // Every change stays in the history window (60 s here), as a busy archive's last hour does: the cap may not wait for it.
        const round = async (from: number): Promise<void> => {
          for (let v = 1; v <= 6; v++) {
            for (let i = from; i < from + 12; i++) {
              const message = noise(i * 100 + v, 3000);
              await store.applyArchiveBatch({ writes: [upsert(sampleEvent('ns', `e${String(i).padStart(2, '0')}`, { message, count: v }))], stamp: {} });
            }
            await env.clock.advance(500);
          }
        };
        const enforce = async (cap: number): Promise<void> => {
          for (let step = 0; step < 50; step++) {
            if (!(await store.enforceRetention({ maxBytes: cap })).more) break;
          }
          const bytes = await store.archiveBytes();
          assert.ok(bytes <= cap, `${bytes} bytes kept under a cap of ${cap}`);
        };
        const empty = await store.archiveBytes();
        await round(0);
        const cap = Math.floor((empty + (await store.archiveBytes())) / 2);
        await enforce(cap);
        // A second burst right after the first cut is cut again, at once.
        await round(12);
        await enforce(cap);
        const names = (await store.list({})).items.map((e) => e.metadata.name!);
        assert.ok(names.includes('e23'), 'the newest event stays');
        assert.ok(!names.includes('e00'), 'the oldest event goes');
        const newest = (await allOccurrences(store)).filter((o) => o.event.name === 'e23').map(summary);
        assert.ok(newest.includes('ns/e23 5->6'), 'the newest occurrence stays');
      }),
    );

    it(
      'counts repeats by reason over when they happened, however late or early they were observed',
      withStore(async (store) => {
        if (!hasReasonCounts(store)) return;
        const observed = (ms: number): { observedTime: string } => ({ observedTime: formatMicroTime(ms)! });
        await store.applyArchiveBatch({
          writes: [
            upsert(timed('a', 'e1', 'BackOff', 3, T + 60_000)),
            upsert(timed('a', 'e2', 'Pulled', 1, T + 120_000, 'Normal')),
            upsert(timed('b', 'e3', 'BackOff', 2, T - 1)),
            upsert(timed('b', 'e4', 'BackOff', 1, T + HOUR)),
          ],
          stamp: observed(T + 5 * 60_000),
        });
        // e1 repeats 3 -> 7 within the hour; seen two days later (a relist after an outage).
        await store.applyArchiveBatch({ writes: [upsert(timed('a', 'e1', 'BackOff', 7, T + 30 * 60_000))], stamp: observed(T + 48 * HOUR) });
        // A sender's clock ahead of the archive's: happened (by its own word) after it was observed.
        await store.applyArchiveBatch({ writes: [upsert(timed('b', 'e5', 'Evicted', 1, T + 50 * 60_000))], stamp: observed(T - 3 * HOUR) });
        // No time of its own: it happened when it was observed.
        await store.applyArchiveBatch({
          writes: [upsert(sampleEvent('b', 'e6', { reason: 'Killing', type: 'Normal' }))],
          stamp: observed(T + 40 * 60_000),
        });
        const hour = { sinceMs: T, untilMs: T + HOUR };
        assert.deepEqual(sortedCounts(await store.countByReason(hour)), [
          'Normal/Killing=1@2400000',
          'Normal/Pulled=1@120000',
          'Warning/BackOff=7@60000',
          'Warning/Evicted=1@3000000',
        ]);
        assert.deepEqual(sortedCounts(await store.countByReason({ ...hour, namespace: 'b' })), ['Normal/Killing=1@2400000', 'Warning/Evicted=1@3000000']);
        assert.deepEqual(sortedCounts(await store.countByReason({ sinceMs: T - 1, untilMs: T })), ['Warning/BackOff=2@-1']);
        assert.deepEqual(sortedCounts(await store.countByReason({ sinceMs: T + HOUR, untilMs: T + 2 * HOUR })), ['Warning/BackOff=1@3600000']);
        assert.deepEqual(await store.countByReason({ sinceMs: T + 2 * HOUR, untilMs: T + 40 * HOUR }), []);
        assert.deepEqual(await store.countByReason({ sinceMs: T, untilMs: T }), []);
        const all = await allOccurrences(store);
        for (const w of [hour, { sinceMs: T - 1, untilMs: T }, { sinceMs: T + HOUR, untilMs: T + 2 * HOUR }, { sinceMs: T - 5 * HOUR, untilMs: T + 50 * HOUR }]) {
          const happened = (o: Occurrence): boolean => {
            const ms = occurrenceTimeMs(o);
            return ms !== undefined && ms >= w.sinceMs && ms < w.untilMs;
          };
          const range = await store.observedRange(w);
          assert.ok(range !== null);
          const within = await allOccurrences(store, { sinceMicros: range.sinceMicros, untilMicros: range.untilMicros });
          assert.deepEqual(within.filter(happened).map(summary), all.filter(happened).map(summary), 'the range holds whatever happened in the window');
        }
        assert.equal(await store.observedRange({ sinceMs: T + 2 * HOUR, untilMs: T + 3 * HOUR }), null);
      }),
    );

    if (setup.reopen !== undefined) {
      const reopen = (closed: EventStore, env: ConformanceEnv): Promise<EventStore> => setup.reopen!(closed, env);
      it('keeps checkpoints and occurrences across a reopen', async () => {
        const { store, env } = await open();
        let current: EventStore = store;
        try {
          await store.applyArchiveBatch({ writes: [upsert(sampleEvent('ns', 'a'))], checkpoint: { source: 's', resourceVersion: '42' }, stamp: {} });
          await store.close();
          current = await reopen(store, env);
          assert.ok(isArchiveStore(current));
          assert.equal((await current.getCheckpoint('s'))?.resourceVersion, '42');
          assert.deepEqual((await allOccurrences(current)).map(summary), ['ns/a 0->1']);
          await current.applyArchiveBatch({ writes: [upsert(sampleEvent('ns', 'b'))], stamp: {} });
          const ids = (await allOccurrences(current)).map((o) => o.metadata.name);
          assert.equal(new Set(ids).size, 2, 'occurrence names stay unique after a reopen');
          if (hasReasonCounts(current)) {
            const late = { observedTime: formatMicroTime(T + 24 * HOUR)! };
            await current.applyArchiveBatch({ writes: [upsert(timed('ns', 'c', 'BackOff', 2, T))], stamp: late });
            await current.close();
            current = await reopen(current, env);
            assert.ok(hasReasonCounts(current));
            assert.deepEqual(sortedCounts(await current.countByReason({ sinceMs: T, untilMs: T + 1 })), ['Warning/BackOff=2@0'], 'lag bounds survive a reopen');
          }
        } finally {
          await setup.destroy(current);
        }
      });
    }
  });
}
