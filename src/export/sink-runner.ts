import { ExponentialBackoff } from '../internal/index.js';
import type { Clock, Logger } from '../internal/index.js';
import type { DeadLetter, ExportLog } from '../storage/index.js';
import { createAlertPolicy } from './alerting.js';
import type { AlertPolicy } from './alerting.js';
import type { SinkConfig } from './config.js';
import type { ExportMetrics } from './export-metrics.js';
import { fieldsOf } from './fields.js';
import { collapseUpserts, recordOf } from './policy.js';
import { routeTargets } from './route.js';
import type { Route } from './route.js';
import { isSinkRejected, retryAfterOf } from './types.js';
import type { EventExplainer, ExportRecord, ExportSink } from './types.js';

/** STOP_GRACE_MS: a stop lets a delivery in flight finish this long, so a reload does not resend it. */
const STOP_GRACE_MS = 5_000;
/** MAX_QUEUE_COUNT bounds the count behind the queue-depth gauge (a scan of the log's primary key). */
const MAX_QUEUE_COUNT = 1_000_000;

class Stopped extends Error {}

/** SinkRunnerOptions are what one sink's delivery loop works with. */
export interface SinkRunnerOptions {
  config: SinkConfig;
  sink: ExportSink;
  route: Route;
  log: ExportLog;
  metrics: ExportMetrics;
  clock: Clock;
  logger: Logger;
  pollIntervalMs: number;
  /** explain states an event's cause for the alert policy's messages. */
  explain?: EventExplainer;
}

/**
 * SinkRunner delivers the archive's log to one sink: it reads a batch after the
 * sink's position, routes and shapes it by the sink's policy, delivers it
 * (retrying), and only then moves the position, with the policy's state and
 * any dead letters, in one commit. It holds one batch at a time, so a sink that
 * is down costs no memory, only a position that stays behind; each sink has its
 * own loop, so it holds back no other sink and never the archive.
 */
export class SinkRunner {
  private readonly idle = new AbortController();
  private readonly hard = new AbortController();
  private running: Promise<void> | undefined;
  private position = 0;
  private committedState: string | undefined;
  /** waitingSince is when the records being delivered were first tried (undefined while none wait). */
  private waitingSince: number | undefined;
  private lastError: string | undefined;
  private started = false;
  /** uncertain is set while the sink may hold records of the next delivery: at start (a crash in flight) and after a failed send. */
  private uncertain = true;
  /** unreadable is when reads of the archive began to fail, and the last failure (undefined while they succeed). */
  private unreadable: { since: number; error: string } | undefined;
  /** unsavable is when saving the position in the archive began to fail, and the last failure (undefined while it succeeds). */
  private unsavable: { since: number; error: string } | undefined;

  constructor(private readonly o: SinkRunnerOptions) {}

  get name(): string {
    return this.o.config.name;
  }

  start(): void {
    this.running ??= this.loop().catch((e: unknown) => {
      if (!(e instanceof Stopped)) this.o.logger.error('export: a sink loop ended', { sink: this.name, error: e instanceof Error ? e.message : String(e) });
    });
  }

  async stop(): Promise<void> {
    this.idle.abort(new Stopped('stopped'));
    const grace = this.o.clock.setTimeout(() => this.hard.abort(new Stopped('stopped')), STOP_GRACE_MS, { unref: true });
    await this.running;
    this.o.clock.clearTimeout(grace);
    await this.o.sink.close().catch(() => undefined);
  }

  /** readiness fails while the archive cannot be read, and once records have waited past the sink's stuckAfter. */
  readiness(): { ready: boolean; message: string } {
    if (!this.started) return { ready: false, message: `sink ${this.name}: not started yet` };
    const unreadable = this.unreadable;
    if (unreadable !== undefined) {
      const s = Math.round((this.o.clock.now() - unreadable.since) / 1000);
      return { ready: false, message: `sink ${this.name}: cannot read the archive (for ${s}s; the position stays where it is): ${unreadable.error}` };
    }
    const unsavable = this.unsavable;
    if (unsavable !== undefined) {
      const s = Math.round((this.o.clock.now() - unsavable.since) / 1000);
      return { ready: false, message: `sink ${this.name}: cannot save the position in the archive (for ${s}s; retrying): ${unsavable.error}` };
    }
    const since = this.waitingSince;
    if (since !== undefined && this.o.clock.now() - since > this.o.config.stuckAfterMs) {
      const s = Math.round((this.o.clock.now() - since) / 1000);
      return { ready: false, message: `sink ${this.name}: nothing delivered for ${s}s (${this.lastError ?? 'retrying'})` };
    }
    return { ready: true, message: 'ok' };
  }

