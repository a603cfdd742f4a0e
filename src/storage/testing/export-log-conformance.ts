import assert from 'node:assert/strict';
import { describe, it as nodeIt } from 'node:test';
import type { ArchiveStore } from '../archive-store.js';
import { isStorageError } from '../errors.js';
import type { ExportChange, ExportLog } from '../export-log.js';
import { sampleEvent } from './conformance.js';

function it(name: string, fn: () => Promise<void>): void {
  void nodeIt(name, { timeout: 60_000 }, fn);
}

/** ExportLogArchive is one fresh archive of a backend under test, with the ways to read and write it. */
export interface ExportLogArchive {
  store: ArchiveStore;
  /** openLog opens an export log over the archive (a second call: another exporter process). */
  openLog: (now: () => number) => Promise<ExportLog>;
  /** replica opens another store writing the same archive, for backends that several replicas write. */
  replica?: () => Promise<ArchiveStore>;
  /** destroy closes the stores and removes the archive. */
  destroy: () => Promise<void>;
}

/** ExportLogSetup is how one backend takes part in the export log suite. */
export interface ExportLogSetup {
  create(): Promise<ExportLogArchive>;
}

function summary(c: ExportChange): string {
  return `${c.occurrence.event.namespace}/${c.occurrence.event.name} ${c.occurrence.countBefore}->${c.occurrence.countAfter}`;
}

/** readAll reads the whole log after `after` in pages of `page`. */
async function readAll(log: ExportLog, after: number, page: number): Promise<ExportChange[]> {
  const out: ExportChange[] = [];
  for (;;) {
    const changes = await log.read(out.at(-1)?.id ?? after, page);
    out.push(...changes);
    if (changes.length < page) return out;
  }
}

/**
 * runExportLogConformance registers the behaviour every ExportLog must have:
 * the archive's changes in id order from a position, each with its event; each
 * sink's position, state and dead letters, committed together and kept for the
 * next exporter; and, where several replicas write one archive, no change
 * passed over while another replica's write commits.
 */
