import type { CoreEvent } from '../api/index.js';
import type { Logger } from '../internal/index.js';
import type { ConfigReader } from './config-reader.js';
import type { ExportFields } from './fields.js';

/** PolicyName is how a sink treats the repeats of an event (docs/export.md, "Policies"). */
export type PolicyName = 'upsert' | 'occurrences' | 'first' | 'alert';

/**
 * AlertOptions are the alerting controls of a sink with the `alert` policy (chat sinks). They live in this contract
 * file, below alerting.ts, because a SinkType declares its alert defaults with them: declared in alerting.ts, the
 * two files imported each other.
 */
export interface AlertOptions {
  /** minCount: a burst is reported once its count reaches this. */
  minCount: number;
  /** forMs: a burst is reported only once it has kept repeating this long (0: at once). */
  forMs: number;
  /** groupWaitMs: how long a burst collects repeats before its one message (Alertmanager's group_wait). */
  groupWaitMs: number;
  /** resolveAfterMs: a burst with no change for this long is over; a Warning's gets a follow-up message (0: no follow-up). */
  resolveAfterMs: number;
  /** groupBy are the fields whose values make a burst (default: the event itself, `uid`). */
  groupBy: string[];
  /** resendIntervalMs: while a burst lasts, its firing message is sent again this often (0: once), as Prometheus re-sends to Alertmanager. */
  resendIntervalMs: number;
  /** resolveAll follows every burst up when it resolves, not only a Warning's (Alertmanager needs the end of each alert it holds). */
  resolveAll: boolean;
  /** perReason and perObject cap the messages per reason and per object in a window. */
  perReason?: { limit: number; windowMs: number };
  perObject?: { limit: number; windowMs: number };
}

/** AlertSummary is what an alert record says about the burst it reports. */
export interface AlertSummary {
  /** state is `firing` for the message of a burst, `resolved` for the follow-up when it stopped repeating. */
  state: 'firing' | 'resolved';
  /** repeats counts the repeats the burst folded (sum of count increases, the first occurrence included). */
  repeats: number;
  /** changes counts the changes the burst folded. */
  changes: number;
  /** events counts the distinct events of the burst; objects lists up to 10 of the objects they are about. */
  events: number;
  objects: string[];
  /** since and until are when the burst's first and last changes happened (RFC 3339). */
  since: string;
  until: string;
}

/**
 * ExportRecord is one delivery to a sink. `id` is its idempotency key: the
 * same change (or alert) always yields the same id, so a redelivery after a
 * crash is recognisable; `documentId` is what an upserting sink keys on, and
 * `version` orders the writes of one document (later changes have larger ones).
 */
export interface ExportRecord {
  id: string;
  documentId: string;
  /** key partitions records: the event's uid (Kafka's message key). */
  key: string;
  version: number;
  policy: PolicyName;
  fields: ExportFields;
  /** payload is the sink's template filled with the fields, else the fields. */
  payload: unknown;
  /** topic is the destination a route named for this record (Kafka topic, NATS subject), if any. */
  topic?: string;
  alert?: AlertSummary;
  /**
   * event is the stored core/v1 Event after the change, for a sink whose wire shape carries what
   * the field set leaves out (the OTLP sink's k8sevents layout: the regarding object's
   * resourceVersion, source.host, the creation time); absent for alert records and old archives.
   */
  event?: CoreEvent;
}

/**
 * SinkRejected is the error a sink throws when the far end refused records for
 * good (a 4xx other than 408/429, an invalid payload): the exporter retries it a
 * bounded number of times, then dead-letters it. Any other error is taken as the
 * sink being unavailable, retried until it answers.
 */
export class SinkRejected extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SinkRejected';
  }
}

/**
 * SinkUnavailable is an unavailable sink that said when to come back (an HTTP `Retry-After`):
 * the exporter retries it as any other unavailable sink, but not before `retryAfterMs`.
 */
export class SinkUnavailable extends Error {
  constructor(
    message: string,
    readonly retryAfterMs: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SinkUnavailable';
  }
}

/** retryAfterOf is how long an error asked the next attempt to wait (0: no wish). */
export function retryAfterOf(e: unknown): number {
  const ms = e instanceof Error && e.name === 'SinkUnavailable' ? (e as SinkUnavailable).retryAfterMs : 0;
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

/** isSinkRejected tells a SinkRejected by its shape. */
export function isSinkRejected(e: unknown): boolean {
  return e instanceof Error && e.name === 'SinkRejected';
}

/** ExportSink is what the exporter needs of a destination: deliver a batch, and let go of its connections. */
export interface ExportSink {
  /** send resolves once the sink acknowledged every record of the batch. */
  send(records: ExportRecord[], signal: AbortSignal): Promise<void>;
  /**
   * delivered, where the sink can tell, returns the ids of the records it
   * already holds. The runner asks it before the first delivery after a start
   * (the batch in flight at a crash) and before each retry after the sink was
   * unavailable (a batch that failed half way), and sends only the rest: a sink
   * that can answer sees each record once even across `kill -9`. A sink that
   * deduplicates by itself (an `_id`, a message id) needs none.
   */
  delivered?(records: ExportRecord[], signal: AbortSignal): Promise<Set<string>>;
  close(): Promise<void>;
}

/**
 * EventExplainer states in one sentence why an event happened, or undefined when it
 * cannot say. The export module declares it and the CLI composes it from the failure
 * catalogue (diagnosis), which export may not import; the alert policy's messages
 * carry its sentence as the `cause` field.
 */
export type EventExplainer = (event: CoreEvent) => string | undefined;

/** SinkDeps are what a sink may use beyond its own options. */
export interface SinkDeps {
  logger: Logger;
  /** env resolves `secretEnv`-style options. */
  env: Record<string, string | undefined>;
}

/**
 * SinkType is one kind of sink: the fields it adds to a sink's config, read
 * and checked with the reader, and how to build it from them. Sinks register
 * in `sinks/index.ts`'s table, so the config and the exporter name no sink.
 */
export interface SinkType<O = unknown> {
  /** fields are the sink-specific config fields. */
  fields: readonly string[];
  /** defaultPolicy is the policy of a sink of this type that names none. */
  defaultPolicy: PolicyName;
  /** alertDefaults replace DEFAULT_ALERT's controls for this type (what `alert:` does not set). */
  alertDefaults?: Partial<AlertOptions>;
  /** read checks the sink-specific fields, reporting each issue on the reader, and returns the options. */
  read(reader: ConfigReader, path: (string | number)[], raw: Record<string, unknown>): O;
  create(options: O, deps: SinkDeps): ExportSink;
}
