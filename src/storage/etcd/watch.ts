import type { CoreEvent } from '../../api/index.js';
import type { EventFilter, EventWatch, StoreWatchEvent } from '../event-store.js';
import { StorageError } from '../errors.js';
import { WatchQueue, decodeEvent, deepFreeze, projectChange, selectsAll } from '../shared/index.js';
import type { EtcdClient, EtcdEvent, EtcdWatchResponse, EtcdWatcher } from './options.js';

/** WatchSource is what an EtcdWatch needs from its store. */
export interface WatchSource {
  client(): Promise<EtcdClient>;
  /** range is the etcd key range watched (the events prefix, or one namespace of it). */
  range(namespace: string | undefined): { start: Buffer; end: Buffer };
  /** prefixLength is the byte length of the key prefix in front of `<namespace>/<name>`. */
  prefixLength: number;
  bufferSize: number;
  /** compactedRv is the oldest revision a watch may start from (fresh, read from etcd). */
  compactedRv(): Promise<number>;
  /** knownRv is the newest revision the store has seen. */
  knownRv(): number;
  observe(revision: string): void;
  /** failure maps a driver error into the storage vocabulary. */
  failure(e: unknown): StorageError;
  /** ended tells the store that a watch is over. */
  ended(w: EtcdWatch): void;
}

/** toStoreEvent turns one etcd change into a store change; a create is a put whose key was born at this revision. */
function toStoreEvent(ev: EtcdEvent, rv: number): StoreWatchEvent {
  const prev = ev.prev_kv ?? undefined;
  const prevObject = prev === undefined ? undefined : decodeEvent(prev.value.toString(), Number(prev.mod_revision));
  if (ev.type === 'Delete') {
    if (prev === undefined) throw new StorageError('Internal', `etcd sent a delete of ${ev.kv.key.toString()} at ${rv} without its previous state`);
    return deepFreeze({ type: 'DELETED', object: decodeEvent(prev.value.toString(), rv), prevObject: prevObject! });
  }
  const object = decodeEvent(ev.kv.value.toString(), rv);
  if (ev.kv.create_revision === ev.kv.mod_revision) return deepFreeze({ type: 'ADDED', object });
  if (prevObject === undefined) throw new StorageError('Internal', `etcd sent an update of ${ev.kv.key.toString()} at ${rv} without its previous state`);
  return deepFreeze({ type: 'MODIFIED', object, prevObject });
}

/** leavingView is the DELETED a filtered watcher sees when an object stops matching: its old state at the new revision. */
function leavingView(e: StoreWatchEvent): StoreWatchEvent {
  const prev = e.prevObject!;
  const left: CoreEvent = deepFreeze({ ...prev, metadata: { ...prev.metadata, resourceVersion: e.object.metadata.resourceVersion } });
  return { type: 'DELETED', object: left, prevObject: prev };
}

/**
 * EtcdWatch is one store watch over one etcd watch (etcd3 multiplexes them on
 * one stream), filtered here. A watch that starts in the past opens its etcd
 * watch when first read and replays history at the reader's pace: when more
 * than `bufferSize` changes wait, it cancels the etcd watch and resumes from the
 * last revision it holds once they are read. When it has caught up (nothing
 * waiting, past the revision the store knew when it opened) it is live, and a
 * reader that then falls more than `bufferSize` changes behind is ended with
 * WatcherTooSlow, as with the other backends. A lost connection is resumed by
 * the driver from the last revision received, so there is no gap and no repeat.
 */
export class EtcdWatch implements EventWatch, AsyncIterator<StoreWatchEvent> {
  private state: 'idle' | 'opening' | 'open' | 'paused' | 'done' = 'idle';
  private mode: 'catchup' | 'live';
  private readonly queue = new WatchQueue();
  private etcd: EtcdWatcher | undefined;
  /** target is the store's revision when the watch (re)opened: reaching it ends the catch-up. */
  private target = 0;
  /** burstBacklog is the backlog before the responses handled in the current turn of the event loop. */
  private burstBacklog: number | undefined;
  private readonly all: boolean;

