/**
 * A store's writes: creates, updates and deletes as compare-and-swap
 * transactions on a key's revision, each a put or delete that etcd's watches
 * deliver; a TTL is a lease shared with other writes (see LeaseManager).
 */
import type { CoreEvent } from '../../api/index.js';
import type { Preconditions, TryUpdate, UpdateOptions, UpdateResult, WriteOptions } from '../event-store.js';
import { StorageError } from '../errors.js';
import { checkPreconditions, decodeEvent, encodeEvent, eventKey, keyOfEvent, sameContent } from '../shared/index.js';
import { CallerError } from './connection.js';
import type { EtcdConnection } from './connection.js';

/** EtcdWrites writes a store's events over its connection. */
export class EtcdWrites {
  constructor(private readonly c: EtcdConnection) {}

  create(event: CoreEvent, options: WriteOptions = {}): Promise<CoreEvent> {
    const c = this.c;
    return c.op(async (kv) => {
      const key = keyOfEvent(event);
      const k = c.etcdKey(key);
      const json = encodeEvent(event);
      const value = Buffer.from(json);
      const r = await c.withLease(options.ttlSeconds, (lease) =>
        kv.txn({
          compare: [{ key: k, target: 'Version', result: 'Equal', version: 0 }],
          success: [{ request_put: lease === undefined ? { key: k, value } : { key: k, value, lease } }],
          failure: [],
        }),
      );
      const rv = c.observe(r.header.revision);
      if (!r.succeeded) throw new StorageError('KeyExists', `${key} already exists`, { key, currentResourceVersion: rv });
      return decodeEvent(json, rv);
    });
  }

  guaranteedUpdate(namespace: string, name: string, tryUpdate: TryUpdate, options: UpdateOptions = {}): Promise<UpdateResult> {
    const c = this.c;
    return c.op(async (kv) => {
      const key = eventKey(namespace, name);
      const k = c.etcdKey(key);
      let cur = await c.read(kv, key);
      for (;;) {
        if (cur.kv === undefined && options.allowCreate !== true) {
          throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: cur.rv });
        }
        const current = cur.kv === undefined ? undefined : c.decode(cur.kv);
        checkPreconditions(key, current, options.preconditions, cur.rv);
        let next: CoreEvent;
        try {
          next = await tryUpdate(current);
        } catch (e) {
          throw new CallerError(e);
        }
        if (keyOfEvent(next) !== key) throw new StorageError('InvalidObject', `the updated object is not ${key}`, { key });
        const json = encodeEvent(next);
        const modRevision = cur.kv === undefined ? 0 : Number(cur.kv.mod_revision);
        const unchanged = cur.kv !== undefined && sameContent(json, cur.kv.value.toString());
        const value = Buffer.from(json);
        // Compare-and-swap on the revision read before tryUpdate; a lost race retries on the state etcd hands back.
        const r = await c.withLease(unchanged ? undefined : options.ttlSeconds, (lease) =>
          kv.txn({
            compare: [{ key: k, target: 'Mod', result: 'Equal', mod_revision: modRevision }],
            success: unchanged ? [] : [{ request_put: lease === undefined ? { key: k, value } : { key: k, value, lease } }],
            failure: [{ request_range: { key: k } }],
          }),
        );
        const rv = c.observe(r.header.revision);
        if (!r.succeeded) {
          cur = { kv: r.responses[0]?.response_range?.kvs[0], rv };
          continue;
        }
        // An unchanged object writes nothing: no revision, no TTL renewal.
        if (unchanged) return { object: c.decode(cur.kv!), created: false };
        return { object: decodeEvent(json, rv), created: cur.kv === undefined };
      }
    });
  }

  delete(namespace: string, name: string, options: { preconditions?: Preconditions } = {}): Promise<CoreEvent> {
    const c = this.c;
    return c.op(async (kv) => {
      const key = eventKey(namespace, name);
      const k = c.etcdKey(key);
      let cur = await c.read(kv, key);
      for (;;) {
        if (cur.kv === undefined) throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: cur.rv });
        checkPreconditions(key, c.decode(cur.kv), options.preconditions, cur.rv);
        const r = await kv.txn({
          compare: [{ key: k, target: 'Mod', result: 'Equal', mod_revision: Number(cur.kv.mod_revision) }],
          success: [{ request_delete_range: { key: k } }],
          failure: [{ request_range: { key: k } }],
        });
        const rv = c.observe(r.header.revision);
        if (r.succeeded) return decodeEvent(cur.kv.value.toString(), rv);
        cur = { kv: r.responses[0]?.response_range?.kvs[0], rv };
      }
    });
  }
}
