import { useMemo } from 'preact/hooks';
import type { Incident } from '../../api/index.js';
import { incidentWindow, isolateLine } from '../../api/index.js';
import { CopyCommand } from './copy-command.js';
import type { EventCache } from './event-cache.js';
import { EventText } from './event-text.js';
import { age, clockTime, compact, estimateSpan } from './format.js';
import { useIncidents } from './hooks.js';
import type { Preloaded } from './hooks.js';
import { incidentMatcher, incidentsKey, incidentTimeline } from './incident-list.js';
import { formatRoute } from './route.js';
import type { Route } from './route.js';
import type { Navigate } from './use-route.js';
import { WindowPicker } from './window-picker.js';

/** IncidentsViewProps configure the IncidentsView. */
export interface IncidentsViewProps {
  cache: EventCache;
  route: Route;
  navigate: Navigate;
  now: number;
  /** preloaded is the landing page's list, for the key incidentsKey gives its route (src/ui/app/incident-list.ts). */
  preloaded?: Preloaded | undefined;
}

// Incidents are asked for again this often, so new ones show and stopped ones say so.
const REFRESH_MS = 15_000;

/** IncidentStart is when an incident began: a time the events give, or `~` and the span an estimate lies in. */
function IncidentStart({ incident, now }: { incident: Incident; now: number }) {
  const { start } = incident;
  const t = Date.parse(start.time);
  if (!start.estimated) {
    return (
      <span class="inc-since">
        <time dateTime={start.time}>{clockTime(t, now)}</time> <span class="inc-age">{age(t, now)} ago</span>
      </span>
    );
  }
  const span = estimateSpan(start.earliest, start.latest, now);
  return (
    <span class="inc-since estimated" title={`estimated: ${span}`}>
      <time dateTime={start.time}>~{clockTime(t, now)}</time> <span class="inc-age">~{age(t, now)} ago</span>
      <span class="inc-bounds">estimated: {span}</span>
    </span>
  );
}

/**
 * IncidentsView lists what went wrong over the picked window, one row per
 * incident as the server's incidents route builds it (src/diagnosis, what
 * `kevents incidents` prints), most recent first: whether it goes on, since
 * when, its root, its cause in one sentence, how often, and the next steps as
 * commands to copy. Its root opens its timeline around it, with the root's
 * events and incident in the object panel. The view is in the URL:
 * `#/incidents?ns=shop&window=6h`.
 */
export function IncidentsView({ cache, route, navigate, now, preloaded }: IncidentsViewProps) {
  const { filters } = route;
  const key = incidentsKey(route);
  const served = useIncidents(
    () => ({ window: incidentWindow({ since: route.window }, Date.now()), namespace: filters.namespace || undefined, cluster: filters.cluster || undefined }),
    key,
    REFRESH_MS,
    preloaded,
  );
  const list = served.list;
  const filterKey = `${filters.kind}|${filters.type}|${filters.reason}|${filters.q}`;
  const shown = useMemo(() => (list === undefined ? [] : list.incidents.filter(incidentMatcher(filters))), [list, filterKey]);
  // Rows name their cluster where the archive holds several.
  const clustered = cache.clusters.length > 1 || new Set(shown.map((i) => i.cluster ?? '')).size > 1;
  const ongoing = shown.filter((i) => i.ongoing).length;

  return (
    <section class="view incidents" aria-labelledby="inc-title">
      <div class="toolbar">
        <h2 id="inc-title">Incidents</h2>
        <WindowPicker route={route} navigate={navigate} />
        <span class="count" role="status" data-phase={served.phase} data-shown={shown.length}>
          {list === undefined
            ? served.phase === 'error'
              ? ''
              : 'Reading the incidents…'
            : `${shown.length.toLocaleString()}${shown.length < list.incidents.length ? ` of ${list.incidents.length.toLocaleString()}` : ''} incident${shown.length === 1 ? '' : 's'} in the last ${route.window} · ${ongoing.toLocaleString()} ongoing`}
        </span>
      </div>
      {served.phase === 'error' ? (
        <p class="search-error" role="alert">Could not read the incidents: {served.message}</p>
      ) : null}
      {list !== undefined && shown.length === 0 ? (
        <p class="empty">
          {list.incidents.length === 0 ? `No incidents in the last ${route.window}.` : 'No incident matches the filters.'}{' '}
          {route.window !== '7d' ? (
            <button type="button" class="link" onClick={() => navigate({ window: '7d' })}>Look back 7d</button>
          ) : null}
        </p>
      ) : null}
      <div class="inc-scroll">
        {shown.length > 0 ? (
          <div class="inc-row inc-head" aria-hidden="true">
            <span>Status</span>
            <span>Since</span>
            <span>Root</span>
            <span>Cause</span>
            <span class="inc-count">Count</span>
          </div>
        ) : null}
        <ol id="incident-list" class="inc-list" tabIndex={-1} aria-label="Incidents, most recent first. A root opens its timeline.">
          {shown.map((i, n) => (
            <IncidentRow key={`${i.cluster ?? ''}|${i.namespace}|${i.root}|${i.kind}|${n}`} incident={i} clustered={clustered} cluster={filters.cluster} now={now} />
          ))}
        </ol>
      </div>
    </section>
  );
}

function IncidentRow({ incident: i, clustered, cluster, now }: { incident: Incident; clustered: boolean; cluster: string; now: number }) {
  return (
    <li class={`inc-item ${i.ongoing ? 'ongoing' : 'stopped'}`} data-kind={i.kind}>
      <div class="inc-row">
        <span class="inc-status">
          <span class="badge">{i.ongoing ? 'ongoing' : 'stopped'}</span>
        </span>
        <IncidentStart incident={i} now={now} />
        <span class="inc-root">
          <a href={formatRoute(incidentTimeline(i, cluster))} aria-label={`Open the timeline of ${isolateLine(i.root)}${i.namespace ? ` in ${isolateLine(i.namespace)}` : ''}`}>
            <EventText text={i.root} />
          </a>
          <span class="inc-ns">
            {clustered && i.cluster !== undefined ? <span class="cluster-tag" title="cluster"><EventText text={i.cluster} /></span> : null}
            <EventText text={i.namespace} />
          </span>
        </span>
        <span class="inc-cause"><EventText text={i.cause} multiline /></span>
        <span class="inc-count" title={`${i.occurrences} occurrences, last seen ${clockTime(Date.parse(i.lastSeen), now)}`}>×{compact(i.occurrences)}</span>
      </div>
      {i.hints.length > 0 ? (
        <ul class="hints inc-hints" aria-label={`Next steps for ${isolateLine(i.root)}`}>
          {i.hints.map((h) => (
            <li key={h.command}>
              <EventText text={h.why} />
              <CopyCommand command={h.command} />
            </li>
          ))}
        </ul>
      ) : null}
    </li>
  );
}
