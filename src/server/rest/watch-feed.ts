import type { CoreEvent } from '../../api/index.js';
import type { EventStore, EventWatch, StoreWatchEvent } from '../../storage/index.js';

/** SharedChange is one store change as every HTTP watcher receives it: each wire frame is encoded once and shared. */
export class SharedChange {
  readonly rv: number;
  readonly namespace: string;
  private readonly frames = new Map<string, Buffer>();

  constructor(readonly change: StoreWatchEvent) {
    this.rv = Number(change.object.metadata.resourceVersion);
    this.namespace = change.object.metadata.namespace ?? '';
  }

  /** frame is `{"type":…,"object":…}\n` for one encoding (API and format), built on first use. */
  frame(encoding: string, type: string, object: CoreEvent, render: (e: CoreEvent) => string): Buffer {
    const key = `${encoding}|${type}|${object === this.change.object ? '' : 'prev'}`;
    let frame = this.frames.get(key);
    if (frame === undefined) {
      frame = Buffer.from(`{"type":"${type}","object":${render(object)}}\n`);
      this.frames.set(key, frame);
    }
    return frame;
  }
}

/** FeedMember is what a source hands changes to: an HTTP watcher, or a catch-up waiting to join the live feed. */
export interface FeedMember {
  /** namespace is the one namespace the member watches; undefined for all. */
  readonly namespace: string | undefined;
  /** offer takes one change; the member skips those at or below its own cursor. */
  offer(change: SharedChange): void;
  /** end stops the member: with an error when its source failed, without when the store closed. */
  end(error?: unknown): void;
}

/** Members index members by the namespace they watch, so a change visits only those that can want it. */
class Members {
  private readonly byNamespace = new Map<string | undefined, Set<FeedMember>>();
  size = 0;

  add(m: FeedMember): void {
    let set = this.byNamespace.get(m.namespace);
    if (set === undefined) this.byNamespace.set(m.namespace, (set = new Set()));
    if (!set.has(m)) this.size++;
    set.add(m);
  }

  delete(m: FeedMember): void {
    const set = this.byNamespace.get(m.namespace);
    if (set?.delete(m) !== true) return;
    this.size--;
    if (set.size === 0) this.byNamespace.delete(m.namespace);
  }

  offer(c: SharedChange): void {
    const all = this.byNamespace.get(undefined);
    if (all !== undefined) for (const m of all) m.offer(c);
    const ns = this.byNamespace.get(c.namespace);
    if (ns !== undefined) for (const m of ns) m.offer(c);
  }

  endAll(error?: unknown): void {
    const members = [...this.byNamespace.values()].flatMap((s) => [...s]);
    this.byNamespace.clear();
    this.size = 0;
    for (const m of members) m.end(error);
  }
}

/**
 * StoreFeed is one store watch of every namespace, shared by all HTTP watchers
 * of a store that are live: each change is decoded once and offered to the
 * watchers of its namespace. It starts with its first member and stops with
 * its last one.
 */
export class StoreFeed {
  /** cursor is the revision of the last change offered: every later change will be. */
  cursor = 0;
  readonly ready: Promise<void>;
  private readonly members = new Members();
  private watch: EventWatch | undefined;
  private ended = false;

  constructor(
    private readonly store: EventStore,
    private readonly onEnd: () => void,
  ) {
    this.ready = this.start().catch((e: unknown) => {
      this.stop();
      throw e;
    });
  }

  private async start(): Promise<void> {
    this.cursor = await this.store.currentResourceVersion();
    if (this.ended) return;
    const watch = this.store.watch({ resourceVersion: this.cursor });
    this.watch = watch;
    void this.pump(watch);
  }

  private async pump(watch: EventWatch): Promise<void> {
    let error: unknown;
    try {
      for await (const change of watch) {
        const shared = new SharedChange(change);
        this.cursor = shared.rv;
        this.members.offer(shared);
      }
    } catch (e) {
      error = e;
    }
    this.stop();
    this.members.endAll(error);
  }

  add(m: FeedMember): void {
    this.members.add(m);
  }

  remove(m: FeedMember): void {
    this.members.delete(m);
    if (this.members.size === 0) this.stop();
  }

  private stop(): void {
    if (this.ended) return;
    this.ended = true;
    this.watch?.stop();
    this.onEnd();
  }
}

