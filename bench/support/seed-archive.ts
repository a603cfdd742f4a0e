/**
 * How the timeline and incidents benches fill the archive they read: the way the mirror fills it, in batches of
 * archive writes, each event archived as new with the occurrence of its whole count, each batch observed a minute
 * after its newest change (a mirror's delay). A SQLite archive is filled under a temporary name and moved into
 * place once complete, so that an interrupted fill is never reused.
 */
import { renameSync, rmSync } from 'node:fs';
import type { CoreEvent } from '../../src/api/index.js';
import { formatMicroTime } from '../../src/api/index.js';
import type { ArchiveStore, ArchiveWrite } from '../../src/storage/index.js';
import { SqliteEventStore } from '../../src/storage/sqlite/index.js';

/** SEED_BATCH is the writes of one archive batch (one transaction), as a mirror catching up writes them. */
export const SEED_BATCH = 5_000;

/** MIRROR_DELAY_MS is how long after a batch's newest change the mirror observes it. */
const MIRROR_DELAY_MS = 60_000;

/** SeedOptions say what a seeded archive holds: `n` events, the i-th of them `makeEvent(i, n)`. */
export interface SeedOptions {
  n: number;
  makeEvent: (i: number, n: number) => CoreEvent;
  /** log receives a line every 50 batches and one at the end (the incidents bench keeps stdout for its result). */
  log: (line: string) => void;
}

/** seedWrites are the archive writes of events new to the archive: each one with the occurrence of its whole count. */
export function seedWrites(events: readonly CoreEvent[]): ArchiveWrite[] {
  return events.map((e) => ({
    namespace: e.metadata.namespace!,
    name: e.metadata.name!,
    decide: (current) => (current === undefined ? { action: 'write', object: e, occurrence: { countBefore: 0, countAfter: e.count ?? 1 } } : { action: 'skip' }),
  }));
}

/** seedArchive fills a store (made ready here, closed when full) with the events of `options`. */
export async function seedArchive(store: ArchiveStore, options: SeedOptions): Promise<void> {
  const { n, makeEvent, log } = options;
  await store.ready();
  const t0 = performance.now();
  for (let i = 0; i < n; i += SEED_BATCH) {
    const events: CoreEvent[] = [];
    for (let j = i; j < Math.min(n, i + SEED_BATCH); j++) events.push(makeEvent(j, n));
    const seen = Math.max(...events.map((e) => Date.parse(e.lastTimestamp!))) + MIRROR_DELAY_MS;
    await store.applyArchiveBatch({ writes: seedWrites(events), stamp: { observedTime: formatMicroTime(seen)! } });
    if ((i / SEED_BATCH) % 50 === 49) log(`  ${(i + SEED_BATCH).toLocaleString('en')} events, ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }
  await store.close();
  log(`filled ${n.toLocaleString('en')} events in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

/** seedSqliteArchive fills a new SQLite archive at `path` (with a page cache of `cacheSizeMiB`: a fill inserts in random key order). */
export async function seedSqliteArchive(path: string, options: SeedOptions & { cacheSizeMiB: number }): Promise<void> {
  const partial = `${path}.partial`;
  for (const suffix of ['', '-wal', '-shm']) rmSync(partial + suffix, { force: true });
  await seedArchive(new SqliteEventStore({ path: partial, cacheSizeMiB: options.cacheSizeMiB }), options);
  for (const suffix of ['-wal', '-shm']) rmSync(partial + suffix, { force: true });
  renameSync(partial, path);
}
