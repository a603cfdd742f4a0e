import type { SearchResult } from '../../api/index.js';
import type { StackedBuckets } from './buckets.js';
import type { Filters } from './model.js';

/**
 * quoteValue writes a field value as the query language reads it literally:
 * in quotes, with quotes and backslashes escaped (docs/search.md).
 */
function quoteValue(v: string): string {
  return `"${v.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * serverQuery is the query the server is asked: the search box's text as the
 * user wrote it, then the filter bar's picks as field terms. Appended after
 * the text, they leave the positions of the server's errors those of the box.
 */
export function serverQuery(f: Filters): string {
  const terms = [f.q.trim()];
  if (f.kind !== '') terms.push(`kind:${quoteValue(f.kind)}`);
  if (f.reason !== '') terms.push(`reason:${quoteValue(f.reason)}`);
  if (f.type !== '') terms.push(`type:${quoteValue(f.type)}`);
  if (f.cluster !== '') terms.push(`cluster:${quoteValue(f.cluster)}`);
  return terms.filter((t) => t !== '').join(' ');
}

/** histogramBuckets reads a served histogram as the bar chart's single series. */
export function histogramBuckets(h: NonNullable<SearchResult['histogram']>, bucketMs: number): StackedBuckets {
  const hits = h.map((b) => b.hits);
  return {
    starts: h.map((b) => Date.parse(b.time)),
    bucketMs,
    groups: ['hits'],
    observed: [hits],
    estimated: [hits.map(() => 0)],
    max: Math.max(0, ...hits),
    total: hits.reduce((a, b) => a + b, 0),
    estimatedTotal: 0,
  };
}