  queueDepth(): Promise<number> {
    return this.o.log.pending(this.position, MAX_QUEUE_COUNT);
  }

  async oldestUndeliveredSeconds(): Promise<number> {
    const [next] = await this.o.log.read(this.position, 1);
    return next === undefined ? 0 : Math.max(0, (this.o.clock.now() - next.observedMicros / 1000) / 1000);
  }

  private get stopping(): boolean {
    return this.idle.signal.aborted;
  }

  private async loop(): Promise<void> {
    const cfg = this.o.config;
    const backoff = new ExponentialBackoff({ initialMs: cfg.retry.initialBackoffMs, maxMs: cfg.retry.maxBackoffMs, jitterFactor: 0.5 });
    let policy: AlertPolicy | undefined;
    for (;;) {
      try {
        const saved = await this.o.log.getPosition(cfg.name);
        this.position = saved?.position ?? (cfg.start === 'now' ? await this.o.log.head() : 0);
        this.committedState = saved?.state;
        if (cfg.policy === 'alert') policy = createAlertPolicy(cfg.alert, cfg.template, saved?.state);
        break;
      } catch (e) {
        this.o.logger.warn('export: cannot read the sink position; retrying', { sink: cfg.name, error: (e as Error).message });
        await this.o.clock.sleep(backoff.next(), this.idle.signal);
      }
    }
    this.started = true;
    this.o.logger.info('export: sink started', { sink: cfg.name, type: cfg.type, policy: cfg.policy, position: this.position });
    // The next batch, read while the one before it is in flight: { position it was read from, the read }.
    let ahead: { position: number; read: ReturnType<ExportLog['read']> } | undefined;
    while (!this.stopping) {
      let changes: Awaited<ReturnType<ExportLog['read']>>;
      try {
        const read = ahead?.position === this.position ? ahead.read : this.o.log.read(this.position, cfg.batchSize);
        ahead = undefined;
        changes = await read;
      } catch (e) {
        const error = (e as Error).message;
        // One line an episode: the retries of an archive that is down for minutes would flood the log.
        if (this.unreadable === undefined) this.o.logger.warn('export: cannot read the archive; retrying', { sink: cfg.name, error });
        this.unreadable = { since: this.unreadable?.since ?? this.o.clock.now(), error };
        await this.o.clock.sleep(backoff.next(), this.idle.signal).catch(() => undefined);
        continue;
      }
      if (this.unreadable !== undefined) {
        this.o.logger.info('export: the archive can be read again', { sink: cfg.name, afterSeconds: Math.round((this.o.clock.now() - this.unreadable.since) / 1000) });
        this.unreadable = undefined;
        backoff.reset();
      }
      let records: ExportRecord[] = [];
      for (const c of changes) {
        const f = fieldsOf(c);
        const targets = routeTargets(this.o.route, f);
        if (!targets.has(cfg.name)) continue;
        if (policy !== undefined) {
          // Only a message a person reads gets the sentence: the record policies' field sets stay as they were.
          const cause = c.event === undefined ? undefined : this.o.explain?.(c.event);
          if (cause !== undefined) f.cause = cause;
          records.push(...policy.observe(f, c.observedMicros / 1000));
        } else {
          const r = recordOf(cfg.policy as 'upsert' | 'occurrences' | 'first', f, cfg.template, targets.get(cfg.name));
          if (r !== undefined && c.event !== undefined) r.event = c.event;
          if (r !== undefined) records.push(r);
        }
      }
      if (policy !== undefined) {
        records.push(...policy.tick(this.o.clock.now()));
        const n = policy.takeSuppressed();
        if (n > 0) this.o.metrics.suppressed.inc({ sink: cfg.name }, n);
      }
      records = collapseUpserts(records);
      const next = changes.at(-1)?.id ?? this.position;
      let delivering: Promise<DeadLetter[]> = Promise.resolve([]);
      if (records.length > 0) {
        // The sink starts sending before the next batch is read: a sink whose client sends from its own
        // threads (librdkafka) ships this batch while this thread reads and decodes the next. Only the read
        // is early; the next batch is routed, delivered and committed after this one, as before.
        delivering = this.deliver(records);
        if (changes.length === cfg.batchSize) {
          const read = this.o.log.read(next, cfg.batchSize);
          read.catch(() => undefined);
          ahead = { position: next, read };
        }
      }
      const deadLetters = await delivering;
      const state = policy?.state();
      if (next !== this.position || state !== this.committedState || deadLetters.length > 0) {
        await this.commit(next, state, deadLetters);
      }
      if (changes.length < cfg.batchSize) {
        try {
          await this.o.clock.sleep(this.o.pollIntervalMs, this.idle.signal);
        } catch {
          break;
        }
      }
    }
  }

