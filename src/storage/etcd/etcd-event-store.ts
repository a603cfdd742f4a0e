import type { CoreEvent } from '../../api/index.js';
import type {
  EventStore,
  EventWatch,
  ListOptions,
  ListResult,
  Preconditions,
  TryUpdate,
  UpdateOptions,
  UpdateResult,
  WatchOptions,
  WriteOptions,
} from '../event-store.js';
import { StorageError } from '../errors.js';
import { COMPACT_REV_KEY } from './compactor.js';
import { EtcdConnection } from './connection.js';
import { EtcdLists } from './list.js';
import type { EtcdEventStoreOptions } from './options.js';
import { EtcdWatch } from './watch.js';
import { EtcdWrites } from './write.js';

/**
 * EtcdEventStore keeps events in etcd the way kube-apiserver does: one key per
 * event at `<prefix>/events/<namespace>/<name>`, resourceVersion = the etcd
 * revision of the write, compare-and-swap transactions for create, update and
 * delete, lists read at an exact revision, watches served by etcd watches, and
 * TTLs through leases shared between writes (see LeaseManager), so expiry is an
 * etcd delete that every watcher, on every replica, sees as DELETED. Several
 * stores (processes) over one etcd cluster see one history.
 *
 * etcd leases run in real time: `ttlSeconds` is wall-clock seconds whatever
 * `clock` is given (the clock drives the compaction timer only), and expiry
 * needs no sweep, so `expiryIntervalMs` is unused.
 */
export class EtcdEventStore implements EventStore {
  private readonly c: EtcdConnection;
  private readonly lists: EtcdLists;
  private readonly writes: EtcdWrites;

  constructor(options: EtcdEventStoreOptions) {
    this.c = new EtcdConnection(options);
    this.lists = new EtcdLists(this.c);
    this.writes = new EtcdWrites(this.c);
  }

  /** leasesGranted is how many etcd leases this store has asked for. */
  get leasesGranted(): number {
    return this.c.leases.granted;
  }

  create(event: CoreEvent, options: WriteOptions = {}): Promise<CoreEvent> {
    return this.writes.create(event, options);
  }

  get(namespace: string, name: string): Promise<CoreEvent> {
    return this.lists.get(namespace, name);
  }

  list(options: ListOptions): Promise<ListResult> {
    return this.lists.list(options);
  }

  guaranteedUpdate(namespace: string, name: string, tryUpdate: TryUpdate, options: UpdateOptions = {}): Promise<UpdateResult> {
    return this.writes.guaranteedUpdate(namespace, name, tryUpdate, options);
  }

  delete(namespace: string, name: string, options: { preconditions?: Preconditions } = {}): Promise<CoreEvent> {
    return this.writes.delete(namespace, name, options);
  }

  watch(options: WatchOptions): EventWatch {
    const c = this.c;
    const { resourceVersion, ...filter } = options;
    const w = new EtcdWatch(c.source, filter, resourceVersion ?? c.rv, resourceVersion === undefined);
    if (c.closed) w.fail(new StorageError('Unreachable', 'the store is closed'));
    else c.watchers.add(w);
    return w;
  }

  currentResourceVersion(): Promise<number> {
    return this.c.op(async (kv) => {
      const r = await kv.range({ key: Buffer.from(COMPACT_REV_KEY), count_only: true });
      return this.c.observe(r.header.revision);
    });
  }

  oldestResourceVersion(): Promise<number> {
    return this.c.op(() => this.c.compactor.oldest());
  }

  async ready(): Promise<void> {
    await this.currentResourceVersion();
  }

  close(): Promise<void> {
    return this.c.close();
  }
}
