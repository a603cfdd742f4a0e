import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CollectingLogger, FakeClock } from '../internal/index.js';
import { MemoryEventStore } from '../storage/memory/index.js';
import { sampleEvent } from '../storage/testing/index.js';
import { DEFAULT_RETENTION_INTERVAL_MS, SIZE_CHECK_MS, SIZE_INTERVAL_MS, startRetention } from './retention.js';

async function fill(store: MemoryEventStore, from: number, n: number): Promise<void> {
  for (let i = from; i < from + n; i++) {
    const object = sampleEvent('ns', `e${i}`, { message: `m${i}`.padEnd(2_000, '.') });
    await store.applyArchiveBatch({ writes: [{ namespace: 'ns', name: `e${i}`, decide: () => ({ action: 'write', object }) }], stamp: {} });
  }
}

void describe('startRetention', () => {
  void it('checks a size cap every few seconds, however long the interval, cuts as soon as it is passed, and logs what it removed once a minute', async () => {
    const clock = new FakeClock();
    const logger = new CollectingLogger();
    const store = new MemoryEventStore({ clock });
    await fill(store, 0, 10);
    const cap = (await store.archiveBytes()) + 1;
    const retention = startRetention(store, { maxBytes: cap, intervalMs: DEFAULT_RETENTION_INTERVAL_MS, clock, logger });
    try {
      await clock.advance(0);
      for (let round = 1; round <= 3; round++) {
        await fill(store, round * 10, 10);
        assert.ok((await store.archiveBytes()) > cap);
        await clock.advance(SIZE_INTERVAL_MS);
        assert.ok((await store.archiveBytes()) <= cap, `round ${round}: back under the cap within ${SIZE_INTERVAL_MS} ms`);
      }
      // Between two runs the size alone is read every SIZE_CHECK_MS: a store past its cap is cut at the next check.
      await fill(store, 40, 10);
      await clock.advance(SIZE_CHECK_MS);
      assert.ok((await store.archiveBytes()) <= cap, `back under the cap within ${SIZE_CHECK_MS} ms`);
      assert.equal(logger.entries.filter((e) => e.msg === 'retention removed old archive data').length, 1);
      const names = (await store.list({})).items.map((e) => e.metadata.name);
      assert.ok(names.includes('e49') && !names.includes('e0'), 'the oldest went, the newest stayed');
    } finally {
      retention.stop();
      await store.close();
    }
  });
});
