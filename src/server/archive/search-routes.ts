import type { SearchQuery } from '../../api/index.js';
import { searchTextMarks, searchTimeMs } from '../../api/index.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HTTPVersion, Instance as Router } from 'find-my-way';
import { requestTarget } from '../../auth/index.js';
import { ARCHIVE_API, ARCHIVE_GROUP, formatMicroTime, jsonBytes, keepWithin, newMethodNotAllowed, newStatusError, shareOccurrenceMessages } from '../../api/index.js';
import type { CoreEvent, Occurrence, SearchResult, SearchResultItem } from '../../api/index.js';
import type { Clock, Logger } from '../../internal/index.js';
import { hasSearch, isArchiveStore, occurrenceTimeMs } from '../../storage/index.js';
import type { ArchiveStore, EventRef, EventStore } from '../../storage/index.js';
import { negotiateOutput, sendJsonStream, sendObject } from '../http/http-io.js';
import { route } from '../http/route.js';
import type { ServerMetrics } from '../http/metrics.js';
import { searchPage } from './search-page.js';
import { encodeSearchContinue, parseSearchParams } from './search-query.js';
import { toStatusError } from '../rest/storage-errors.js';

/** MAX_OCCURRENCES_PER_HIT bounds the occurrences a hit carries (the oldest in the window): a page of hits stays a page, however often each repeated. */
export const MAX_OCCURRENCES_PER_HIT = 100;
/** MAX_MESSAGE_MARKS bounds the marks of one hit's message (the first ones): a word found thousands of times in a long message marks a page's worth. */
export const MAX_MESSAGE_MARKS = 256;

/** SearchRouteDeps are what the search route needs from the server. */
export interface SearchRouteDeps {
  store: EventStore;
  clock: Clock;
  logger: Logger;
  metrics: ServerMetrics;
  /** maxAnswerBytes bounds an answer's JSON: a page past it ends short with a continue token. */
  maxAnswerBytes: number;
}

/**
 * registerSearchRoutes serves the archive's search (docs/search.md):
 *
 *   GET /apis/archive.kevents.io/v1alpha1/search
 *   GET /apis/archive.kevents.io/v1alpha1/namespaces/{namespace}/search
 *     ?q=QUERY&since=RFC3339&until=RFC3339&limit=N&continue=TOKEN&histogram=BUCKET
 *
 * A SearchResult: the hits newest first by the event's last time, each with its
 * occurrences in the window and the fields its terms matched; pages by continue
 * token over the first page's snapshot. It reads events, so the gate admits it
 * as it admits a list. Over a store that is no archive (etcd), or an archive
 * without a search index, it is a NotFound Status saying so.
 */
export function registerSearchRoutes(router: Router<HTTPVersion.V1>, deps: SearchRouteDeps): void {
  const base = `/apis/${ARCHIVE_API}`;
  const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
  const serve = route(deps, { resource: 'search', verb: 'GET' }, (req, res, namespace: string | undefined) => search(req, res, namespace, deps));
  router.on([...methods], `${base}/search`, (req, res) => serve(req, res, undefined));
  router.on([...methods], `${base}/namespaces/:namespace/search`, (req, res, p) => serve(req, res, p.namespace));
}

