import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CLUSTER_LABEL } from '../api/index.js';
import type { CoreEvent } from '../api/index.js';
import { MemoryEventStore } from '../storage/memory/index.js';
import { collectTimeline, countReasons } from './timeline-source.js';
import type { TimelineSource } from './timeline-source.js';
import { storeTimelineSource } from './store-source.js';
import { iso, testEvent } from '../../test/support/timeline-events.js';

describe('storeTimelineSource', () => {
  it('reads one object\'s events and the archive\'s occurrences from a store', async () => {
    const store = new MemoryEventStore();
    await store.ready();
    const e = testEvent({ name: 'crash', namespace: 'prod', object: 'web-1', reason: 'BackOff', type: 'Warning', first: 0 });
    await store.create(e, { occurrence: {} });
    for (const [count, at] of [[2, 50], [3, 70]] as const) {
      await store.guaranteedUpdate('prod', 'crash', (cur) => ({ ...cur!, count, lastTimestamp: iso(at) }), { occurrence: {} });
    }
    await store.create(testEvent({ name: 'other', namespace: 'prod', object: 'web-2', reason: 'Started', first: 10 }), { occurrence: {} });
    let read = 0;
    const t = await collectTimeline({ source: storeTimelineSource(store, { onProgress: (n) => (read = n) }), for: { kind: 'Pod', name: 'web-1', namespace: 'prod' } });
    assert.deepEqual(t.rows.map((r) => [r.time, r.object, r.estimated]), [[iso(0), 'Pod/web-1', false], [iso(50), 'Pod/web-1', false], [iso(70), 'Pod/web-1', false]]);
    assert.equal(t.summary.history, 'occurrences');
    assert.ok(read >= 4);
    await store.close();
  });

  it('counts reasons from the archive\'s history as the timeline\'s summary does', async () => {
    const store = new MemoryEventStore();
    await store.ready();
    const writes: [string, string, string, string, [number, number][]][] = [
      ['crash', 'prod', 'web-1', 'BackOff', [[1, 100], [4, 200], [9, 400]]],
      ['pull', 'prod', 'web-2', 'Pulled', [[1, 150]]],
      ['sched', 'dev', 'api-1', 'FailedScheduling', [[1, 50], [3, 300], [6, 900]]],
      ['late', 'dev', 'api-2', 'BackOff', [[1, 1000]]],
    ];
    for (const [name, namespace, object, reason, history] of writes) {
      const [first, ...rest] = history;
      const type = reason === 'Pulled' ? 'Normal' : 'Warning';
      await store.create(testEvent({ name, namespace, object, reason, type, first: first![1] }), { occurrence: {} });
      for (const [count, at] of rest) {
        await store.guaranteedUpdate(namespace, name, (cur) => ({ ...cur!, count, lastTimestamp: iso(at) }), { occurrence: {} });
      }
    }
    const source = storeTimelineSource(store);
    const window = { since: Date.parse(iso(120)), until: Date.parse(iso(901)) };
    const counted = await countReasons({ source, ...window });
    assert.deepEqual(counted, [
      { reason: 'BackOff', type: 'Warning', count: 8 },
      { reason: 'FailedScheduling', type: 'Warning', count: 5 },
      { reason: 'Pulled', type: 'Normal', count: 1 },
    ]);
    assert.deepEqual(counted, (await collectTimeline({ source, ...window })).summary.reasons);
    const built: TimelineSource = { listEvents: (q) => source.listEvents(q), listOccurrences: (q) => source.listOccurrences(q) };
    assert.deepEqual(await countReasons({ source: built, ...window }), counted, 'a source that cannot count builds the timeline');
    assert.deepEqual(await countReasons({ source, ...window, namespace: 'dev', types: ['warning'] }), [{ reason: 'FailedScheduling', type: 'Warning', count: 5 }]);
    await store.close();
  });

  it('reads only the history that happened in a bounded window, with the same rows as a read to the end', async () => {
    const store = new MemoryEventStore();
    await store.ready();
    // Each event repeats every 100 s from its first time; the windows below cut through some of them.
    for (const [name, first, repeats] of [['a', 0, 4], ['b', 250, 3], ['c', 900, 2], ['d', 1500, 5]] as const) {
      await store.create(testEvent({ name, namespace: 'prod', object: 'web-1', reason: 'BackOff', type: 'Warning', first }), { occurrence: {} });
      for (let i = 1; i < repeats; i++) {
        await store.guaranteedUpdate('prod', name, (cur) => ({ ...cur!, count: i + 1, lastTimestamp: iso(first + i * 100) }), { occurrence: {} });
      }
    }
    const source = storeTimelineSource(store);
    const unbounded: typeof source = { ...source, listOccurrences: (q) => source.listOccurrences({ ...q, until: undefined }) };
    // And with every event of the object read, whatever the window.
    const everyEvent: typeof source = { ...source, listEvents: (q) => source.listEvents({ ...q, inWindowOnly: false }) };
    const root = { kind: 'Pod', name: 'web-1', namespace: 'prod' };
    for (const [since, until] of [[0, 2000], [120, 330], [260, 1000], [1000, 1400], [1100, 1400], [1550, 1650]] as const) {
      const w = { since: Date.parse(iso(since)), until: Date.parse(iso(until)) };
      const got = await collectTimeline({ source, for: root, ...w });
      assert.deepEqual(got, await collectTimeline({ source: unbounded, for: root, ...w }), `window ${since}..${until}`);
      assert.deepEqual(got, await collectTimeline({ source: everyEvent, for: root, ...w }), `window ${since}..${until}, every event read`);
    }
    let read = 0;
    const counting = storeTimelineSource(store, { onProgress: (n) => (read = n) });
    await collectTimeline({ source: counting, for: root, since: Date.parse(iso(1100)), until: Date.parse(iso(1400)) });
    assert.equal(read, 0, 'a window nothing happened in reads neither events nor history');
    const names: string[] = [];
    const listing: typeof source = { ...source, listEvents: async (q) => (await source.listEvents(q)).map((e) => (names.push(e.metadata.name!), e)) };
    await collectTimeline({ source: listing, for: root, since: Date.parse(iso(260)), until: Date.parse(iso(1000)) });
    assert.deepEqual(names, ['a', 'b', 'c'], 'a window reads the events that happened in it: d happened after it');
    await store.close();
  });

  it('reads the clusters asked for: their events by label, their history by the cluster stamped on it, each row naming its cluster', async () => {
    const store = new MemoryEventStore();
    await store.ready();
    const labelled = (e: CoreEvent, cluster: string): CoreEvent => ({ ...e, metadata: { ...e.metadata, labels: { [CLUSTER_LABEL]: cluster } } });
    // The same pod name in two clusters, and a local write: three events of one namespace.
    const writes: [string, string, number][] = [['prod', 'web-1.prod', 0], ['staging', 'web-1.staging', 10], ['', 'web-1.local', 20]];
    for (const [cluster, name, first] of writes) {
      const e = testEvent({ name, namespace: 'shop', object: 'web-1', reason: 'BackOff', type: 'Warning', first });
      const stamp = cluster === '' ? {} : { cluster };
      await store.create(cluster === '' ? e : labelled(e, cluster), { occurrence: stamp });
      await store.guaranteedUpdate('shop', name, (cur) => ({ ...cur!, count: 2, lastTimestamp: iso(first + 100) }), { occurrence: stamp });
    }
    const window = { since: Date.parse(iso(0)), until: Date.parse(iso(1000)) };
    const rowsOf = async (clusters?: string[]): Promise<[string | undefined, string][]> => {
      const t = await collectTimeline({ source: storeTimelineSource(store, { clusters }), namespace: 'shop', ...window });
      if (t.rows.length > 0) assert.equal(t.summary.history, 'occurrences');
      return t.rows.map((r) => [r.cluster, r.time]);
    };
    assert.deepEqual(await rowsOf(['prod']), [['prod', iso(0)], ['prod', iso(100)]]);
    assert.deepEqual(await rowsOf(['staging', 'prod']), [['prod', iso(0)], ['staging', iso(10)], ['prod', iso(100)], ['staging', iso(110)]]);
    assert.deepEqual(await rowsOf(['nowhere']), []);
    const all = await rowsOf();
    assert.equal(all.length, 6);
    const local = (await collectTimeline({ source: storeTimelineSource(store), for: { kind: 'Pod', name: 'web-1', namespace: 'shop' }, ...window })).rows.filter((r) => r.time === iso(20));
    assert.equal(local.length, 1);
    assert.ok(!('cluster' in local[0]!), 'a row of a local write has no cluster field at all');

    const history = async (clusters: string[]): Promise<string[]> => ((await storeTimelineSource(store, { clusters }).listOccurrences({ namespace: 'shop' })) ?? []).map((o) => o.event.name);
    assert.deepEqual(await history(['staging']), ['web-1.staging', 'web-1.staging'], "another cluster's history is not read");
    assert.deepEqual((await history(['prod', 'staging'])).sort(), ['web-1.prod', 'web-1.prod', 'web-1.staging', 'web-1.staging']);

    const source = storeTimelineSource(store, { clusters: ['prod'] });
    assert.deepEqual(await countReasons({ source, ...window }), [{ reason: 'BackOff', type: 'Warning', count: 2 }], "the store's counts span every cluster: some clusters' are built");
    await store.close();
  });
});
