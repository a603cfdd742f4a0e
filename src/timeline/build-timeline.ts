import type { CoreEvent, Occurrence } from '../api/index.js';
import { eventCluster, eventCount } from '../api/index.js';
import type { ObjectRef } from './kinds.js';
import { decompressEvent, MAX_SPREAD_ROWS } from './occurrence-rows.js';
import type { OccurrenceEntry } from './occurrence-rows.js';
import { inScope, objectKey, scopeObjects } from './scope.js';
import type { OwnerLink } from './scope.js';
import type { Timeline, TimelineCause, TimelineHint, TimelineRow, TimelineSummary } from '../api/index.js';

/** TimelineInput is everything a timeline is built from. */
export interface TimelineInput {
  /** events are the events read (a superset of the scope is fine: scoping filters them). */
  events: readonly CoreEvent[];
  /** occurrences is the archive's history of those events; undefined when the server has no archive API. */
  occurrences?: readonly Occurrence[] | undefined;
  /** for scopes the timeline to one object and what it owns; its namespace must be set for namespaced kinds. */
  for?: ObjectRef | undefined;
  /** owners are recorded owner references, where the archive has them. */
  owners?: readonly OwnerLink[];
  /**
   * include are objects (`Kind/name`, in the namespace of `for`) outside its scope whose events the rows show too:
   * those its cause takes in (a StatefulSet's claim whose StorageClass is missing), which the explainer names.
   */
  include?: readonly string[] | undefined;
  /** since (inclusive) and until (exclusive) bound the rows, Unix ms. */
  since?: number | undefined;
  until?: number | undefined;
  /** types keeps rows of these types (case-insensitive, like kubectl events --types). */
  types?: readonly string[] | undefined;
  /** maxSpreadRows bounds the estimated rows of one gap between known times (default MAX_SPREAD_ROWS). */
  maxSpreadRows?: number;
  /**
   * explain states the cause of what the input shows (the summary's `cause`)
   * and the next steps (`hints`): composed by the server and the CLI from
   * src/diagnosis's failure catalogue, which this module never imports.
   * Without it a timeline has rows and a summary, and no steps.
   */
  explain?: TimelineExplainer | undefined;
}

/** TimelineExplanation is what the failure catalogue says of a timeline's input. */
export interface TimelineExplanation {
  /** cause is the incident the input shows, null when its events show no failure or several incidents (see causes). */
  cause: TimelineCause | null;
  /** causes are each incident's cause, most recent first, where the input shows several and no one object. */
  causes?: TimelineCause[] | undefined;
  /** objects are `Kind/name` of the objects outside the timeline's scope that its cause's incident takes in: their events are rows too. */
  objects?: readonly string[] | undefined;
  /** hints are the next steps, the cause's first. */
  hints: TimelineHint[];
}

/** TimelineExplainer explains a timeline's input: its cause and next steps. */
export type TimelineExplainer = (input: TimelineInput) => TimelineExplanation;

