import type { Registry } from 'prom-client';
import { StatusError, eventLastSeen, nowMicroTime, occurrenceOf, reasonOf } from '../api/index.js';
import type { CoreEvent, Occurrence, Status, WatchEvent } from '../api/index.js';
import { ExponentialBackoff, noopLogger, readAhead, realClock } from '../internal/index.js';
import type { Clock, Logger } from '../internal/index.js';
import { isStorageError } from '../storage/index.js';
import type { ArchiveDecision, ArchiveStore, ArchiveWrite } from '../storage/index.js';
import { archiveWrite } from './archived-event.js';
import { createMirrorMetrics } from './mirror-metrics.js';
import type { MirrorMetrics } from './mirror-metrics.js';

/**
 * MirrorSource is what the mirror needs of a source API server: the core/v1
 * events collection across namespaces (events written through events.k8s.io/v1
 * are the same stored objects, so one view holds both). The client module's
 * `EventResource` has this shape.
 */
export interface MirrorSource {
  list(options: { limit?: number; continue?: string; signal?: AbortSignal }): Promise<{
    metadata: { resourceVersion?: string; continue?: string };
    items: CoreEvent[];
  }>;
  watch(options: {
    resourceVersion?: string;
    allowWatchBookmarks?: boolean;
    timeoutSeconds?: number;
    signal?: AbortSignal;
  }): AsyncIterable<WatchEvent<CoreEvent | Status>>;
}

/** MirrorOptions configure a mirror; zero values mean the defaults. */
export interface MirrorOptions {
  source: MirrorSource;
  /** sourceId keys the checkpoint: the cluster name, else the source's URL. */
  sourceId: string;
  store: ArchiveStore;
  /** cluster labels everything this mirror writes (`--cluster`). */
  cluster?: string | undefined;
  /** clusterUID is the source's `kube-system` namespace UID, stored with everything this mirror writes (see `bindSourceCluster`). */
  clusterUID?: string | undefined;
  clock?: Clock;
  logger?: Logger;
  /** registry receives the mirror's metrics (the server's registry when serving too). */
  registry?: Registry;
  /** pageSize is the limit of each page of a list (default DEFAULT_PAGE_SIZE). */
  pageSize?: number;
  /** watchTimeoutSeconds is asked of each watch; a quiet but healthy watch ends and reopens this often. */
  watchTimeoutSeconds?: number;
  /** stallSeconds: without progress for this long, readiness fails (default 2.5 watch timeouts). */
  stallSeconds?: number;
  /** maxBatch caps the source changes committed in one archive transaction. */
  maxBatch?: number;
  /**
   * onArchived, when set, is told of the occurrences each committed batch appended, once the
   * commit succeeded (the event metrics count them). A version the archive already held, as a
   * relist after a restart finds, appended none and is not told.
   */
  onArchived?: (changes: ArchivedChange[]) => void;
}

/** ArchivedChange is one occurrence a batch appended, with the event version it archived. */
export interface ArchivedChange {
  occurrence: Occurrence;
  event: CoreEvent;
}

/** Readiness is the answer of the mirror's readiness check. */
export interface Readiness {
  ready: boolean;
  message: string;
}

/** Mirror copies a source's events into an archive until stopped. */
export interface Mirror {
  /** run lists and watches until `stop`; it retries every failure itself and resolves only when stopped. */
  run(): Promise<void>;
  stop(): Promise<void>;
  readiness(): Readiness;
  readonly metrics: MirrorMetrics;
}

/**
 * DEFAULT_PAGE_SIZE is twice client-go's reflector page: a mirror's list is a bulk
 * copy, and each page costs a request and a commit with its checkpoint whatever
 * its size. Pages of 1,000 (about 1 MB of JSON) took a 100,000-event cold start
 * from ~19k to ~26k events/s in `bench/mirror.ts`; pages of 2,000 were no faster.
 */
