import { ARCHIVE_API, occurrenceOf } from '../../api/index.js';
import type { CoreEvent, Occurrence } from '../../api/index.js';
import { occurrenceRepeats, occurrenceTimeMs } from '../archive-store.js';
import type { ClusterIdentity, EventRef, ObservedRange, OccurrenceCursor, OccurrenceQuery, ReasonCountQuery, RetentionRule } from '../archive-store.js';
import { microsOf, SHARED_TEXT_MIN, sharedText } from '../shared/index.js';
import { anyOfSql } from './list-query.js';
import type { Query } from './list-query.js';
import { CURRENT } from './schema.js';
import { EVENT_HASH, REGARDING_HASH, REGARDING_IN_HASH, eventOf, hashOf, regardingInOf, regardingOf } from './occurrence-indexes.js';
import { bodyOf } from './packed-rows.js';
import { TEXT_MARK } from './texts.js';

/** HOUR_MS is the span of happening time one `occurrence_lag` row bounds. */
const HOUR_MS = 3_600_000;

/** ObservedStamp is a batch's occurrence stamp, its time parsed once. */
export interface ObservedStamp {
  time: string;
  micros: number;
  cluster: string | undefined;
  clusterUID: string | undefined;
}

/** observedStamp reads an OccurrenceStamp's time (the store's clock when it has none). */
export function observedStamp(stamp: { observedTime?: string; cluster?: string; clusterUID?: string }, now: () => string): ObservedStamp {
  const time = stamp.observedTime ?? now();
  return { time, micros: microsOf(time), cluster: stamp.cluster, clusterUID: stamp.clusterUID };
}

/** ruleCondition is the SQL condition on the `cluster` column of a retention rule's rows, its parameter numbered `n`. */
function ruleCondition(rule: RetentionRule, n: number): { text: string; values: unknown[] } {
  if ('cluster' in rule) return { text: `cluster = $${n}`, values: [rule.cluster] };
  return { text: `cluster <> ALL(ARRAY(SELECT json_array_elements_text($${n}::json)))`, values: [JSON.stringify(rule.except)] };
}

/** OccurrenceRow is an occurrence as the write function stores it; its id is the revision of the write it records, known only at commit. */
export interface OccurrenceRow {
  observedMicros: number;
  namespace: string;
  eventName: string;
  regardingName: string;
  body: string;
  type: string;
  reason: string;
  repeats: number;
  seenMs: number | null;
  /** size is what the row adds to the store's `bytes` counter. */
  size: number;
  /** cluster names the mirrored source, "" for a local write (per-cluster retention selects by it). */
  cluster: string;
  /** textAbs and textOff name the `texts` row of a message cut out of the body (`texts.ts`), as a version row does. */
  textAbs?: number | null;
  textOff?: number | null;
}

/**
 * occurrenceRow builds the stored form of the occurrence of a change that
 * produced `event`: the Occurrence without what its columns say (names,
 * namespace) or what its id says (the event's resourceVersion).
 */
export function occurrenceRow(event: CoreEvent, change: { countBefore: number; countAfter: number }, stamp: ObservedStamp): OccurrenceRow {
  const o = occurrenceOf(event, change, { observedTime: stamp.time, cluster: stamp.cluster, clusterUID: stamp.clusterUID }, 0);
  const seen = occurrenceTimeMs(o);
  const { kind: _k, apiVersion: _a, metadata: _m, event: ref, ...rest } = o;
  const body = JSON.stringify(ref.uid === undefined ? { ...rest, event: {} } : { ...rest, event: { uid: ref.uid } });
  const regardingName = o.regarding.name ?? '';
  return {
    observedMicros: stamp.micros,
    namespace: ref.namespace,
    eventName: ref.name,
    regardingName,
    body,
    type: o.type ?? '',
    reason: o.reason ?? '',
    repeats: occurrenceRepeats(o),
    seenMs: seen ?? null,
    size: body.length + ref.namespace.length + ref.name.length + regardingName.length,
    cluster: o.cluster ?? '',
  };
}

/** StoredOccurrence is a row of an occurrence page. */
export interface StoredOccurrence {
  id: string;
  observed_us: string;
  namespace: string;
  event_name: string;
  /** body is the stored body of a row written before schema 6, body_z that of a later one, packed (`packed-rows.ts`). */
  body: string | null;
  body_z?: Uint8Array | null;
  /** text_rv names the `texts` row of a message cut out of the body (`texts.ts`). */
  text_rv: string | null;
}

