import { realClock } from '../internal/index.js';
import type { Clock } from '../internal/index.js';
import type { CountedChange } from './counted-change.js';
import { caicloudValues, createCaicloudFamilies } from './caicloud-compat.js';
import type { CaicloudFamilies } from './caicloud-compat.js';
import { collectable } from './collectable.js';
import type { Collectable } from './collectable.js';
import { DEFAULT_EVENT_LABELS, EVENT_LABELS, occurrencesOf } from './event-labels.js';
import type { EventLabel } from './event-labels.js';
import { SeriesTable, seriesPrefix } from './series-table.js';
import type { Series } from './series-table.js';

/** DEFAULT_MAX_SERIES: 10,000 series is a scrape of about 2 MB, well inside what one Prometheus target should carry. */
export const DEFAULT_MAX_SERIES = 10_000;
/** DEFAULT_IDLE_AFTER_MS: a series with no occurrence for an hour goes, as the API server's TTL takes its events. */
export const DEFAULT_IDLE_AFTER_MS = 3_600_000;

/** EventMetricsOptions configure the event families; zero values mean the defaults. */
export interface EventMetricsOptions {
  /** labels are the labels of `kevents_events_total`, in order (default DEFAULT_EVENT_LABELS). */
  labels?: readonly EventLabel[];
  /** maxSeries caps the series of each family; what does not fit goes to one overflow series. */
  maxSeries?: number;
  /** idleAfterMs: a series that has not moved for this long is removed (0: never). */
  idleAfterMs?: number;
  /** filter, when set, says which changes are counted (the allow and drop rules). */
  filter?: (c: CountedChange) => boolean;
  /** caicloud adds the caicloud event_exporter's families (kube_event_count, kube_event_unique_events_total). */
  caicloud?: boolean;
  clock?: Clock;
}

/** EventMetrics counts the changes of an archive as Prometheus series. */
export interface EventMetrics {
  /** observe counts one change. */
  observe(c: CountedChange): void;
  /** removeIdle drops the series idle past the idle time (observe and scrapes call it too, at most once a second). */
  removeIdle(): void;
  /** seriesCount is the number of `kevents_events_total` series, the overflow one excluded. */
  readonly seriesCount: number;
  /** collectables are the families, to register in a prom-client Registry. */
  readonly collectables: Collectable[];
}

const EVENTS_TOTAL = 'kevents_events_total';
const DROPPED = 'kevents_event_series_dropped_total';
/** SWEEP_EVERY_MS bounds how often idle series are looked for. */
const SWEEP_EVERY_MS = 1_000;

/**
 * createEventMetrics makes `kevents_events_total` (occurrences: every repeat counted),
 * `kevents_event_series` (its series now), `kevents_event_series_dropped_total` (changes the cap
 * sent to the overflow series, by family) and, when asked, the caicloud families.
 */
export function createEventMetrics(options: EventMetricsOptions = {}): EventMetrics {
  const clock = options.clock ?? realClock;
  const labels = options.labels ?? DEFAULT_EVENT_LABELS;
  const maxSeries = options.maxSeries !== undefined && options.maxSeries > 0 ? options.maxSeries : DEFAULT_MAX_SERIES;
  const idleAfterMs = options.idleAfterMs ?? DEFAULT_IDLE_AFTER_MS;
  const readers = labels.map((l) => EVENT_LABELS[l]);
  const events = new SeriesTable(EVENTS_TOTAL, labels, maxSeries);
  // The overflow series carries only `overflow="true"`: sums over any label still add up to every occurrence.
  const overflow: Series = { prefix: seriesPrefix(EVENTS_TOTAL, ['overflow'], ['true']), value: 0, lastMs: 0 };
  const dropped = new Map<string, Series>();
  const drop = (family: string, n = 1): void => {
    let s = dropped.get(family);
    if (s === undefined) {
      s = { prefix: seriesPrefix(DROPPED, ['metric'], [family]), value: 0, lastMs: 0 };
      dropped.set(family, s);
    }
    s.value += n;
  };
  const compat: CaicloudFamilies | undefined = options.caicloud === true ? createCaicloudFamilies(maxSeries) : undefined;
  let sweptAt = clock.now();
  const removeIdle = (force: boolean): void => {
    const now = clock.now();
    if (idleAfterMs <= 0 || (!force && now - sweptAt < SWEEP_EVERY_MS)) return;
    sweptAt = now;
    events.removeIdle(now - idleAfterMs);
    compat?.count.removeIdle(now - idleAfterMs);
    compat?.unique.removeIdle(now - idleAfterMs);
  };
  const collectables: Collectable[] = [
    collectable(EVENTS_TOTAL, 'Occurrences of events, each repeat counted (a count rise of 5 adds 5), since this process started.', 'counter', function* () {
      removeIdle(false);
      yield* events.values();
      if (overflow.value > 0) yield overflow;
    }),
    collectable('kevents_event_series', `Series of ${EVENTS_TOTAL} (at most the cap; the overflow series not counted).`, 'gauge', () => [
      { prefix: 'kevents_event_series', value: events.size },
    ]),
    collectable(DROPPED, 'Changes that would have made a series past the cap, by family (their occurrences are counted in the overflow series).', 'counter', () => dropped.values()),
  ];
  if (compat !== undefined) {
    collectables.push(
      collectable('kube_event_count', 'Number of kubernetes event happened (caicloud event_exporter compatible: the event count as last seen).', 'gauge', () => compat.count.values()),
      collectable('kube_event_unique_events_total', 'Total number of kubernetes unique event happened (caicloud event_exporter compatible: one per change of an event).', 'counter', () => compat.unique.values()),
    );
  }
  return {
    observe(c) {
      if (options.filter !== undefined && !options.filter(c)) return;
      const now = clock.now();
      removeIdle(false);
      const n = occurrencesOf(c);
      if (n > 0) {
        const s = events.get(
          readers.map((read) => read(c)),
          now,
        );
        if (s === undefined) {
          drop(EVENTS_TOTAL);
          overflow.value += n;
        } else {
          s.value += n;
          s.lastMs = now;
        }
      }
      if (compat !== undefined) {
        const values = caicloudValues(c);
        const count = compat.count.get(values, now);
        const unique = compat.unique.get(values, now);
        if (count === undefined) drop('kube_event_count');
        else {
          count.value = c.occurrence.countAfter;
          count.lastMs = now;
        }
        if (unique === undefined) drop('kube_event_unique_events_total');
        else {
          unique.value += 1;
          unique.lastMs = now;
        }
      }
    },
    removeIdle: () => removeIdle(true),
    get seriesCount() {
      return events.size;
    },
    collectables,
  };
}
