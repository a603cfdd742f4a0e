import type { KubeConfig } from '@kubernetes/client-node';
import type { CoreEvent, CoreEventList, IncidentList, IncidentObjectList, Occurrence, OccurrenceList, SearchResult, Status, Table, WatchEvent } from '../api/index.js';
import { ARCHIVE_API, incidentDocument, resolveIncidents, resolveOccurrenceMessages } from '../api/index.js';
import { EventResource } from './event-resource.js';
import { listQuery } from './event-resource.js';
import type { ListOptions, RequestOptions } from './event-resource.js';
import { KubeConnection } from './kube-connection.js';
import { RestClient } from './rest-client.js';
import { readWatchStream } from './watch-stream.js';

/** TABLE_ACCEPT is the Accept header `kubectl get` sends to have the server render a meta.k8s.io Table. */
export const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

/** TableListOptions select the events of a Table list or watch; `name` reads one event. */
export interface TableListOptions extends ListOptions {
  name?: string;
  allowWatchBookmarks?: boolean;
}

/** OccurrenceListOptions select occurrences of the archive API. */
export interface OccurrenceListOptions extends RequestOptions {
  namespace?: string;
  /** since and until bound the observed time (RFC 3339; since inclusive, until exclusive). */
  since?: string;
  until?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
}

/** SearchOptions ask the archive's search for one page (docs/search.md). */
export interface SearchOptions extends RequestOptions {
  namespace?: string;
  q: string;
  /** since and until bound the event's last time (RFC 3339). */
  since?: string;
  until?: string;
  limit?: number;
  continue?: string;
}

/** IncidentsOptions ask the server's incidents: a namespace (undefined: all) and the query src/api's incidentQueryParams writes. */
export interface IncidentsOptions extends RequestOptions {
  namespace?: string;
  query: URLSearchParams;
}

/** ReadClient is what the read commands need of a server: core/v1 events, server-rendered Tables, and the archive's occurrences. */
export interface ReadClient {
  /** server is the API server's base URL. */
  readonly server: URL;
  coreV1: EventResource<CoreEvent, CoreEventList>;
  /** listTable lists events (or gets one, with `name`) as a server-rendered Table. */
  listTable(options: TableListOptions): Promise<Table>;
  /** watchTable watches events; each frame's object is a one-row Table (or a Status). */
  watchTable(options: TableListOptions): AsyncGenerator<WatchEvent<Table | Status>>;
  /** listOccurrences reads one page of the archive API; a server without it answers NotFound. */
  listOccurrences(options: OccurrenceListOptions): Promise<OccurrenceList>;
  /** search reads one page of the archive's search; a server without it answers NotFound. */
  search(options: SearchOptions): Promise<SearchResult>;
  /** incidents reads the incidents the server builds (kevents serve); a server without them answers NotFound. */
  incidents(options: IncidentsOptions): Promise<IncidentList>;
}

/**
 * createReadClient returns a ReadClient for the kubeconfig's current context. `eventsPrefix` is where it reads
 * core/v1 Events (default `/api/v1`): `/apis/archive.kevents.io/v1alpha1` reads the archive's events through a
 * cluster that aggregates the archive API, not the cluster's own.
 */