export const DEFAULT_PAGE_SIZE = 1000;
/**
 * DEFAULT_WATCH_TIMEOUT_SECONDS reopens a quiet watch every 30 s, which also
 * proves the source is alive: kube-apiserver sends events no bookmarks (they
 * have no watch cache), so a watch through a network that went silent without
 * closing is only found out by outliving its timeout (plus CLIENT_GRACE_SECONDS: 40 s).
 */
export const DEFAULT_WATCH_TIMEOUT_SECONDS = 30;
/** DEFAULT_MAX_BATCH: one SQLite transaction per 1,000 changes keeps commits short and the ingest rate high. */
export const DEFAULT_MAX_BATCH = 1_000;
/** CLIENT_GRACE_SECONDS: a watch the server does not end within its timeout plus this is abandoned (a hung connection). */
const CLIENT_GRACE_SECONDS = 10;

/** SOURCE_RETRY_MAX_MS bounds the wait between retries of a failing source: a shared API server is spared a storm of lists. */
const SOURCE_RETRY_MAX_MS = 30_000;
/**
 * ARCHIVE_RETRY_MAX_MS bounds the wait between retries of a failing archive (a database restarting, a full disk):
 * a retry costs the archive a refused connection or one write, and each second waited is a second more of lag once it is back.
 */
const ARCHIVE_RETRY_MAX_MS = 5_000;
/** LIST_READ_AHEAD is how many pages of a list are read ahead of the one being committed. */
const LIST_READ_AHEAD = 2;

function continueOf(page: { metadata: { continue?: string } }): string | undefined {
  const c = page.metadata.continue;
  return c !== undefined && c !== '' ? c : undefined;
}

/** isExpiredError tells a 410 (Expired or Gone): the resourceVersion or continue token is no longer served. */
export function isExpiredError(e: unknown): boolean {
  const reason = reasonOf(e);
  return reason === 'Expired' || reason === 'Gone' || (e as { status?: { code?: number } }).status?.code === 410;
}

class Stopped extends Error {}

/**
 * createMirror returns a mirror of `source` into `store`. The mirror lists the
 * source in pages, then watches from the list's resourceVersion; each group of
 * changes is committed with the source's resourceVersion as checkpoint in the
 * same transaction, so a restart resumes exactly there. A 410 relists, and the
 * archive's uid + resourceVersion of each event makes the relist skip what it
 * already holds.
 */
export function createMirror(options: MirrorOptions): Mirror {
  return new SourceMirror(options);
}

class SourceMirror implements Mirror {
  readonly metrics: MirrorMetrics;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly pageSize: number;
  private readonly watchTimeout: number;
  private readonly stallMs: number;
  private readonly maxBatch: number;
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;
  private synced = false;
  private startedAt: number;
  private lastProgressAt: number;
  private lastEventAt: number | undefined;
  private writeStartedAt: number | undefined;
  /** committedRv is the source resourceVersion of the last committed checkpoint. */
  private committedRv: string | undefined;
  /** watchDelivered says whether the last watch delivered any frame before it ended. */
  private watchDelivered = false;
  /** writeFailure is the last refused write to the archive (a full disk, the database down), until a write succeeds. */
  private writeFailure: { since: number; message: string } | undefined;
  /** refusedAt is the resourceVersion a watch was last refused at with 410 before any change. */
  private refusedAt: string | undefined;

  constructor(private readonly o: MirrorOptions) {
    this.clock = o.clock ?? realClock;
    this.logger = o.logger ?? noopLogger;
    this.pageSize = positive(o.pageSize) ?? DEFAULT_PAGE_SIZE;
    this.watchTimeout = positive(o.watchTimeoutSeconds) ?? DEFAULT_WATCH_TIMEOUT_SECONDS;
    this.stallMs = (positive(o.stallSeconds) ?? this.watchTimeout * 2.5) * 1000;
    this.maxBatch = positive(o.maxBatch) ?? DEFAULT_MAX_BATCH;
    this.startedAt = this.clock.now();
    this.lastProgressAt = this.startedAt;
    this.metrics = createMirrorMetrics(o.registry, {
      lastEventAgeSeconds: () => (this.clock.now() - (this.lastEventAt ?? this.startedAt)) / 1000,
      ready: () => this.readiness().ready,
    });
  }

