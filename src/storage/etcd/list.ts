/**
 * A store's reads: one key, and pages of keys read at one revision, filled
 * past what a filter drops in growing ranges, as upstream's etcd3 store does.
 */
import type { CoreEvent } from '../../api/index.js';
import type { ListOptions, ListResult } from '../event-store.js';
import { StorageError } from '../errors.js';
import { eventKey, matchesFilter, namespaceRange } from '../shared/index.js';
import { prefixEnd } from './connection.js';
import type { EtcdConnection } from './connection.js';

/** MAX_LIST_BATCH caps the keys read per range while a filtered list fills its page, as upstream caps its etcd pages. */
const MAX_LIST_BATCH = 10_000;

/** EtcdLists reads a store's events over its connection. */
export class EtcdLists {
  constructor(private readonly c: EtcdConnection) {}

  get(namespace: string, name: string): Promise<CoreEvent> {
    const c = this.c;
    return c.op(async (kv) => {
      const key = eventKey(namespace, name);
      const cur = await c.read(kv, key);
      if (cur.kv === undefined) throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: cur.rv });
      return c.decode(cur.kv);
    });
  }

  list(options: ListOptions): Promise<ListResult> {
    const c = this.c;
    return c.op(async (kv) => {
      const want = options.resourceVersion !== undefined && options.resourceVersion > 0 ? options.resourceVersion : undefined;
      const exact = want !== undefined && options.match === 'Exact';
      const { low, high } = options.namespace === undefined ? { low: '', high: undefined } : namespaceRange(options.namespace);
      const end = high === undefined ? prefixEnd(c.prefix) : c.etcdKey(high);
      // Keys strictly after startKey: the NUL byte is the least key above it.
      let from = options.startKey !== undefined && options.startKey > low ? c.etcdKey(`${options.startKey}\0`) : c.etcdKey(low);
      const limit = options.limit !== undefined && options.limit > 0 ? options.limit : Infinity;
      let batch = Math.min(limit, MAX_LIST_BATCH);
      let at = exact ? want : undefined;
      const items: CoreEvent[] = [];
      let lastKey: Buffer | undefined;
      let more = false;
      for (;;) {
        const r = await c.range(kv, { key: from, range_end: end, limit: batch, ...(at !== undefined ? { revision: at } : {}) }, want);
        if (at === undefined) {
          at = Number(r.header.revision);
          if (want !== undefined && want > at) throw c.tooLarge(want, at);
        }
        let i = 0;
        for (; i < r.kvs.length && items.length < limit; i++) {
          const kv = r.kvs[i]!;
          lastKey = kv.key;
          const event = c.decode(kv);
          if (matchesFilter(event, options)) items.push(event);
        }
        if (i < r.kvs.length || (items.length >= limit && r.more)) {
          more = true;
          break;
        }
        if (!r.more) break;
        // A filter dropped keys: read further, in larger steps, at the same revision, as upstream does.
        from = Buffer.concat([lastKey!, Buffer.from([0])]);
        batch = Math.min(batch * 2, MAX_LIST_BATCH);
      }
      const result: ListResult = { items, resourceVersion: at };
      if (more && lastKey !== undefined) {
        result.lastKey = lastKey.subarray(c.prefix.length).toString();
        if (options.countRemaining === true) {
          const r = await c.range(kv, { key: Buffer.concat([lastKey, Buffer.from([0])]), range_end: end, revision: at, count_only: true }, want);
          result.remainingItemCount = Number(r.count);
        }
      }
      return result;
    });
  }
}
