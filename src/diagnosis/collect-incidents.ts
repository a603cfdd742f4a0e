import type { CoreEvent, Incident, IncidentList, IncidentStart, Occurrence } from '../api/index.js';
import { DEFAULT_LOOK_BACK_MS, eventFirstMs, eventLastMs, OWNER_KINDS } from '../api/index.js';
import { formatTimelineTime, SCHEDULED_REASON } from '../timeline/index.js';
import type { OccurrenceEntry, OwnerLink, SourceQuery, TimelineSource } from '../timeline/index.js';
import { classifier, FAILURE_EVENTS } from './catalogue.js';
import type { FailureMatch } from './kind.js';
import { CONTINUITY_GAP_MS, incidentBasis, incidentKey } from './incidents.js';
import type { ReachIncident } from './incidents.js';
import { progressOfFailingPods } from './progress.js';

/** CollectIncidentsOptions say where to read and which window. */
export interface CollectIncidentsOptions {
  source: TimelineSource;
  /** namespace: undefined reads all namespaces. */
  namespace?: string | undefined;
  since?: number | undefined;
  until?: number | undefined;
  /**
   * lookBack is how long before `since` the events and history are read (ms,
   * default DEFAULT_LOOK_BACK_MS): an incident active in the window takes its
   * cause, its root and its start from there; only incidents active in the window are reported.
   */
  lookBack?: number | undefined;
  /** now ends an open window, for `ongoing` (default: the clock). */
  now?: number | undefined;
}

/**
 * collectIncidents reads the window's events and their history from a source
 * (an archive over HTTP, or a store in process) and builds the incidents: the
 * one implementation behind `kevents incidents`, the server's incidents API and
 * the web UI's Incidents view.
 *
 * It reads what incidents use, and the store leaves the rest unread and
 * undecoded (the window's Normal events are most of an archive): the events the
 * catalogue may classify (`FAILURE_EVENTS`), every event of an owner (whose
 * controller's messages and names tell the roots), the history of the failures
 * only (an event's type and reason are part of what identifies it, so its
 * occurrences carry them), and the Scheduled events of just the pods whose
 * node-wide failure does not name their node.
 */
export async function collectIncidents(o: CollectIncidentsOptions): Promise<IncidentList> {
  const readSince = o.since === undefined ? undefined : o.since - Math.max(0, o.lookBack ?? DEFAULT_LOOK_BACK_MS);
  const query: SourceQuery = { namespace: o.namespace, since: readSince, until: o.until, inWindowOnly: true };
  const events: CoreEvent[] = await o.source.listEvents({ ...query, anyOf: { ...FAILURE_EVENTS, kinds: OWNER_KINDS } });
  // As the timeline does: an event that straddles the window's end has its later history read too.
  const straddles = o.until !== undefined && events.some((e) => (eventFirstMs(e) ?? Infinity) < o.until! && (eventLastMs(e) ?? -Infinity) >= o.until!);
  // Progress from the look-back on too: a failure there that a pod got past is no cause of the window's.
  // Each event is classified once, for every read and build that asks.
  const match = classifier();
  const scheduled = (await scheduledOfUnplacedPods(o.source, events, match)).concat(await progressOfFailingPods(o.source, events, readSince, o.until, match));
  // Only the failures' history is built from (`incidentBasis`): the occurrences of the events read that classify,
  // which a store seeks event by event instead of reading every failure's in the window.
  // Each as read: a store rebuilds the occurrences of the versions read from them rather than decode those again.
  const failing = [...events, ...scheduled].filter((e) => match(e) !== undefined).map((e) => ({ namespace: e.metadata.namespace ?? '', name: e.metadata.name ?? '', read: e }));
  const occurrences: Occurrence[] | undefined = await o.source.listOccurrences({ ...(straddles ? { ...query, until: undefined } : query), anyOf: FAILURE_EVENTS, events: failing });
  let owners: OwnerLink[] = [];
  if (o.source.listOwners !== undefined) {
    const namespaces = [...new Set(events.map((e) => e.involvedObject.namespace ?? e.metadata.namespace ?? ''))].filter((n) => n !== '').sort();
    for (const ns of namespaces) owners = owners.concat(await o.source.listOwners(ns));
  }
  const input = { events: scheduled.length > 0 ? events.concat(scheduled) : events, occurrences, owners, until: o.until, now: o.now };
  // Every event read, look-back included, tells the roots, so a root is the same whichever window holds its failures.
  // The window and the look-back share one basis; the look-back builds only the incidents the window has.
  const basis = incidentBasis(input, match);
  const inWindow = basis.incidents(o.since);
  if (readSince === o.since) return inWindow;
  return withLookBack(inWindow, basis.reach(readSince, new Set(inWindow.incidents.map(incidentKey))));
}