/**
 * decodeOccurrence rebuilds an Occurrence from its row; the name's sequence and the event's resourceVersion are the
 * row's id. `texts` holds the messages of the rows read (`readTexts`), which a row that refers to one takes its message
 * from, in the place of its mark: each message is decoded once per read, however many occurrences repeat it.
 */
export function decodeOccurrence(row: StoredOccurrence, texts?: ReadonlyMap<string, string>): Occurrence {
  const text = row.text_rv === null || row.text_rv === undefined ? undefined : texts?.get(String(row.text_rv));
  const stored = bodyOf(row);
  const body = JSON.parse(text === undefined ? stored : stored.replace(TEXT_MARK, 'null')) as Omit<Occurrence, 'metadata' | 'event'> & { event: { uid?: string } };
  if (text !== undefined) body.message = text;
  // An often repeated event's occurrences hold its text once (see sharedText).
  if (body.message !== undefined && body.message.length >= SHARED_TEXT_MIN) body.message = sharedText(body.message);
  const event: Occurrence['event'] = { name: row.event_name, namespace: row.namespace };
  if (body.event.uid !== undefined) event.uid = body.event.uid;
  event.resourceVersion = row.id;
  return {
    kind: 'Occurrence',
    apiVersion: ARCHIVE_API,
    metadata: { name: `${row.event_name}.${row.id}`, namespace: row.namespace, creationTimestamp: (body.observedTime ?? '').replace(/\.\d+Z$/, 'Z') },
    ...body,
    event,
  };
}

/** cursorOf is the keyset position of an occurrence row. */
export function cursorOf(row: StoredOccurrence): OccurrenceCursor {
  return { observedMicros: Number(row.observed_us), id: Number(row.id) };
}

/**
 * LagBounds is this replica's copy of `occurrence_lag`: per hour of happening,
 * the least and greatest observed-minus-happened lag (µs). Most appends fall
 * within their hour's bounds and write nothing; the table only ever widens, so
 * a copy that is behind another replica's widening costs a redundant upsert.
 */
export class LagBounds {
  private known = new Map<number, { min: number; max: number }>();

  /** load replaces the copy with the table's rows. */
  load(rows: { hour: string; min_us: string; max_us: string }[]): void {
    this.known = new Map(rows.map((r) => [Number(r.hour), { min: Number(r.min_us), max: Number(r.max_us) }]));
  }

  /** note widens `pending` (a batch's widenings) when an occurrence at `seenMs`, observed at `observedMicros`, falls outside the known bounds. */
  note(pending: Map<number, { min: number; max: number }>, seenMs: number, observedMicros: number): void {
    const hour = Math.floor(seenMs / HOUR_MS);
    const lag = observedMicros - seenMs * 1000;
    const b = pending.get(hour) ?? this.known.get(hour);
    if (b !== undefined && lag >= b.min && lag <= b.max) return;
    pending.set(hour, b === undefined ? { min: lag, max: lag } : { min: Math.min(b.min, lag), max: Math.max(b.max, lag) });
  }

  /** committed merges a committed batch's widenings into the copy. */
  committed(pending: Map<number, { min: number; max: number }>): void {
    for (const [hour, b] of pending) {
      const k = this.known.get(hour);
      this.known.set(hour, k === undefined ? b : { min: Math.min(k.min, b.min), max: Math.max(k.max, b.max) });
    }
  }
}

/** ArchiveQueries builds the archive's SQL in schema `s`. */
export class ArchiveQueries {
  constructor(private readonly s: string) {}

