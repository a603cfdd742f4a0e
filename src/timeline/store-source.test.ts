import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryEventStore } from '../storage/memory/index.js';
import { collectTimeline } from './timeline-source.js';
import { storeTimelineSource } from './store-source.js';
import { iso, testEvent } from './test-events.js';

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
});
