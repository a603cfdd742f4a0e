export { createEventsClient, sinkFromKubeConfig, type EventsClient, type EventsClientOptions } from './events-client.js';
export {
  EventResource,
  type ListOptions,
  type PatchOptions,
  type PatchType,
  type RequestOptions,
  type WatchOptions,
  type WriteRequestOptions,
} from './event-resource.js';
export { RequestConstructionError, statusErrorFromResponse } from './request-errors.js';
export { KubeConnection } from './kube-connection.js';
export { UrlConnection, requestUrl, type Connection, type RequestTarget } from './connection.js';
export { TokenConnection, type TokenConnectionOptions } from './token-connection.js';
export { RestClient, REQUEST_TIMEOUT_MS, USER_AGENT, type RestClientOptions, type RestRequest } from './rest-client.js';
export { loadKubeConfig, namespaceOf, type ConnectionFlags } from './load-kube-config.js';
export { createReadClient, TABLE_ACCEPT, type OccurrenceListOptions, type ReadClient, type SearchOptions, type TableListOptions } from './read-client.js';