export function runExportLogConformance(name: string, setup: ExportLogSetup): void {
  const withArchive = (fn: (a: ExportLogArchive) => Promise<void>) => async (): Promise<void> => {
    const a = await setup.create();
    try {
      await fn(a);
    } finally {
      await a.destroy();
    }
  };

  void describe(`ExportLog conformance: ${name}`, () => {
    it(
      'reads each recorded change once, in id order after a position, with the event version it produced',
      withArchive(async ({ store, openLog }) => {
        const log = await openLog(Date.now);
        try {
          assert.equal(await log.head(), 0);
          assert.deepEqual(await log.read(0, 10), []);
          const stamp = { occurrence: {} };
          await store.create(sampleEvent('ns', 'a', { count: 1 }), stamp);
          await store.guaranteedUpdate('ns', 'a', (cur) => ({ ...cur!, count: 2, message: 'again' }), stamp);
          // Neither a write without an occurrence nor a metadata-only change is a change of the log.
          await store.create(sampleEvent('ns', 'quiet'));
          await store.guaranteedUpdate('ns', 'a', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { team: 'x' } } }), stamp);
          await store.create(sampleEvent('other', 'b'), stamp);
          const batch = ['c', 'd'].map((n) => ({
            namespace: 'ns',
            name: n,
            decide: () => ({ action: 'write' as const, object: sampleEvent('ns', n, { count: 3 }), occurrence: { countBefore: 0, countAfter: 3 } }),
          }));
          await store.applyArchiveBatch({ writes: batch, stamp: { cluster: 'east' } });

          const all = await log.read(0, 100);
          assert.deepEqual(all.map(summary), ['ns/a 0->1', 'ns/a 1->2', 'other/b 0->1', 'ns/c 0->3', 'ns/d 0->3']);
          for (let i = 1; i < all.length; i++) assert.ok(all[i]!.id > all[i - 1]!.id, 'ids increase');
          for (const c of all) {
            assert.equal(c.event?.metadata.resourceVersion, String(c.id), 'the event is the version the change produced');
            assert.equal(c.occurrence.event.resourceVersion, String(c.id));
            assert.ok(c.observedMicros > 0);
          }
          assert.equal(all[1]!.event?.message, 'again');
          assert.equal(all[1]!.event?.count, 2);
          assert.equal(all[0]!.event?.count, 1, 'an earlier change keeps its own version, not the current one');
          assert.equal(all[3]!.occurrence.cluster, 'east');
          assert.equal(all[2]!.occurrence.regarding.name, 'pod-b');

          assert.deepEqual((await log.read(all[0]!.id, 2)).map((c) => c.id), [all[1]!.id, all[2]!.id]);
          assert.deepEqual(await readAll(log, 0, 2), all, 'paging from each last id reads the same log');
          assert.equal(await log.head(), all[4]!.id);
          assert.deepEqual(await log.read(await log.head(), 10), []);
          assert.equal(await log.pending(0, 100), 5);
          assert.equal(await log.pending(0, 3), 3, 'the count stops at its cap');
          assert.equal(await log.pending(all[2]!.id, 100), 2);
          assert.equal(await log.pending(all[4]!.id, 100), 0);
        } finally {
          await log.close();
        }
      }),
    );

    it(
      "commits a sink's position, state and dead letters together, and keeps them for the next exporter",
      withArchive(async ({ store, openLog }) => {
        let t = 1_700_000_000_000;
        const log = await openLog(() => t);
        try {
          await store.create(sampleEvent('ns', 'a'), { occurrence: {} });
          assert.equal(await log.getPosition('search'), undefined);
          assert.deepEqual(await log.deadLetters('search', 10), []);
          await log.commit('search', {
            position: 7,
            state: '{"open":1}',
            deadLetters: [
              { sink: 'search', changeId: 5, record: '{"n":5}', error: '400 Bad Request', attempts: 3 },
              { sink: 'search', changeId: 6, record: '{"n":6}', error: '413 Payload Too Large', attempts: 1, at: 42 },
            ],
          });
          assert.deepEqual(await log.getPosition('search'), { position: 7, state: '{"open":1}', updatedAt: t });
          t += 1000;
          await log.commit('search', { position: 9 });
          assert.deepEqual(await log.getPosition('search'), { position: 9, updatedAt: t }, 'a commit without state clears it');
          await log.commit('chat', { position: 3, deadLetters: [{ sink: 'chat', changeId: 2, record: '{}', error: 'invalid_blocks', attempts: 2 }] });
          await log.commit('search', { position: 11, deadLetters: [{ sink: 'search', changeId: 10, record: '{"n":10}', error: '400', attempts: 3 }] });

          const dead = await log.deadLetters('search', 10);
          assert.deepEqual(
            dead.map((d) => [d.changeId, d.record, d.error, d.attempts, d.at]),
            [
              [5, '{"n":5}', '400 Bad Request', 3, t - 1000],
              [6, '{"n":6}', '413 Payload Too Large', 1, 42],
              [10, '{"n":10}', '400', 3, t],
            ],
          );
          assert.ok(dead.every((d) => d.sink === 'search'));
          assert.deepEqual((await log.deadLetters('search', 2)).map((d) => d.changeId), [5, 6], 'oldest first, up to the limit');
          assert.deepEqual((await log.deadLetters('chat', 10)).map((d) => d.changeId), [2]);
        } finally {
          await log.close();
        }
        const next = await openLog(() => t);
        try {
          assert.deepEqual(await next.getPosition('search'), { position: 11, updatedAt: t });
          assert.equal((await next.getPosition('chat'))?.position, 3);
          assert.equal((await next.deadLetters('search', 10)).length, 3);
          assert.equal((await next.read(0, 10)).length, 1);
        } finally {
          await next.close();
        }
      }),
    );

    it(
      'fails every call with Unreachable once closed',
      withArchive(async ({ openLog }) => {
        const log = await openLog(Date.now);
        await log.close();
        for (const call of [log.read(0, 1), log.head(), log.pending(0, 1), log.getPosition('s'), log.commit('s', { position: 1 }), log.deadLetters('s', 1)]) {
          await assert.rejects(call, (e) => isStorageError(e, 'Unreachable'));
        }
        await log.close();
      }),
    );

    it(
      'passes over no change while other writers commit: what a reader has read up to is everything up to there, for good',
      withArchive(async ({ store, openLog, replica }) => {
        if (replica === undefined) return;
        const second = await replica();
        const log = await openLog(Date.now);
        try {
          const WRITERS = 8;
          const ROUNDS = 40;
          let writing = true;
          // Writers of both replicas: creates, then bumps of their own events, many in flight at once on each replica.
          const write = async (s: ArchiveStore, prefix: string, w: number): Promise<void> => {
            for (let r = 0; r < ROUNDS; r++) {
              const name = `${prefix}-${w}-${r % 5}`;
              if (r < 5) await s.create(sampleEvent('ns', name), { occurrence: {} });
              else await s.guaranteedUpdate('ns', name, (cur) => ({ ...cur!, count: (cur!.count ?? 1) + 1 }), { occurrence: {} });
            }
          };
          const writers = Promise.all([
            ...Array.from({ length: WRITERS }, (_, w) => write(store, 'one', w)),
            ...Array.from({ length: WRITERS }, (_, w) => write(second, 'two', w)),
          ]).finally(() => {
            writing = false;
          });
          // The reader moves its position to the last id of each read, as a sink does, while the writers run.
          const seen: number[] = [];
          let position = 0;
          let reads = 0;
          while (writing) {
            const changes = await log.read(position, 7);
            if (changes.length > 0 && writing) reads++;
            for (const c of changes) seen.push(c.id);
            if (changes.length > 0) position = changes.at(-1)!.id;
          }
          await writers;
          seen.push(...(await readAll(log, position, 50)).map((c) => c.id));
          const all = (await readAll(log, 0, 500)).map((c) => c.id);
          assert.equal(all.length, 2 * WRITERS * ROUNDS);
          assert.ok(reads > 1, 'the reader read changes while the writers wrote');
          assert.deepEqual(seen, all, 'every change read exactly once, in id order');
        } finally {
          await log.close();
          await second.close();
        }
      }),
    );
  });
}
