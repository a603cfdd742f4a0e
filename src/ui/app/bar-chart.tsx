import { useEffect, useRef, useState } from 'preact/hooks';
import { bucketLabel, countTicks } from './buckets.js';
import { EventText } from './event-text.js';
import type { StackedBuckets } from './buckets.js';

/** COLORS are the series colours, in order of size; "other" is always grey. */
export const COLORS = ['#d9480f', '#1971c2', '#2f9e44', '#9c36b5', '#e67700', '#0c8599'];
const OTHER_COLOR = '#868e96';

/** BarChartProps configure a BarChart. */
export interface BarChartProps {
  data: StackedBuckets;
  /** label describes the chart for screen readers; the tables beside it carry the same numbers as text. */
  label: string;
  /** now is the wall clock, so that ticks name the date only when it is not today. */
  now: number;
}

const HEIGHT = 260;
const PAD = { top: 10, right: 12, bottom: 26, left: 44 };

/** colorOf is a group's colour in the chart and its legend. */
export function colorOf(groups: readonly string[], i: number): string {
  return groups[i] === 'other' && i === groups.length - 1 ? OTHER_COLOR : COLORS[i % COLORS.length]!;
}

function timeLabel(t: number, bucketMs: number, now: number, seconds = bucketMs < 60_000): string {
  const d = new Date(t);
  const hm = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', ...(seconds ? { second: '2-digit' } : {}), hour12: false });
  return new Date(now).toDateString() === d.toDateString() ? hm : `${d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })} ${hm}`;
}

/** TICK_EVERY_MS are the spacings of time labels: as many as fit, on round times. */
const TICK_EVERY_MS = [60_000, 5 * 60_000, 10 * 60_000, 15 * 60_000, 30 * 60_000, 3_600_000, 3 * 3_600_000, 6 * 3_600_000, 12 * 3_600_000, 86_400_000];

function timeTicks(data: StackedBuckets, width: number): number[] {
  const from = data.starts[0] ?? 0;
  const to = from + data.starts.length * data.bucketMs;
  const room = Math.max(2, Math.floor(width / 90));
  const every = TICK_EVERY_MS.find((e) => e >= data.bucketMs && (to - from) / e <= room) ?? TICK_EVERY_MS[TICK_EVERY_MS.length - 1]!;
  const out: number[] = [];
  // Round to the local clock, so that labels read 10:00 and 10:15 rather than 10:03 and 10:18.
  const offset = new Date(from).getTimezoneOffset() * 60_000;
  for (let t = Math.ceil((from - offset) / every) * every + offset; t <= to; t += every) out.push(t);
  return out;
}

/**
 * BarChart draws counts per time bucket as stacked bars, one colour per group;
 * the part of a bar whose time is estimated (repeats spread between known
 * times) is hatched. Pointing at a bucket (or moving through them with the
 * arrow keys) shows its counts per group. It is SVG: every bar is an element
 * with its count, which tests and assistive tools can read.
 */
