/**
 * BoundedQueue is a FIFO of at most `capacity` items between a producer that
 * must never wait (a recorder's caller) and async consumers. `offer` refuses and
 * counts when full; `take` waits for an item or for `close`.
 */
export class BoundedQueue<T> {
  readonly capacity: number;
  private items: (T | undefined)[] = [];
  private head = 0;
  private readonly takers: ((v: T | undefined) => void)[] = [];
  private isClosed = false;
  private droppedCount = 0;

  constructor(capacity: number) {
    if (!(capacity >= 1)) throw new RangeError(`BoundedQueue: capacity must be at least 1, got ${capacity}`);
    this.capacity = capacity;
  }

  /** size is the number of items waiting. */
  get size(): number {
    return this.items.length - this.head;
  }

  /** dropped counts offers refused because the queue was full or closed. */
  get dropped(): number {
    return this.droppedCount;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** offer adds an item without waiting; false means it was dropped (queue full or closed). */
  offer(item: T): boolean {
    if (this.isClosed) {
      this.droppedCount++;
      return false;
    }
    const taker = this.takers.shift();
    if (taker !== undefined) {
      taker(item);
      return true;
    }
    if (this.size >= this.capacity) {
      this.droppedCount++;
      return false;
    }
    this.items.push(item);
    return true;
  }

  /** tryTake returns the next item if one is waiting. */
  tryTake(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head++;
    // Compact once the consumed prefix dominates, keeping offer and take O(1) amortized.
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    } else if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    }
    return item;
  }

  /** take resolves with the next item, or undefined once the queue is closed and empty. */
  take(): Promise<T | undefined> {
    if (this.size > 0) return Promise.resolve(this.tryTake());
    if (this.isClosed) return Promise.resolve(undefined);
    return new Promise((resolve) => this.takers.push(resolve));
  }

  /** drain removes and returns every waiting item. */
  drain(): T[] {
    const out: T[] = [];
    while (this.size > 0) out.push(this.tryTake() as T);
    return out;
  }

  /** close refuses further offers; waiting consumers get undefined, queued items stay takeable. */
  close(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    for (const taker of this.takers.splice(0)) taker(undefined);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      if (this.size === 0 && this.isClosed) return;
      const item = await this.take();
      if (item === undefined && this.isClosed && this.size === 0) return;
      yield item as T;
    }
  }
}
