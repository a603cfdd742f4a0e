import { noopLogger, realClock } from '../internal/index.js';
import type { Clock, Logger } from '../internal/index.js';
import type { ArchiveRetention } from '../storage/index.js';

/** RetentionOptions say what an archive keeps. */
export interface RetentionOptions {
  /** maxAgeMs drops occurrences observed, and events last written, longer ago than this (`--retention 30d`). */
  maxAgeMs?: number | undefined;
  /** clusterMaxAgeMs are per-cluster maximum ages (`--retention prod=90d`): each drops only its cluster's data, which `maxAgeMs` then leaves alone. */
  clusterMaxAgeMs?: Readonly<Record<string, number>> | undefined;
  /** maxBytes drops the oldest data while the store is larger (`--max-size`). */
  maxBytes?: number | undefined;
  /** intervalMs is how often retention runs (default one minute; with `maxBytes`, at most SIZE_INTERVAL_MS). */
  intervalMs?: number;
  clock?: Clock;
  logger?: Logger;
}

/** Retention is a running retention loop. */
export interface Retention {
  /** runOnce runs retention steps until nothing more is due; for tests and for the first pass at start. */
  runOnce(): Promise<{ events: number; occurrences: number }>;
  stop(): void;
}

/** DEFAULT_RETENTION_INTERVAL_MS: retention is a background chore; a minute of lateness is nothing against days of retention. */
export const DEFAULT_RETENTION_INTERVAL_MS = 60_000;
/**
 * SIZE_INTERVAL_MS is how often a size cap is enforced at least. An enforcement
 * is a few reads of the store's size (pragmas in SQLite, a counter row in
 * PostgreSQL) and cuts only when over the cap.
 */
export const SIZE_INTERVAL_MS = 5_000;
/**
 * SIZE_CHECK_MS is how often, between two runs, a size cap reads the store's
 * size alone (`archiveBytes`, no write), so that a run starts as soon as the
 * store has passed its cap: what the store gains until then is how far it may
 * pass it. With the search index, what a busy source writes in a whole
 * SIZE_INTERVAL_MS took more than twice its messages' bytes (docs/reliability.md).
 */
export const SIZE_CHECK_MS = 1_000;
/** LOG_INTERVAL_MS: a store held at its cap is cut every few seconds; what was removed is logged once a minute at most. */
const LOG_INTERVAL_MS = 60_000;
/** MAX_STEPS_PER_RUN bounds one run, so a first run over a large backlog shares the store with writers. */
const MAX_STEPS_PER_RUN = 200;

/**
 * startRetention enforces an archive's retention policy every `intervalMs` (with
 * a size cap, every SIZE_INTERVAL_MS at least), in bounded steps of indexed
 * deletes (the store is never rewritten). It does nothing when neither a maximum
 * age nor a size is set.
 */
export function startRetention(store: ArchiveRetention, options: RetentionOptions): Retention {
  const clock = options.clock ?? realClock;
  const logger = options.logger ?? noopLogger;
  const capped = options.maxBytes !== undefined && options.maxBytes > 0;
  const requested = options.intervalMs !== undefined && options.intervalMs > 0 ? options.intervalMs : DEFAULT_RETENTION_INTERVAL_MS;
  const interval = capped ? Math.min(requested, SIZE_INTERVAL_MS) : requested;
  const perCluster = Object.entries(options.clusterMaxAgeMs ?? {}).filter(([, ms]) => ms > 0);
  const active = (options.maxAgeMs !== undefined && options.maxAgeMs > 0) || perCluster.length > 0 || capped;
  let stopped = false;
  let timer: ReturnType<Clock['setTimeout']> | undefined;
  let running: Promise<{ events: number; occurrences: number }> | undefined;
  const unlogged = { events: 0, occurrences: 0 };
  let lastLog = -Infinity;
  let lastRun = -Infinity;

  const runOnce = async (): Promise<{ events: number; occurrences: number }> => {
    const total = { events: 0, occurrences: 0 };
    if (!active) return total;
    lastRun = clock.now();
    for (let step = 0; step < MAX_STEPS_PER_RUN && !stopped; step++) {
      const now = clock.now();
      const r = await store.enforceRetention({
        ...(options.maxAgeMs !== undefined && options.maxAgeMs > 0 ? { olderThanMs: now - options.maxAgeMs } : {}),
        ...(perCluster.length > 0 ? { clusters: Object.fromEntries(perCluster.map(([c, ms]) => [c, now - ms])) } : {}),
        ...(options.maxBytes !== undefined && options.maxBytes > 0 ? { maxBytes: options.maxBytes } : {}),
      });
      total.events += r.events;
      total.occurrences += r.occurrences;
      if (!r.more) break;
    }
    unlogged.events += total.events;
    unlogged.occurrences += total.occurrences;
    if (unlogged.events + unlogged.occurrences > 0 && clock.now() - lastLog >= LOG_INTERVAL_MS) {
      logger.info('retention removed old archive data', { ...unlogged });
      unlogged.events = 0;
      unlogged.occurrences = 0;
      lastLog = clock.now();
    }
    return total;
  };
  /** due says whether a run is due: its interval has passed, or (between runs) the store has passed its size cap. */
  const due = async (): Promise<boolean> => clock.now() - lastRun >= interval || (capped && (await store.archiveBytes()) > options.maxBytes!);
  const next = (): void => {
    if (!stopped) timer = clock.setTimeout(tick, capped ? Math.min(interval, SIZE_CHECK_MS) : interval, { unref: true });
  };
  const tick = (): void => {
    if (stopped) return;
    // A size that cannot be read is left to the run, which says why it fails.
    void due()
      .catch(() => true)
      .then((yes) => {
        if (stopped) return;
        if (!yes) return next();
        running = runOnce()
          .catch((e: unknown) => {
            logger.warn('retention failed; retrying at the next interval', { error: e instanceof Error ? e.message : String(e) });
            return { events: 0, occurrences: 0 };
          })
          .finally(() => {
            running = undefined;
            next();
          });
      });
  };
  if (active) timer = clock.setTimeout(tick, 0, { unref: true });
  return {
    runOnce: () => running ?? runOnce(),
    stop() {
      stopped = true;
      if (timer !== undefined) clock.clearTimeout(timer);
    },
  };
}
