import type { KubeConfig } from '@kubernetes/client-node';
import type { CoreEvent, CoreEventList, EventsV1Event, EventsV1EventList } from '../api/index.js';
import { UrlConnection } from './connection.js';
import type { Connection } from './connection.js';
import { EventResource } from './event-resource.js';
import { KubeConnection } from './kube-connection.js';
import { RequestConstructionError } from './request-errors.js';
import { RestClient } from './rest-client.js';

/** EventsClientOptions configure createEventsClient. */
export interface EventsClientOptions {
  /** kubeConfig is a client-node KubeConfig: loaded from a file, the default locations, or in-cluster. */
  kubeConfig?: KubeConfig;
  /** server, instead of kubeConfig, reaches an API server by URL alone, without credentials (like `kubectl --server`). */
  server?: string | URL;
  /** connection, instead of either, is any other way to reach the API server (the in-cluster service account). */
  connection?: Connection;
  /** timeoutMs bounds each non-watch request (default 30 s). */
  timeoutMs?: number;
  userAgent?: string;
}

/** EventsClient reaches both Event APIs of one cluster. */
export interface EventsClient {
  coreV1: EventResource<CoreEvent, CoreEventList>;
  eventsV1: EventResource<EventsV1Event, EventsV1EventList>;
}

/** createEventsClient returns a REST client for the events of the kubeconfig's current context, or of the server URL. */
export function createEventsClient(options: EventsClientOptions): EventsClient {
  const rest = new RestClient(connectionOf(options), {
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.userAgent !== undefined ? { userAgent: options.userAgent } : {}),
  });
  return {
    coreV1: new EventResource<CoreEvent, CoreEventList>(rest, '/api/v1'),
    eventsV1: new EventResource<EventsV1Event, EventsV1EventList>(rest, '/apis/events.k8s.io/v1'),
  };
}

/** connectionOf picks the connection of a client's options: exactly one of kubeConfig and server. */
function connectionOf(options: { kubeConfig?: KubeConfig | undefined; server?: string | URL | undefined; connection?: Connection | undefined }): Connection {
  if (options.connection !== undefined) {
    if (options.kubeConfig !== undefined || options.server !== undefined) throw new RequestConstructionError('a client takes one of kubeConfig, server and connection');
    return options.connection;
  }
  if (options.kubeConfig !== undefined && options.server === undefined) return new KubeConnection(options.kubeConfig);
  if (options.server !== undefined && options.kubeConfig === undefined) return new UrlConnection(options.server);
  throw new RequestConstructionError('a client needs either a kubeConfig or a server URL');
}

/**
 * sinkFromKubeConfig returns what a recorder broadcaster writes to: the events
 * client, which has the shape of the recorder's `EventSink` (create, update and
 * strategic-merge patch for each API).
 */
export function sinkFromKubeConfig(kubeConfig: KubeConfig): EventsClient {
  return createEventsClient({ kubeConfig });
}
