import type { EventFilter, EventWatch, StoreWatchEvent } from '../event-store.js';
import { StorageError } from '../errors.js';
import { WatchHub } from '../shared/index.js';
import type { Change, ChangeLog } from '../shared/index.js';

/** ChangePage is a run of committed changes in revision order and the compaction point, read in one snapshot. */
export interface ChangePage {
  changes: Change[];
  compacted: number;
}

/**
 * ReplaySource is what a ReplayWatch reads of a replica's ChangeFeed. It is declared here, by its consumer, so that
 * replay-watch.ts sits below change-feed.ts (which creates the watches) instead of the two importing each other.
 */
export interface ReplaySource {
  /** hub is the replica's live hub, joined once the cursor is in the cache. */
  readonly hub: WatchHub;
  /** delivered is the newest revision published to the replica's watchers. */
  readonly delivered: number;
  /** floor: every change after it, up to `delivered`, is in the cache. */
  readonly floor: number;
  /** read is one page of history after a revision, from SQL. */
  read(after: number, limit: number): Promise<ChangePage>;
}

/** PageEnd is how a ChangeLog says it holds no changes after `after`: the watcher that asked reads on from SQL. */
export class PageEnd extends Error {
  constructor(readonly after: number) {
    super(`no cached changes after revision ${after}`);
    this.name = 'PageEnd';
  }
}

/** REPLAY_PAGE is how many changes a watcher replaying history reads from SQL at a time. */
const REPLAY_PAGE = 1_024;

/** pageLog serves one page of history to a WatchHub; asking past its end is PageEnd, so the watcher reads the next page. */
function pageLog(changes: readonly Change[]): ChangeLog {
  const last = changes[changes.length - 1]!.rv;
  return {
    changesAfter(after, limit) {
      if (after >= last) throw new PageEnd(after);
      const i = changes.findIndex((c) => c.rv > after);
      return changes.slice(i, i + limit);
    },
    committedRv: () => last,
    compactedRv: () => 0,
  };
}

/**
 * ReplayWatch is a watch whose history may be older than the replica's cache.
 * It runs a WatchHub watcher (so filtering and the ADDED/DELETED projection are
 * the shared ones) over a page of history read from SQL, then over the next
 * page, and joins the replica's live hub once its revision is in the cache. A
 * hub watcher ends with PageEnd only when it has handed out everything it read,
 * so switching loses and repeats nothing.
 */
export class ReplayWatch implements EventWatch, AsyncIterator<StoreWatchEvent> {
  private it: AsyncIterator<StoreWatchEvent> | undefined;
  private inner: EventWatch | undefined;
  private stopped = false;

  constructor(
    private readonly feed: ReplaySource,
    private readonly filter: EventFilter,
    /** cursor: every change up to it has been handed out or filtered out. */
    private cursor: number,
    inner: EventWatch | undefined,
    private readonly onStop: () => void,
  ) {
    if (inner !== undefined) this.use(inner);
  }

  [Symbol.asyncIterator](): AsyncIterator<StoreWatchEvent> {
    return this;
  }

  async next(): Promise<IteratorResult<StoreWatchEvent>> {
    for (;;) {
      if (this.stopped) return { done: true, value: undefined };
      if (this.it === undefined) {
        try {
          await this.open();
        } catch (e) {
          this.stop();
          throw e;
        }
        continue;
      }
      let r: IteratorResult<StoreWatchEvent>;
      try {
        r = await this.it.next();
      } catch (e) {
        if (e instanceof PageEnd) {
          this.cursor = Math.max(this.cursor, e.after);
          this.it = undefined;
          this.inner = undefined;
          continue;
        }
        this.stop();
        throw e;
      }
      if (r.done === true) {
        this.stop();
        return r;
      }
      this.cursor = Number(r.value.object.metadata.resourceVersion);
      return r;
    }
  }

  return(): Promise<IteratorResult<StoreWatchEvent>> {
    this.stop();
    return Promise.resolve({ done: true, value: undefined });
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.inner?.stop();
    this.onStop();
  }

  private use(inner: EventWatch): void {
    this.inner = inner;
    this.it = inner[Symbol.asyncIterator]();
  }

  private async open(): Promise<void> {
    if (this.cursor >= this.feed.floor) {
      this.use(this.feed.hub.watch({ ...this.filter, resourceVersion: this.cursor }));
      return;
    }
    const page = await this.feed.read(this.cursor, REPLAY_PAGE);
    if (this.stopped) return;
    if (this.cursor < page.compacted) {
      throw new StorageError('ResourceVersionExpired', `resourceVersion ${this.cursor} is older than the oldest kept revision ${page.compacted}`, {
        resourceVersion: this.cursor,
        currentResourceVersion: this.feed.delivered,
      });
    }
    if (page.changes.length === 0) {
      // Nothing is committed after the cursor, so nothing up to the cache's floor is missed by starting there.
      this.cursor = Math.max(this.cursor, this.feed.floor);
      return;
    }
    this.use(new WatchHub(pageLog(page.changes), this.feed.hub.bufferSize).watch({ ...this.filter, resourceVersion: this.cursor }));
  }
}
