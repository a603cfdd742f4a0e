import type { CLUSTER_FIELD, CoreEvent, IncidentList, IncidentObjectList, IncidentWindow, SearchResult, Timeline, WatchEvent } from '../../api/index.js';
import { incidentDocument, incidentQueryParams, resolveIncidents, resolveOccurrenceMessages, resolveTimeline } from '../../api/index.js';

const EVENTS = '/api/v1';
const ARCHIVE = '/apis/archive.kevents.io/v1alpha1';
/** BY_CLUSTER is the field label that selects events by cluster: typed as the api's constant, it cannot drift from it. */
const BY_CLUSTER: typeof CLUSTER_FIELD = 'kevents.io/cluster';

/** HttpError is a non-2xx answer, with the Status reason when the server sent one. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function getJson<T>(url: string, signal?: AbortSignal): Promise<T> {
  const res = await fetch(url, { headers: { Accept: 'application/json' }, signal });
  if (!res.ok) {
    let message = `${res.status} ${res.statusText}`;
    try {
      const body = (await res.json()) as { message?: string };
      if (typeof body.message === 'string') message = body.message;
    } catch {
      // The status line is all there is.
    }
    throw new HttpError(res.status, message);
  }
  return (await res.json()) as T;
}

/** EventPage is one page of an event list. */
export interface EventPage {
  items: CoreEvent[];
  resourceVersion: string;
  continue: string | undefined;
  remainingItemCount: number | undefined;
}

/** listEvents reads one page of core/v1 events across all namespaces. */
export async function listEvents(options: { limit: number; continue?: string; signal?: AbortSignal }): Promise<EventPage> {
  const p = new URLSearchParams({ limit: String(options.limit) });
  if (options.continue !== undefined) p.set('continue', options.continue);
  const list = await getJson<{ items: CoreEvent[]; metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number } }>(
    `${EVENTS}/events?${p.toString()}`,
    options.signal,
  );
  return {
    items: list.items ?? [],
    resourceVersion: list.metadata.resourceVersion ?? '0',
    continue: list.metadata.continue || undefined,
    remainingItemCount: list.metadata.remainingItemCount,
  };
}

/**
 * watchEvents streams watch frames from a resourceVersion until the server ends
 * the watch (its timeout) or the signal aborts. Frames arrive one JSON object a line.
 */
export async function* watchEvents(resourceVersion: string, signal: AbortSignal): AsyncGenerator<WatchEvent<CoreEvent>> {
  const p = new URLSearchParams({ watch: '1', resourceVersion, allowWatchBookmarks: 'true' });
  const res = await fetch(`${EVENTS}/events?${p.toString()}`, { signal, headers: { Accept: 'application/json' } });
  if (!res.ok || res.body === null) throw new HttpError(res.status, `watch failed: ${res.status}`);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffered += decoder.decode(value, { stream: true });
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (line !== '') yield JSON.parse(line) as WatchEvent<CoreEvent>;
    }
  }
}

/**
 * objectEvents are one object's events as `kubectl describe` selects them:
 * its namespace, involvedObject.kind and involvedObject.name; of one cluster
 * when one is picked.
 */
export async function objectEvents(kind: string, namespace: string, name: string, options: { cluster?: string; signal?: AbortSignal } = {}): Promise<CoreEvent[]> {
  const fs = `involvedObject.kind=${kind},involvedObject.name=${name}${options.cluster ? `,${BY_CLUSTER}=${options.cluster}` : ''}`;
  const base = namespace === '' ? `${EVENTS}/events` : `${EVENTS}/namespaces/${encodeURIComponent(namespace)}/events`;
  const list = await getJson<{ items: CoreEvent[] }>(`${base}?fieldSelector=${encodeURIComponent(fs)}`, options.signal);
  return list.items ?? [];
}

