import { useEffect, useMemo } from 'preact/hooks';
import { DashboardView } from './dashboard-view.js';
import { EventCache } from './event-cache.js';
import { FilterBar } from './filter-bar.js';
import { useCache, useNow } from './hooks.js';
import { isTyping, LiveView } from './live-view.js';
import { ObjectPanel } from './object-panel.js';
import { IncidentsView } from './incidents-view.js';
import { formatRoute } from './route.js';
import { SearchView } from './search-view.js';
import { useRoute } from './use-route.js';
import type { View } from './route.js';
import { TimelineView } from './timeline-view.js';
import { useLanding } from './use-landing.js';

const TABS: { view: View; label: string; key: string }[] = [
  { view: 'live', label: 'Live', key: '1' },
  { view: 'dashboard', label: 'Warnings', key: '2' },
  { view: 'timeline', label: 'Timeline', key: '3' },
  { view: 'search', label: 'Search', key: '4' },
  { view: 'incidents', label: 'Incidents', key: '5' },
];

/**
 * App is the whole UI: one event cache shared by the views (the search and the
 * incidents ask the server), and the view state in the URL. Opened with no
 * route, it lands on the incidents when there are some, else on the live view.
 */
export function App() {
  const cache = useMemo(() => new EventCache(), []);
  useEffect(() => {
    cache.start();
    return () => cache.stop();
  }, [cache]);
  useCache(cache, 1000);
  const [route, navigate] = useRoute();
  const landing = useLanding(navigate);
  const now = useNow(1000);

  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if (e.key === 'Escape' && route.object !== '') {
        navigate({ object: '' });
        return;
      }
      if (isTyping(e)) return;
      if (e.key === '/') {
        e.preventDefault();
        document.getElementById('search')?.focus();
        return;
      }
      const tab = TABS.find((t) => t.key === e.key);
      if (tab) navigate({ view: tab.view }, true);
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [route.object]);

  useEffect(() => {
    const label = TABS.find((t) => t.view === route.view)?.label ?? '';
    document.title = `${label} · kevents`;
  }, [route.view]);

  const s = cache.status;
  const statusText =
    s.phase === 'loading'
      ? 'Loading…'
      : s.phase === 'live'
        ? s.listing
          ? `Live · loading ${s.loaded.toLocaleString()}${s.expected !== undefined ? ` of ${s.expected.toLocaleString()}` : ''}`
          : `Live · ${cache.rows.length.toLocaleString()} events`
        : s.phase === 'reconnecting'
          ? `Reconnecting… (${s.error})`
          : `Error: ${s.error}`;

  return (
    <div class={`app${route.object ? ' with-panel' : ''}`}>
      <a class="skip" href={formatRoute(route)} onClick={(e) => {
        e.preventDefault();
        document.querySelector<HTMLElement>('.vlist, .inc-list')?.focus();
      }}>Skip to the list</a>
      <header class="top">
        <h1>kevents</h1>
        <nav aria-label="Views">
          {TABS.map((t) => (
            <a key={t.view} href={formatRoute({ ...route, view: t.view })} aria-current={route.view === t.view ? 'page' : undefined}
              aria-keyshortcuts={t.key}>
              {t.label}
            </a>
          ))}
        </nav>
        <span class={`conn ${s.phase}`} role="status" data-phase={s.phase}>{statusText}</span>
      </header>
      <FilterBar cache={cache} filters={route.filters} navigate={navigate} lockType={route.view === 'dashboard' ? 'Warning' : undefined} />
      <main>
        {landing.deciding ? <p class="empty view" role="status">Loading…</p> : null}
        {route.view === 'live' && !landing.deciding ? <LiveView cache={cache} route={route} navigate={navigate} now={now} /> : null}
        {route.view === 'dashboard' ? <DashboardView cache={cache} route={route} navigate={navigate} now={now} /> : null}
        {route.view === 'timeline' ? <TimelineView cache={cache} route={route} navigate={navigate} now={now} /> : null}
        {route.view === 'search' ? <SearchView route={route} navigate={navigate} now={now} /> : null}
        {route.view === 'incidents' ? <IncidentsView cache={cache} route={route} navigate={navigate} now={now} preloaded={landing.preloaded} /> : null}
      </main>
      {route.object ? <ObjectPanel key={route.object} objectKey={route.object} cluster={route.filters.cluster} now={now} onClose={() => navigate({ object: '' })} /> : null}
    </div>
  );
}
