import type { CoreEvent, Status } from '../../api/index.js';
import { listEvents, watchEvents } from './client.js';
import { newerFirst, toRow } from './model.js';
import { spliceSorted } from './splice-sorted.js';
import type { EventRow } from './model.js';

/** CacheStatus is what the status bar reports about the connection. */
export interface CacheStatus {
  phase: 'loading' | 'live' | 'reconnecting' | 'error';
  loaded: number;
  /** listing is true while the pages after the first are still being read. */
  listing: boolean;
  /**
   * expected is loaded plus what the server said remains, while the list runs;
   * undefined when the server does not say (it may leave remainingItemCount out).
   */
  expected: number | undefined;
  error: string;
}

// The first page is small so the first render does not wait for a big
// download; the rest of the list streams in larger pages behind it. index.html
// preloads exactly this first page's URL, so the request starts with the script.
export const FIRST_PAGE = 500;
/** FIRST_PAGE_URL is the first request of the cache, the one index.html preloads. */
export const FIRST_PAGE_URL = `/api/v1/events?limit=${FIRST_PAGE}`;
const NEXT_PAGES = 5000;
// Coalescing watch frames into one update at most every 100 ms keeps 200
// events/s to ten renders a second while still showing each within a second.
const FLUSH_MS = 100;
const RETRY_MS = [500, 1000, 2000, 5000, 10000];

/**
 * EventCache mirrors the server's events in the tab with list + watch: a
 * paginated list, a watch from its resourceVersion, a new watch when one ends,
 * a relist on 410 Gone. Readers get an immutable array sorted newest first,
 * replaced (never mutated) on each change, so a paused view can keep its copy.
 */
export class EventCache {
  private byUid = new Map<string, EventRow>();
  private deleted = new Map<string, number>();
  private pending = new Map<string, EventRow | null>();
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  private listeners = new Set<() => void>();
  private abort = new AbortController();
  private rv = '0';
  private generation = 0;
  /** rows are every known event, newest first. */
  rows: readonly EventRow[] = [];
  /** changes counts applied changes since start, so a paused view can say how many it holds back. */
  changes = 0;
  /** clusters are the clusters the events were archived from, sorted (local writes name none): the cluster picker's choices. */
  clusters: readonly string[] = [];
  /** perCluster counts the rows of each named cluster, so `clusters` follows every change without a scan. */
  private perCluster = new Map<string, number>();
  status: CacheStatus = { phase: 'loading', loaded: 0, listing: true, expected: undefined, error: '' };

  /** subscribe calls `fn` after every change of rows or status; returns the unsubscribe. */
  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** start lists and watches until stop. */
  start(): void {
    void this.run(this.abort.signal);
  }

  /** stop ends the watch. */
  stop(): void {
    this.abort.abort();
  }

  private notify(): void {
    for (const fn of this.listeners) fn();
  }

  private setStatus(patch: Partial<CacheStatus>): void {
    this.status = { ...this.status, ...patch };
    this.notify();
  }

