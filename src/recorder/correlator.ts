import type { CoreEvent } from '../api/index.js';
import type { Clock } from '../internal/index.js';
import { realClock } from '../internal/index.js';
import { type AggregatorKeyFunc, type AggregatorMessageFunc, aggregateByReason, combinedMessage, EventAggregator } from './aggregator.js';
import {
  AGGREGATE_INTERVAL_SECONDS,
  AGGREGATE_MAX_EVENTS,
  MAX_LRU_CACHE_ENTRIES,
  SPAM_BURST,
  SPAM_QPS,
} from './constants.js';
import { getEventKey, getSpamKey } from './event-keys.js';
import { EventLogger } from './event-logger.js';
import { EventNamer } from './event-name.js';
import { type SpamKeyFunc, SpamFilter } from './spam-filter.js';

/** CorrelatorOptions tune the legacy correlator; a zero or missing value means the default. */
export interface CorrelatorOptions {
  /** cacheSize bounds each of the three caches (default 4096). */
  cacheSize?: number;
  /** burst of the spam filter's token bucket (default 25). */
  burst?: number;
  /** qps refill of the spam filter (default 1/300). */
  qps?: number;
  /** maxEvents distinct messages before aggregation (default 10). */
  maxEvents?: number;
  /** maxIntervalSeconds of the aggregation window (default 600). */
  maxIntervalSeconds?: number;
  keyFunc?: AggregatorKeyFunc;
  messageFunc?: AggregatorMessageFunc;
  spamKeyFunc?: SpamKeyFunc;
  clock?: Clock;
  namer?: EventNamer;
}

/** withCorrelatorDefaults fills in every option left zero or missing (client-go populateDefaults). */
export function withCorrelatorDefaults(o: CorrelatorOptions = {}): Required<CorrelatorOptions> {
  return {
    cacheSize: o.cacheSize || MAX_LRU_CACHE_ENTRIES,
    burst: o.burst || SPAM_BURST,
    qps: o.qps || SPAM_QPS,
    maxEvents: o.maxEvents || AGGREGATE_MAX_EVENTS,
    maxIntervalSeconds: o.maxIntervalSeconds || AGGREGATE_INTERVAL_SECONDS,
    keyFunc: o.keyFunc ?? aggregateByReason,
    messageFunc: o.messageFunc ?? combinedMessage,
    spamKeyFunc: o.spamKeyFunc ?? getSpamKey,
    clock: o.clock ?? realClock,
    namer: o.namer ?? new EventNamer(),
  };
}

/** CorrelateResult is the correlator's verdict on one event. */
export interface CorrelateResult {
  /** skip: the spam filter held it back; nothing is written. */
  skip: boolean;
  event: CoreEvent;
  /** patch is set for a repeat: write it as a PATCH of the existing event. */
  patch?: Record<string, unknown>;
  /** repeat: the event counted onto an existing one. */
  repeat: boolean;
  /** combined: the aggregator replaced it with a combined event. */
  combined: boolean;
}

/**
 * Correlator is client-go's EventCorrelator: aggregator, then dedup logger
 * (whose cache is updated before filtering, so held-back events still count),
 * then spam filter.
 */
export class Correlator {
  private readonly aggregator: EventAggregator;
  private readonly logger: EventLogger;
  private readonly filter: SpamFilter;
  private readonly clock: Clock;
  /** memo is set when the default key functions are in use, whose keys depend only on known fields. */
  private readonly memo: KeyMemo | undefined;

  constructor(options: CorrelatorOptions = {}) {
    const o = withCorrelatorDefaults(options);
    this.clock = o.clock;
    this.memo = o.keyFunc === aggregateByReason && o.spamKeyFunc === getSpamKey ? new KeyMemo() : undefined;
    this.aggregator = new EventAggregator({
      cacheSize: o.cacheSize,
      keyFunc: o.keyFunc,
      messageFunc: o.messageFunc,
      maxEvents: o.maxEvents,
      maxIntervalSeconds: o.maxIntervalSeconds,
      namer: o.namer,
    });
    this.logger = new EventLogger(o.cacheSize, (e) => o.namer.name(e.involvedObject.name ?? '', o.clock.now()));
    this.filter = new SpamFilter({ cacheSize: o.cacheSize, burst: o.burst, qps: o.qps, clock: o.clock, keyFunc: o.spamKeyFunc });
  }

  correlate(event: CoreEvent): CorrelateResult {
    const now = this.clock.now();
    const keys = this.memo?.keysFor(event);
    const aggregated =
      keys === undefined ? this.aggregator.aggregate(event, now) : this.aggregator.aggregateKeyed(event, now, keys.aggregateKey, event.message ?? '', keys.eventKey);
    const observed = this.logger.observe(aggregated.event, aggregated.key);
    const repeat = observed.patch !== undefined;
    // The observed event has the source, object and type of the input, so the spam key carries over.
    const skip = keys === undefined ? this.filter.skip(observed.event) : this.filter.skipKey(keys.spamKey);
    const result: CorrelateResult = { skip, event: observed.event, repeat, combined: aggregated.combined };
    if (observed.patch !== undefined) result.patch = observed.patch;
    return result;
  }

  /** updateState records the server's copy of a written event. */
  updateState(server: CoreEvent): void {
    this.logger.updateState(server);
  }
}

interface DefaultKeys {
  aggregateKey: string;
  eventKey: string;
  spamKey: string;
}

/**
 * KeyMemo remembers the default keys of the previous event. A call site that
 * repeats an event reuses the same key strings, whose hashes the engine has
 * already computed, instead of building and hashing three new ones.
 */
class KeyMemo {
  private last: CoreEvent | undefined;
  private keys: DefaultKeys | undefined;

  keysFor(e: CoreEvent): DefaultKeys {
    const l = this.last;
    if (l !== undefined && this.keys !== undefined && sameKeyFields(e, l)) return this.keys;
    this.last = e;
    this.keys = { aggregateKey: aggregateByReason(e)[0], eventKey: getEventKey(e), spamKey: getSpamKey(e) };
    return this.keys;
  }
}

function sameKeyFields(a: CoreEvent, b: CoreEvent): boolean {
  const x = a.involvedObject;
  const y = b.involvedObject;
  return (
    a.message === b.message &&
    a.reason === b.reason &&
    a.type === b.type &&
    x.name === y.name &&
    x.namespace === y.namespace &&
    x.uid === y.uid &&
    x.kind === y.kind &&
    x.apiVersion === y.apiVersion &&
    x.fieldPath === y.fieldPath &&
    a.source?.component === b.source?.component &&
    a.source?.host === b.source?.host &&
    a.reportingComponent === b.reportingComponent &&
    a.reportingInstance === b.reportingInstance
  );
}