  /**
   * page selects up to `batch` occurrence rows after a position, in (observed_us, id) order, on the primary key,
   * `occ_event` for one event's (its name in its namespace) or for each of a query's `events` (a seek of each from
   * the position's time), `occ_regarding` for one regarding name or, in one namespace, `occ_regarding_ns`.
   */
  page(q: OccurrenceQuery, after: OccurrenceCursor, batch: number): Query {
    const values: unknown[] = [after.observedMicros, after.id, batch];
    const conds: string[] = [];
    const regarding = q.fieldEquals?.['regarding.name'];
    const eventName = q.fieldEquals?.['event.name'];
    const eventNamespace = q.fieldEquals?.['metadata.namespace'] ?? q.namespace;
    const byEvent = eventName !== undefined && eventNamespace !== undefined && (q.namespace === undefined || q.namespace === eventNamespace);
    const byEvents = !byEvent && q.events !== undefined;
    const byNamespace = !byEvent && !byEvents && regarding !== undefined && q.namespace !== undefined;
    let from = `${this.s}.occurrences`;
    // The whole index key in one row comparison, so the scan starts at the position.
    if (byEvent) {
      values.push(eventNamespace, eventName);
      conds.push(eventOf('$4::text', '$5::text'), `(${EVENT_HASH}, observed_us, id) > (${hashOf('$4::text', '$5::text')}, $1, $2)`);
    } else if (byEvents) {
      // Each event once (a name listed twice would join its rows twice), each a range of occ_event from the position's time.
      const events = new Map(q.events!.map((e) => [`${e.namespace}/${e.name}`, e]));
      values.push([...events.values()].map((e) => e.namespace), [...events.values()].map((e) => e.name));
      from = `unnest($4::text[], $5::text[]) AS k(k_namespace, k_name) JOIN ${from} ON ${eventOf('k_namespace', 'k_name')}`;
      conds.push('observed_us >= $1', '(observed_us, id) > ($1, $2)');
      if (regarding !== undefined) {
        values.push(regarding);
        conds.push(`regarding_name = $${values.length}`);
      }
    } else if (byNamespace) {
      values.push(regarding, q.namespace);
      conds.push(regardingInOf('$4::text', '$5::text'), `(${REGARDING_IN_HASH}, observed_us, id) > (${hashOf('$4::text', '$5::text')}, $1, $2)`);
    } else if (regarding !== undefined) {
      values.push(regarding);
      conds.push(regardingOf('$4::text'), `(${REGARDING_HASH}, observed_us, id) > (${hashOf('$4::text')}, $1, $2)`);
    } else {
      conds.push('(observed_us, id) > ($1, $2)');
    }
    if (q.namespace !== undefined && !byNamespace && !byEvent) {
      values.push(q.namespace);
      conds.push(`namespace = $${values.length}`);
    }
    if (q.untilMicros !== undefined) {
      values.push(q.untilMicros);
      conds.push(`observed_us < $${values.length}`);
    }
    // The type and reason are the row's own columns: the occurrences an AnyOf leaves out are never sent nor decoded.
    if (q.anyOf !== undefined) conds.push(anyOfSql(q.anyOf, { type: 'type', reason: 'reason' }, values));
    const order = byEvent
      ? `${EVENT_HASH}, observed_us, id`
      : byNamespace
        ? `${REGARDING_IN_HASH}, observed_us, id`
        : regarding !== undefined && !byEvents
          ? `${REGARDING_HASH}, observed_us, id`
          : 'observed_us, id';
    return {
      text: `SELECT id, observed_us, namespace, event_name, body, body_z, text_rv FROM ${from} WHERE ${conds.join(' AND ')} ORDER BY ${order} LIMIT $3`,
      values,
    };
  }

  /**
   * firstOfEvents selects the first `batch` occurrence rows of each event (`i`
   * its index in the query) in one statement: for each, a seek of `occ_event`
   * to its name in its namespace, so none of the other events about its object
   * is read.
   */
  firstOfEvents(events: readonly { index: number; event: EventRef }[], batch: number): Query {
    return {
      text:
        `SELECT k.i, o.id, o.observed_us, o.namespace, o.event_name, o.body, o.body_z, o.text_rv FROM unnest($1::int[], $2::text[], $3::text[]) AS k(i, namespace, name) ` +
        `CROSS JOIN LATERAL (SELECT id, observed_us, namespace, event_name, body, body_z, text_rv FROM ${this.s}.occurrences ` +
        `WHERE ${eventOf('k.namespace', 'k.name')} ORDER BY ${EVENT_HASH}, observed_us, id LIMIT $4) o`,
      values: [events.map((e) => e.index), events.map((e) => e.event.namespace), events.map((e) => e.event.name), batch],
    };
  }

  /** countByReason sums the repeats of the occurrences that happened in the window, over an observed-time range that holds them all. */
  countByReason(q: ReasonCountQuery, range: ObservedRange): Query {
    const values: unknown[] = [range.sinceMicros, range.untilMicros, q.sinceMs, q.untilMs];
    let ns = '';
    if (q.namespace !== undefined) {
      values.push(q.namespace);
      ns = ' AND namespace = $5';
    }
    return {
      text:
        `SELECT type, reason, sum(repeats) AS count, min(seen_ms) AS first_ms FROM ${this.s}.occurrences ` +
        `WHERE observed_us >= $1 AND observed_us < $2 AND seen_ms >= $3 AND seen_ms < $4${ns} GROUP BY type, reason`,
      values,
    };
  }

  /** lagOver is the widest lag bounds of the hours of happening from `sinceMs` to `untilMs` (exclusive). */
  lagOver(sinceMs: number, untilMs: number): Query {
    return {
      text: `SELECT min(min_us) AS lo, max(max_us) AS hi FROM ${this.s}.occurrence_lag WHERE hour BETWEEN $1 AND $2`,
      values: [Math.floor(sinceMs / HOUR_MS), Math.floor((untilMs - 1) / HOUR_MS)],
    };
  }