  run(): Promise<void> {
    this.running ??= this.loop();
    return this.running;
  }

  async stop(): Promise<void> {
    this.abort.abort(new Stopped('stopped'));
    await this.running;
  }

  readiness(): Readiness {
    const now = this.clock.now();
    if (this.writeFailure !== undefined) {
      // Named at once, not after the stall window: the archive refusing writes needs an operator (space, the database).
      const s = Math.round((now - this.writeFailure.since) / 1000);
      return { ready: false, message: `writes to the archive fail (for ${s}s; the checkpoint stays where it is): ${this.writeFailure.message}` };
    }
    if (!this.synced) return { ready: false, message: 'the initial list of the source has not finished' };
    if (this.writeStartedAt !== undefined && now - this.writeStartedAt > this.stallMs) {
      return { ready: false, message: `a write to the archive has been pending for ${Math.round((now - this.writeStartedAt) / 1000)}s` };
    }
    if (now - this.lastProgressAt > this.stallMs) {
      return { ready: false, message: `no progress from the source watch for ${Math.round((now - this.lastProgressAt) / 1000)}s` };
    }
    return { ready: true, message: 'ok' };
  }

  private get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  private async loop(): Promise<void> {
    const backoff = new ExponentialBackoff({ initialMs: 500, maxMs: SOURCE_RETRY_MAX_MS, jitterFactor: 0.2 });
    const archiveBackoff = new ExponentialBackoff({ initialMs: 500, maxMs: ARCHIVE_RETRY_MAX_MS, jitterFactor: 0.2 });
    let rv: string | undefined;
    let first = true;
    while (!this.stopped) {
      try {
        if (rv === undefined) {
          rv = (await this.o.store.getCheckpoint(this.o.sourceId))?.resourceVersion;
          this.committedRv = rv;
        }
        if (rv === undefined) rv = await this.relist();
        this.synced = true;
        if (!first) this.metrics.watchRestarts.inc();
        first = false;
        rv = await this.watchFrom(rv);
        backoff.reset();
        archiveBackoff.reset();
      } catch (caught) {
        if (this.stopped) break;
        let e = caught;
        if (isExpiredError(e) && rv !== undefined && (this.watchDelivered || this.refusedAt !== rv)) {
          // A 410 that ends a running watch (this mirror fell behind) is not a lost position:
          // resuming from the checkpoint loses nothing, while a relist would fold every change
          // since into one. Only a resume refused twice from the same resourceVersion relists.
          if (!this.watchDelivered) this.refusedAt = rv;
          this.logger.info('the source ended the watch: resuming from the checkpoint', { error: e instanceof Error ? e.message : String(e) });
          rv = undefined;
          continue;
        }
        if (isExpiredError(e)) {
          this.logger.info('the source no longer has our resourceVersion: relisting', { resourceVersion: rv });
          rv = undefined;
          try {
            rv = await this.relist();
            continue;
          } catch (relistError) {
            if (this.stopped) break;
            e = relistError;
          }
        }
        // After any other failure, start again from what is durably committed.
        rv = undefined;
        // The archive failing (a write, or reading the checkpoint) is retried on its own, shorter schedule.
        const delay = (this.writeFailure !== undefined || isStorageError(e) ? archiveBackoff : backoff).next();
        this.logger.warn('mirror: retrying after a failure', { error: e instanceof Error ? e.message : String(e), retryInMs: Math.round(delay) });
        try {
          await this.clock.sleep(delay, this.abort.signal);
        } catch {
          break;
        }
      }
    }
  }