/** CATCH_UP_PENDING_LIMIT is how many live changes of its namespace a catch-up may hold while it reads history (5 s at 200 changes/s, as the store's own watch buffer). */
const CATCH_UP_PENDING_LIMIT = 1_000;

/**
 * CatchUp reads history for watchers that start behind the feed, through one
 * store watch of their namespace shared by every watcher that starts at (or
 * after) where it has got to. Meanwhile it keeps the feed's changes of that
 * namespace; when history reaches the first of them it hands its watchers
 * over to the feed, with no gap and no repeat.
 */
class CatchUp implements FeedMember {
  /** cursor is the revision of the last change read from history. */
  private cursor: number;
  private readonly watchers = new Set<FeedMember>();
  private pending: SharedChange[] = [];
  private readonly watch: EventWatch;
  private done = false;

  constructor(
    store: EventStore,
    private readonly feed: StoreFeed,
    readonly namespace: string | undefined,
    private readonly start: number,
    private readonly onEnd: (c: CatchUp) => void,
  ) {
    this.cursor = start;
    feed.add(this);
    this.watch = store.watch(namespace === undefined ? { resourceVersion: start } : { resourceVersion: start, namespace });
    void this.pump();
  }

  /** canJoin: a watcher starting at `start` misses nothing here (and the start was checked against compaction with this one's). */
  canJoin(namespace: string | undefined, start: number): boolean {
    return !this.done && namespace === this.namespace && start >= this.cursor && (start === this.start || this.cursor > this.start);
  }

  add(w: FeedMember): void {
    this.watchers.add(w);
  }

  remove(w: FeedMember): void {
    if (!this.watchers.delete(w) || this.watchers.size > 0) return;
    this.finish();
  }

  offer(c: SharedChange): void {
    if (c.rv <= this.cursor) return;
    this.pending.push(c);
    if (this.pending.length > CATCH_UP_PENDING_LIMIT) {
      this.end({ name: 'StorageError', code: 'WatcherTooSlow', message: `history was read more slowly than ${CATCH_UP_PENDING_LIMIT} new changes arrived` });
    }
  }

  end(error?: unknown): void {
    const watchers = [...this.watchers];
    this.watchers.clear();
    this.finish();
    for (const w of watchers) w.end(error);
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.pending = [];
    this.watch.stop();
    this.feed.remove(this);
    this.onEnd(this);
  }

  private async pump(): Promise<void> {
    try {
      for await (const change of this.watch) {
        if (this.done) return;
        const c = new SharedChange(change);
        const first = this.pending[0];
        if (first !== undefined && c.rv >= first.rv) {
          this.handOver();
          return;
        }
        this.cursor = c.rv;
        for (const w of this.watchers) w.offer(c);
      }
      this.end();
    } catch (e) {
      this.end(e);
    }
  }

  /** handOver moves the watchers to the feed; every change from the first pending one on comes from the feed. */
  private handOver(): void {
    const pending = this.pending;
    for (const w of this.watchers) {
      this.feed.add(w);
      for (const c of pending) w.offer(c);
    }
    this.watchers.clear();
    this.finish();
  }
}

/**
 * StoreFanout serves every HTTP watch of one store: live watchers share one
 * StoreFeed, watchers that start in the past share catch-ups until they reach it.
 */
export class StoreFanout {
  private feed: StoreFeed | undefined;
  private readonly catchUps = new Set<CatchUp>();

  constructor(private readonly store: EventStore) {}

  /** join delivers to `w` every change after `start`, in order. */
  async join(w: FeedMember, start: number): Promise<void> {
    for (;;) {
      const feed = (this.feed ??= new StoreFeed(this.store, () => {
        if (this.feed === feed) this.feed = undefined;
      }));
      await feed.ready;
      if (this.feed !== feed) continue;
      if (start >= feed.cursor) {
        feed.add(w);
        return;
      }
      let catchUp = [...this.catchUps].find((c) => c.canJoin(w.namespace, start));
      if (catchUp === undefined) {
        catchUp = new CatchUp(this.store, feed, w.namespace, start, (c) => this.catchUps.delete(c));
        this.catchUps.add(catchUp);
      }
      catchUp.add(w);
      return;
    }
  }

  /** leave forgets a watcher that ended. */
  leave(w: FeedMember): void {
    for (const c of this.catchUps) c.remove(w);
    this.feed?.remove(w);
  }
}
