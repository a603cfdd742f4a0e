import type { CountedChange } from './counted-change.js';
import { SeriesTable } from './series-table.js';

/**
 * The families of the caicloud event_exporter (pkg/collector/metrics.go and event.go of
 * github.com/caicloud/event_exporter), for dashboards and alert rules written against it:
 *
 * - `kube_event_count` (gauge): the event's `count` as last seen, set at every change of the event;
 * - `kube_event_unique_events_total` (counter): 1 added at every change of the event (each new
 *   resourceVersion, not each repeat: a count jump of 5 adds 1);
 *
 * both labelled `name` (the Event's), `namespace`, `involved_object_namespace`,
 * `involved_object_name`, `involved_object_kind`, `reason`, `type`, `message` and `source`
 * (`host/component`). There a series goes when the API server deletes its event (the 1 h TTL);
 * here, when its event has not changed for the idle time (1 h by default). A message that changes
 * makes a new series, as it does there.
 */
export const CAICLOUD_LABELS = ['name', 'involved_object_namespace', 'namespace', 'involved_object_name', 'involved_object_kind', 'reason', 'type', 'message', 'source'] as const;

/** CaicloudFamilies are the two compatibility families. */
export interface CaicloudFamilies {
  count: SeriesTable;
  unique: SeriesTable;
}

/** createCaicloudFamilies makes the two families, each under the cap. */
export function createCaicloudFamilies(maxSeries: number): CaicloudFamilies {
  return {
    count: new SeriesTable('kube_event_count', CAICLOUD_LABELS, maxSeries),
    unique: new SeriesTable('kube_event_unique_events_total', CAICLOUD_LABELS, maxSeries),
  };
}

/** caicloudValues are the label values of a change, in CAICLOUD_LABELS order. */
export function caicloudValues(c: CountedChange): string[] {
  const o = c.occurrence;
  const e = c.event;
  const source = e?.source;
  return [
    o.event.name,
    o.regarding.namespace ?? '',
    o.event.namespace,
    o.regarding.name ?? '',
    o.regarding.kind ?? '',
    o.reason ?? '',
    o.type ?? '',
    o.message ?? '',
    `${source?.host ?? ''}/${source?.component ?? o.reportingController ?? ''}`,
  ];
}
