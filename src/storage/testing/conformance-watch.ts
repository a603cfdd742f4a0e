/** The EventStore conformance suite's watches: history then live changes, filters, and slow readers. */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { brief, it, rejectsWith, rvOf, sampleEvent, storeCases, take } from './conformance-support.js';
import type { ConformanceSetup } from './conformance-support.js';

/** conformanceWatch registers the cases of `watch`: where it starts, history with no gap or repeat at the handover, filtered views, expired and too-slow watchers. */
export function conformanceWatch(setup: ConformanceSetup): void {
  const { withStore } = storeCases(setup);
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
}
