import type { Filters } from './model.js';

/** View names the screens of the UI. */
export type View = 'live' | 'dashboard' | 'timeline' | 'search' | 'incidents';

/** GroupBy is what the warnings dashboard counts by; `cluster` where the archive holds several. */
export type GroupBy = 'reason' | 'namespace' | 'kind' | 'cluster';

const GROUP_BYS: readonly GroupBy[] = ['reason', 'namespace', 'kind', 'cluster'];

/**
 * Route is the whole view state, encoded in the URL hash so that a link pasted
 * into an incident channel opens the same view: `#/timeline?ns=shop&from=…&to=…`.
 */
export interface Route {
  view: View;
  filters: Filters;
  /** window is the look-back of the dashboard, the search and the incidents, a WINDOWS key. */
  window: string;
  by: GroupBy;
  /** from and to bound the timeline (Unix ms); undefined means the last hour up to now. */
  from: number | undefined;
  to: number | undefined;
  /** object is the `Kind/namespace/name` whose events are open, or ''. */
  object: string;
}

/** WINDOWS are the selectable look-back windows (dashboard, search, incidents) in ms. */
export const WINDOWS: Record<string, number> = {
  '15m': 15 * 60_000,
  '1h': 60 * 60_000,
  '6h': 6 * 60 * 60_000,
  '24h': 24 * 60 * 60_000,
  '7d': 7 * 24 * 60 * 60_000,
};

/** DEFAULT_WINDOW is the look-back a view opens with; the landing page asks for the incidents of this window. */
export const DEFAULT_WINDOW = '1h';

const VIEWS: readonly View[] = ['live', 'dashboard', 'timeline', 'search', 'incidents'];

function isoMs(s: string | null): number | undefined {
  if (s === null || s === '') return undefined;
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? undefined : ms;
}

/** parseRoute reads a location hash such as `#/live?cluster=prod&ns=default&type=Warning`. */
export function parseRoute(hash: string): Route {
  const text = hash.replace(/^#\/?/, '');
  const q = text.indexOf('?');
  const path = q < 0 ? text : text.slice(0, q);
  const params = new URLSearchParams(q < 0 ? '' : text.slice(q + 1));
  const view = (VIEWS as readonly string[]).includes(path) ? (path as View) : 'live';
  const by = params.get('by');
  const window = params.get('window') ?? '';
  return {
    view,
    filters: {
      cluster: params.get('cluster') ?? '',
      namespace: params.get('ns') ?? '',
      kind: params.get('kind') ?? '',
      type: params.get('type') ?? '',
      reason: params.get('reason') ?? '',
      q: params.get('q') ?? '',
    },
    window: window in WINDOWS ? window : DEFAULT_WINDOW,
    by: (GROUP_BYS as readonly (string | null)[]).includes(by) ? (by as GroupBy) : 'reason',
    from: isoMs(params.get('from')),
    to: isoMs(params.get('to')),
    object: params.get('object') ?? '',
  };
}

/** formatRoute writes a Route as a hash, leaving out what is at its default. */
export function formatRoute(r: Route): string {
  const p = new URLSearchParams();
  const put = (k: string, v: string): void => {
    if (v !== '') p.set(k, v);
  };
  put('cluster', r.filters.cluster);
  put('ns', r.filters.namespace);
  put('kind', r.filters.kind);
  put('type', r.filters.type);
  put('reason', r.filters.reason);
  put('q', r.filters.q);
  if (r.view === 'dashboard') {
    if (r.window !== DEFAULT_WINDOW) put('window', r.window);
    if (r.by !== 'reason') put('by', r.by);
  }
  if ((r.view === 'search' || r.view === 'incidents') && r.window !== DEFAULT_WINDOW) put('window', r.window);
  if (r.view === 'timeline') {
    if (r.from !== undefined) put('from', new Date(r.from).toISOString());
    if (r.to !== undefined) put('to', new Date(r.to).toISOString());
  }
  put('object', r.object);
  const query = p.toString();
  return `#/${r.view}${query === '' ? '' : `?${query}`}`;
}
