import type { CoreEvent, IncidentList, Occurrence } from '../api/index.js';
import { eventFirstMs, eventLastMs } from '../api/index.js';
import type { OwnerLink, SourceQuery, TimelineSource } from '../timeline/index.js';
import { buildIncidents } from './incidents.js';

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
 */
export async function collectIncidents(o: CollectIncidentsOptions): Promise<IncidentList> {
  const query: SourceQuery = { namespace: o.namespace, since: o.since, until: o.until, inWindowOnly: true };
  const events: CoreEvent[] = await o.source.listEvents(query);
  // As the timeline does: an event that straddles the window's end has its later history read too.
  const straddles = o.until !== undefined && events.some((e) => (eventFirstMs(e) ?? Infinity) < o.until! && (eventLastMs(e) ?? -Infinity) >= o.until!);
  const occurrences: Occurrence[] | undefined = await o.source.listOccurrences(straddles ? { ...query, until: undefined } : query);
  let owners: OwnerLink[] = [];
  if (o.source.listOwners !== undefined) {
    const namespaces = [...new Set(events.map((e) => e.involvedObject.namespace ?? e.metadata.namespace ?? ''))].filter((n) => n !== '').sort();
    for (const ns of namespaces) owners = owners.concat(await o.source.listOwners(ns));
  }
  return buildIncidents({ events, occurrences, owners, since: o.since, until: o.until, now: o.now });
}