/**
 * withLookBack gives each incident of the window what the look-back knows of
 * the same root (the incidents built over look-back and window together): its
 * cause, facts and next steps, the objects they name, and, where that cause
 * is another kind than the window's, the start of that cause when it is
 * earlier. What the window counts (occurrences, evidence, last seen,
 * ongoing) stays the window's; an incident not active in the window is not reported.
 */
function withLookBack(inWindow: IncidentList, reach: readonly ReachIncident[]): IncidentList {
  const byRoot = new Map(reach.map((r) => [incidentKey(r.incident), r]));
  return {
    ...inWindow,
    incidents: inWindow.incidents.map((i) => {
      const found = byRoot.get(incidentKey(i));
      if (found === undefined) return i;
      const r = found.incident;
      if (r.kind === i.kind) return { ...i, start: continuousStart(i, found.evidence) };
      const start = Date.parse(r.start.time) < Date.parse(i.start.time) ? r.start : i.start;
      const objects = [...r.objects, ...i.objects.filter((x) => !r.objects.includes(x))];
      return { ...i, kind: r.kind, cause: r.cause, facts: r.facts, hints: r.hints, objects, start };
    }),
  };
}

/**
 * continuousStart is the start of a window's incident reached back through the
 * rows the look-back holds of the same root and kind (`reach`: the entries of
 * its evidence) with the reason the window's start has: over rows no more than
 * CONTINUITY_GAP_MS apart, as the window's own start reaches back over its
 * events' occurrences (a resolved step of another reason is no part of it). A
 * row the evidence left out (the middle of a long run) ends the walk, so the
 * start is always a time a failure row gives, never earlier than the data shows.
 */
function continuousStart(incident: Incident, reach: readonly OccurrenceEntry[]): IncidentStart {
  const { start } = incident;
  // A row's time is its entry's, formatted (formatTimelineTime keeps the milliseconds): the entries are compared as numbers.
  const startMs = Date.parse(start.time);
  const reasons = new Set(incident.evidence.filter((row) => row.time === start.time).map((row) => row.reason));
  for (const x of reach) if (x.ms === startMs) reasons.add(x.event.reason ?? '');
  const rows = reach.filter((x) => reasons.has(x.event.reason ?? '')).sort((a, b) => b.ms - a.ms);
  let at = startMs;
  let first: OccurrenceEntry | undefined;
  for (const x of rows) {
    if (x.ms >= at) continue;
    if (at - x.ms > CONTINUITY_GAP_MS) break;
    at = x.ms;
    first = x;
  }
  if (first === undefined) return start;
  const time = formatTimelineTime(first.ms);
  if (!first.estimated) return { time, estimated: false };
  return {
    time,
    estimated: true,
    earliest: first.earliestMs === undefined ? null : formatTimelineTime(first.earliestMs),
    latest: first.latestMs === undefined ? null : formatTimelineTime(first.latestMs),
  };
}

/**
 * scheduledOfUnplacedPods reads, whenever they happened, the Scheduled events
 * of the pods with a node-wide failure that does not name its node (a pod's
 * NodeNotReady or taint eviction, which the node controller writes): the
 * scheduler's bind names it, and the incident is that node's. One read per
 * pod, through the store's index of involved names.
 */
async function scheduledOfUnplacedPods(source: TimelineSource, events: readonly CoreEvent[], classify: (e: CoreEvent) => FailureMatch | undefined): Promise<CoreEvent[]> {
  const pods = new Map<string, { namespace: string; name: string }>();
  for (const e of events) {
    if (e.involvedObject.kind !== 'Pod') continue;
    const match = classify(e);
    if (match === undefined || match.kind.subject !== 'node' || match.facts.node !== undefined) continue;
    const namespace = e.involvedObject.namespace ?? e.metadata.namespace ?? '';
    const name = e.involvedObject.name ?? '';
    pods.set(`${namespace}\u0000${name}`, { namespace, name });
  }
  let out: CoreEvent[] = [];
  for (const pod of pods.values()) {
    out = out.concat(await source.listEvents({ namespace: pod.namespace, kind: 'Pod', name: pod.name, anyOf: { reasons: [SCHEDULED_REASON] } }));
  }
  return out;
}
