import { useEffect, useRef, useState } from 'preact/hooks';
import { BarChart } from './bar-chart.js';
import { bucketLabel, bucketSizeFor } from './buckets.js';
import type { StackedBuckets } from './buckets.js';
import { HttpError, searchArchive } from './client.js';
import { EventListHead } from './event-list-head.js';
import { EventText } from './event-text.js';
import { age, compact } from './format.js';
import { useMedia } from './hooks.js';
import { toRow } from './model.js';
import type { EventRow } from './model.js';
import { WINDOWS } from './route.js';
import { histogramBuckets, serverQuery } from './search-query.js';
import { markParts } from './search-marks.js';
import type { MarkedPart } from './search-marks.js';
import type { Route } from './route.js';
import type { Navigate } from './use-route.js';
import { VirtualList } from './virtual-list.js';
import { WindowPicker } from './window-picker.js';

/** SearchViewProps configure the SearchView. */
export interface SearchViewProps {
  route: Route;
  navigate: Navigate;
  now: number;
}

/** SEARCH_PAGE is how many hits one request asks for; the next page is asked for as the reader nears the end. */
export const SEARCH_PAGE = 50;
// Typing asks the server once it pauses this long, not on every key.
const DEBOUNCE_MS = 300;

/** SearchHit is one hit as the list draws it, with the fields the query matched and its message in marked parts. */
interface SearchHit {
  row: EventRow;
  matched: string[];
  message: MarkedPart[];
}

interface SearchState {
  /** key names the search these results answer; a newer search's pages replace them. */
  key: string;
  phase: 'waiting' | 'loading' | 'done' | 'error';
  hits: SearchHit[];
  next: string | undefined;
  histogram: StackedBuckets | undefined;
  since: number;
  message: string;
}

function messageOf(e: unknown): string {
  if (e instanceof HttpError && e.status === 410) return 'The search has expired on the server (the archive moved on): change the query or pick the window again to search anew.';
  return e instanceof Error ? e.message : String(e);
}

/**
 * SearchView searches the archive on the server (docs/search.md): the search
 * box's query and the filter bar's picks over the picked window, the hits per
 * bucket drawn as a bar chart, the hits newest first in a list that asks for
 * the next page as the reader scrolls near its end. Enter or a click on a hit
 * opens its object. The whole search is in the URL: `#/search?q=…&window=6h`.
 */
