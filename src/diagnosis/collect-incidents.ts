import type { CoreEvent, IncidentList, Occurrence } from '../api/index.js';
import { eventFirstMs, eventLastMs } from '../api/index.js';
import { SCHEDULED_REASON } from '../timeline/index.js';
import type { OwnerLink, SourceQuery, TimelineSource } from '../timeline/index.js';
import { classify, FAILURE_EVENTS } from './catalogue.js';
import { buildIncidents } from './incidents.js';
import { progressOfFailingPods } from './progress.js';
import { OWNER_KIND_NAMES } from './roots.js';

/** CollectIncidentsOptions say where to read and which window. */
export interface CollectIncidentsOptions {
  source: TimelineSource;
  /** namespace: undefined reads all namespaces. */
  namespace?: string | undefined;
  since?: number | undefined;
  until?: number | undefined;
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
  const query: SourceQuery = { namespace: o.namespace, since: o.since, until: o.until, inWindowOnly: true };
  const events: CoreEvent[] = await o.source.listEvents({ ...query, anyOf: { ...FAILURE_EVENTS, kinds: OWNER_KIND_NAMES } });
  // As the timeline does: an event that straddles the window's end has its later history read too.
  const straddles = o.until !== undefined && events.some((e) => (eventFirstMs(e) ?? Infinity) < o.until! && (eventLastMs(e) ?? -Infinity) >= o.until!);
  const occurrences: Occurrence[] | undefined = await o.source.listOccurrences({ ...(straddles ? { ...query, until: undefined } : query), anyOf: FAILURE_EVENTS });
  const scheduled = (await scheduledOfUnplacedPods(o.source, events)).concat(await progressOfFailingPods(o.source, events, o.since, o.until));
  let owners: OwnerLink[] = [];
  if (o.source.listOwners !== undefined) {
    const namespaces = [...new Set(events.map((e) => e.involvedObject.namespace ?? e.metadata.namespace ?? ''))].filter((n) => n !== '').sort();
    for (const ns of namespaces) owners = owners.concat(await o.source.listOwners(ns));
  }
  return buildIncidents({ events: scheduled.length > 0 ? events.concat(scheduled) : events, occurrences, owners, since: o.since, until: o.until, now: o.now });
}

/**
 * scheduledOfUnplacedPods reads, whenever they happened, the Scheduled events
 * of the pods with a node-wide failure that does not name its node (a pod's
 * NodeNotReady or taint eviction, which the node controller writes): the
 * scheduler's bind names it, and the incident is that node's. One read per
 * pod, through the store's index of involved names.
 */
async function scheduledOfUnplacedPods(source: TimelineSource, events: readonly CoreEvent[]): Promise<CoreEvent[]> {
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
