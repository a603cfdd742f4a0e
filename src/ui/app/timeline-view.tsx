import { useMemo, useRef, useState } from 'preact/hooks';
import { humanDuration, isolateLine } from '../../api/index.js';
import { lanesOf, marksFromTimeline } from './aggregate.js';
import type { Lane, Mark } from './aggregate.js';
import type { EventCache } from './event-cache.js';
import { EventText } from './event-text.js';
import { clockTime } from './format.js';
import { useChanges, useMedia, useTimeline } from './hooks.js';
import { rowMatcher } from './model.js';
import type { Route } from './route.js';
import type { Navigate } from './use-route.js';
import { VirtualList } from './virtual-list.js';

/** TimelineViewProps configure the TimelineView. */
export interface TimelineViewProps {
  cache: EventCache;
  route: Route;
  navigate: Navigate;
  now: number;
}

const DEFAULT_SPAN_MS = 3_600_000;
const MIN_SPAN_MS = 10_000;
const PRESETS: [string, number][] = [
  ['15m', 15 * 60_000],
  ['1h', 3_600_000],
  ['6h', 6 * 3_600_000],
  ['24h', 24 * 3_600_000],
];
// Marks closer than this share of the width merge into one, so a lane costs
// at most a few hundred elements however many repeats it has.
const MERGE_FRACTION = 0.004;
// A timeline that follows now is asked for again this often.
const FOLLOW_REFRESH_MS = 10_000;

interface Dot {
  x: number;
  n: number;
  warning: boolean;
  estimated: boolean;
  title: string;
}

function dotsOf(lane: Lane, from: number, span: number): Dot[] {
  const dots: Dot[] = [];
  for (const m of lane.marks) {
    const x = (m.t - from) / span;
    const prev = dots[dots.length - 1];
    if (prev !== undefined && x - prev.x < MERGE_FRACTION) {
      prev.n += m.n;
      prev.warning ||= m.type === 'Warning';
      prev.estimated &&= m.estimated;
      continue;
    }
    dots.push({ x, n: m.n, warning: m.type === 'Warning', estimated: m.estimated, title: markTitle(m) });
  }
  for (const d of dots) if (d.n > 1) d.title += ` (${d.n} here)`;
  return dots;
}

/** markTime is a mark's time; an estimated one is never shown as a known time, but as the span it lies in. */
function markTime(m: Mark): string {
  if (!m.estimated) return clockTime(m.t);
  const at = (ms: number | undefined): string => (ms === undefined ? '?' : clockTime(ms));
  return m.earliest === m.latest && m.earliest !== undefined ? `~${at(m.t)} (estimated)` : `~${at(m.t)} (estimated: between ${at(m.earliest)} and ${at(m.latest)})`;
}

function markTitle(m: Mark): string {
  // A tooltip is plain text: each value in it isolated and escaped by isolateLine.
  return `${markTime(m)} ${isolateLine(m.type)} ${isolateLine(m.reason)}${m.n > 1 ? ` ×${m.n}` : ''}: ${isolateLine(m.message)}`;
}

