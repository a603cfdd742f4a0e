import { CLUSTER_LABEL, eventCluster } from '../../api/index.js';
import type { CoreEvent, Table } from '../../api/index.js';
import { UsageError } from '../errors.js';

/** CLUSTER_NAME is what a cluster name may be: a label value (it is stored as CLUSTER_LABEL), not empty. */
const CLUSTER_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/** validateClusterName checks a `--cluster` value (or the cluster name in another flag, `what`): it becomes a label value, so it is one. */
export function validateClusterName(name: string, what = '--cluster'): string {
  if (!CLUSTER_NAME.test(name)) {
    throw new UsageError(`invalid ${what} ${JSON.stringify(name)}: use up to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`);
  }
  return name;
}

/**
 * clusterSelector is the label selector of a read with `--cluster` (repeatable):
 * the events archived from any of those clusters, joined to the user's own
 * `-l` selector. A label selector rather than the `kevents.io/cluster` field
 * selector, as only the set form (`in`) can ask for several clusters at once.
 */
export function clusterSelector(clusters: readonly string[] | undefined, selector?: string): string | undefined {
  const names = [...new Set(clusters ?? [])].map((n) => validateClusterName(n));
  const own = selector !== undefined && selector !== '' ? selector : undefined;
  if (names.length === 0) return own;
  const term = `${CLUSTER_LABEL} in (${names.join(',')})`;
  return own === undefined ? term : `${own},${term}`;
}

/** spansClusters tells whether an answer needs a CLUSTER column: several clusters asked for, or found among the events. */
export function spansClusters(clusters: readonly string[] | undefined, events: Iterable<CoreEvent>): boolean {
  if (new Set(clusters ?? []).size > 1) return true;
  let first: string | undefined;
  for (const e of events) {
    const c = eventCluster(e);
    if (first === undefined) first = c;
    else if (c !== first) return true;
  }
  return false;
}

/** tableEvents are the objects of a Table's rows (their metadata, which holds the cluster label). */
export function tableEvents(table: Table): CoreEvent[] {
  return table.rows.map((r) => (r.object ?? { metadata: {} }) as CoreEvent);
}

/** withClusterColumn puts a CLUSTER column first in a Table, read from each row's object. */
export function withClusterColumn(table: Table): Table {
  const events = tableEvents(table);
  return {
    ...table,
    columnDefinitions: [{ name: 'Cluster', type: 'string', format: '', description: 'The cluster the event was archived from.', priority: 0 }, ...table.columnDefinitions],
    rows: table.rows.map((r, i) => ({ ...r, cells: [eventCluster(events[i]!), ...r.cells] })),
  };
}