  /** commit moves the position; an archive that refuses is retried (what was delivered may otherwise be delivered again). */
  private async commit(position: number, state: string | undefined, deadLetters: DeadLetter[]): Promise<void> {
    const backoff = new ExponentialBackoff({ initialMs: 200, maxMs: 5_000, jitterFactor: 0.5 });
    for (;;) {
      try {
        await this.o.log.commit(this.name, { position, state, deadLetters });
        this.position = position;
        this.committedState = state;
        this.unsavable = undefined;
        return;
      } catch (e) {
        if (this.hard.signal.aborted) throw new Stopped('stopped');
        const error = (e as Error).message;
        this.o.logger.warn('export: cannot save the sink position; retrying', { sink: this.name, error });
        // An archive that is down while a batch is being committed fails readiness as a failed read does.
        this.unsavable = { since: this.unsavable?.since ?? this.o.clock.now(), error };
        await this.o.clock.sleep(backoff.next(), this.hard.signal).catch(() => undefined);
      }
    }
  }

  /**
   * deliver sends records until the sink takes them. An unavailable sink is
   * retried until it answers; records it refuses are retried up to
   * maxAttempts, one by one (so one bad record does not take its batch with
   * it), then returned as dead letters.
   */
  private async deliver(records: ExportRecord[]): Promise<DeadLetter[]> {
    const cfg = this.o.config;
    const metric = { sink: cfg.name };
    const backoff = new ExponentialBackoff({ initialMs: cfg.retry.initialBackoffMs, maxMs: cfg.retry.maxBackoffMs, jitterFactor: 0.5 });
    this.waitingSince ??= this.o.clock.now();
    let refusals = 0;
    for (let attempt = 0; ; attempt++) {
      if (this.hard.signal.aborted || (attempt > 0 && this.stopping)) throw new Stopped('stopped');
      if (attempt > 0) this.o.metrics.retried.inc(metric);
      try {
        let pending = records;
        if (this.uncertain && this.o.sink.delivered !== undefined) {
          const held = await this.o.sink.delivered(records, this.hard.signal);
          pending = records.filter((r) => !held.has(r.id));
          if (pending.length < records.length) this.o.logger.info('export: the sink already held records of a redelivery; skipped them', { sink: cfg.name, skipped: records.length - pending.length });
        }
        this.uncertain = false;
        if (pending.length > 0) await this.o.sink.send(pending, this.hard.signal);
        this.o.metrics.sent.inc(metric, pending.length);
        this.waitingSince = undefined;
        this.lastError = undefined;
        return [];
      } catch (e) {
        if (this.hard.signal.aborted) throw new Stopped('stopped');
        this.uncertain = !isSinkRejected(e);
        this.o.metrics.failed.inc(metric);
        const message = e instanceof Error ? e.message : String(e);
        this.lastError = message;
        if (isSinkRejected(e)) {
          if (records.length > 1) {
            const dead: DeadLetter[] = [];
            for (const r of records) dead.push(...(await this.deliver([r])));
            return dead;
          }
          if (++refusals >= cfg.retry.maxAttempts) {
            this.o.metrics.deadLettered.inc(metric);
            this.o.logger.error('export: a record was dead-lettered', { sink: cfg.name, id: records[0]!.id, error: message });
            this.waitingSince = undefined;
            return [{ sink: cfg.name, changeId: records[0]!.fields.changeId, record: JSON.stringify({ ...records[0], event: undefined }), error: message, attempts: refusals }];
          }
        }
        // A sink that said when to come back (Retry-After) is not asked sooner.
        const delay = Math.max(backoff.next(), retryAfterOf(e));
        this.o.logger.warn('export: delivery failed; retrying', { sink: cfg.name, records: records.length, error: message, retryInMs: Math.round(delay) });
        try {
          await this.o.clock.sleep(delay, this.idle.signal);
        } catch {
          throw new Stopped('stopped');
        }
      }
    }
  }
}
