/**
 * SeriesTable holds the series of one metric family, keyed by their label values, under a hard
 * cap: a label set that would make series number maxSeries + 1 is refused (the caller folds it into
 * its overflow series and counts the refusal), so memory and the size of /metrics stay bounded
 * whatever the events' cardinality. Each series keeps its exposition prefix (`name{labels}`),
 * escaped once when the series is made, so a scrape only joins strings.
 */

/** Series is one series of a family: its rendered name and labels, value, and when it last changed. */
export interface Series {
  prefix: string;
  value: number;
  lastMs: number;
}

/** SeriesTable is a capped map of label sets to series. */
export class SeriesTable {
  private readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly labelNames: readonly string[],
    readonly maxSeries: number,
  ) {}

  get size(): number {
    return this.series.size;
  }

  /** get returns the series of `values` (one per label name), making it while under the cap; undefined when the cap refuses it. */
  get(values: readonly string[], nowMs: number): Series | undefined {
    const key = values.join('\u0000');
    let s = this.series.get(key);
    if (s === undefined) {
      if (this.series.size >= this.maxSeries) return undefined;
      s = { prefix: seriesPrefix(this.name, this.labelNames, values), value: 0, lastMs: nowMs };
      this.series.set(key, s);
    }
    return s;
  }

  /** removeIdle drops the series that have not changed since `beforeMs`, and says how many went. */
  removeIdle(beforeMs: number): number {
    let removed = 0;
    for (const [key, s] of this.series) {
      if (s.lastMs < beforeMs) {
        this.series.delete(key);
        removed++;
      }
    }
    return removed;
  }

  values(): IterableIterator<Series> {
    return this.series.values();
  }
}

/** seriesPrefix renders `name{a="x",b="y"}` in the text exposition format (empty values are left out, as Prometheus reads them). */
export function seriesPrefix(name: string, labelNames: readonly string[], values: readonly string[]): string {
  const parts: string[] = [];
  labelNames.forEach((l, i) => {
    const v = values[i] ?? '';
    if (v !== '') parts.push(`${l}="${escapeLabelValue(v)}"`);
  });
  return parts.length === 0 ? name : `${name}{${parts.join(',')}}`;
}

/** escapeLabelValue escapes a label value for the text format: backslash, double quote and newline. */
export function escapeLabelValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
