import { setMaxListeners } from 'node:events';
import { BoundedQueue } from '../internal/index.js';

/** WriteQueueOptions configure a WriteQueue. */
export interface WriteQueueOptions<T> {
  capacity: number;
  workers: number;
  /** process writes one item; it must not reject. */
  process: (item: T, signal: AbortSignal) => Promise<void>;
}

/**
 * LISTENERS_PER_WORKER: a worker's write listens on the queue's signal twice at most (its request,
 * or its retry sleep, and a series flush beside it), so that many listeners are no leak.
 */
const LISTENERS_PER_WORKER = 2;

/**
 * WriteQueue is the bounded queue between recorders and the sink, drained by a
 * fixed number of async workers. `offer` never waits; `close` lets the workers
 * finish what is queued; `abort` cuts them off at a deadline.
 */
export class WriteQueue<T> {
  private readonly queue: BoundedQueue<T>;
  private readonly controller = new AbortController();
  private readonly done: Promise<void>;
  /** outstanding counts items accepted and not yet finished (queued, handed to a worker, or being written). */
  private outstanding = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: WriteQueueOptions<T>) {
    this.queue = new BoundedQueue<T>(options.capacity);
    // Node warns of a leak past 10 listeners on one signal: eight workers retrying under 429s reach that
    // in an operator's logs. The bound still catches a real leak.
    setMaxListeners(LISTENERS_PER_WORKER * options.workers + 10, this.controller.signal);
    const workers: Promise<void>[] = [];
    for (let i = 0; i < options.workers; i++) workers.push(this.work());
    this.done = Promise.all(workers).then(() => undefined);
  }

  /** signal aborts when the queue is aborted; writes pass it to the sink. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** offer queues an item; false means it was dropped. */
  offer(item: T): boolean {
    if (!this.queue.offer(item)) return false;
    this.outstanding++;
    return true;
  }

  /** pending is the number of queued plus in-flight items. */
  get pending(): number {
    return this.outstanding;
  }

  /** idle resolves when nothing is queued or in flight. */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** close refuses new items and resolves once the workers have written everything queued. */
  close(): Promise<void> {
    this.queue.close();
    return this.done;
  }

  /** abort stops the workers now and returns how many queued items were never started. */
  abort(): number {
    this.controller.abort(new Error('event broadcaster shut down'));
    this.queue.close();
    const lost = this.queue.drain().length;
    this.outstanding -= lost;
    this.notifyIdle();
    return lost;
  }

  private async work(): Promise<void> {
    for (;;) {
      const item = await this.queue.take();
      // take() yields undefined only once the queue is closed and empty.
      if (item === undefined) {
        this.notifyIdle();
        return;
      }
      try {
        await this.options.process(item, this.controller.signal);
      } finally {
        this.outstanding--;
        this.notifyIdle();
      }
    }
  }

  private notifyIdle(): void {
    if (this.pending !== 0 || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}