function toLocalInput(ms: number): string {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

function ticks(from: number, to: number, count: number): number[] {
  const span = to - from;
  const steps = [1, 5, 10, 30, 60, 300, 600, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 7 * 86400].map((s) => s * 1000);
  const step = steps.find((s) => span / s <= count) ?? steps[steps.length - 1]!;
  const out: number[] = [];
  for (let t = Math.ceil(from / step) * step; t < to; t += step) out.push(t);
  return out;
}

/**
 * TimelineView draws a lane per object and a mark per row of the server's
 * timeline (src/timeline, the rows `kevents timeline` prints) over a time
 * range that the URL keeps: zoom with the presets, the buttons, the date
 * fields or by dragging across the axis; Enter or a click on a lane opens that
 * object's events and next steps. Estimated rows are drawn hollow.
 */
export function TimelineView({ cache, route, navigate, now }: TimelineViewProps) {
  // New events ask for the timeline again, at most this often: the server decompresses the whole window each time.
  const changes = useChanges(cache, 5000);
  const narrow = useMedia('(max-width: 720px)');
  const following = route.to === undefined;
  const to = route.to ?? now;
  const from = route.from ?? to - DEFAULT_SPAN_MS;
  const span = Math.max(MIN_SPAN_MS, to - from);
  const served = useTimeline(
    { since: from, until: from + span, namespace: route.filters.namespace || undefined, cluster: route.filters.cluster || undefined },
    `${route.from}|${following ? `${Math.floor(now / FOLLOW_REFRESH_MS)}|${changes}` : route.to}|${route.filters.namespace}|${route.filters.cluster}`,
  );
  const { filters } = route;
  const filterKey = `${filters.cluster}|${filters.namespace}|${filters.kind}|${filters.type}|${filters.reason}|${filters.q}`;
  // Lanes name their cluster where there are several to tell apart.
  const clustered = cache.clusters.length > 1;
  const timeline = served.timeline;
  const lanes = useMemo(() => {
    if (timeline === undefined) return [];
    const match = rowMatcher(filters);
    return lanesOf(marksFromTimeline(timeline.rows).filter(match));
  }, [timeline, filterKey]);
  const estimated = timeline?.summary.estimatedRows ?? 0;

  const setRange = (f: number, t: number, push = true): void => {
    const s = Math.max(MIN_SPAN_MS, t - f);
    navigate({ from: Math.round(f), to: Math.round(f + s) }, push);
  };
  const zoom = (factor: number): void => {
    const mid = from + span / 2;
    setRange(mid - (span * factor) / 2, mid + (span * factor) / 2);
  };
  const pan = (share: number): void => setRange(from + span * share, to + span * share);

  const axis = useRef<HTMLDivElement>(null);
  const [drag, setDrag] = useState<{ a: number; b: number } | null>(null);
  const fraction = (clientX: number): number => {
    const r = axis.current?.getBoundingClientRect();
    return r === undefined || r.width === 0 ? 0 : Math.min(1, Math.max(0, (clientX - r.left) / r.width));
  };

  const renderLane = (lane: Lane) => {
    const [kind, namespace, name] = lane.objectKey.split('/');
    return (
      <div class="lane">
        <span class="lane-label" title={lane.cluster !== '' ? `${isolateLine(lane.objectKey)} in ${isolateLine(lane.cluster)}` : isolateLine(lane.objectKey)}>
          <span class="lane-kind"><EventText text={kind} /></span> <EventText text={name} />
          <span class="lane-ns">{clustered && lane.cluster !== '' ? <span class="cluster-tag" title="cluster"><EventText text={lane.cluster} /></span> : null}<EventText text={namespace} /></span>
          {lane.warnings > 0 ? <span class="lane-warn" title={`${lane.warnings} warnings`}>⚠ {lane.warnings}</span> : null}
        </span>
        <span class="lane-track" aria-hidden="true">
          {dotsOf(lane, from, span).map((d, i) => (
            <span
              key={i}
              class={`mark${d.warning ? ' warning' : ''}${d.estimated ? ' estimated' : ''}${d.n > 1 ? ' many' : ''}`}
              style={{ left: `${(d.x * 100).toFixed(3)}%` }}
              title={d.title}
            />
          ))}
        </span>
        <span class="sr-only">
          {lane.total} occurrences, {lane.warnings} warnings, first at {clockTime(lane.first, now)}
        </span>
      </div>
    );
  };

  return (
    <section class="view timeline" aria-labelledby="tl-title">
      <div class="toolbar">
        <h2 id="tl-title">Timeline</h2>
        <div class="segmented" role="group" aria-label="Range">
          {PRESETS.map(([label, ms]) => (
            <button key={label} type="button" aria-pressed={following && span === ms}
              onClick={() => navigate({ from: ms === DEFAULT_SPAN_MS ? undefined : now - ms, to: undefined }, true)}>
              {label}
            </button>
          ))}
        </div>
        <div class="segmented" role="group" aria-label="Zoom and pan">
          <button type="button" onClick={() => pan(-0.5)} aria-label="Earlier">◀</button>
          <button type="button" onClick={() => zoom(0.5)} aria-label="Zoom in">+</button>
          <button type="button" onClick={() => zoom(2)} aria-label="Zoom out">−</button>
          <button type="button" onClick={() => pan(0.5)} aria-label="Later">▶</button>
        </div>
        <label class="inline">
          <span>From</span>
          <input type="datetime-local" value={toLocalInput(from)}
            onChange={(e) => {
              const f = Date.parse(e.currentTarget.value);
              if (!Number.isNaN(f)) setRange(f, Math.max(to, f + MIN_SPAN_MS));
            }} />
        </label>
        <label class="inline">
          <span>To</span>
          <input type="datetime-local" value={toLocalInput(from + span)}
            onChange={(e) => {
              const t = Date.parse(e.currentTarget.value);
              if (!Number.isNaN(t)) setRange(Math.min(from, t - MIN_SPAN_MS), t);
            }} />
        </label>
        <span class="count" data-estimated={estimated}>
          {lanes.length.toLocaleString()} objects · {humanDuration(span)}
          {timeline === undefined ? '' : timeline.summary.history === 'occurrences' ? ' · from the archive' : ' · from event counts'}
          {estimated > 0 ? ` · ${estimated.toLocaleString()} estimated (hollow)` : ''}
        </span>
      </div>
      <div class="axis-row">
        <span class="lane-label axis-caption">{narrow ? '' : 'Object'}</span>
        <div
          ref={axis}
          class="axis"
          title="Drag to zoom into a range"
          onPointerDown={(e) => {
            e.currentTarget.setPointerCapture(e.pointerId);
            const f = fraction(e.clientX);
            setDrag({ a: f, b: f });
          }}
          onPointerMove={(e) => drag && setDrag({ a: drag.a, b: fraction(e.clientX) })}
          onPointerUp={() => {
            if (drag && Math.abs(drag.b - drag.a) > 0.01) {
              const lo = Math.min(drag.a, drag.b);
              const hi = Math.max(drag.a, drag.b);
              setRange(from + lo * span, from + hi * span);
            }
            setDrag(null);
          }}
        >
          {ticks(from, from + span, narrow ? 3 : 8).map((t) => (
            <span key={t} class="tick" style={{ left: `${(((t - from) / span) * 100).toFixed(3)}%` }}>
              {new Date(t).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: span < 600_000 ? '2-digit' : undefined, hour12: false })}
            </span>
          ))}
          {drag ? (
            <span class="brush" style={{ left: `${Math.min(drag.a, drag.b) * 100}%`, width: `${Math.abs(drag.b - drag.a) * 100}%` }} />
          ) : null}
        </div>
      </div>
      <VirtualList
        id="timeline-list"
        items={lanes}
        rowHeight={narrow ? 52 : 30}
        label="Objects in time order of their first event. Enter opens the object's events and next steps."
        renderRow={renderLane}
        onActivate={(lane) => navigate({ object: lane.objectKey })}
        empty={
          served.phase === 'error'
            ? `Could not read the timeline: ${served.message}`
            : served.phase === 'loading' && timeline === undefined
              ? 'Loading the timeline…'
              : 'No events in this range. Zoom out or pick an earlier range.'
        }
      />
    </section>
  );
}
