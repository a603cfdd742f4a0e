import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { sampleEvent } from '../testing/index.js';
import { SqliteEventStore } from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'kevents-sqlite-newest-'));
after(() => rmSync(dir, { recursive: true, force: true }));

it('newestVersions reads the current versions newest first, page by page, without replaced or deleted ones', async () => {
  const store = new SqliteEventStore({ path: join(dir, 'events.db') });
  try {
    for (let i = 0; i < 7; i++) await store.create(sampleEvent(`ns-${i % 2}`, `e-${i}`));
    // e-1 is replaced (its first version becomes history) and e-4 deleted (a tombstone): neither version is current.
    await store.guaranteedUpdate('ns-1', 'e-1', (e) => ({ ...e!, count: 2 }));
    await store.delete('ns-0', 'e-4');
    const current = (await store.list({})).items.map((e) => Number(e.metadata.resourceVersion)).sort((a, b) => b - a);
    assert.equal(current.length, 6);
    const first = await store.newestVersions({ limit: 4 });
    const rest = await store.newestVersions({ limit: 4, before: first[first.length - 1]!.resourceVersion });
    assert.deepEqual([...first, ...rest].map((v) => v.resourceVersion), current);
    // Each version decodes to the object a list hands out.
    const listed = await store.list({ namespace: 'ns-1' });
    const updated = listed.items.find((e) => e.metadata.name === 'e-1')!;
    assert.deepEqual(first.find((v) => v.resourceVersion === Number(updated.metadata.resourceVersion))!.object(), updated);
  } finally {
    await store.close();
  }
});
