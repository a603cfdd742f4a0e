import type { CoreEvent, Occurrence } from '../api/index.js';
import { buildTimeline } from './build-timeline.js';
import type { TimelineExplainer } from './build-timeline.js';
import { eventFirstMs, eventLastMs, OWNER_KINDS } from '../api/index.js';
import type { ObjectRef } from './kinds.js';
import { isNamespacedKind } from './kinds.js';
import { scheduledNode, scopeObjects } from './scope.js';
import type { OwnerLink } from './scope.js';
import type { Timeline, TimelineSummary } from '../api/index.js';
import type { ActiveWindow, AnyOf } from '../storage/index.js';
import { SCHEDULED_REASON } from './scope.js';

/** SourceQuery narrows a read: a namespace (undefined: all), and optionally one involved object. */
export interface SourceQuery {
  namespace?: string | undefined;
  kind?: string | undefined;
  name?: string | undefined;
  /**
   * since and until bound occurrence reads (Unix ms, since inclusive, until
   * exclusive): the history of changes that happened in the window. An
   * occurrence read has `until` only when no event of the query straddles it,
   * as the later history of such an event decides how its repeats are spread.
   */
  since?: number | undefined;
  until?: number | undefined;
  /**
   * inWindowOnly lets an event read leave out the events that did not happen
   * within [since, until) (see `activeIn` of the stores), but for Scheduled
   * events, which tell the node of a pod whenever it was scheduled (with
   * `anyOf`, only where it lists their reason). Set where
   * nothing outside the window changes the timeline: not for an owner's
   * namespace, whose earlier events tell which pods it owns.
   */
  inWindowOnly?: boolean;
  /**
   * anyOf keeps the events (and occurrences) of some types, reasons or
   * involved kinds (see the store's AnyOf): what a reader that needs only
   * failures asks for, so a store reads and decodes nothing else. A source may
   * return more than it selects, never less.
   */
  anyOf?: AnyOf | undefined;
  /**
   * events, in an occurrence read, keeps the history of these events only (each by its namespace and name): a
   * reader that has read the events it builds from (incidents, their failures) needs no other's. A source may
   * return more than it selects, never less. `read` is the event as read (OccurrenceQuery's `events`).
   */
  events?: readonly { namespace: string; name: string; read?: CoreEvent | undefined }[] | undefined;
}

/**
 * ALWAYS_READ are the reasons an event read within a window keeps whenever they happened: a pod's Scheduled names
 * its node. A read with anyOf keeps them only where it names them by reason: it says what it reads (incidents read
 * the Scheduled events they need by pod), and a store reads a window's failures by time only with no such reason.
 */
const ALWAYS_READ: readonly string[] = [SCHEDULED_REASON];

/** sourceWindow is the window an event read keeps (`inWindowOnly`), as every source applies it; undefined for none. */
export function sourceWindow(q: SourceQuery): ActiveWindow | undefined {
  if (q.inWindowOnly !== true || (q.since === undefined && q.until === undefined)) return undefined;
  return {
    ...(q.since !== undefined ? { sinceMs: q.since } : {}),
    ...(q.until !== undefined ? { untilMs: q.until } : {}),
    alwaysReasons: q.anyOf === undefined ? ALWAYS_READ : ALWAYS_READ.filter((r) => q.anyOf!.reasons?.includes(r) === true),
  };
}

/**
 * TimelineSource is where a timeline reads from: an API server or archive over
 * HTTP, or an EventStore in process. It is declared here, by its consumer.
 */
export interface TimelineSource {
  /** listEvents reads the events a query selects. */
  listEvents(query: SourceQuery): Promise<CoreEvent[]>;
  /** listOccurrences reads the archive's history, or undefined when the source keeps none. */
  listOccurrences(query: SourceQuery): Promise<Occurrence[] | undefined>;
  /** listOwners reads recorded owner references of a namespace, where the source has them. */
  listOwners?(namespace: string): Promise<OwnerLink[]>;
  /**
   * countReasons, where the source can, sums the repeats that happened in a
   * window by type and reason from its history alone (no events read, nothing
   * decoded); undefined when it cannot for this query.
   */
  countReasons?(query: ReasonCountsQuery): Promise<SourceReasonCount[] | undefined>;
}

/** ReasonCountsQuery is a window (Unix ms, since inclusive, until exclusive) and a namespace (undefined: all). */
export interface ReasonCountsQuery {
  namespace?: string | undefined;
  since: number;
  until: number;
}

/** SourceReasonCount is the repeats of one type and reason in a window, and when the first happened (Unix ms). */
export interface SourceReasonCount {
  type: string;
  reason: string;
  count: number;
  firstMs: number;
}

