import { Counter, Gauge, Registry } from 'prom-client';

/** MirrorMetrics are the Prometheus metrics of one mirror. */
export interface MirrorMetrics {
  registry: Registry;
  eventsWritten: Counter;
  occurrencesWritten: Counter;
  skipped: Counter;
  relists: Counter;
  watchRestarts: Counter;
  errors: Counter<'stage'>;
  /** watchLag is the time from an event's own last-seen time to its archiving, for the newest batch from the watch. */
  watchLag: Gauge;
  /** lastEventAge is the time since the source last sent a change (set at scrape time). */
  lastEventAge: Gauge;
  ready: Gauge;
}

/**
 * createMirrorMetrics registers the mirror's metrics in `registry` (the server's,
 * when the mirror runs inside `kevents serve`) or in a registry of its own.
 * `collect` runs at scrape time for the gauges that are ages.
 */
export function createMirrorMetrics(registry: Registry = new Registry(), collect: { lastEventAgeSeconds(): number; ready(): boolean } = { lastEventAgeSeconds: () => 0, ready: () => false }): MirrorMetrics {
  const registers = [registry];
  return {
    registry,
    eventsWritten: new Counter({ name: 'kevents_mirror_events_written_total', help: 'Event versions written to the archive.', registers }),
    occurrencesWritten: new Counter({ name: 'kevents_mirror_occurrences_written_total', help: 'Occurrences appended to the archive.', registers }),
    skipped: new Counter({
      name: 'kevents_mirror_duplicates_skipped_total',
      help: 'Source versions already in the archive (relists and replays after a restart).',
      registers,
    }),
    relists: new Counter({ name: 'kevents_mirror_relists_total', help: 'Full lists of the source (the first one, and each after 410 Expired).', registers }),
    watchRestarts: new Counter({ name: 'kevents_mirror_watch_restarts_total', help: 'Watches opened again after one ended.', registers }),
    errors: new Counter({ name: 'kevents_mirror_errors_total', help: 'Failures, by stage (list, watch, write).', labelNames: ['stage'], registers }),
    watchLag: new Gauge({
      name: 'kevents_mirror_watch_lag_seconds',
      help: "Seconds from the newest watched event's last-seen time to its commit in the archive.",
      registers,
    }),
    lastEventAge: new Gauge({
      name: 'kevents_mirror_last_event_age_seconds',
      help: 'Seconds since the source last sent a change.',
      registers,
      collect() {
        this.set(collect.lastEventAgeSeconds());
      },
    }),
    ready: new Gauge({
      name: 'kevents_mirror_ready',
      help: '1 when the mirror is synced and its watch is making progress.',
      registers,
      collect() {
        this.set(collect.ready() ? 1 : 0);
      },
    }),
  };
}
