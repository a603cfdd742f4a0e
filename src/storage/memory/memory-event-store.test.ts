import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CoreEvent } from '../../api/index.js';
import { DEFAULT_MAX_COUNT_REMAINING } from '../shared/index.js';
import { runArchiveStoreConformance, runEventStoreConformance, runSearchConformance } from '../testing/index.js';
import { MemoryEventStore } from './index.js';

runEventStoreConformance('memory', {
  create: (env) => Promise.resolve(new MemoryEventStore(env.options)),
  destroy: (store) => store.close(),
});

runArchiveStoreConformance('memory', {
  create: (env) => Promise.resolve(new MemoryEventStore(env.options)),
  destroy: (store) => store.close(),
});

runSearchConformance('memory', {
  create: (env) => Promise.resolve(new MemoryEventStore(env.options)),
  destroy: (store) => store.close(),
});

void describe('MemoryEventStore lists', () => {
  const event = (i: number): CoreEvent => ({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `e-${String(i).padStart(6, '0')}`, namespace: 'default' },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'web' },
    reason: 'Pulled',
    message: `m ${i}`,
  });

  void it('counts what a page leaves up to DEFAULT_MAX_COUNT_REMAINING, and leaves the count out beyond it', async () => {
    const store = new MemoryEventStore();
    try {
      const total = DEFAULT_MAX_COUNT_REMAINING + 600;
      for (let i = 0; i < total; i++) await store.create(event(i));
      const first = await store.list({ limit: 500, countRemaining: true });
      assert.equal(first.items.length, 500);
      assert.equal(first.remainingItemCount, undefined);
      assert.equal(first.lastKey, 'default/e-000499');
      const second = await store.list({ limit: 500, countRemaining: true, startKey: first.lastKey });
      assert.equal(second.items[0]!.metadata.name, 'e-000500');
      assert.equal(second.remainingItemCount, total - 1000);
      let seen = 0;
      let startKey: string | undefined;
      do {
        const page = await store.list({ limit: 500, ...(startKey !== undefined ? { startKey } : {}) });
        seen += page.items.length;
        startKey = page.lastKey;
      } while (startKey !== undefined);
      assert.equal(seen, total);
    } finally {
      await store.close();
    }
  });
});
