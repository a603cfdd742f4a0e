/**
 * A memory store's write path: creates, compare-and-swap updates, deletes and
 * archive batches, each appending versions through `MemoryVersions.write` and
 * the occurrences it describes to the archive.
 */
import { occurrenceChange } from '../../api/index.js';
import type { CoreEvent, OccurrenceStamp } from '../../api/index.js';
import type { ArchiveBatch, ArchiveBatchResult } from '../archive-store.js';
import type { Preconditions, TryUpdate, UpdateOptions, UpdateResult, WriteOptions } from '../event-store.js';
import { StorageError } from '../errors.js';
import { checkPreconditions, decodeEvent, encodeEvent, eventKey, keyOfEvent, resolveArchiveWrite, sameContent } from '../shared/index.js';
import type { MemoryArchive } from './archive-tables.js';
import type { MemoryVersions } from './versions.js';

/** MemoryWrites writes a memory store's events and their occurrences. */
export class MemoryWrites {
  constructor(
    private readonly v: MemoryVersions,
    private readonly archive: MemoryArchive,
  ) {}

  create(event: CoreEvent, options: WriteOptions = {}): Promise<CoreEvent> {
    const v = this.v;
    return v.run(() => {
      const key = keyOfEvent(event);
      if (v.live(key) !== undefined) throw new StorageError('KeyExists', `${key} already exists`, { key, currentResourceVersion: v.rv });
      const json = encodeEvent(event);
      const rv = v.write(key, 'ADDED', json, undefined, v.expiry(options.ttlSeconds));
      const stored = decodeEvent(json, rv);
      this.recordLocal(undefined, stored, options.occurrence);
      return stored;
    });
  }

  async guaranteedUpdate(namespace: string, name: string, tryUpdate: TryUpdate, options: UpdateOptions = {}): Promise<UpdateResult> {
    const v = this.v;
    const key = eventKey(namespace, name);
    for (;;) {
      v.checkOpen();
      const cur = v.live(key);
      if (cur === undefined && options.allowCreate !== true) {
        throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: v.rv });
      }
      const current = cur === undefined ? undefined : decodeEvent(cur.json, cur.rv);
      checkPreconditions(key, current, options.preconditions, v.rv);
      const next = await tryUpdate(current);
      v.checkOpen();
      // Someone else wrote in the meantime: start again from their version, as etcd's compare-and-swap does.
      if (v.live(key)?.rv !== cur?.rv) continue;
      if (keyOfEvent(next) !== key) throw new StorageError('InvalidObject', `the updated object is not ${key}`, { key });
      const json = encodeEvent(next);
      if (cur !== undefined && sameContent(json, cur.json)) return { object: decodeEvent(cur.json, cur.rv), created: false };
      const rv = v.write(key, cur === undefined ? 'ADDED' : 'MODIFIED', json, cur, v.expiry(options.ttlSeconds));
      const stored = decodeEvent(json, rv);
      this.recordLocal(current, stored, options.occurrence);
      return { object: stored, created: cur === undefined };
    }
  }

  delete(namespace: string, name: string, options: { preconditions?: Preconditions } = {}): Promise<CoreEvent> {
    const v = this.v;
    return v.run(() => {
      const key = eventKey(namespace, name);
      const cur = v.live(key);
      if (cur === undefined) throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: v.rv });
      checkPreconditions(key, decodeEvent(cur.json, cur.rv), options.preconditions, v.rv);
      const rv = v.write(key, 'DELETED', cur.json, cur, undefined);
      return decodeEvent(cur.json, rv);
    });
  }

  applyArchiveBatch(batch: ArchiveBatch): Promise<ArchiveBatchResult> {
    const v = this.v;
    return v.run(() => {
      // Decide every write against an overlay before changing anything, so a failing decide leaves the batch unwritten.
      const overlay = new Map<string, CoreEvent>();
      const planned: { key: string; object: CoreEvent; occurrence: { countBefore: number; countAfter: number } | undefined }[] = [];
      let skipped = 0;
      for (const w of batch.writes) {
        const r = resolveArchiveWrite(w, (key) => {
          const o = overlay.get(key);
          if (o !== undefined) return o;
          const live = v.live(key);
          return live === undefined ? undefined : decodeEvent(live.json, live.rv);
        });
        if (r.decision.action === 'skip') {
          skipped++;
          continue;
        }
        overlay.set(r.key, r.decision.object);
        planned.push({ key: r.key, object: r.decision.object, occurrence: r.decision.occurrence });
      }
      let events = 0;
      let occurrences = 0;
      for (const p of planned) {
        const written = this.commitArchived(p.key, p.object, p.occurrence, batch.stamp);
        if (written > 0) events++;
        if (written > 1) occurrences++;
      }
      if (batch.checkpoint !== undefined) this.archive.setCheckpoint(batch.checkpoint);
      return { events, occurrences, skipped: skipped + planned.length - events };
    });
  }

  /** commitArchived writes one archive write and its occurrence: 0 when unchanged, 1 for the event, 2 with an occurrence. */
  private commitArchived(key: string, object: CoreEvent, occurrence: { countBefore: number; countAfter: number } | undefined, stamp: OccurrenceStamp): number {
    const json = encodeEvent(object);
    const prev = this.v.live(key);
    if (prev !== undefined && sameContent(json, prev.json)) return 0;
    const rv = this.v.write(key, prev === undefined ? 'ADDED' : 'MODIFIED', json, prev, undefined);
    if (occurrence === undefined) return 1;
    this.archive.append(decodeEvent(json, rv), occurrence, stamp);
    return 2;
  }

  /** recordLocal appends the occurrence of a local write when asked to and when the write is an observed change. */
  private recordLocal(prev: CoreEvent | undefined, next: CoreEvent, stamp: OccurrenceStamp | undefined): void {
    if (stamp === undefined) return;
    const change = occurrenceChange(prev, next);
    if (change !== undefined) this.archive.append(next, change, stamp);
  }
}
