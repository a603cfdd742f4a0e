/**
 * Collectable is the shape prom-client's Registry reads from a registered metric (name, help,
 * type and get()), so these families render on the same /metrics as the process's other
 * metrics without prom-client objects. Each value's `metricName` is the series' whole rendered
 * prefix (`name{labels}`), which the registry prints as it is: labels are escaped once per
 * series, not on every scrape.
 */
export interface Collectable {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  aggregator: 'sum';
  get(): { name: string; help: string; type: string; aggregator: 'sum'; values: { value: number; labels: Record<string, string>; metricName?: string }[] };
}

/** collectable builds a family from a function listing its series' prefixes and values at scrape time. */
export function collectable(name: string, help: string, type: 'counter' | 'gauge', read: () => Iterable<{ prefix: string; value: number }>): Collectable {
  return {
    name,
    help,
    type,
    aggregator: 'sum',
    get() {
      const values: { value: number; labels: Record<string, string>; metricName: string }[] = [];
      for (const s of read()) values.push({ value: s.value, labels: {}, metricName: s.prefix });
      return { name, help, type, aggregator: 'sum', values };
    },
  };
}
