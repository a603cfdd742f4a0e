import type { CoreEvent } from '../../api/index.js';
import type { EventFilter, EventWatch, StoreWatchEvent, WatchOptions } from '../event-store.js';
import { StorageError } from '../errors.js';
import { decodeEvent, deepFreeze } from './event-json.js';
import { selectsAll } from './filter.js';
import { WatchQueue, projectChange } from './watch-queue.js';

/** Change is one committed write as a backend records it. */
export interface Change {
  rv: number;
  type: StoreWatchEvent['type'];
  key: string;
  /** json is the stored text of the new state; for DELETED, of the last state. */
  json: string;
  /** prevJson and prevRv are the state this change replaced (MODIFIED and DELETED). */
  prevJson?: string;
  prevRv?: number;
}

/** ChangeLog is the history a WatchHub replays from; every method reads committed state synchronously. */
export interface ChangeLog {
  /** changesAfter returns up to `limit` changes with a revision above `after`, oldest first. */
  changesAfter(after: number, limit: number): Change[];
  committedRv(): number;
  /** compactedRv: changes up to it may be gone; every change after it is kept. */
  compactedRv(): number;
}

/** CATCH_UP_BATCH is how many history rows a lagging watcher reads at a time: enough to amortise a query, small enough to bound memory. */
const CATCH_UP_BATCH = 256;

/** Decoded is a Change decoded once and shared by every watcher that receives it. */
class Decoded {
  private event?: StoreWatchEvent;
  private deletedView?: CoreEvent;
  readonly namespace: string;

  constructor(readonly change: Change) {
    this.namespace = change.key.slice(0, change.key.indexOf('/'));
  }

  get(): StoreWatchEvent {
    if (this.event === undefined) {
      const c = this.change;
      const event: StoreWatchEvent = { type: c.type, object: decodeEvent(c.json, c.rv) };
      if (c.prevJson !== undefined && c.prevRv !== undefined) event.prevObject = decodeEvent(c.prevJson, c.prevRv);
      this.event = deepFreeze(event);
    }
    return this.event;
  }

  /** leaving is the DELETED a filtered watcher sees when an object stops matching: the old state at this change's revision, as upstream sends it. */
  leaving(): StoreWatchEvent {
    const e = this.get();
    const prev = e.prevObject ?? e.object;
    this.deletedView ??= deepFreeze({ ...prev, metadata: { ...prev.metadata, resourceVersion: String(this.change.rv) } });
    return { type: 'DELETED', object: this.deletedView, prevObject: prev };
  }
}

/** project decides what a watcher with `filter` sees of one change, decoding it only when its namespace matches. */
function project(d: Decoded, filter: EventFilter, all: boolean): StoreWatchEvent | undefined {
  if (filter.namespace !== undefined && d.namespace !== filter.namespace) return undefined;
  return projectChange(d.get(), filter, all, () => d.leaving());
}

/** HubWatcher is one watch: it reads history until it is current, then takes live changes from the hub. */
class HubWatcher implements EventWatch, AsyncIterator<StoreWatchEvent> {
  private state: 'catchup' | 'live' | 'done';
  private readonly queue = new WatchQueue();
  private readonly all: boolean;

  constructor(
    private readonly hub: WatchHub,
    private readonly filter: EventFilter,
    /** cursor is the last revision this watcher has looked at (delivered or filtered out). */
    private cursor: number,
    catchUp: boolean,
  ) {
    this.state = catchUp ? 'catchup' : 'live';
    this.all = selectsAll(filter);
  }

  [Symbol.asyncIterator](): AsyncIterator<StoreWatchEvent> {
    return this;
  }

  async next(): Promise<IteratorResult<StoreWatchEvent>> {
    for (;;) {
      const taken = this.queue.take();
      if (taken !== undefined) return taken;
      if (this.state === 'done') return { done: true, value: undefined };
      if (this.state === 'catchup') {
        this.catchUp();
        continue;
      }
      return this.queue.wait();
    }
  }

