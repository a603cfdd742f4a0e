import { isSearchQueryError, parseSearchQuery } from '../../api/index.js';
import { newBadRequest, parseGoDuration } from '../../api/index.js';
import { SEARCH_PAGE_MAX, histogramBuckets } from '../../storage/index.js';
import type { SearchCursor, SearchRequest } from '../../storage/index.js';
import { timeParam } from './timeline-routes.js';

/** DEFAULT_SEARCH_LIMIT is a page's hits when the request names no limit: a screenful, not the archive. */
export const DEFAULT_SEARCH_LIMIT = 100;

const TOKEN_VERSION = 'search.archive.kevents.io/v1alpha1';

/** SearchContinue is what a search's continue token carries: the snapshot, the instant relative times were read at, and where the next page starts. */
interface SearchContinue {
  resourceVersion: number;
  nowMs: number;
  after: SearchCursor;
}

/** ParsedSearch is a search request read from its parameters. */
export interface ParsedSearch {
  request: SearchRequest;
  /** nowMs is the instant `since:2h` was read at: the continue token keeps it, so every page reads one window. */
  nowMs: number;
}

/** encodeSearchContinue makes the continue token of a page read at `resourceVersion` that ended at `after`. */
export function encodeSearchContinue(token: SearchContinue): string {
  const json = JSON.stringify({ v: TOKEN_VERSION, rv: token.resourceVersion, now: token.nowMs, t: token.after.timeMs, k: token.after.key });
  return Buffer.from(json, 'utf8').toString('base64url');
}

function invalidToken(): never {
  throw newBadRequest('invalid continue token: continue key is not valid');
}

function decodeSearchContinue(token: string): SearchContinue {
  if (!/^[A-Za-z0-9_-]*$/.test(token)) invalidToken();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    invalidToken();
  }
  const { v, rv, now, t, k } = (parsed ?? {}) as Record<string, unknown>;
  const integer = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x);
  if (v !== TOKEN_VERSION || !integer(rv) || rv <= 0 || !integer(now) || typeof t !== 'number' || !Number.isFinite(t) || typeof k !== 'string') invalidToken();
  return { resourceVersion: rv, nowMs: now, after: { timeMs: t, key: k } };
}

function limitParam(params: URLSearchParams): number {
  const text = params.get('limit') ?? '';
  if (text === '') return DEFAULT_SEARCH_LIMIT;
  if (!/^[+-]?\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw newBadRequest(`limit: strconv.ParseInt: parsing ${JSON.stringify(text)}: invalid syntax`);
  const n = Number(text);
  // As a list reads it: no limit (0 or less) is the default page here, and a page is never more than the bound.
  return n <= 0 ? DEFAULT_SEARCH_LIMIT : Math.min(n, SEARCH_PAGE_MAX);
}

/**
 * parseSearchParams reads a search request: `q` (docs/search.md), `since` and
 * `until` (RFC 3339, as the timeline takes them; with `since:`/`until:` in `q`,
 * the narrower bound holds), `limit`, `continue` and `histogram` (a bucket
 * such as `1m`, over the window: it needs a start, and ends now when open).
 * A bad query or parameter is a 400 naming the problem (a query's, its position).
 */
export function parseSearchParams(params: URLSearchParams, namespace: string | undefined, clockNowMs: number): ParsedSearch {
  const cont = params.get('continue') ?? '';
  const position = cont === '' ? undefined : decodeSearchContinue(cont);
  const nowMs = position?.nowMs ?? clockNowMs;
  let query;
  try {
    query = parseSearchQuery(params.get('q') ?? '', { nowMs });
  } catch (e) {
    if (isSearchQueryError(e)) throw newBadRequest(`q: ${e.message}`);
    throw e;
  }
  const since = timeParam(params, 'since');
  const until = timeParam(params, 'until');
  if (since !== undefined) query.sinceMs = Math.max(since, query.sinceMs ?? since);
  if (until !== undefined) query.untilMs = Math.min(until, query.untilMs ?? until);
  if (query.sinceMs !== undefined && query.untilMs !== undefined && query.untilMs <= query.sinceMs) throw newBadRequest('until must be after since');
  const request: SearchRequest = { query, limit: limitParam(params) };
  if (namespace !== undefined) request.namespace = namespace;
  if (position !== undefined) {
    request.resourceVersion = position.resourceVersion;
    request.after = position.after;
  }
  const bucket = params.get('histogram') ?? '';
  if (bucket !== '') {
    let bucketMs: number;
    try {
      bucketMs = parseGoDuration(bucket);
    } catch (e) {
      throw newBadRequest(`histogram: ${(e as Error).message}`);
    }
    if (!(bucketMs >= 1000)) throw newBadRequest('histogram: the bucket must be at least 1s');
    if (query.sinceMs === undefined) throw newBadRequest('histogram: needs the start of a window: give since, or since: in q');
    const histogram = { sinceMs: query.sinceMs, untilMs: query.untilMs ?? nowMs, bucketMs };
    if (histogram.untilMs <= histogram.sinceMs) throw newBadRequest('histogram: the window ends before it starts');
    try {
      histogramBuckets(histogram);
    } catch (e) {
      throw newBadRequest(`histogram: ${(e as Error).message}: use a larger bucket or a shorter window`);
    }
    request.histogram = histogram;
  }
  return { request, nowMs };
}