/** formatTimelineTime prints a time as RFC 3339 in UTC, with milliseconds only when there are some. */
export function formatTimelineTime(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

function historyKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** groupOccurrences indexes occurrences by their event's `namespace/name` (and uid, when both sides know it). */
function groupOccurrences(occurrences: readonly Occurrence[]): Map<string, Occurrence[]> {
  const out = new Map<string, Occurrence[]>();
  for (const o of occurrences) {
    const key = historyKey(o.event.namespace, o.event.name);
    const list = out.get(key);
    if (list === undefined) out.set(key, [o]);
    else list.push(o);
  }
  return out;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** eventIdentity is what tells two events apart: namespace, name and uid. */
function eventIdentity(e: CoreEvent): string {
  return `${e.metadata.namespace ?? ''}\u0000${e.metadata.name ?? ''}\u0000${e.metadata.uid ?? ''}`;
}

/**
 * canonicalEvents orders events by namespace, name and uid (the read order of
 * a list, whatever order they were given in) and drops repeats (two reads that
 * overlap), keeping the one with the highest count: the timeline of a set of
 * events does not depend on how they were read.
 */
function canonicalEvents(events: readonly CoreEvent[]): CoreEvent[] {
  const byIdentity = new Map<string, CoreEvent>();
  for (const e of events) {
    const key = eventIdentity(e);
    const had = byIdentity.get(key);
    if (had === undefined || eventCount(e) > eventCount(had) || (eventCount(e) === eventCount(had) && Number(e.metadata.resourceVersion ?? 0) > Number(had.metadata.resourceVersion ?? 0))) {
      byIdentity.set(key, e);
    }
  }
  return [...byIdentity.entries()].sort((a, b) => compareText(a[0], b[0])).map(([, e]) => e);
}

/** TimelineEntries are a set of events' occurrences as entries, in time order, before they become rows. */
export interface TimelineEntries {
  /** events are the events given, deduplicated, ordered and scoped. */
  events: CoreEvent[];
  /** entries are their occurrences within the window, in time order (ties in the order of the events). */
  entries: OccurrenceEntry[];
  /** fromHistory: the archive held the history of an event with entries. */
  fromHistory: boolean;
  /** undated: occurrences of events with no time at all. */
  undated: number;
}

/**
 * timelineEntries is the first half of buildTimeline: the events scoped to the
 * object, decompressed into occurrences by their history, cut to the window
 * and put in time order. The result depends on the events and occurrences
 * given, never on their order.
 */
export function timelineEntries(input: TimelineInput): TimelineEntries {
  const all = canonicalEvents(input.events);
  let events = all;
  if (input.for !== undefined) {
    const scope = scopeObjects(input.for, all, input.owners);
    const include = new Set(input.include ?? []);
    const namespace = input.for.namespace ?? '';
    const included = (e: CoreEvent): boolean => include.has(objectKey(e)) && (e.involvedObject.namespace ?? e.metadata.namespace ?? '') === namespace;
    events = all.filter((e) => inScope(scope, e) || (include.size > 0 && included(e)));
  }
  const history = input.occurrences === undefined ? undefined : groupOccurrences(input.occurrences);
  const types = input.types?.map((t) => t.toLowerCase());
  const entries: OccurrenceEntry[] = [];
  let fromHistory = false;
  let undated = 0;
  for (const e of events) {
    if (types !== undefined && types.length > 0 && !types.includes((e.type ?? '').toLowerCase())) continue;
    let own = history?.get(historyKey(e.metadata.namespace ?? '', e.metadata.name ?? ''));
    if (own !== undefined && e.metadata.uid) own = own.filter((o) => o.event.uid === undefined || o.event.uid === '' || o.event.uid === e.metadata.uid);
    const before = entries.length;
    const decompressed = decompressEvent(e, own, input.maxSpreadRows ?? MAX_SPREAD_ROWS);
    undated += decompressed.undated;
    for (const entry of decompressed.entries) {
      if (input.since !== undefined && entry.ms < input.since) continue;
      if (input.until !== undefined && entry.ms >= input.until) continue;
      entries.push(entry);
    }
    // Where the rows come from: the history of an event with no row in the window says nothing about them.
    if (own !== undefined && own.length > 0 && entries.length > before) fromHistory = true;
  }
  // The sort is stable (ECMAScript 2019): entries of one time keep the order they were made in, with no index to carry.
  entries.sort((a, b) => a.ms - b.ms);
  return { events: all, entries, fromHistory, undated };
}

/**
 * buildTimeline turns events (and their occurrence history) into a timeline:
 * scoped to an object and what it owns, one row per occurrence in time order,
 * a summary and next steps. The result depends on the events and occurrences
 * given, never on their order.
 */
export function buildTimeline(input: TimelineInput): Timeline {
  // The explainer reads the input, not the rows: what it says decides which rows there are (the objects its cause takes in).
  const explained = input.explain?.(input);
  const scoped = explained?.objects !== undefined && explained.objects.length > 0 ? { ...input, include: [...(input.include ?? []), ...explained.objects] } : input;
  const { entries: sorted, fromHistory, undated } = timelineEntries(scoped);
  const rows = sorted.map(timelineRow);
  const summary = summarize(rows, sorted, scoped, fromHistory, undated);
  const stated = explained === undefined ? summary : { cause: explained.cause, ...(explained.causes !== undefined ? { causes: explained.causes } : {}), ...summary };
  return { summary: stated, rows, hints: explained?.hints ?? [] };
}

function boundTime(ms: number | undefined): string | null {
  return ms === undefined ? null : formatTimelineTime(ms);
}

/** timelineRow is the row of one entry: its time, object, reason and message, and its bounds when estimated. */
export function timelineRow(x: OccurrenceEntry): TimelineRow {
  const e = x.event;
  const cluster = eventCluster(e);
  const row: TimelineRow = {
    time: formatTimelineTime(x.ms),
    namespace: e.metadata.namespace ?? '',
    ...(cluster !== '' ? { cluster } : {}),
    object: objectKey(e),
    type: e.type ?? '',
    reason: e.reason ?? '',
    message: x.message.trim(),
    count: x.count,
    estimated: x.estimated,
  };
  if (x.estimated) {
    row.earliest = boundTime(x.earliestMs);
    row.latest = boundTime(x.latestMs);
  }
  return row;
}

function summarize(rows: readonly TimelineRow[], entries: readonly OccurrenceEntry[], input: TimelineInput, withHistory: boolean, undated: number): TimelineSummary {
  const first = entries[0];
  const last = entries[entries.length - 1];
  const warning = rows.find((r) => r.type.toLowerCase() === 'warning');
  const reasons = new Map<string, { reason: string; type: string; count: number; first: number }>();
  const objects = new Map<string, { namespace: string; object: string; count: number }>();
  let occurrences = 0;
  rows.forEach((r, i) => {
    occurrences += r.count;
    const rk = `${r.type}\u0000${r.reason}`;
    const reason = reasons.get(rk);
    if (reason === undefined) reasons.set(rk, { reason: r.reason, type: r.type, count: r.count, first: i });
    else reason.count += r.count;
    const ok = `${r.namespace}\u0000${r.object}`;
    const object = objects.get(ok);
    if (object === undefined) objects.set(ok, { namespace: r.namespace, object: r.object, count: r.count });
    else object.count += r.count;
  });
  return {
    window: {
      since: input.since !== undefined ? formatTimelineTime(input.since) : first !== undefined ? formatTimelineTime(first.ms) : null,
      until: input.until !== undefined ? formatTimelineTime(input.until) : last !== undefined ? formatTimelineTime(last.ms) : null,
    },
    firstWarning:
      warning === undefined
        ? null
        : { time: warning.time, estimated: warning.estimated, namespace: warning.namespace, object: warning.object, reason: warning.reason, message: warning.message },
    reasons: [...reasons.values()].sort((a, b) => b.count - a.count || a.first - b.first).map(({ reason, type, count }) => ({ reason, type, count })),
    objects: [...objects.values()],
    rows: rows.length,
    occurrences,
    estimatedRows: rows.filter((r) => r.estimated).length,
    undated,
    history: withHistory ? 'occurrences' : 'events',
  };
}
