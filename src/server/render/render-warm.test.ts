import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CORE_API } from '../../api/index.js';
import type { CoreEvent } from '../../api/index.js';
import type { ListedVersion, VersionList, VersionedReads } from '../../storage/index.js';
import { warmRendered } from './render-warm.js';
import { RenderedVersions } from './rendered-versions.js';

const NOW = Date.UTC(2025, 5, 1, 12, 0, 0);

function event(i: number): CoreEvent {
  const ns = `ns-${i % 3}`;
  return {
    metadata: { name: `web-${i}.17a2`, namespace: ns, uid: `u-${i}`, creationTimestamp: '2025-06-01T11:00:00Z', resourceVersion: String(i + 1) },
    involvedObject: { kind: 'Pod', namespace: ns, name: `web-${i}` },
    reason: 'Pulled',
    message: `Container image "app:${i}" already present on machine`,
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: '2025-06-01T11:00:00Z',
    lastTimestamp: '2025-06-01T11:58:00Z',
    count: 1,
    type: 'Normal',
  };
}

/** KeyedStore is a store's `listVersions` and `newestVersions` over fixed events, counting the objects it decodes. */
class KeyedStore implements VersionedReads {
  decoded = 0;
  pages = 0;

  constructor(private readonly events: CoreEvent[]) {}

  listVersions(): Promise<VersionList> {
    throw new Error('the warm reads newestVersions');
  }

  newestVersions(options: { limit: number; before?: number }): Promise<ListedVersion[]> {
    this.pages++;
    const page = this.newest()
      .filter((v) => options.before === undefined || v.resourceVersion < options.before)
      .slice(0, options.limit)
      .map((v) => ({
        resourceVersion: v.resourceVersion,
        object: () => {
          this.decoded++;
          return v.object();
        },
      }));
    return Promise.resolve(page);
  }

  /** newest is every event, newest first. */
  newest(): ListedVersion[] {
    return this.events
      .map((e) => ({ resourceVersion: Number(e.metadata.resourceVersion), object: () => structuredClone(e) }))
      .sort((a, b) => b.resourceVersion - a.resourceVersion);
  }
}

const table = (rendered: RenderedVersions, items: ListedVersion[]): Buffer =>
  rendered.table(CORE_API, items, { now: NOW, includeObject: 'Metadata', listMeta: { resourceVersion: '1' } });

test('a warm renders every current Table row, page by page, and a listing then renders none', async () => {
  const store = new KeyedStore(Array.from({ length: 600 }, (_, i) => event(i)));
  const rendered = new RenderedVersions(64 * 1024 * 1024);
  const warmed = await warmRendered(store, rendered, { maxMs: 60_000 });
  assert.equal(warmed?.rows, 600);
  assert.equal(warmed.stoppedBy, 'end');
  assert.equal(warmed.bytes, rendered.size);
  assert.equal(store.decoded, 600);
  assert.ok(store.pages > 1, 'read in pages');
  const misses = rendered.misses;
  const warm = table(rendered, store.newest());
  assert.equal(rendered.misses, misses, 'every row was kept');
  // The rows are the ones rendered from the events themselves.
  assert.deepEqual(warm, table(new RenderedVersions(0), store.newest()));
});

test('a warm larger than the cache keeps the newest rows, and stops before it would evict one it rendered', async () => {
  const store = new KeyedStore(Array.from({ length: 3000 }, (_, i) => event(i)));
  const rendered = new RenderedVersions(512 * 1024);
  const warmed = await warmRendered(store, rendered, { maxMs: 60_000 });
  assert.equal(warmed?.stoppedBy, 'budget');
  assert.ok(warmed.rows > 0 && warmed.rows < 3000, `${warmed.rows} rows`);
  assert.ok(rendered.size <= rendered.maxBytes);
  const misses = rendered.misses;
  table(rendered, store.newest().slice(0, warmed.rows));
  assert.equal(rendered.misses, misses, 'the newest rows are kept, none the warm rendered was evicted');
  table(rendered, store.newest().slice(warmed.rows, warmed.rows + 1));
  assert.equal(rendered.misses, misses + 1, 'older rows were not rendered');
});

test('a warm stops at its time bound', async () => {
  const store = new KeyedStore(Array.from({ length: 3000 }, (_, i) => event(i)));
  const rendered = new RenderedVersions(64 * 1024 * 1024);
  // Each reading of the clock is 10 ms after the one before (the start reads 0): a bound of 35 ms allows three pages.
  let t = 0;
  const warmed = await warmRendered(store, rendered, { maxMs: 35, now: () => (t += 10) - 10 });
  assert.equal(warmed?.stoppedBy, 'time');
  assert.equal(store.pages, 3);
  assert.equal(warmed.rows, 750);
});

test('nothing is warmed without time, without a cache, or from a store whose versions are not kept', async () => {
  const store = new KeyedStore([event(1)]);
  assert.equal(await warmRendered(store, new RenderedVersions(1024 * 1024), { maxMs: 0 }), undefined);
  assert.equal(await warmRendered(store, new RenderedVersions(0), { maxMs: 1000 }), undefined);
  assert.equal(await warmRendered({}, new RenderedVersions(1024 * 1024), { maxMs: 1000 }), undefined);
  assert.equal(await warmRendered({ newestVersions: (o: { limit: number }) => store.newestVersions(o) }, new RenderedVersions(1024 * 1024), { maxMs: 1000 }), undefined);
  assert.equal(store.pages, 0);
});

test('an empty store warms nothing and says it reached the end', async () => {
  const warmed = await warmRendered(new KeyedStore([]), new RenderedVersions(1024 * 1024), { maxMs: 1000 });
  assert.deepEqual(warmed && { rows: warmed.rows, stoppedBy: warmed.stoppedBy }, { rows: 0, stoppedBy: 'end' });
});