  /** relist archives every event the source has, page by page, and checkpoints the list's resourceVersion with the last page. */
  private async relist(): Promise<string> {
    this.metrics.relists.inc();
    for (let attempt = 0; ; attempt++) {
      let listRv: string | undefined;
      let cont: string | undefined;
      const fetchPage = (token: string | undefined): Promise<Awaited<ReturnType<MirrorSource['list']>>> =>
        this.o.source.list({ limit: this.pageSize, ...(token !== undefined ? { continue: token } : {}), signal: this.abort.signal });
      // Pages are read ahead of the commits (up to LIST_READ_AHEAD): the source and the archive work at once.
      const pages = readAhead(fetchPage, (page) => continueOf(page), LIST_READ_AHEAD);
      try {
        for (;;) {
          const page = await pages.next();
          if (page === undefined) break;
          listRv ??= page.metadata.resourceVersion;
          cont = continueOf(page);
          this.lastProgressAt = this.clock.now();
          await this.commit(
            page.items.map((e) => archiveWrite(e, this.o)),
            cont === undefined ? (listRv ?? '') : undefined,
            undefined,
          );
        }
        if (listRv === undefined || listRv === '') throw new Error('the source answered a list without a resourceVersion');
        return listRv;
      } catch (e) {
        pages.stop();
        // A continue token that expired mid-list: start the list again (what is written is deduplicated).
        if (!isExpiredError(e) || cont === undefined || attempt >= 3) {
          if (!this.stopped) this.metrics.errors.inc({ stage: 'list' });
          throw e;
        }
      }
    }
  }