/** CollectTimelineOptions say what to read and how to cut it. */
export interface CollectTimelineOptions {
  source: TimelineSource;
  /** for is the object (namespace set for namespaced kinds); undefined reads the whole namespace. */
  for?: ObjectRef | undefined;
  /** namespace without `for`: undefined reads all namespaces. */
  namespace?: string | undefined;
  since?: number | undefined;
  until?: number | undefined;
  types?: readonly string[] | undefined;
  /**
   * namespaceOnly keeps every read within the namespace (of `for`, or `namespace`): no events of
   * the nodes its pods ran on, which live elsewhere. A server's namespaced route sets it, so a
   * client allowed one namespace reads nothing of another through it.
   */
  namespaceOnly?: boolean | undefined;
  /** explain states the summary's cause (see TimelineInput.explain). */
  explain?: TimelineExplainer | undefined;
}

/** OWNING_KINDS are the kinds whose scope reaches beyond their own events (api's OWNER_KINDS), so their whole namespace is read. */
const OWNING_KINDS = new Set(OWNER_KINDS);

/**
 * collectTimeline reads what a timeline needs from a source, as narrowly as the
 * object allows (one object's events for a Pod, the namespace for a
 * Deployment), adds the events of the nodes its pods ran on, and builds it.
 */
export async function collectTimeline(o: CollectTimelineOptions): Promise<Timeline> {
  const window = { since: o.since, until: o.until };
  const root = o.for;
  const queries: SourceQuery[] = [];
  let events: CoreEvent[];
  if (root === undefined) {
    queries.push({ namespace: o.namespace, ...window, inWindowOnly: true });
  } else if (!isNamespacedKind(root.kind)) {
    queries.push({ kind: root.kind, name: root.name, ...window, inWindowOnly: true });
  } else if (OWNING_KINDS.has(root.kind)) {
    queries.push({ namespace: root.namespace, ...window });
  } else {
    queries.push({ namespace: root.namespace, kind: root.kind, name: root.name, ...window, inWindowOnly: true });
  }
  events = await o.source.listEvents(queries[0]!);
  let owners: OwnerLink[] = [];
  if (root !== undefined && OWNING_KINDS.has(root.kind) && o.source.listOwners !== undefined) owners = await o.source.listOwners(root.namespace ?? '');
  if (root !== undefined && isNamespacedKind(root.kind) && o.namespaceOnly !== true) {
    const nodes = root.kind === 'Pod' ? events.map(scheduledNode).filter((n): n is string => n !== undefined) : scopeObjects(root, events, owners).nodes;
    for (const node of new Set(nodes)) {
      const q: SourceQuery = { kind: 'Node', name: node, ...window, inWindowOnly: true };
      queries.push(q);
      events = events.concat(await o.source.listEvents(q));
    }
  }
  let occurrences: Occurrence[] | undefined = [];
  const straddles = o.until !== undefined && events.some((e) => (eventFirstMs(e) ?? Infinity) < o.until! && (eventLastMs(e) ?? -Infinity) >= o.until!);
  for (const q of queries) {
    const got = await o.source.listOccurrences(straddles ? { ...q, until: undefined } : q);
    if (got === undefined) {
      occurrences = undefined;
      break;
    }
    // Not push(...got): a whole cluster's hour of history is more arguments than a call takes.
    occurrences = occurrences.concat(got);
  }
  return buildTimeline({ events, occurrences, for: root, owners, since: o.since, until: o.until, types: o.types, explain: o.explain });
}

/** CountReasonsOptions say which window's reasons to count. */
export interface CountReasonsOptions {
  source: TimelineSource;
  /** namespace: undefined counts all namespaces. */
  namespace?: string | undefined;
  since?: number | undefined;
  until?: number | undefined;
  types?: readonly string[] | undefined;
}

/**
 * countReasons is the `reasons` of the summary of a timeline with no object:
 * the repeats in the window by reason, most frequent first. A source whose
 * history can count them (an archive, which records an occurrence of every
 * change it writes) answers from that history in one aggregate read, rather than
 * reading every event to decompress them into rows; the two agree wherever the
 * archive holds each event's history (repeats it never saw, such as those before
 * a mirror started, are only in the rows, spread from counts). Any other source,
 * or an unbounded window, builds the timeline.
 */
export async function countReasons(o: CountReasonsOptions): Promise<TimelineSummary['reasons']> {
  const counted =
    o.since !== undefined && o.until !== undefined && o.source.countReasons !== undefined
      ? await o.source.countReasons({ namespace: o.namespace, since: o.since, until: o.until })
      : undefined;
  if (counted === undefined) return (await collectTimeline(o)).summary.reasons;
  const types = o.types?.filter((t) => t !== '').map((t) => t.toLowerCase());
  return counted
    .filter((c) => types === undefined || types.length === 0 || types.includes(c.type.toLowerCase()))
    .sort((a, b) => b.count - a.count || a.firstMs - b.firstMs)
    .map(({ reason, type, count }) => ({ reason, type, count }));
}
