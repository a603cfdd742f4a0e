import { performance } from 'node:perf_hooks';
import type { EventLoopUtilization } from 'node:perf_hooks';
import { CORE_API } from '../../api/index.js';
import type { CoreEvent } from '../../api/index.js';
import type { ListedVersion } from '../../storage/index.js';
import type { RenderedVersions } from './rendered-versions.js';

/** MAX_PENDING bounds the written versions waiting for their rows: past it, the oldest are left for a listing to render. */
const MAX_PENDING = 4_096;

/** IDLE_CHECK_MS is how often the loop's idleness is read while rows wait: a row waits about this long after a burst ends. */
export const IDLE_CHECK_MS = 100;

/**
 * BUSY_UTILIZATION is the share of the last IDLE_CHECK_MS the event loop may have been busy for the waiting rows to
 * be rendered: above it, requests are what the loop is for, and the rows wait (or are left to a listing).
 */
export const BUSY_UTILIZATION = 0.5;

/** LoopMeter reads how busy the event loop was since the last reading (0 to 1): `performance.eventLoopUtilization` by default. */
export type LoopMeter = () => number;

/** eventLoopMeter is the LoopMeter of this thread's event loop. */
export function eventLoopMeter(): LoopMeter {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const since = performance.eventLoopUtilization(now, last);
    last = now;
    return since.utilization;
  };
}

/**
 * WrittenRows keeps the Table row of each version the server writes (a
 * create, an update, a patch) for the render cache, from the object the write
 * already holds, so nothing is read or decoded again. The first listing after a
 * burst of writes (`kubectl get events` after a rollout) then reads cached rows,
 * as a listing after a restart does once `warmRendered` ran, instead of reading
 * and rendering each new version from storage at about 20 µs a row.
 *
 * A write only queues its object: the rows are rendered in the idle part of
 * the event loop (checked every IDLE_CHECK_MS, rendered when the loop was
 * busy at most BUSY_UTILIZATION of that time), or at once when a Table listing
 * is about to read them (`flush`). Under a load that keeps the loop busy a
 * write pays nothing for its row (a row was some 7 µs of a create's CPU, and
 * the cache's growth more in garbage collection): the newest MAX_PENDING wait
 * for a listing or a quiet moment, and older ones are left to the listing that
 * asks for them.
 */
export class WrittenRows {
  /** pending is a ring of the versions waiting, oldest at `head`. */
  private readonly pending: (ListedVersion | undefined)[] = [];
  private head = 0;
  private count = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly rendered: RenderedVersions,
    /** onRendered counts the rows each batch rendered. */
    private readonly onRendered: (rows: number) => void,
    private readonly busy: LoopMeter = eventLoopMeter(),
  ) {}

  /** add queues the row of `object`, the version the store wrote at its resourceVersion; a version without one is skipped. */
  add(object: CoreEvent): void {
    if (this.rendered.maxBytes === 0) return;
    const rv = Number(object.metadata.resourceVersion);
    if (!Number.isSafeInteger(rv) || rv <= 0) return;
    // The renderer reads the object and changes nothing: the write's own object serves.
    const v: ListedVersion = { resourceVersion: rv, object: () => object };
    if (this.count < MAX_PENDING) this.pending[(this.head + this.count++) % MAX_PENDING] = v;
    else {
      this.pending[this.head] = v;
      this.head = (this.head + 1) % MAX_PENDING;
    }
    if (this.timer !== undefined) return;
    this.busy();
    this.timer = setTimeout(() => this.check(), IDLE_CHECK_MS);
    // A waiting row is no reason to keep a process alive.
    this.timer.unref();
  }

  /** flush renders every waiting row now: a Table listing calls it before it reads the cache. */
  flush(): void {
    if (this.count === 0) return;
    const batch: ListedVersion[] = [];
    for (let i = 0; i < this.count; i++) {
      const at = (this.head + i) % MAX_PENDING;
      batch.push(this.pending[at]!);
      this.pending[at] = undefined;
    }
    this.head = 0;
    this.count = 0;
    const before = this.rendered.misses;
    this.rendered.prepare(CORE_API, batch, { table: true, includeObject: 'Metadata' });
    this.onRendered(this.rendered.misses - before);
  }

  private check(): void {
    this.timer = undefined;
    if (this.count === 0) return;
    if (this.busy() <= BUSY_UTILIZATION) return this.flush();
    this.timer = setTimeout(() => this.check(), IDLE_CHECK_MS);
    this.timer.unref();
  }
}
