// The events API's paths: core/v1 and events.k8s.io/v1, every verb, and the archive's read-only copy of the stored
// core/v1 Events (events.archive.kevents.io), each answered by the one EventsHandler.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HTTPVersion, Instance as Router } from 'find-my-way';
import { ARCHIVE_API, CORE_API, EVENTS_API, newMethodNotAllowed } from '../../api/index.js';
import type { EventApi } from '../../api/index.js';
import type { Logger } from '../../internal/index.js';
import { sendError } from '../http/http-io.js';
import type { EventsHandler } from './events-handler.js';

type Handler = (req: IncomingMessage, res: ServerResponse, p: Record<string, string | undefined>) => void;

/** eventPaths are one API's six paths (collection and item, each listed or watched, cluster-wide or namespaced). */
function eventPaths(prefix: string, events: EventsHandler, api: EventApi): [string, Handler][] {
  return [
    [`${prefix}/events`, (req, res) => events.collection(req, res, api, undefined, false)],
    [`${prefix}/watch/events`, (req, res) => events.collection(req, res, api, undefined, true)],
    [`${prefix}/namespaces/:namespace/events`, (req, res, p) => events.collection(req, res, api, p.namespace, false)],
    [`${prefix}/watch/namespaces/:namespace/events`, (req, res, p) => events.collection(req, res, api, p.namespace, true)],
    [`${prefix}/namespaces/:namespace/events/:name`, (req, res, p) => events.item(req, res, api, p.namespace!, p.name!, false)],
    [`${prefix}/watch/namespaces/:namespace/events/:name`, (req, res, p) => events.item(req, res, api, p.namespace!, p.name!, true)],
  ];
}

/** registerEventRoutes adds the events API's paths to the router. */
export function registerEventRoutes(router: Router<HTTPVersion.V1>, o: { events: EventsHandler; logger: Logger }): void {
  const allMethods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
  for (const [prefix, api] of [
    ['/api/v1', CORE_API],
    ['/apis/events.k8s.io/v1', EVENTS_API],
  ] as [string, EventApi][]) {
    for (const [path, serve] of eventPaths(prefix, o.events, api)) router.on([...allMethods], path, serve);
  }
  // The archive's events: the stored core/v1 Events, read-only, under a resource of the archive's group, so that the
  // cluster's RBAC and kubectl reach them through the aggregation layer apart from the cluster's own events.
  const readOnly = (req: IncomingMessage, res: ServerResponse): void => sendError(res, newMethodNotAllowed(), o.logger, req.url ?? '');
  const writeMethods = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;
  for (const [path, serve] of eventPaths(`/apis/${ARCHIVE_API}`, o.events, CORE_API)) {
    router.on('GET', path, serve);
    router.on([...writeMethods], path, readOnly);
  }
}
