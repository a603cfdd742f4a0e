import type { CoreEvent, EventApi, ListMeta } from '../../api/index.js';
import { hasVersionedReads } from '../../storage/index.js';
import type { EventFilter, EventStore, ListedVersion, ListOptions, VersionList } from '../../storage/index.js';
import { decodeContinue, encodeContinue } from './continue-token.js';
import { isStatusError, newBadRequest, StatusError } from '../../api/index.js';
import { parseResourceVersion } from './query.js';
import { yieldLoop } from '../../internal/index.js';
import type { ListQuery } from './query.js';
import { CONTINUE_TOO_OLD, toStatusError } from './storage-errors.js';

/** ListPage is one page of a list request, ready to render. */
export interface ListPage {
  items: ListedVersion[];
  metadata: ListMeta;
  /** keyed says that each item's resourceVersion names its version alone (the store offers `VersionedReads`), so renderings may be kept by it. */
  keyed: boolean;
}

/** readPage reads through `listVersions` where the store offers it, otherwise through `list`. */
async function readPage(store: EventStore, options: ListOptions): Promise<VersionList> {
  if (hasVersionedReads(store)) return store.listVersions(options);
  const { items, ...page } = await store.list(options);
  return { ...page, items: items.map((e: CoreEvent) => ({ resourceVersion: Number(e.metadata.resourceVersion), object: () => e })) };
}

/** SCAN_CHUNK is how many stored events one read of a filtered list examines before the event loop is let go: a few ms of decoding and matching. */
export const SCAN_CHUNK = 250;
/** MAX_EXAMINED is how many stored events one page of a filtered list examines at most: a page cut short by it ends with a continue token. */
export const MAX_EXAMINED = 50_000;


/**
 * scanPage reads a filtered page in chunks of SCAN_CHUNK examined events, at one
 * revision, yielding between them: a selector that keeps few events never holds
 * the loop for a whole store. A paged request (a limit) examines at most
 * MAX_EXAMINED events and may end short, with `lastKey` to continue from, as
 * the API allows; an unpaged one reads to the end.
 */
async function scanPage(store: EventStore, options: ListOptions): Promise<VersionList> {
  const limit = options.limit !== undefined && options.limit > 0 ? options.limit : Infinity;
  const items: VersionList['items'] = [];
  let read: ListOptions = { ...options, maxExamined: SCAN_CHUNK };
  let examined = 0;
  for (;;) {
    const page = await readPage(store, { ...read, ...(limit === Infinity ? {} : { limit: limit - items.length }) });
    for (const v of page.items) items.push(v);
    examined += SCAN_CHUNK;
    if (page.lastKey === undefined || items.length >= limit || (limit !== Infinity && examined >= MAX_EXAMINED)) {
      const out: VersionList = { items, resourceVersion: page.resourceVersion };
      if (page.lastKey !== undefined) out.lastKey = page.lastKey;
      return out;
    }
    read = { ...read, startKey: page.lastKey, resourceVersion: page.resourceVersion, match: 'Exact' };
    await yieldLoop();
  }
}

/**
 * listEvents runs a list request with the etcd3 semantics of events (the watch
 * cache is off for them): RV unset or "0" reads the latest state; a legacy RV
 * with a limit, or `Exact`, reads at that revision; `NotOlderThan` and a legacy RV
 * without a limit read the latest state, which must be at least that revision.
 */
export async function listEvents(
  store: EventStore,
  api: EventApi,
  query: ListQuery,
  filter: EventFilter & { hasSelectors: boolean },
): Promise<ListPage> {
  const namespace = filter.namespace;
  const options: ListOptions = { ...filter };
  if (query.limit > 0) options.limit = query.limit;
  let verb: 'list' | 'continue' = 'list';
  if (query.continue !== undefined) {
    if (query.resourceVersion !== undefined && query.resourceVersion !== '0') {
      throw newBadRequest('specifying resource version is not allowed when using continue');
    }
    const pos = decodeContinue(query.continue, namespace);
    options.startKey = pos.startKey;
    if (pos.resourceVersion > 0) {
      options.resourceVersion = pos.resourceVersion;
      options.match = 'Exact';
    }
    verb = 'continue';
  } else if (query.resourceVersion !== undefined && query.resourceVersion !== '0') {
    let rv: number;
    try {
      rv = parseResourceVersion(query.resourceVersion);
    } catch (e) {
      throw isStatusError(e) ? newBadRequest(`invalid resource version: ${e.status.message}`) : e;
    }
    const exact = query.resourceVersionMatch === 'Exact' || (query.resourceVersionMatch === undefined && query.limit > 0);
    options.resourceVersion = rv;
    options.match = exact ? 'Exact' : 'NotOlderThan';
  }
  options.countRemaining = !filter.hasSelectors;
  let result;
  try {
    result = filter.predicate === undefined ? await readPage(store, options) : await scanPage(store, options);
  } catch (e) {
    const mapped = toStatusError(e, verb);
    if (verb === 'continue' && mapped instanceof StatusError && mapped.status.code === 410 && options.startKey !== undefined) {
      // Upstream offers a token that continues at the latest revision.
      mapped.status.message = CONTINUE_TOO_OLD;
      mapped.status.metadata = { continue: encodeContinue(options.startKey, namespace, -1) };
    }
    throw mapped;
  }
  const metadata: ListMeta = { resourceVersion: String(result.resourceVersion) };
  if (result.lastKey !== undefined) {
    metadata.continue = encodeContinue(result.lastKey, namespace, result.resourceVersion);
    if (!filter.hasSelectors && result.remainingItemCount !== undefined) metadata.remainingItemCount = result.remainingItemCount;
  }
  return { items: result.items, metadata, keyed: hasVersionedReads(store) };
}

/**
 * cutListMeta is the list metadata of the first `kept` items of `page`, a page an
 * answer's byte bound cut short: it continues after the last item kept, at the
 * page's revision, and counts the items left out among those remaining where the
 * page counted them (or where it was the whole list and no selector chose).
 */
export function cutListMeta(page: ListPage, kept: number, namespace: string | undefined, hasSelectors: boolean): ListMeta {
  const last = page.items[kept - 1]!.object();
  const rv = Number(page.metadata.resourceVersion);
  const meta: ListMeta = {
    resourceVersion: page.metadata.resourceVersion,
    continue: encodeContinue(`${last.metadata.namespace ?? ''}/${last.metadata.name ?? ''}`, namespace, rv),
  };
  const left = page.items.length - kept;
  if (page.metadata.remainingItemCount !== undefined) meta.remainingItemCount = page.metadata.remainingItemCount + left;
  else if (page.metadata.continue === undefined && !hasSelectors) meta.remainingItemCount = left;
  return meta;
}