/** TimelineQuery selects a timeline: a window (Unix ms), a namespace (empty or undefined: all), an object, types and a cluster. */
export interface TimelineQuery {
  since: number;
  until: number;
  namespace?: string | undefined;
  /** for is `Kind/name`: the object and the objects it owns, as `kevents timeline --for` scopes it. */
  for?: string | undefined;
  /** types keeps only these event types (Normal, Warning). */
  types?: readonly string[] | undefined;
  /** cluster keeps what was archived from that cluster; empty or undefined: all. */
  cluster?: string | undefined;
  signal?: AbortSignal;
}

/**
 * getTimeline reads the timeline of a window as the server builds it with
 * src/timeline: the rows `kevents timeline` prints, every occurrence an
 * event counts accounted for, estimated rows marked as such.
 */
export function getTimeline(q: TimelineQuery): Promise<Timeline> {
  const base = q.namespace ? `${ARCHIVE}/namespaces/${encodeURIComponent(q.namespace)}/timeline` : `${ARCHIVE}/timeline`;
  const p = new URLSearchParams({ since: new Date(q.since).toISOString(), until: new Date(q.until).toISOString() });
  if (q.for !== undefined) p.set('for', q.for);
  if (q.types !== undefined && q.types.length > 0) p.set('types', q.types.join(','));
  if (q.cluster) p.set('cluster', q.cluster);
  // A repeated text is sent once an answer (src/api/answer-text.ts): each row gets it back.
  return getJson<Timeline>(`${base}?${p.toString()}`, q.signal).then(resolveTimeline);
}

/** SearchQuery is one page of an archive search: the query (docs/search.md), a window start (Unix ms), a namespace, a histogram bucket and a continue token. */
export interface SearchQuery {
  q: string;
  since: number;
  namespace?: string | undefined;
  limit: number;
  /** histogramMs asks for the hits per bucket of this size over the window (the first page only needs it). */
  histogramMs?: number | undefined;
  continue?: string | undefined;
  signal?: AbortSignal;
}

/**
 * searchArchive reads one page of the server's archive search, newest first;
 * a query that does not parse is an HttpError 400 whose message names the position.
 */
export function searchArchive(s: SearchQuery): Promise<SearchResult> {
  const base = s.namespace ? `${ARCHIVE}/namespaces/${encodeURIComponent(s.namespace)}/search` : `${ARCHIVE}/search`;
  const p = new URLSearchParams({ q: s.q, since: new Date(s.since).toISOString(), limit: String(s.limit) });
  if (s.histogramMs !== undefined) p.set('histogram', `${Math.round(s.histogramMs / 1000)}s`);
  if (s.continue !== undefined) p.set('continue', s.continue);
  return getJson<SearchResult>(`${base}?${p.toString()}`, s.signal).then((r) => {
    for (const item of r.items) {
      const { message } = item.event;
      const resourceVersion = item.event.metadata.resourceVersion;
      resolveOccurrenceMessages(item.occurrences, message !== undefined && resourceVersion !== undefined ? { message, resourceVersion } : undefined);
    }
    return r;
  });
}

/** IncidentQuery selects the incidents of a window (src/api's incidentWindow, as `kevents incidents` reads its flags), a namespace (empty or undefined: all) and a cluster. */
export interface IncidentQuery {
  window: IncidentWindow;
  namespace?: string | undefined;
  /** cluster keeps what was archived from that cluster; empty or undefined: all. */
  cluster?: string | undefined;
  signal?: AbortSignal;
}

/**
 * getIncidents reads the window's incidents as the server builds them with
 * src/diagnosis (what `kevents incidents -o json` prints), most recent first,
 * sending what `kevents incidents` sends for the same window (incidentQueryParams).
 */
export function getIncidents(q: IncidentQuery): Promise<IncidentList> {
  const base = q.namespace ? `${ARCHIVE}/namespaces/${encodeURIComponent(q.namespace)}/incidents` : `${ARCHIVE}/incidents`;
  const p = incidentQueryParams(q.window, q.cluster ? [q.cluster] : []);
  // The route answers the list kind (items whose status is an incident); the views read the document.
  return getJson<IncidentObjectList>(`${base}?${p.toString()}`, q.signal).then((list) => resolveIncidents(incidentDocument(list)));
}