export function BarChart({ data, label, now }: BarChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(640);
  const [active, setActive] = useState<number | undefined>(undefined);

  useEffect(() => {
    const el = box.current;
    if (el === null) return;
    const measure = (): void => setWidth(Math.max(240, el.clientWidth));
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const n = data.starts.length;
  const ticks = countTicks(data.max);
  const yMax = ticks[ticks.length - 1]!;
  const plotW = width - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, n);
  const gap = slot > 6 ? Math.min(4, slot * 0.2) : 0;
  const y = (v: number): number => PAD.top + plotH - (plotH * v) / yMax;
  const from = data.starts[0] ?? 0;
  const x = (t: number): number => PAD.left + ((t - from) / data.bucketMs) * slot;

  const bars = [];
  for (let b = 0; b < n; b++) {
    let base = 0;
    for (let g = 0; g < data.groups.length; g++) {
      for (const estimated of [false, true]) {
        const v = (estimated ? data.estimated : data.observed)[g]![b]!;
        if (v === 0) continue;
        const top = y(base + v);
        bars.push(
          <rect
            key={`${b}-${g}-${estimated ? 'e' : 'o'}`}
            class={`bar${estimated ? ' estimated' : ''}`}
            x={PAD.left + b * slot + gap / 2}
            y={top}
            width={Math.max(1, slot - gap)}
            height={Math.max(0.5, y(base) - top)}
            fill={estimated ? `url(#hatch-${g})` : colorOf(data.groups, g)}
            data-bucket={b}
            data-group={data.groups[g]}
            data-count={v}
            data-estimated={estimated ? 'true' : 'false'}
          />,
        );
        base += v;
      }
    }
  }

  const onPointer = (e: PointerEvent): void => {
    const rect = (e.currentTarget as SVGSVGElement).getBoundingClientRect();
    const b = Math.floor((e.clientX - rect.left - PAD.left) / slot);
    setActive(b >= 0 && b < n ? b : undefined);
  };
  const onKey = (e: KeyboardEvent): void => {
    if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
    e.preventDefault();
    const step = e.key === 'ArrowLeft' ? -1 : 1;
    setActive((a) => Math.min(n - 1, Math.max(0, (a ?? (step > 0 ? -1 : n)) + step)));
  };

  return (
    <div class="chart" ref={box}>
      <svg
        width={width}
        height={HEIGHT}
        role="img"
        aria-label={label}
        tabIndex={0}
        onPointerMove={onPointer}
        onPointerLeave={() => setActive(undefined)}
        onKeyDown={onKey}
        onBlur={() => setActive(undefined)}
      >
        <defs>
          {data.groups.map((_, g) => (
            <pattern key={g} id={`hatch-${g}`} width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
              <rect width="6" height="6" fill={colorOf(data.groups, g)} fill-opacity="0.25" />
              <line x1="0" y1="0" x2="0" y2="6" stroke={colorOf(data.groups, g)} stroke-width="3" />
            </pattern>
          ))}
        </defs>
        <g class="y-axis">
          {ticks.map((v) => (
            <g key={v}>
              <line class="grid" x1={PAD.left} x2={width - PAD.right} y1={y(v)} y2={y(v)} />
              <text class="axis-label" x={PAD.left - 6} y={y(v)} dy="0.32em" text-anchor="end">
                {v}
              </text>
            </g>
          ))}
        </g>
        <g class="x-axis">
          {timeTicks(data, plotW).map((t) => (
            <text key={t} class="axis-label" x={x(t)} y={HEIGHT - 8} text-anchor="middle">
              {timeLabel(t, data.bucketMs, now, false)}
            </text>
          ))}
        </g>
        {active !== undefined ? <rect class="hover" x={PAD.left + active * slot} y={PAD.top} width={slot} height={plotH} /> : null}
        <g class="bars">{bars}</g>
      </svg>
      {active !== undefined ? <Tooltip data={data} bucket={active} left={Math.min(width - 220, Math.max(0, PAD.left + active * slot + slot + 8))} now={now} /> : null}
      <Legend data={data} />
    </div>
  );
}

function Tooltip({ data, bucket, left, now }: { data: StackedBuckets; bucket: number; left: number; now: number }) {
  const start = data.starts[bucket]!;
  const rows = data.groups
    .map((g, i) => ({ g, i, observed: data.observed[i]![bucket]!, estimated: data.estimated[i]![bucket]! }))
    .filter((r) => r.observed + r.estimated > 0)
    .sort((a, b) => b.observed + b.estimated - (a.observed + a.estimated));
  const total = rows.reduce((s, r) => s + r.observed + r.estimated, 0);
  return (
    <div class="chart-tip" role="status" style={{ left: `${left}px` }}>
      <div class="tip-time">
        {timeLabel(start, data.bucketMs, now)} – {timeLabel(start + data.bucketMs, data.bucketMs, now)}
      </div>
      {rows.length === 0 ? (
        <div class="tip-none">no warnings</div>
      ) : (
        <table>
          <tbody>
            {rows.map((r) => (
              <tr key={r.g}>
                <td>
                  <span class="swatch" style={{ background: colorOf(data.groups, r.i) }} />
                  {r.g === '' ? '(none)' : <EventText text={r.g} />}
                </td>
                <td class="num">{r.observed + r.estimated}</td>
                <td class="est">{r.estimated > 0 ? `${r.estimated} estimated` : ''}</td>
              </tr>
            ))}
          </tbody>
          {rows.length > 1 ? (
            <tfoot>
              <tr>
                <td>total</td>
                <td class="num">{total}</td>
                <td />
              </tr>
            </tfoot>
          ) : null}
        </table>
      )}
    </div>
  );
}

function Legend({ data }: { data: StackedBuckets }) {
  return (
    <ul class="legend" aria-label="Series">
      {data.groups.map((g, i) => (
        <li key={g}>
          <span class="swatch" style={{ background: colorOf(data.groups, i) }} />
          {g === '' ? '(none)' : <EventText text={g} />}
        </li>
      ))}
      <li class="legend-note">
        bars of {bucketLabel(data.bucketMs)}
        {data.estimatedTotal > 0 ? (
          <>
            {' · '}
            <svg class="swatch" width="12" height="12" aria-hidden="true">
              <rect width="12" height="12" fill="url(#hatch-0)" />
            </svg>
            {` hatched: time estimated (${data.estimatedTotal} of ${data.total})`}
          </>
        ) : null}
      </li>
    </ul>
  );
}