  constructor(
    private readonly src: WatchSource,
    private readonly filter: EventFilter,
    /** cursor is the last revision this watch has taken in (delivered or filtered out). */
    private cursor: number,
    live: boolean,
  ) {
    this.all = selectsAll(filter);
    this.mode = live ? 'live' : 'catchup';
    if (live) this.open(false);
  }

  [Symbol.asyncIterator](): AsyncIterator<StoreWatchEvent> {
    return this;
  }

  async next(): Promise<IteratorResult<StoreWatchEvent>> {
    const taken = this.queue.take();
    if (taken !== undefined) return taken;
    if (this.state === 'done') return { done: true, value: undefined };
    if (this.mode === 'catchup' && this.cursor >= this.target && this.state === 'open') this.mode = 'live';
    if (this.state === 'idle') this.open(true);
    else if (this.state === 'paused') this.open(false);
    return this.queue.wait();
  }

  return(): Promise<IteratorResult<StoreWatchEvent>> {
    this.stop();
    return Promise.resolve({ done: true, value: undefined });
  }

  stop(): void {
    if (this.state === 'done' && !this.queue.waiting) return;
    this.finish();
    this.queue.end();
  }

  /** fail ends the watch with an error, delivered after the changes already queued. */
  fail(cause: unknown): void {
    if (this.state === 'done') return;
    this.finish();
    this.queue.fail(cause instanceof StorageError ? cause : this.src.failure(cause));
  }

  private finish(): void {
    this.state = 'done';
    this.queue.clear();
    this.closeEtcd();
    this.src.ended(this);
  }

  private closeEtcd(): void {
    const w = this.etcd;
    this.etcd = undefined;
    if (w !== undefined) void w.cancel().catch(() => undefined);
  }

  /** open starts the etcd watch after the cursor; `checkCompacted` first refuses a start older than the store's oldest revision. */
  private open(checkCompacted: boolean): void {
    this.state = 'opening';
    void (async () => {
      const client = await this.src.client();
      if (checkCompacted) {
        const compacted = await this.src.compactedRv();
        if (this.cursor < compacted) {
          throw new StorageError('ResourceVersionExpired', `resourceVersion ${this.cursor} is older than the oldest kept revision ${compacted}`, {
            resourceVersion: this.cursor,
            currentResourceVersion: this.src.knownRv(),
          });
        }
      }
      if (this.state !== 'opening') return;
      this.target = Math.max(this.target, this.src.knownRv());
      const w = client
        .watch()
        .inRange(this.src.range(this.filter.namespace))
        .withPreviousKV()
        .startRevision(String(this.cursor + 1))
        .watcher();
      this.etcd = w;
      this.state = 'open';
      w.on('data', (res) => {
        if (this.etcd === w) this.onData(res);
      });
      w.on('error', (err) => {
        if (this.etcd === w) this.fail(err);
      });
      w.on('disconnected', () => {
        // The driver resumes from `start_revision`, which it moves to the newest header it saw;
        // during a replay that is past changes not yet sent, so resume from what was received.
        if (this.etcd === w) w.request.start_revision = String(this.cursor + 1);
      });
    })().catch((e: unknown) => this.fail(e));
  }

  private onData(res: EtcdWatchResponse): void {
    this.src.observe(res.header.revision);
    let backlog = this.burstBacklog;
    if (backlog === undefined) {
      // Responses that arrive in one turn are one delivery: the reader had no chance to run between them.
      backlog = this.burstBacklog = this.queue.length;
      queueMicrotask(() => (this.burstBacklog = undefined));
    }
    try {
      for (const ev of res.events) {
        const rv = Number(ev.kv.mod_revision);
        if (rv <= this.cursor) continue;
        this.cursor = rv;
        const change = toStoreEvent(ev, rv);
        const e = projectChange(change, this.filter, this.all, () => leavingView(change));
        if (e !== undefined) this.queue.push(e);
      }
    } catch (e) {
      this.fail(e);
      return;
    }
    if (this.queue.length <= this.src.bufferSize) return;
    if (this.mode === 'catchup') {
      this.state = 'paused';
      this.closeEtcd();
    } else if (backlog > 0) {
      this.fail(
        new StorageError('WatcherTooSlow', `the watcher fell more than ${this.src.bufferSize} changes behind`, {
          resourceVersion: this.cursor,
        }),
      );
    }
  }
}
