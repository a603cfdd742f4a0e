import type { Incident } from '../../api/index.js';
import type { Filters } from './model.js';
import { EMPTY_FILTERS } from './model.js';
import { DEFAULT_WINDOW } from './route.js';
import type { Route } from './route.js';

// An incident's timeline opens with this share of its span before and after it, and at least MIN_MARGIN_MS:
// the steps that led to it and what followed stay in view.
const MARGIN_SHARE = 0.1;
const MIN_MARGIN_MS = 5 * 60_000;

/** incidentsKey names what an incidents request depends on: the window, the namespace and the cluster. */
export function incidentsKey(route: Pick<Route, 'window' | 'filters'>): string {
  return `${route.window}|${route.filters.namespace}|${route.filters.cluster}`;
}

/** rootParts splits an incident's root `Kind/name` at its first slash. */
export function rootParts(root: string): { kind: string; name: string } {
  const slash = root.indexOf('/');
  return slash < 0 ? { kind: '', name: root } : { kind: root.slice(0, slash), name: root.slice(slash + 1) };
}

/** rootObjectKey is the object panel's `Kind/namespace/name` of an incident's root. */
export function rootObjectKey(i: Incident): string {
  const { kind, name } = rootParts(i.root);
  return `${kind}/${i.namespace}/${name}`;
}

/** startMs is the earliest an incident can have begun: its start, or the earliest bound of an estimated one. */
function startMs(i: Incident): number {
  const t = Date.parse(i.start.time);
  const earliest = i.start.estimated && i.start.earliest ? Date.parse(i.start.earliest) : NaN;
  return Number.isNaN(earliest) ? t : Math.min(t, earliest);
}

/**
 * incidentTimeline is the route that opens an incident: the timeline of its
 * root's namespace (and cluster) over a window around it, following now while
 * it is ongoing, with the root open in the object panel.
 */
export function incidentTimeline(i: Incident, cluster: string): Route {
  const from = startMs(i);
  const last = Date.parse(i.lastSeen);
  const end = Number.isNaN(last) ? from : Math.max(from, last);
  const margin = Math.max(MIN_MARGIN_MS, (end - from) * MARGIN_SHARE);
  return {
    view: 'timeline',
    filters: { ...EMPTY_FILTERS, cluster: i.cluster ?? cluster, namespace: i.namespace },
    window: DEFAULT_WINDOW,
    by: 'reason',
    from: Number.isNaN(from) ? undefined : Math.floor(from - margin),
    to: i.ongoing || Number.isNaN(end) ? undefined : Math.ceil(end + margin),
    object: rootObjectKey(i),
  };
}

/**
 * incidentMatcher applies the filter bar to incidents the server already
 * narrowed by namespace and cluster: a kind matches any of its objects, a type
 * or reason any of its events, and the words the cause, the objects and the
 * namespace; case-insensitive as the other views.
 */
export function incidentMatcher(f: Filters): (i: Incident) => boolean {
  const kind = f.kind.trim().toLowerCase();
  const type = f.type.trim().toLowerCase();
  const reason = f.reason.trim().toLowerCase();
  const words = f.q.trim().toLowerCase().split(/\s+/).filter((w) => w !== '');
  return (i) => {
    if (kind !== '' && !i.objects.concat(i.root).some((o) => rootParts(o).kind.toLowerCase() === kind)) return false;
    if (type !== '' && !i.evidence.some((r) => r.type.toLowerCase() === type)) return false;
    if (reason !== '' && !i.evidence.some((r) => r.reason.toLowerCase() === reason)) return false;
    if (words.length === 0) return true;
    const haystack = [i.cause, i.kind, i.namespace, i.cluster ?? '', i.root, ...i.objects].join('\n').toLowerCase();
    return words.every((w) => haystack.includes(w));
  };
}
