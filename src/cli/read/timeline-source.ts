// The timeline's reader (kevents timeline and incidents): events over the core/v1 API and occurrences over the archive API, from any server.
import type { CoreEvent, Occurrence } from '../../api/index.js';
import { isNotFound } from '../../api/index.js';
import type { ReadClient } from '../../client/index.js';
import { activeIn, matchesAnyOf } from '../../storage/index.js';
import { sourceWindow } from '../../timeline/index.js';
import type { SourceQuery, TimelineSource } from '../../timeline/index.js';
import { clusterSelector } from '../flags/cluster.js';
import type { Progress } from '../output/progress.js';
import { listAllEvents } from './list-events.js';

/** OCCURRENCE_PAGE is the page size of occurrence reads: the archive API pages in observed-time order. */
const OCCURRENCE_PAGE = 5000;

function selector(q: SourceQuery, prefix: 'involvedObject' | 'regarding'): string | undefined {
  const terms: string[] = [];
  if (q.kind !== undefined) terms.push(`${prefix}.kind=${q.kind}`);
  if (q.name !== undefined) terms.push(`${prefix}.name=${q.name}`);
  return terms.length === 0 ? undefined : terms.join(',');
}

/**
 * httpTimelineSource reads a timeline over HTTP: events through the core/v1
 * API, history through the archive API. A server without the archive API (any
 * plain API server) answers 404, and the timeline spreads counts instead.
 */
export function httpTimelineSource(client: ReadClient, progress?: Progress, options: { archive?: boolean; clusters?: readonly string[] } = {}): TimelineSource {
  let read = 0;
  let archive = options.archive !== false;
  const labelSelector = clusterSelector(options.clusters);
  // The archive API selects one cluster by field; several are kept here.
  const clusters = new Set(options.clusters ?? []);
  const occurrenceSelector = (q: SourceQuery): string | undefined => {
    const terms = [selector(q, 'regarding'), clusters.size === 1 ? `cluster=${[...clusters][0]!}` : undefined].filter((t) => t !== undefined);
    return terms.length === 0 ? undefined : terms.join(',');
  };
  return {
    async listEvents(q): Promise<CoreEvent[]> {
      const before = read;
      const { items } = await listAllEvents(client, { namespace: q.namespace, fieldSelector: selector(q, 'involvedObject'), labelSelector }, (n) => {
        read = before + n;
        progress?.update(read);
      });
      // The core/v1 API selects no OR of fields and no time: an anyOf and a window are applied to what was read, so
      // what is kept is what a store keeps for the same query (an incident's roots are told by the same events).
      const window = sourceWindow(q);
      return items.filter((e) => (q.anyOf === undefined || matchesAnyOf(q.anyOf, e.type ?? '', e.reason ?? '', e.involvedObject.kind ?? '')) && (window === undefined || activeIn(e, window)));
    },
    async listOccurrences(q): Promise<Occurrence[] | undefined> {
      if (!archive) return undefined;
      const out: Occurrence[] = [];
      let next: string | undefined;
      try {
        do {
          const page = await client.listOccurrences({
            ...(q.namespace !== undefined ? { namespace: q.namespace } : {}),
            // Occurrences are stamped when kevents saw them, never before they happened; so the
            // window's start bounds the read, while its end cannot (a late mirror sees old events).
            ...(q.since !== undefined ? { since: new Date(q.since).toISOString() } : {}),
            ...(occurrenceSelector(q) !== undefined ? { fieldSelector: occurrenceSelector(q)! } : {}),
            limit: OCCURRENCE_PAGE,
            ...(next !== undefined ? { continue: next } : {}),
          });
          for (const o of page.items) {
            if (clusters.size > 1 && !clusters.has(o.cluster ?? '')) continue;
            if (q.anyOf !== undefined && !matchesAnyOf(q.anyOf, o.type ?? '', o.reason ?? '', o.regarding.kind ?? '')) continue;
            out.push(o);
          }
          read += page.items.length;
          progress?.update(read);
          next = page.metadata.continue || undefined;
        } while (next !== undefined);
      } catch (e) {
        if (isNotFound(e)) {
          archive = false;
          return undefined;
        }
        throw e;
      }
      return out;
    },
  };
}
