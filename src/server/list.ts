import type { CoreEvent, EventApi, ListMeta } from '../api/index.js';
import type { EventFilter, EventStore, ListedVersion, ListOptions, VersionList } from '../storage/index.js';
import { decodeContinue, encodeContinue } from './continue-token.js';
import { isStatusError, newBadRequest, StatusError } from '../api/index.js';
import { parseResourceVersion } from './query.js';
import type { ListQuery } from './query.js';
import { CONTINUE_TOO_OLD, toStatusError } from './storage-errors.js';

/** ListPage is one page of a list request, ready to render. */
export interface ListPage {
  items: ListedVersion[];
  metadata: ListMeta;
  /** keyed says that each item's resourceVersion names its version alone (the store offers `listVersions`), so renderings may be kept by it. */
  keyed: boolean;
}

/** readPage reads through `listVersions` where the store offers it, otherwise through `list`. */
async function readPage(store: EventStore, options: ListOptions): Promise<VersionList> {
  if (store.listVersions !== undefined) return store.listVersions(options);
  const { items, ...page } = await store.list(options);
  return { ...page, items: items.map((e: CoreEvent) => ({ resourceVersion: Number(e.metadata.resourceVersion), object: () => e })) };
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
    result = await readPage(store, options);
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
  return { items: result.items, metadata, keyed: store.listVersions !== undefined };
}