  /**
   * watchFrom watches from `rv` and commits changes in groups: a group closes at
   * `maxBatch` changes or when the stream pauses. It returns the last committed
   * resourceVersion when the watch ends normally.
   */
  private async watchFrom(rv: string): Promise<string> {
    const local = new AbortController();
    const onStop = (): void => local.abort(this.abort.signal.reason);
    this.abort.signal.addEventListener('abort', onStop, { once: true });
    const hungAfterS = this.watchTimeout + CLIENT_GRACE_SECONDS;
    const hung = this.clock.setTimeout(
      () => {
        // Said here: the stream reports the abort as its own error, which does not say why.
        this.logger.warn('mirror: the watch outlived its timeout (a silent network?); reopening it from the checkpoint', { afterSeconds: hungAfterS });
        local.abort(new Error('the watch outlived its timeout'));
      },
      hungAfterS * 1000,
      { unref: true },
    );
    let pending: ArchiveWrite[] = [];
    let pendingRv = rv;
    let pendingLastSeen = 0;
    let chain: Promise<void> = Promise.resolve();
    let failure: Error | undefined;
    let scheduled = false;
    let committing = false;
    const flush = (): Promise<void> => {
      if (pendingRv === this.committedRv && pending.length === 0) return chain;
      const writes = pending;
      const upTo = pendingRv;
      const lastSeen = pendingLastSeen;
      pending = [];
      pendingLastSeen = 0;
      chain = chain.then(async () => {
        if (failure !== undefined) return;
        committing = true;
        try {
          await this.commit(writes, upTo, lastSeen);
        } catch (e) {
          failure = e instanceof Error ? e : new Error(String(e));
          local.abort(failure);
        } finally {
          committing = false;
        }
        if (failure === undefined && (pending.length > 0 || pendingRv !== this.committedRv)) schedule();
      });
      return chain;
    };
    // One commit at a time: what arrives while one runs goes into the next, so a
    // busy stream is committed in large groups and a quiet one without delay.
    let ended = false;
    const schedule = (): void => {
      if (scheduled || committing || ended) return;
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        void flush();
      });
    };
    this.watchDelivered = false;
    try {
      const stream = this.o.source.watch({ resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: this.watchTimeout, signal: local.signal });
      for await (const frame of stream) {
        const now = this.clock.now();
        this.lastProgressAt = now;
        if (frame.type === 'ERROR') {
          // An error frame after changes is a running watch ended; as the first frame, the start was refused.
          this.metrics.errors.inc({ stage: 'watch' });
          throw new StatusError(frame.object as Status);
        }
        this.watchDelivered = true;
        const object = frame.object as CoreEvent;
        const frameRv = object.metadata?.resourceVersion;
        if (frameRv !== undefined && frameRv !== '') pendingRv = frameRv;
        if (frame.type === 'ADDED' || frame.type === 'MODIFIED') {
          this.lastEventAt = now;
          pending.push(archiveWrite(object, this.o));
          const seen = Date.parse(eventLastSeen(object) ?? '');
          if (!Number.isNaN(seen)) pendingLastSeen = Math.max(pendingLastSeen, seen);
        } else if (frame.type === 'DELETED') {
          // The archive keeps what the source deletes; the checkpoint still moves past it.
          this.lastEventAt = now;
        }
        if (pending.length >= this.maxBatch) await flush();
        else schedule();
      }
      await flush();
    } catch (e) {
      if (failure !== undefined) throw failure;
      if (this.stopped) throw e;
      if (!isExpiredError(e) && !(e instanceof StatusError)) this.metrics.errors.inc({ stage: 'watch' });
      throw e;
    } finally {
      this.clock.clearTimeout(hung);
      this.abort.signal.removeEventListener('abort', onStop);
      // What arrived before the stream ended (an ERROR frame, a stop) is committed here, not by a
      // flush that would run after this watch, beside the next one.
      ended = true;
      await flush();
    }
    if (failure !== undefined) throw failure;
    return this.committedRv ?? rv;
  }

  /** commit writes one group of changes and, when `upTo` is set, the checkpoint, in one transaction. */
  private async commit(writes: ArchiveWrite[], upTo: string | undefined, lastSeenMs: number | undefined): Promise<void> {
    if (writes.length === 0 && (upTo === undefined || upTo === this.committedRv)) return;
    this.writeStartedAt = this.clock.now();
    const stamp = {
      observedTime: nowMicroTime(this.clock),
      ...(this.o.cluster !== undefined && this.o.cluster !== '' ? { cluster: this.o.cluster } : {}),
      ...(this.o.clusterUID !== undefined && this.o.clusterUID !== '' ? { clusterUID: this.o.clusterUID } : {}),
    };
    // What each write last decided is what its transaction committed (a backend may ask again, the answer is pure).
    const decided: (ArchiveDecision | undefined)[] = [];
    const watched =
      this.o.onArchived === undefined
        ? writes
        : writes.map((w, i): ArchiveWrite => ({ namespace: w.namespace, name: w.name, decide: (current, name) => (decided[i] = w.decide(current, name)) }));
    try {
      const result = await this.o.store.applyArchiveBatch({
        writes: watched,
        ...(upTo !== undefined ? { checkpoint: { source: this.o.sourceId, resourceVersion: upTo } } : {}),
        stamp,
      });
      if (upTo !== undefined) this.committedRv = upTo;
      if (this.o.onArchived !== undefined) {
        const changes: ArchivedChange[] = [];
        for (const d of decided) if (d?.action === 'write' && d.occurrence !== undefined) changes.push({ event: d.object, occurrence: occurrenceOf(d.object, d.occurrence, stamp, 0) });
        if (changes.length > 0) this.o.onArchived(changes);
      }
      this.metrics.eventsWritten.inc(result.events);
      this.metrics.occurrencesWritten.inc(result.occurrences);
      this.metrics.skipped.inc(result.skipped);
      if (lastSeenMs !== undefined && lastSeenMs > 0) this.metrics.watchLag.set(Math.max(0, (this.clock.now() - lastSeenMs) / 1000));
      this.lastProgressAt = this.clock.now();
      if (this.writeFailure !== undefined) this.logger.info('mirror: writes to the archive succeed again', { failedForSeconds: Math.round((this.clock.now() - this.writeFailure.since) / 1000) });
      this.writeFailure = undefined;
    } catch (e) {
      this.metrics.errors.inc({ stage: 'write' });
      this.writeFailure = { since: this.writeFailure?.since ?? this.clock.now(), message: e instanceof Error ? e.message : String(e) };
      throw new Error(`writing to the archive: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    } finally {
      this.writeStartedAt = undefined;
    }
  }
}

function positive(n: number | undefined): number | undefined {
  return n !== undefined && n > 0 ? n : undefined;
}