async function search(req: IncomingMessage, res: ServerResponse, namespace: string | undefined, deps: SearchRouteDeps): Promise<void> {
  if (req.method !== 'GET') throw newMethodNotAllowed();
  const store = deps.store;
  if (!isArchiveStore(store) || !hasSearch(store)) {
    const why = isArchiveStore(store) ? 'this server\'s storage has no search index (serve with SQLite or PostgreSQL storage)' : 'this server\'s storage keeps no archive (serve with SQLite or PostgreSQL storage)';
    throw newStatusError(404, 'NotFound', `the archive's search is not served here: ${why}`, { group: ARCHIVE_GROUP, kind: 'search' });
  }
  const format = negotiateOutput(req.headers.accept, false);
  // The one request parser: the gate authorized the very target read here.
  const { request, nowMs } = parseSearchParams(requestTarget(req).params, namespace, deps.clock.now());
  let page;
  try {
    page = await searchPage(store, request);
  } catch (e) {
    throw toStatusError(e, request.after !== undefined ? 'continue' : 'list');
  }
  const occurrences = await occurrencesOf(store, page.items.map((hit) => hit.event), request.query);
  const all = page.items.map((hit, i): SearchResultItem => {
    const message = hit.event.message;
    const resourceVersion = hit.event.metadata.resourceVersion;
    const seed = message !== undefined && resourceVersion !== undefined ? { message, resourceVersion } : undefined;
    return {
      event: hit.event,
      // The hit's event holds its text: its occurrences that repeat it refer to it.
      occurrences: shareOccurrenceMessages(occurrences[i]!, seed),
      matched: hit.matched,
      messageMarks: searchTextMarks(hit.event.message ?? '', request.query)
        .slice(0, MAX_MESSAGE_MARKS)
        .map((s): [number, number] => [s.start, s.end]),
    };
  });
  const body: SearchResult = { kind: 'SearchResult', apiVersion: ARCHIVE_API, metadata: { resourceVersion: String(page.resourceVersion) }, items: all };
  if (page.histogram !== undefined) body.histogram = page.histogram.map((b) => ({ time: formatMicroTime(b.startMs)!, hits: b.hits }));
  // Past the answer's bound the page ends short, after its last hit that fits.
  const kept = boundHits(all, deps.maxAnswerBytes - jsonBytes({ ...body, items: [] }));
  let next = page.next;
  if (kept < all.length) {
    body.items = all.slice(0, kept);
    const last = all[kept - 1]!.event;
    next = { timeMs: searchTimeMs(last), key: `${last.metadata.namespace ?? ''}/${last.metadata.name ?? ''}` };
  }
  if (next !== undefined) body.metadata.continue = encodeSearchContinue({ resourceVersion: page.resourceVersion, nowMs, after: next });
  if (format.kind === 'json') await sendJsonStream(res, 200, body, 'items');
  else sendObject(res, 200, body, format);
}

/**
 * boundHits is how many of `items` fit in `budget` bytes: a hit that does not
 * fit whole ends the page before it, but for the first, which keeps its event
 * and as many of its occurrences as fit (`occurrencesLeftOut` counts the rest,
 * which the occurrences API reads). The items are changed in place.
 */
function boundHits(items: SearchResultItem[], budget: number): number {
  let used = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    const size = jsonBytes(item) + 1;
    if (used + size <= budget) {
      used += size;
      continue;
    }
    if (i > 0) return i;
    const sizes = item.occurrences.map((o) => jsonBytes(o) + 1);
    const fits = keepWithin(sizes, budget - jsonBytes({ ...item, occurrences: [] }));
    const keep = fits === 1 && sizes[0]! > budget - jsonBytes({ ...item, occurrences: [] }) ? 0 : fits;
    item.occurrencesLeftOut = item.occurrences.length - keep;
    item.occurrences = item.occurrences.slice(0, keep);
    return 1;
  }
  return items.length;
}

/** occurrencesOf reads the occurrences of each event (by namespace, name and uid) whose change happened in the query's window, in one store call. */
async function occurrencesOf(store: ArchiveStore, events: readonly CoreEvent[], query: SearchQuery): Promise<Occurrence[][]> {
  const inWindow = (o: Occurrence): boolean => {
    if (query.sinceMs === undefined && query.untilMs === undefined) return true;
    const t = occurrenceTimeMs(o);
    return t !== undefined && (query.sinceMs === undefined || t >= query.sinceMs) && (query.untilMs === undefined || t < query.untilMs);
  };
  const refs: EventRef[] = [];
  const at: number[] = [];
  events.forEach((event, i) => {
    const { namespace, name, uid } = event.metadata;
    if (namespace === undefined || name === undefined) return;
    const ref: EventRef = { namespace, name, read: event };
    if (uid !== undefined) ref.uid = uid;
    if (event.involvedObject.name !== undefined) ref.regardingName = event.involvedObject.name;
    refs.push(ref);
    at.push(i);
  });
  const out: Occurrence[][] = events.map(() => []);
  if (refs.length === 0) return out;
  const read = await store.listEventOccurrences({ events: refs, predicate: inWindow, limit: MAX_OCCURRENCES_PER_HIT });
  read.forEach((items, j) => (out[at[j]!] = items));
  return out;
}
