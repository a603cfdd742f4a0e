import { CORE_API } from '../../api/index.js';
import { hasVersionedReads } from '../../storage/index.js';
import { yieldLoop } from '../../internal/index.js';
import type { RenderedVersions } from './rendered-versions.js';

/**
 * DEFAULT_RENDER_CACHE_WARM_MS bounds the time a server spends filling its render cache before it
 * listens (`--render-cache-warm`): the default budget of 64 MiB (some 75,000 Table rows) takes 1-3 s
 * on one core, longer when the cores are shared.
 */
export const DEFAULT_RENDER_CACHE_WARM_MS = 5000;

/** WARM_PAGE is how many versions one read of the warm takes and renders before timers and I/O may run: a few ms. */
const WARM_PAGE = 250;

/** WarmResult says what a warm rendered and why it stopped. */
export interface WarmResult {
  rows: number;
  /** bytes are what the render cache holds afterwards, overhead included. */
  bytes: number;
  ms: number;
  /** stoppedBy: every current event rendered (`end`), the cache's budget reached (`budget`), or the time bound (`time`). */
  stoppedBy: 'end' | 'budget' | 'time';
}

/**
 * warmRendered renders the Table rows of the store's current events into
 * `rendered`, newest first, until they are all rendered, the cache would evict
 * one of them, or `maxMs` has passed. kube-apiserver fills its watch caches from
 * etcd before it serves; this is the same idea for the rows kubectl asks for: a
 * listing after a restart then reads them as a later listing does, rather than
 * decoding and rendering every row from storage, and in an archive larger than
 * the cache the rows kept are the newest, which most lists show. Undefined when
 * there is nothing to warm: no time allowed, no cache, or a store that offers no
 * `newestVersions` (nor `listVersions`: its resourceVersions may name more than
 * one version, and its renderings are not kept).
 */
export async function warmRendered(
  store: object,
  rendered: RenderedVersions,
  options: { maxMs: number; now?: () => number },
): Promise<WarmResult | undefined> {
  const { maxMs, now = () => performance.now() } = options;
  if (!hasVersionedReads(store) || rendered.maxBytes === 0 || maxMs <= 0) return undefined;
  const started = now();
  let rows = 0;
  let perRow = 0;
  let before: number | undefined;
  let stoppedBy: WarmResult['stoppedBy'] = 'end';
  for (;;) {
    // The next page stops short of the budget: past it, the cache would evict rows the warm itself rendered.
    if (rendered.size + perRow * WARM_PAGE > rendered.maxBytes) {
      stoppedBy = 'budget';
      break;
    }
    if (now() - started >= maxMs) {
      stoppedBy = 'time';
      break;
    }
    const items = await store.newestVersions({ limit: WARM_PAGE, ...(before !== undefined ? { before } : {}) });
    const size = rendered.size;
    rendered.prepare(CORE_API, items, { table: true, includeObject: 'Metadata' });
    rows += items.length;
    if (items.length > 0) perRow = Math.max(perRow, (rendered.size - size) / items.length);
    if (items.length < WARM_PAGE) break;
    before = items[items.length - 1]!.resourceVersion;
    await yieldLoop();
  }
  return { rows, bytes: rendered.size, ms: now() - started, stoppedBy };
}
