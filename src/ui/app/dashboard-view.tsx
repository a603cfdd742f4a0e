import { useMemo } from 'preact/hooks';
import { isolateLine } from '../../api/index.js';
import { marksFromTimeline, topTallies } from './aggregate.js';
import type { Mark, Tally } from './aggregate.js';
import type { EventCache } from './event-cache.js';
import { EventText } from './event-text.js';
import { compact } from './format.js';
import { useChanges, useTimeline } from './hooks.js';
import { EMPTY_FILTERS, isFiltered, rowMatcher } from './model.js';
import type { GroupBy, Route } from './route.js';
import type { Navigate } from './use-route.js';
import { WINDOWS } from './route.js';
import { BarChart } from './bar-chart.js';
import { bucketLabel, bucketSizeFor, stackBuckets } from './buckets.js';
import { WindowPicker } from './window-picker.js';

/** DashboardViewProps configure the DashboardView. */
export interface DashboardViewProps {
  cache: EventCache;
  route: Route;
  navigate: Navigate;
  now: number;
}

const TOP_SERIES = 6;
const TOP_ROWS = 10;
// New events ask for the counts again at most this often: the server decompresses the whole window each time.
const CHANGE_REFRESH_MS = 2000;
// Without new events the counts are asked for again this often, so that old warnings leave the window.
const IDLE_REFRESH_MS = 30_000;

const GROUP_KEYS: Record<GroupBy, (m: Mark) => string> = {
  reason: (m) => m.reason,
  namespace: (m) => m.namespace,
  kind: (m) => m.kind,
  cluster: (m) => m.cluster,
};

/**
 * DashboardView counts Warning events over a selectable window: a chart by
 * reason, namespace or kind (or cluster, where the archive holds several),
 * totals for each, and the noisiest objects. It
 * counts the rows of the server's timeline (src/timeline, what `kevents
 * timeline` prints): observed occurrences where the archive has them, the
 * rest estimated by the same rule, so the UI computes no times of its own.
 */
export function DashboardView({ cache, route, navigate, now }: DashboardViewProps) {
  const changes = useChanges(cache, CHANGE_REFRESH_MS);
  const windowMs = WINDOWS[route.window] ?? 3_600_000;
  const bucketMs = bucketSizeFor(windowMs);
  const buckets = Math.round(windowMs / bucketMs);
  // Buckets align to their width so that the chart shifts by whole buckets.
  const to = Math.ceil(now / bucketMs) * bucketMs;
  const from = to - windowMs;
  const served = useTimeline(
    { since: from, until: to, namespace: route.filters.namespace || undefined, types: ['Warning'], cluster: route.filters.cluster || undefined },
    `${route.window}|${route.filters.namespace}|${route.filters.cluster}|${Math.floor(now / IDLE_REFRESH_MS)}|${changes}`,
  );
  const { filters } = route;
  const filterKey = `${filters.cluster}|${filters.namespace}|${filters.kind}|${filters.reason}|${filters.q}`;
  // By cluster only where there are clusters to tell apart; a link that asks for it keeps it.
  const clustered = cache.clusters.length > 1 || route.by === 'cluster';
  const timeline = served.timeline;
  const marks = useMemo(() => {
    if (timeline === undefined) return [];
    const match = rowMatcher({ ...filters, type: 'Warning' });
    return marksFromTimeline(timeline.rows).filter((m) => m.t >= from && m.t < to && match(m));
  }, [timeline, from, to, filterKey]);

  const by = GROUP_KEYS[route.by];
  const stacked = useMemo(() => stackBuckets(marks, from, bucketMs, buckets, by, TOP_SERIES), [marks, route.by, from, bucketMs]);
  const tallies = useMemo(
    () => ({
      reason: topTallies(marks, GROUP_KEYS.reason, TOP_ROWS),
      namespace: topTallies(marks, GROUP_KEYS.namespace, TOP_ROWS),
      kind: topTallies(marks, GROUP_KEYS.kind, TOP_ROWS),
      cluster: topTallies(marks, GROUP_KEYS.cluster, TOP_ROWS),
      objects: topTallies(marks, (m) => m.objectKey, TOP_ROWS),
    }),
    [marks],
  );
  const total = marks.reduce((s, m) => s + m.n, 0);
  const source =
    timeline === undefined
      ? served.phase === 'error'
        ? `not available: ${served.message}`
        : 'loading'
      : timeline.summary.history === 'occurrences'
        ? "from the archive's occurrences, and estimated for events it has none of"
        : 'estimated from event counts: repeats spread between first and last seen';

  return (
    <section class="view dashboard" aria-labelledby="dash-title">
      <div class="toolbar">
        <h2 id="dash-title">Warnings</h2>
        <WindowPicker route={route} navigate={navigate} />
        <label class="inline">
          <span>Chart by</span>
          <select value={route.by} onChange={(e) => navigate({ by: e.currentTarget.value as GroupBy })}>
            <option value="reason">reason</option>
            <option value="namespace">namespace</option>
            <option value="kind">kind</option>
            {clustered ? <option value="cluster">cluster</option> : null}
          </select>
        </label>
        <span class="count" data-total={total}>
          {Math.round(total).toLocaleString()} warnings in the last {route.window}
        </span>
      </div>
      {total === 0 ? (
        <EmptyState window={route.window} filtered={isFiltered({ ...filters, type: '' })} loading={timeline === undefined && served.phase === 'loading'} navigate={navigate} />
      ) : (
        <BarChart
          data={stacked}
          now={now}
          label={`Warnings per ${bucketLabel(bucketMs)} by ${route.by} over the last ${route.window}: ${tallies[route.by]
            .slice(0, 3)
            .map((t) => `${t.key === '' ? '(none)' : isolateLine(t.key)} ${Math.round(t.n)}`)
            .join(', ')}${stacked.estimatedTotal > 0 ? `; the time of ${stacked.estimatedTotal} is estimated` : ''}`}
        />
      )}
      <p class="source">Counts are {source}.</p>
      <div class="tallies">
        {clustered ? <TallyTable title="By cluster" rows={tallies.cluster} onPick={(k) => navigate({ filters: { ...filters, cluster: k } })} /> : null}
        <TallyTable title="By reason" rows={tallies.reason} onPick={(k) => navigate({ filters: { ...filters, reason: k } })} />
        <TallyTable title="By namespace" rows={tallies.namespace} onPick={(k) => navigate({ filters: { ...filters, namespace: k } })} />
        <TallyTable title="By kind" rows={tallies.kind} onPick={(k) => navigate({ filters: { ...filters, kind: k } })} />
        <TallyTable title="Noisiest objects" rows={tallies.objects} onPick={(k) => navigate({ object: k })} />
      </div>
    </section>
  );
}

