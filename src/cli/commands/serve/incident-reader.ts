import type { IncidentList } from '../../../api/index.js';
import { collectIncidents } from '../../../diagnosis/index.js';
import type { IncidentQuery, IncidentReader } from '../../../server/index.js';
import type { EventStore } from '../../../storage/index.js';
import { storeTimelineSource } from '../../../timeline/index.js';

/**
 * storeIncidentReader is the server's incidents (what the web UI lists) built
 * by src/diagnosis straight from the server's store: the same incidents as
 * `kevents incidents` prints against that server.
 */
export function storeIncidentReader(store: EventStore): IncidentReader {
  return (q: IncidentQuery): Promise<IncidentList> =>
    collectIncidents({ source: storeTimelineSource(store, { clusters: q.clusters }), namespace: q.namespace, since: q.since, until: q.until, lookBack: q.lookBack });
}