export function createReadClient(options: { kubeConfig: KubeConfig; timeoutMs?: number; userAgent?: string; eventsPrefix?: string }): ReadClient {
  const prefix = options.eventsPrefix ?? '/api/v1';
  const connection = new KubeConnection(options.kubeConfig);
  const rest = new RestClient(connection, {
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.userAgent !== undefined ? { userAgent: options.userAgent } : {}),
  });
  const eventsPath = (namespace: string | undefined, name?: string): string => {
    const base = namespace === undefined || namespace === '' ? `${prefix}/events` : `${prefix}/namespaces/${encodeURIComponent(namespace)}/events`;
    return name === undefined ? base : `${base}/${encodeURIComponent(name)}`;
  };
  return {
    server: connection.server,
    coreV1: new EventResource<CoreEvent, CoreEventList>(rest, prefix),
    async listTable(o) {
      const query = o.name === undefined ? listQuery(o) : new URLSearchParams();
      return await rest.request<Table>({
        method: 'GET',
        path: eventsPath(o.namespace, o.name),
        query,
        accept: TABLE_ACCEPT,
        verb: o.name === undefined ? 'list events' : 'get events',
        ...(o.signal !== undefined ? { signal: o.signal } : {}),
      });
    },
    async *watchTable(o) {
      const query = listQuery(o);
      query.set('watch', 'true');
      if (o.name !== undefined) query.set('fieldSelector', `metadata.name=${o.name}`);
      if (o.allowWatchBookmarks) query.set('allowWatchBookmarks', 'true');
      const res = await rest.stream({
        method: 'GET',
        path: eventsPath(o.namespace),
        query,
        accept: TABLE_ACCEPT,
        verb: 'watch events',
        ...(o.signal !== undefined ? { signal: o.signal } : {}),
      });
      yield* readWatchStream<Table | Status>(res);
    },
    async listOccurrences(o) {
      const base = `/apis/${ARCHIVE_API}`;
      const path = o.namespace === undefined || o.namespace === '' ? `${base}/occurrences` : `${base}/namespaces/${encodeURIComponent(o.namespace)}/occurrences`;
      const query = new URLSearchParams();
      if (o.since !== undefined) query.set('since', o.since);
      if (o.until !== undefined) query.set('until', o.until);
      if (o.fieldSelector) query.set('fieldSelector', o.fieldSelector);
      if (o.limit) query.set('limit', String(o.limit));
      if (o.continue) query.set('continue', o.continue);
      const list = await rest.request<OccurrenceList>({
        method: 'GET',
        path,
        query,
        verb: 'list occurrences',
        ...(o.signal !== undefined ? { signal: o.signal } : {}),
      });
      list.items ??= [] as Occurrence[];
      // A repeat carries a reference to its text, sent once an answer: each item gets it back.
      resolveOccurrenceMessages(list.items);
      return list;
    },
    async search(o) {
      const base = `/apis/${ARCHIVE_API}`;
      const path = o.namespace === undefined || o.namespace === '' ? `${base}/search` : `${base}/namespaces/${encodeURIComponent(o.namespace)}/search`;
      const query = new URLSearchParams({ q: o.q });
      if (o.since !== undefined) query.set('since', o.since);
      if (o.until !== undefined) query.set('until', o.until);
      if (o.limit) query.set('limit', String(o.limit));
      if (o.continue) query.set('continue', o.continue);
      const result = await rest.request<SearchResult>({ method: 'GET', path, query, verb: 'search events', ...(o.signal !== undefined ? { signal: o.signal } : {}) });
      result.items ??= [];
      for (const item of result.items) resolveOccurrenceMessages(item.occurrences, searchSeed(item.event));
      return result;
    },
    async incidents(o) {
      const base = `/apis/${ARCHIVE_API}`;
      const path = o.namespace === undefined || o.namespace === '' ? `${base}/incidents` : `${base}/namespaces/${encodeURIComponent(o.namespace)}/incidents`;
      const answer = await rest.request<IncidentObjectList | IncidentList>({ method: 'GET', path, query: o.query, verb: 'list incidents', ...(o.signal !== undefined ? { signal: o.signal } : {}) });
      // The route answers the list kind (items whose status is an incident); a server before it, the document itself.
      const list = 'items' in answer ? incidentDocument(answer) : answer;
      // An evidence row's text is sent once an answer: each row gets it back.
      return resolveIncidents(list);
    },
  };
}

/** searchSeed is the text a search hit's occurrences may refer to: its own event's message. */
export function searchSeed(event: CoreEvent): { resourceVersion: string; message: string } | undefined {
  const { message } = event;
  const rv = event.metadata.resourceVersion;
  return message !== undefined && rv !== undefined ? { resourceVersion: rv, message } : undefined;
}