  private async run(signal: AbortSignal): Promise<void> {
    let attempt = 0;
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.list(signal);
          needList = false;
        }
        this.setStatus({ phase: 'live', error: '' });
        const gone = await this.watch(signal);
        attempt = 0;
        if (gone) needList = true;
      } catch (e) {
        if (signal.aborted) return;
        this.setStatus({ phase: 'reconnecting', error: e instanceof Error ? e.message : String(e) });
        await new Promise((r) => setTimeout(r, RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]));
        attempt++;
      }
    }
  }

  private async list(signal: AbortSignal): Promise<void> {
    const first = await listEvents({ limit: FIRST_PAGE, signal });
    // A relist replaces everything: what the watch missed may include deletions.
    this.byUid.clear();
    this.deleted.clear();
    this.pending.clear();
    this.rows = [];
    this.perCluster.clear();
    this.clusters = [];
    this.status = { ...this.status, loaded: 0, listing: first.continue !== undefined };
    this.rv = first.resourceVersion;
    const generation = ++this.generation;
    this.take(first.items, first.remainingItemCount);
    this.flush();
    // The pages after the first read the same snapshot (the continue token
    // pins its revision) while the watch already runs from it, so the later
    // pages are fetched alongside the watch rather than before it.
    if (first.continue !== undefined) void this.rest(first.continue, generation, signal);
  }

  private async rest(token: string | undefined, generation: number, signal: AbortSignal): Promise<void> {
    try {
      while (token !== undefined && !signal.aborted) {
        const page = await listEvents({ limit: NEXT_PAGES, continue: token, signal });
        if (generation !== this.generation) return;
        this.take(page.items, page.remainingItemCount);
        this.schedule();
        token = page.continue;
      }
      if (generation === this.generation) this.setStatus({ listing: false, expected: undefined });
    } catch (e) {
      if (!signal.aborted) this.setStatus({ listing: false, error: `incomplete list: ${e instanceof Error ? e.message : String(e)}` });
    }
  }

  private take(items: CoreEvent[], remaining: number | undefined): void {
    for (const e of items) this.upsert(toRow(e));
    this.status = {
      ...this.status,
      loaded: this.status.loaded + items.length,
      expected: remaining === undefined ? undefined : this.status.loaded + items.length + remaining,
    };
  }

  /** watch returns true when the server answered 410 Gone (relist needed). */
  private async watch(signal: AbortSignal): Promise<boolean> {
    for await (const frame of watchEvents(this.rv, signal)) {
      switch (frame.type) {
        case 'ADDED':
        case 'MODIFIED':
          this.rv = frame.object.metadata.resourceVersion ?? this.rv;
          this.upsert(toRow(frame.object));
          break;
        case 'DELETED': {
          const row = toRow(frame.object);
          this.rv = frame.object.metadata.resourceVersion ?? this.rv;
          this.deleted.set(row.uid, row.rv);
          this.pending.set(row.uid, null);
          this.schedule();
          break;
        }
        case 'BOOKMARK':
          this.rv = frame.object.metadata.resourceVersion ?? this.rv;
          break;
        case 'ERROR': {
          const status = frame.object as unknown as Status;
          if (status.code === 410) return true;
          throw new Error(status.message ?? 'watch error');
        }
      }
    }
    return false;
  }

  private upsert(row: EventRow): void {
    const tomb = this.deleted.get(row.uid);
    if (tomb !== undefined && tomb >= row.rv) return;
    const prev = this.pending.get(row.uid) ?? this.byUid.get(row.uid);
    if (prev && prev.rv >= row.rv) return;
    if (prev && row.count > prev.count) row.bumpedAt = Date.now();
    this.pending.set(row.uid, row);
    this.schedule();
  }

  private schedule(): void {
    if (this.flushTimer === undefined) this.flushTimer = setTimeout(() => this.flush(), FLUSH_MS);
  }

  /** flush merges pending changes into a new sorted array in one pass. */
  private flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.pending.size === 0) {
      this.notify();
      return;
    }
    const added: EventRow[] = [];
    const removed: EventRow[] = [];
    for (const [uid, row] of this.pending) {
      const prev = this.byUid.get(uid);
      if (prev !== undefined) removed.push(prev);
      if (row === null) this.byUid.delete(uid);
      else {
        this.byUid.set(uid, row);
        added.push(row);
      }
    }
    added.sort(newerFirst);
    this.rows = spliceSorted(this.rows, removed, added);
    this.countClusters(removed, -1);
    this.countClusters(added, 1);
    this.changes += this.pending.size;
    this.pending = new Map();
    this.notify();
  }

  private countClusters(rows: readonly EventRow[], delta: 1 | -1): void {
    let changed = false;
    for (const { cluster } of rows) {
      if (cluster === '') continue;
      const n = (this.perCluster.get(cluster) ?? 0) + delta;
      if (n > 0) this.perCluster.set(cluster, n);
      else this.perCluster.delete(cluster);
      // A cluster came or went.
      if (n === 0 || (n === 1 && delta === 1)) changed = true;
    }
    if (changed) this.clusters = [...this.perCluster.keys()].sort();
  }
}