export function SearchView({ route, navigate, now }: SearchViewProps) {
  const narrow = useMedia('(max-width: 720px)');
  const { filters } = route;
  const q = serverQuery(filters);
  const windowMs = WINDOWS[route.window]!;
  const bucketMs = bucketSizeFor(windowMs);
  const key = `${q}|${filters.namespace}|${route.window}`;
  const [state, setState] = useState<SearchState>({ key: '', phase: 'waiting', hits: [], next: undefined, histogram: undefined, since: 0, message: '' });
  const current = useRef(state);
  current.current = state;
  const inflight = useRef<AbortController | undefined>(undefined);

  const fetchPage = (base: SearchState, first: boolean): void => {
    inflight.current?.abort();
    const abort = new AbortController();
    inflight.current = abort;
    setState({ ...base, phase: 'loading' });
    searchArchive({
      q,
      since: base.since,
      namespace: filters.namespace || undefined,
      limit: SEARCH_PAGE,
      histogramMs: first ? bucketMs : undefined,
      continue: first ? undefined : base.next,
      signal: abort.signal,
    }).then(
      (page) => {
        if (abort.signal.aborted) return;
        setState({
          ...base,
          phase: 'done',
          hits: [...base.hits, ...page.items.map((i) => ({ row: toRow(i.event), matched: i.matched, message: markParts(i.event.message ?? '', i.messageMarks) }))],
          next: page.metadata.continue || undefined,
          histogram: first && page.histogram !== undefined ? histogramBuckets(page.histogram, bucketMs) : base.histogram,
          message: '',
        });
      },
      (e: unknown) => {
        if (abort.signal.aborted) return;
        setState({ ...base, phase: 'error', message: messageOf(e) });
      },
    );
  };

  useEffect(() => {
    setState((s) => ({ ...s, key, phase: 'waiting' }));
    const timer = setTimeout(() => {
      fetchPage({ key, phase: 'loading', hits: [], next: undefined, histogram: undefined, since: Date.now() - windowMs, message: '' }, true);
    }, DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      inflight.current?.abort();
    };
  }, [key]);

  const loadMore = (): void => {
    const s = current.current;
    if (s.key !== key || s.phase !== 'done' || s.next === undefined) return;
    fetchPage(s, false);
  };

  const rowHeight = narrow ? 60 : 30;
  const onScrollTop = (top: number): void => {
    const list = document.getElementById('search-list');
    const view = list?.clientHeight ?? 600;
    // Ask for the next page while a screenful or two remains, so scrolling seldom waits.
    if (top + view * 2 >= state.hits.length * rowHeight) loadMore();
  };
  // A page the server ended short (it examines a bounded number of candidates a request) may not fill the list,
  // and a list that does not scroll asks for nothing: the next page is asked for at once, as a scroll to the top would.
  useEffect(() => {
    if (state.phase === 'done' && state.next !== undefined) onScrollTop(0);
  }, [state.phase, state.next]);

  const total = state.histogram?.total;
  // The query's words and phrases, marked in each hit's message as text nodes (never HTML: the message is a stranger's), its controls shown.
  const renderRow = ({ row: r, matched, message }: SearchHit) => (
    <div class={`event ${r.type === 'Warning' ? 'warning' : ''}`} title={matched.length > 0 ? `matched: ${matched.join(', ')}` : undefined}>
      <span class="c-age" title={Number.isNaN(r.last) ? '' : new Date(r.last).toISOString()}>{age(r.last, now)}</span>
      <span class="c-type"><span class="badge"><EventText text={r.type} /></span></span>
      <span class="c-reason"><EventText text={r.reason} /></span>
      <span class="c-object"><EventText text={r.kind.toLowerCase()} />/<EventText text={r.objectName} /></span>
      <span class="c-ns">{r.cluster !== '' ? <span class="cluster-tag" title="cluster"><EventText text={r.cluster} /></span> : null}<EventText text={r.namespace} /></span>
      <span class="c-count" title={`${r.count} times`}>{r.count > 1 ? `×${compact(r.count)}` : ''}</span>
      <span class="c-message"><EventText parts={message} /></span>
    </div>
  );

  const fresh = state.key === key;
  return (
    <section class="view search" aria-labelledby="search-title">
      <div class="toolbar">
        <h2 id="search-title">Search the archive</h2>
        <WindowPicker route={route} navigate={navigate} />
        <span class="count" role="status" data-phase={fresh ? state.phase : 'waiting'} data-total={total ?? ''} data-shown={state.hits.length}>
          {!fresh || state.phase === 'waiting' || (state.phase === 'loading' && state.hits.length === 0)
            ? 'Searching…'
            : `${state.hits.length.toLocaleString()}${total !== undefined ? ` of ${total.toLocaleString()}` : ''} hits in the last ${route.window}${state.next !== undefined ? ' · scroll for more' : ''}`}
        </span>
      </div>
      {fresh && state.phase === 'error' ? (
        <p class="search-error" role="alert">{state.message}</p>
      ) : null}
      {state.histogram !== undefined && fresh ? (
        <BarChart data={state.histogram} now={now} label={`Hits per ${bucketLabel(bucketMs)} over the last ${route.window}: ${state.histogram.total} in all`} />
      ) : null}
      {narrow ? null : <EventListHead />}
      <VirtualList
        id="search-list"
        items={fresh ? state.hits : []}
        rowHeight={rowHeight}
        label="Hits, newest first. Enter opens the object's events."
        renderRow={renderRow}
        onActivate={(h) => navigate({ object: h.row.objectKey })}
        onScrollTop={onScrollTop}
        empty={fresh && state.phase === 'done' ? 'No event matches the search in this window. Pick a longer window or loosen the query.' : fresh && state.phase === 'error' ? 'The search failed.' : 'Searching…'}
      />
      <p class="hint-line">
        <kbd>/</kbd> search · words, <kbd>"phrases"</kbd>, <kbd>-word</kbd>, <kbd>reason:</kbd> <kbd>ns:</kbd> <kbd>kind:</kbd> <kbd>name:web-*</kbd> … (docs/search.md) · <kbd>Enter</kbd> open
      </p>
    </section>
  );
}
