import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { EventCache } from './event-cache.js';
import { EventListHead } from './event-list-head.js';
import { EventText } from './event-text.js';
import { age, compact } from './format.js';
import { useCache, useMedia } from './hooks.js';
import { isFiltered, rowMatcher } from './model.js';
import type { EventRow } from './model.js';
import type { Route } from './route.js';
import type { Navigate } from './use-route.js';
import { VirtualList } from './virtual-list.js';

/** LiveViewProps configure the LiveView. */
export interface LiveViewProps {
  cache: EventCache;
  route: Route;
  navigate: Navigate;
  now: number;
}

// A row highlights for this long after its count went up while watched.
const BUMP_HIGHLIGHT_MS = 3000;

/**
 * LiveView is the watch stream, newest first. It holds still while paused or
 * while the reader has scrolled away from the top, and says how many changes
 * wait, so rows never jump under the reader's eyes.
 */
export function LiveView({ cache, route, navigate, now }: LiveViewProps) {
  useCache(cache);
  const narrow = useMedia('(max-width: 720px)');
  const [paused, setPaused] = useState(false);
  const [scrolledAway, setScrolledAway] = useState(false);
  const held = paused || scrolledAway;
  const snapshot = useRef({ rows: cache.rows, changes: cache.changes });
  if (!held) snapshot.current = { rows: cache.rows, changes: cache.changes };
  const rows = snapshot.current.rows;
  const waiting = cache.changes - snapshot.current.changes;

  const { filters } = route;
  const shown = useMemo(() => {
    if (!isFiltered(filters)) return rows;
    const match = rowMatcher(filters);
    return rows.filter(match);
  }, [rows, filters.cluster, filters.namespace, filters.kind, filters.type, filters.reason, filters.q]);
  // Rows name their cluster where there are several to tell apart.
  const clustered = cache.clusters.length > 1;

  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if (e.key === 'p' && !isTyping(e)) {
        e.preventDefault();
        setPaused((p) => !p);
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);

  const resume = (): void => {
    setPaused(false);
    setScrolledAway(false);
    const list = document.getElementById('live-list');
    if (list) list.scrollTop = 0;
  };

  const renderRow = (r: EventRow) => (
    <div class={`event ${r.type === 'Warning' ? 'warning' : ''} ${now - r.bumpedAt < BUMP_HIGHLIGHT_MS ? 'bumped' : ''}`}>
      <span class="c-age" title={Number.isNaN(r.last) ? '' : new Date(r.last).toISOString()}>{age(r.last, now)}</span>
      <span class="c-type"><span class="badge"><EventText text={r.type} /></span></span>
      <span class="c-reason"><EventText text={r.reason} /></span>
      <span class="c-object"><EventText text={r.kind.toLowerCase()} />/<EventText text={r.objectName} /></span>
      <span class="c-ns">{clustered && r.cluster !== '' ? <span class="cluster-tag" title="cluster"><EventText text={r.cluster} /></span> : null}<EventText text={r.namespace} /></span>
      <span class="c-count" title={`${r.count} times`}>{r.count > 1 ? `×${compact(r.count)}` : ''}</span>
      <span class="c-message"><EventText text={r.message} /></span>
    </div>
  );

  return (
    <section class="view live" aria-labelledby="live-title">
      <div class="toolbar">
        <h2 id="live-title">Live events</h2>
        <button type="button" aria-pressed={paused} onClick={() => (paused ? resume() : setPaused(true))} title="Pause or resume (p)">
          {paused ? 'Resume' : 'Pause'}
        </button>
        {held && waiting > 0 ? (
          <button type="button" class="waiting" onClick={resume}>
            {waiting.toLocaleString()} new {waiting === 1 ? 'change' : 'changes'} — show
          </button>
        ) : null}
        <span class="count" aria-live="off">
          {shown.length.toLocaleString()} of {rows.length.toLocaleString()} events
        </span>
      </div>
      {narrow ? null : <EventListHead />}
      <VirtualList
        id="live-list"
        items={shown}
        rowHeight={narrow ? 60 : 30}
        label="Events, newest first. Enter opens the object's events."
        renderRow={renderRow}
        onActivate={(r) => navigate({ object: r.objectKey })}
        onScrollTop={(top) => setScrolledAway(top > 4)}
        empty={
          cache.status.phase === 'loading' ? 'Loading events…' : rows.length === 0 ? 'No events yet. New ones appear here as they happen.' : 'No event matches the filters.'
        }
      />
      <p class="hint-line">
        <kbd>p</kbd> pause · <kbd>/</kbd> search · <kbd>↑</kbd>
        <kbd>↓</kbd> move · <kbd>Enter</kbd> open
      </p>
    </section>
  );
}

/** isTyping tells whether a key press belongs to a text field rather than to a shortcut. */
export function isTyping(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  return t !== null && (t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA' || t.isContentEditable) || e.ctrlKey || e.metaKey || e.altKey;
}
