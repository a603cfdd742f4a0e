import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Series } from './aggregate.js';

// Counts are whole numbers: the y axis steps by 1, 2, 5, 10, 20, 50, …
const INTEGER_STEPS = Array.from({ length: 24 }, (_, i) => [1, 2, 5][i % 3]! * 10 ** Math.floor(i / 3));

const COLORS = ['#d9480f', '#1971c2', '#2f9e44', '#9c36b5', '#e8590c', '#0c8599', '#868e96'];

/** SeriesChartProps configure a SeriesChart. */
export interface SeriesChartProps {
  series: Series;
  label: string;
}

/**
 * SeriesChart draws bucketed counts with uPlot on a canvas. The canvas is
 * described by `label`; the tables beside it carry the same numbers as text.
 */
export function SeriesChart({ series, label }: SeriesChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const groupsKey = series.groups.join('\u0000');

  useEffect(() => {
    const el = box.current;
    if (el === null) return;
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height: 260,
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true } },
      axes: [{}, { label: 'events', size: 50, incrs: INTEGER_STEPS }],
      series: [
        {},
        ...series.groups.map((g, i) => ({
          label: g,
          stroke: COLORS[i % COLORS.length],
          fill: `${COLORS[i % COLORS.length]}22`,
          width: 2,
          // Each value is a count for the whole bucket, so steps, not slopes.
          paths: uPlot.paths.stepped!({ align: 1 }),
          points: { show: false },
        })),
      ],
    };
    const u = new uPlot(opts, [series.x, ...series.ys], el);
    plot.current = u;
    const ro = new ResizeObserver(() => u.setSize({ width: Math.max(200, el.clientWidth), height: 260 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
    // The plot is rebuilt only when the set of series changes; data changes use setData.
  }, [groupsKey]);

  useEffect(() => {
    plot.current?.setData([series.x, ...series.ys]);
  }, [series]);

  return <div class="chart" ref={box} role="img" aria-label={label} />;
}
