import { CORE_API } from '../api/index.js';
import type { CoreEvent } from '../api/index.js';
import type { ListedVersion } from '../storage/index.js';
import type { RenderedVersions } from './rendered-versions.js';

/** MAX_PENDING bounds the written versions waiting for their rows: past it, the oldest are left for a listing to render. */
const MAX_PENDING = 4_096;

/**
 * WrittenRows renders the Table row of each version the server writes (a
 * create, an update, a patch) into the render cache, after the write's answer
 * is sent: a batch per turn of the event loop, from the object the write
 * already holds, so nothing is read or decoded again. The first listing after
 * a burst of writes (`kubectl get events` after a rollout) then reads cached
 * rows, as a listing after a restart does once `warmRendered` ran, instead of
 * reading and rendering each new version from storage at about 20 µs a row.
 * The cost is the row's rendering alone, a few µs of each write, off its
 * latency.
 */
export class WrittenRows {
  private pending: ListedVersion[] = [];
  private scheduled = false;

  constructor(
    private readonly rendered: RenderedVersions,
    /** onRendered counts the rows each batch rendered. */
    private readonly onRendered: (rows: number) => void,
  ) {}

  /** add queues the row of `object`, the version the store wrote at its resourceVersion; a version without one is skipped. */
  add(object: CoreEvent): void {
    if (this.rendered.maxBytes === 0) return;
    const rv = Number(object.metadata.resourceVersion);
    if (!Number.isSafeInteger(rv) || rv <= 0) return;
    // The renderer reads the object and changes nothing: the write's own object serves.
    this.pending.push({ resourceVersion: rv, object: () => object });
    if (this.pending.length > MAX_PENDING) this.pending.splice(0, this.pending.length - MAX_PENDING);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.drain());
  }

  private drain(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    const before = this.rendered.misses;
    this.rendered.prepare(CORE_API, batch, { table: true, includeObject: 'Metadata' });
    this.onRendered(this.rendered.misses - before);
  }
}