/** WIDER is the next window to try when one is empty. */
const WIDER: Record<string, string> = { '15m': '1h', '1h': '24h', '6h': '24h', '24h': '7d' };

/**
 * EmptyState says why the chart is empty and what to do: clear the filters,
 * widen the window, or send the server some events.
 */
function EmptyState({ window, filtered, loading, navigate }: { window: string; filtered: boolean; loading: boolean; navigate: Navigate }) {
  if (loading) return <div class="chart empty" role="status">Loading events…</div>;
  const wider = WIDER[window];
  return (
    <div class="chart empty" role="status">
      <p class="empty-title">No warnings in the last {window}.</p>
      {filtered ? (
        <p>
          The filters may hide them:{' '}
          <button type="button" class="link" onClick={() => navigate({ filters: EMPTY_FILTERS })}>
            clear the filters
          </button>
          .
        </p>
      ) : null}
      {wider !== undefined ? (
        <p>
          Look further back:{' '}
          <button type="button" class="link" onClick={() => navigate({ window: wider })}>
            the last {wider}
          </button>
          .
        </p>
      ) : null}
      <p>
        Warnings show here as soon as something writes them to this server. To see one now, record it (in a kevents checkout,{' '}
        <code>node dist/bin/kevents.js</code> stands for <code>kevents</code>):
      </p>
      <pre>
        <code>{`kevents record --server ${location.origin} --for pod/web-1 --type Warning --reason BackOff --action Restarting --message "Back-off restarting failed container"`}</code>
      </pre>
      <p>
        Or archive a cluster's events into it: <code>kevents serve --mirror ~/.kube/config</code>, or point any client at it (
        <code>kubectl --server {location.origin} …</code>).
      </p>
    </div>
  );
}

function TallyTable({ title, rows, onPick }: { title: string; rows: Tally[]; onPick: (key: string) => void }) {
  const max = rows[0]?.n ?? 1;
  return (
    <table class="tally">
      <caption>{title}</caption>
      <thead>
        <tr>
          <th scope="col">{title.replace(/^By /, '').replace(/^Noisiest objects$/, 'object')}</th>
          <th scope="col" class="num">warnings</th>
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 ? (
          <tr>
            <td colSpan={2} class="none">none</td>
          </tr>
        ) : (
          rows.map((t) => (
            <tr key={t.key}>
              <td>
                <button type="button" class="link" onClick={() => onPick(t.key)}>
                  {t.key === '' ? '(none)' : <EventText text={t.key} />}
                </button>
                <span class="bar" style={{ width: `${(100 * t.n) / max}%` }} />
              </td>
              <td class="num">{compact(t.n)}</td>
            </tr>
          ))
        )}
      </tbody>
    </table>
  );
}
