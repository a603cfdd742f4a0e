/**
 * A store's write path: creates, compare-and-swap updates, deletes and archive
 * batches, each sent through the connection's write pipeline to the write
 * function (`write-batch.ts`), with the occurrence it describes.
 */
import { nowMicroTime, occurrenceChange } from '../../api/index.js';
import type { CoreEvent, OccurrenceStamp } from '../../api/index.js';
import type { ArchiveBatch, ArchiveBatchResult } from '../archive-store.js';
import type { Preconditions, TryUpdate, UpdateOptions, UpdateResult, WriteOptions } from '../event-store.js';
import { StorageError } from '../errors.js';
import { checkPreconditions, decodeEvent, encodeEvent, eventKey, keyOfEvent, sameContent, withRevision } from '../shared/index.js';
import { observedStamp, occurrenceRow } from './archive-tables.js';
import type { OccurrenceRow } from './archive-tables.js';
import type { PostgresConnection } from './connection.js';
import { searchColumns } from './search-index-writer.js';
import { fieldsOf } from './write-batch.js';
import type { Outcome } from './write-batch.js';

function rvOf(out: Outcome): number {
  if (!('rv' in out)) throw new StorageError('Internal', 'a write was neither written nor refused');
  return out.rv;
}

/** PostgresWrites writes a store's events and their occurrences over its connection. */
export class PostgresWrites {
  constructor(private readonly c: PostgresConnection) {}

  async create(event: CoreEvent, options: WriteOptions = {}): Promise<CoreEvent> {
    const key = keyOfEvent(event);
    const json = encodeEvent(event);
    const occurrence = options.occurrence === undefined ? undefined : this.occurrence(event, occurrenceChange(undefined, event), options.occurrence);
    const out = await this.c.write({ kind: 'create', key, json, message: event.message, fields: fieldsOf(event), search: searchColumns(event), expiresAt: this.c.expiry(options.ttlSeconds), occurrence });
    return withRevision(event, rvOf(out));
  }

  async guaranteedUpdate(namespace: string, name: string, tryUpdate: TryUpdate, options: UpdateOptions = {}): Promise<UpdateResult> {
    const c = this.c;
    const key = eventKey(namespace, name);
    for (;;) {
      const cur = await c.current(key);
      const revision = c.state?.feed.delivered ?? 0;
      if (cur === undefined && options.allowCreate !== true) throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: revision });
      const current = cur === undefined ? undefined : decodeEvent(cur.object, cur.rv);
      checkPreconditions(key, current, options.preconditions, revision);
      const next = await tryUpdate(current);
      if (keyOfEvent(next) !== key) throw new StorageError('InvalidObject', `the updated object is not ${key}`, { key });
      const json = encodeEvent(next);
      if (cur !== undefined && sameContent(json, cur.object)) {
        if ((await c.current(key))?.rv === cur.rv) return { object: decodeEvent(cur.object, cur.rv), created: false };
        continue;
      }
      // Compare-and-swap on the revision read before tryUpdate, as etcd does; a lost race reads again and retries.
      const occurrence = options.occurrence === undefined ? undefined : this.occurrence(next, occurrenceChange(current, next), options.occurrence);
      const out = await c.write({ kind: 'put', key, expect: cur?.rv ?? 0, json, message: next.message, fields: fieldsOf(next), search: searchColumns(next), expiresAt: c.expiry(options.ttlSeconds), occurrence });
      if ('conflict' in out) continue;
      return { object: decodeEvent(json, rvOf(out)), created: cur === undefined };
    }
  }

  async delete(namespace: string, name: string, options: { preconditions?: Preconditions } = {}): Promise<CoreEvent> {
    const out = await this.c.write({ kind: 'delete', key: eventKey(namespace, name), preconditions: options.preconditions });
    if (!('rv' in out)) throw new StorageError('Internal', 'a delete was neither written nor refused');
    return decodeEvent(out.json, out.rv);
  }

  async applyArchiveBatch(batch: ArchiveBatch): Promise<ArchiveBatchResult> {
    const stamp = observedStamp(batch.stamp, () => nowMicroTime(this.c.o.clock));
    const out = await this.c.write({ kind: 'archive', writes: batch.writes, stamp, checkpoint: batch.checkpoint });
    if (!('archived' in out)) throw new StorageError('Internal', 'an archive batch was neither written nor refused');
    return out.archived;
  }

  /** occurrence is the stored form of a local write's occurrence, when the write is an observed change. */
  private occurrence(event: CoreEvent, change: { countBefore: number; countAfter: number } | undefined, stamp: OccurrenceStamp): OccurrenceRow | undefined {
    if (change === undefined) return undefined;
    return occurrenceRow(event, change, observedStamp(stamp, () => nowMicroTime(this.c.o.clock)));
  }
}
