import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { EventStore } from '../event-store.js';
import { conformanceList } from './conformance-list.js';
import { rejectsWith, rvOf, sampleEvent, storeCases, take, it } from './conformance-support.js';
import type { ConformanceSetup } from './conformance-support.js';
import { conformanceWatch } from './conformance-watch.js';
import { conformanceCreate, conformanceDelete, conformanceGuaranteedUpdate, conformanceResourceVersions, conformanceTtl } from './conformance-write.js';

export { CONFORMANCE_ENV_DEFAULTS, sampleEvent } from './conformance-support.js';
export type { ConformanceEnv, ConformanceSetup } from './conformance-support.js';

/** conformancePersistence registers, for a backend that can `reopen` its data, the cases of data, revisions and history kept across a close. */
export function conformancePersistence(setup: ConformanceSetup): void {
  if (setup.reopen === undefined) return;
  const { open } = storeCases(setup);
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

/**
 * runEventStoreConformance registers the behaviour every EventStore backend must
 * have, as node:test cases: every part of the suite (conformanceCreate,
 * conformanceList, ...), each case on a fresh store built with `setup.create`.
 */
export function runEventStoreConformance(name: string, setup: ConformanceSetup): void {
  void describe(`EventStore conformance: ${name}`, () => {
    conformanceCreate(setup);
    conformanceResourceVersions(setup);
    conformanceList(setup);
    conformanceGuaranteedUpdate(setup);
    conformanceDelete(setup);
    conformanceWatch(setup);
    conformanceTtl(setup);
    conformancePersistence(setup);
  });
}
