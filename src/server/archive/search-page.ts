import type { SearchHit, SearchPage, SearchRequest } from '../../storage/index.js';
import { yieldLoop } from '../../internal/index.js';

/** SEARCH_CHUNK is how many candidates one read of a search examines before the event loop is let go: a few ms of decoding and checking. */
export const SEARCH_CHUNK = 500;
/** MAX_SEARCH_EXAMINED is how many candidates one page of a search examines at most: a page cut short by it ends with a continue token. */
export const MAX_SEARCH_EXAMINED = 50_000;

/** SearchBounds are a page's bounds: SEARCH_CHUNK and MAX_SEARCH_EXAMINED unless a test asks for smaller. */
export interface SearchBounds {
  chunk?: number;
  maxExamined?: number;
}

/** Searchable is the one method of an archive store a search page reads. */
interface Searchable {
  search(request: SearchRequest): Promise<SearchPage>;
}

/**
 * searchPage reads one page of a search in reads of `chunk` candidates examined,
 * at one revision, yielding between them, so that a query whose index finds
 * many candidates and keeps few never holds the loop; it examines at most
 * `maxExamined` and may end short with `next` to continue from, as a filtered
 * list does. The histogram is asked of the first read only (it covers the whole
 * search). A backend that ignores `maxExamined` answers the page in one read.
 */
export async function searchPage(store: Searchable, request: SearchRequest, bounds: SearchBounds = {}): Promise<SearchPage> {
  const chunk = bounds.chunk ?? SEARCH_CHUNK;
  const max = bounds.maxExamined ?? MAX_SEARCH_EXAMINED;
  const items: SearchHit[] = [];
  let read: SearchRequest = { ...request, maxExamined: chunk };
  let examined = 0;
  const first = await store.search(read);
  let page = first;
  for (;;) {
    for (const hit of page.items) items.push(hit);
    examined += chunk;
    if (page.next === undefined || items.length >= request.limit || examined >= max) break;
    const { histogram: _whole, ...rest } = read;
    read = { ...rest, after: page.next, resourceVersion: page.resourceVersion, limit: request.limit - items.length };
    await yieldLoop();
    page = await store.search(read);
  }
  const out: SearchPage = { items, resourceVersion: first.resourceVersion };
  if (page.next !== undefined) out.next = page.next;
  if (first.histogram !== undefined) out.histogram = first.histogram;
  return out;
}