  lags(): Query {
    return { text: `SELECT hour, min_us, max_us FROM ${this.s}.occurrence_lag`, values: [] };
  }

  checkpoint(source: string): Query {
    return { text: `SELECT resource_version, updated_at FROM ${this.s}.source_checkpoints WHERE source = $1`, values: [source] };
  }

  /** bindCluster binds a free name (RETURNING a row only when it did). */
  bindCluster(identity: ClusterIdentity, now: number): Query {
    return {
      text: `INSERT INTO ${this.s}.clusters (name, uid, bound_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING RETURNING uid`,
      values: [identity.name, identity.uid, now],
    };
  }

  /** clusterUID reads the UID a name is bound to. */
  clusterUID(name: string): Query {
    return { text: `SELECT uid FROM ${this.s}.clusters WHERE name = $1`, values: [name] };
  }

  /** clusterNames lists the names bound to a UID. */
  clusterNames(uid: string): Query {
    return { text: `SELECT name FROM ${this.s}.clusters WHERE uid = $1 ORDER BY name`, values: [uid] };
  }

  /**
   * dropOccurrences deletes up to `limit` of the oldest occurrences (those of a
   * retention rule, observed before its cutoff, when one is given) and takes
   * their size off the `bytes` counter, in one statement. It answers the texts
   * they referred to (`texts`), which `dropTexts` then settles.
   */
  dropOccurrences(rule: RetentionRule | undefined, limit: number): Query {
    const where = rule === undefined ? { text: '', values: [] } : ruleCondition(rule, 3);
    return {
      text:
        `WITH d AS (DELETE FROM ${this.s}.occurrences WHERE (observed_us, id) IN ` +
        `(SELECT observed_us, id FROM ${this.s}.occurrences ${rule === undefined ? '' : `WHERE observed_us < $2 AND ${where.text} `}ORDER BY observed_us, id LIMIT $1) RETURNING size, text_rv), ` +
        `u AS (UPDATE ${this.s}.meta SET value = value - (SELECT coalesce(sum(size), 0) FROM d) WHERE name = 'bytes') ` +
        `SELECT count(*) AS n, (SELECT json_agg(DISTINCT text_rv) FROM d WHERE text_rv IS NOT NULL) AS texts FROM d`,
      values: rule === undefined ? [limit] : [limit, rule.cutoffMs * 1000, ...where.values],
    };
  }

  /** markBefore is the newest write mark at or before a time: every revision up to its `rv` was written by then. */
  markBefore(cutoffMs: number): Query {
    return { text: `SELECT at, rv FROM ${this.s}.write_marks WHERE at <= $1 ORDER BY at DESC LIMIT 1`, values: [cutoffMs] };
  }

  /** dropMarks deletes the marks older than one no cutoff will pass again. */
  dropMarks(beforeMs: number): Query {
    return { text: `DELETE FROM ${this.s}.write_marks WHERE at < $1`, values: [beforeMs] };
  }

  /**
   * oldestEvents lists up to `limit` live keys in the order they were last
   * written (a walk of the primary key), up to revision `upTo` and of a
   * retention rule's rows when given, with the text each refers to.
   */
  oldestEvents(upTo: { rv: number; rule: RetentionRule } | undefined, limit: number): Query {
    if (upTo === undefined) return { text: `SELECT rv, key, text_rv FROM ${this.s}.versions WHERE ${CURRENT} ORDER BY rv LIMIT $1`, values: [limit] };
    const where = ruleCondition(upTo.rule, 3);
    return { text: `SELECT rv, key, text_rv FROM ${this.s}.versions WHERE rv <= $2 AND ${CURRENT} AND ${where.text} ORDER BY rv LIMIT $1`, values: [limit, upTo.rv, ...where.values] };
  }

  /** counts are the numbers of occurrences and live events, and the `bytes` counter (for the size cap). */
  counts(): Query {
    return {
      text:
        `SELECT (SELECT count(*) FROM ${this.s}.occurrences) AS occurrences, (SELECT count(*) FROM ${this.s}.versions WHERE ${CURRENT}) AS events, ` +
        `(SELECT value FROM ${this.s}.meta WHERE name = 'bytes') AS bytes`,
      values: [],
    };
  }

  bytes(): Query {
    return { text: `SELECT value FROM ${this.s}.meta WHERE name = 'bytes'`, values: [] };
  }
}
