import type { EventFilter, StoreWatchEvent } from '../event-store.js';
import { matchesFilter } from './filter.js';

type Waiter = { resolve: (r: IteratorResult<StoreWatchEvent>) => void; reject: (e: unknown) => void };

const DONE: IteratorResult<StoreWatchEvent> = { done: true, value: undefined };

/**
 * WatchQueue is the reader's side of a store watch, shared by the backends: the
 * changes taken in and not yet read, the reader waiting for the next one, and an
 * error to hand over once the changes before it are read.
 */
export class WatchQueue {
  private items: StoreWatchEvent[] = [];
  private head = 0;
  private error: Error | undefined;
  private waiter: Waiter | undefined;

  /** length is the number of changes waiting to be read. */
  get length(): number {
    return this.items.length - this.head;
  }

  /** waiting tells whether a reader is waiting for a change. */
  get waiting(): boolean {
    return this.waiter !== undefined;
  }

  /** push hands a change to the waiting reader, or queues it. */
  push(e: StoreWatchEvent): void {
    const w = this.waiter;
    if (w !== undefined) {
      this.waiter = undefined;
      w.resolve({ done: false, value: e });
    } else {
      this.items.push(e);
    }
  }

  /** take returns the next queued change; else throws the pending error; else undefined. */
  take(): IteratorResult<StoreWatchEvent> | undefined {
    if (this.head < this.items.length) {
      const value = this.items[this.head++]!;
      if (this.head === this.items.length) this.clear();
      return { done: false, value };
    }
    if (this.error !== undefined) {
      const e = this.error;
      this.error = undefined;
      throw e;
    }
    return undefined;
  }

  /** wait is the reader's promise of the next change, kept until `push`, `end` or `fail`. */
  wait(): Promise<IteratorResult<StoreWatchEvent>> {
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** clear drops the queued changes. */
  clear(): void {
    this.items = [];
    this.head = 0;
  }

  /** end drops the queue and tells a waiting reader that the watch is over. */
  end(): void {
    this.clear();
    const w = this.waiter;
    this.waiter = undefined;
    w?.resolve(DONE);
  }

  /** fail drops the queue and rejects the waiting reader with `error`, or keeps it for the next read. */
  fail(error: Error): void {
    this.clear();
    const w = this.waiter;
    this.waiter = undefined;
    if (w !== undefined) w.reject(error);
    else this.error = error;
  }
}

/**
 * projectChange decides what a watcher with `filter` sees of one change (`all`:
 * the filter selects everything). Like the etcd3 watcher upstream, an object that
 * starts matching arrives as ADDED, and one that stops matching as DELETED: the
 * view `leaving` makes of its old state at the change's revision.
 */
export function projectChange(e: StoreWatchEvent, filter: EventFilter, all: boolean, leaving: () => StoreWatchEvent): StoreWatchEvent | undefined {
  if (all) return e;
  const now = matchesFilter(e.object, filter);
  if (e.type !== 'MODIFIED' || e.prevObject === undefined) return now ? e : undefined;
  const before = matchesFilter(e.prevObject, filter);
  if (now) return before ? e : { type: 'ADDED', object: e.object, prevObject: e.prevObject };
  return before ? leaving() : undefined;
}