  return(): Promise<IteratorResult<StoreWatchEvent>> {
    this.stop();
    return Promise.resolve({ done: true, value: undefined });
  }

  stop(): void {
    if (this.state === 'done' && !this.queue.waiting) return;
    this.state = 'done';
    this.hub.remove(this);
    this.queue.end();
  }

  /**
   * offer hands the changes of one commit to this watcher (synchronously, right
   * after the commit). One commit is always taken whole, so a burst never ends a
   * watcher that was keeping up; one that still holds more than `bufferSize`
   * changes from earlier commits is ended instead of buffering without bound.
   */
  offer(commit: readonly Decoded[]): void {
    if (this.state !== 'live') return;
    const backlog = this.queue.length;
    for (const d of commit) {
      if (d.change.rv <= this.cursor) continue;
      this.cursor = d.change.rv;
      const e = project(d, this.filter, this.all);
      if (e !== undefined) this.queue.push(e);
    }
    if (backlog > 0 && this.queue.length > this.hub.bufferSize) {
      this.fail(
        new StorageError('WatcherTooSlow', `the watcher fell more than ${this.hub.bufferSize} changes behind`, {
          resourceVersion: this.cursor,
        }),
      );
    }
  }

  fail(cause: unknown): void {
    if (this.state === 'done') return;
    const error = cause instanceof Error ? cause : new StorageError('Internal', String(cause), { cause });
    this.state = 'done';
    this.hub.remove(this);
    this.queue.fail(error);
  }

  private catchUp(): void {
    const log = this.hub.log;
    try {
      const compacted = log.compactedRv();
      if (this.cursor < compacted) {
        throw new StorageError('ResourceVersionExpired', `resourceVersion ${this.cursor} is older than the oldest kept revision ${compacted}`, {
          resourceVersion: this.cursor,
          currentResourceVersion: log.committedRv(),
        });
      }
      const batch = log.changesAfter(this.cursor, CATCH_UP_BATCH);
      for (const c of batch) {
        this.cursor = c.rv;
        const e = project(new Decoded(c), this.filter, this.all);
        if (e !== undefined) this.queue.push(e);
      }
      // Go live only on a read that found nothing new: the queue is then empty, so the
      // live buffer limit measures lag alone. The read and the switch happen in one
      // synchronous step, so no commit falls between them.
      if (batch.length === 0) this.state = 'live';
    } catch (e) {
      this.fail(e);
    }
  }
}

/**
 * WatchHub fans committed changes out to watchers. A watcher that starts in the
 * past replays history from the ChangeLog and joins the live stream when it has
 * caught up; a live watcher holds at most `bufferSize` undelivered changes and is
 * ended with WatcherTooSlow beyond that, so memory stays bounded. Objects handed
 * out are shared between watchers and frozen.
 */
export class WatchHub {
  private readonly watchers = new Set<HubWatcher>();

  constructor(
    readonly log: ChangeLog,
    readonly bufferSize: number,
  ) {}

  /** size is the number of running watchers. */
  get size(): number {
    return this.watchers.size;
  }

  watch(options: WatchOptions): EventWatch {
    const { resourceVersion, ...filter } = options;
    const start = resourceVersion ?? this.log.committedRv();
    const w = new HubWatcher(this, filter, start, resourceVersion !== undefined);
    this.watchers.add(w);
    return w;
  }

  /** publish delivers committed changes, oldest first; call it in the same synchronous step as the commit. */
  publish(changes: readonly Change[]): void {
    if (this.watchers.size === 0) return;
    const commit = changes.map((c) => new Decoded(c));
    for (const w of this.watchers) w.offer(commit);
  }

  /** closeAll ends every watcher's iteration (the store is closing). */
  closeAll(): void {
    for (const w of [...this.watchers]) w.stop();
  }

  /** remove forgets a watcher that ended. */
  remove(w: HubWatcher): void {
    this.watchers.delete(w);
  }
}
