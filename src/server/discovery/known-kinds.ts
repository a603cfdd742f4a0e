import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestTarget } from '../../auth/index.js';
import type { HTTPVersion, Instance as Router } from 'find-my-way';
import { newMethodNotAllowed, newNotFound, newPathNotFound } from '../../api/index.js';
import type { Logger } from '../../internal/index.js';
import type { EventStore } from '../../storage/index.js';
import { apiGroup, findKnownKind, groupVersionString } from './discovery.js';
import type { KnownKind } from './discovery.js';
import { negotiateOutput, sendError, sendObject, sendPlainNotFound } from '../http/http-io.js';
import { parseListQuery } from '../rest/query.js';
import { MIN_REQUEST_TIMEOUT_SECONDS } from '../rest/watch.js';

/**
 * registerKnownKinds answers reads of the built-in kinds that discovery lists
 * (pods, deployments, …) so that kubectl can resolve the objects users name.
 * kevents stores only events, so it says so honestly: every list is empty and
 * every get is NotFound (but a namespace that holds events, which is Active); a watch stays open and quiet until its timeout.
 */
export function registerKnownKinds(router: Router<HTTPVersion.V1>, deps: { store: EventStore; logger: Logger }): void {
  const serve = (req: IncomingMessage, res: ServerResponse, group: string, version: string, resource: string, namespace: string | undefined, name: string | undefined): void => {
    const kind = findKnownKind(group, version, resource);
    if (group !== '' && apiGroup(group) === undefined) return sendPlainNotFound(res);
    if (kind === undefined || kind.resource === 'events' || (namespace !== undefined && !kind.namespaced)) {
      sendError(res, newPathNotFound(), deps.logger, req.url ?? '');
      return;
    }
    answer(req, res, kind, name, deps).catch((e: unknown) => sendError(res, e, deps.logger, req.url ?? ''));
  };
  const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
  router.on([...methods], '/api/v1/:resource', (req, res, p) => serve(req, res, '', 'v1', p.resource!, undefined, undefined));
  router.on([...methods], '/api/v1/:resource/:name', (req, res, p) => serve(req, res, '', 'v1', p.resource!, undefined, p.name));
  router.on([...methods], '/api/v1/namespaces/:namespace/:resource', (req, res, p) => serve(req, res, '', 'v1', p.resource!, p.namespace, undefined));
  router.on([...methods], '/api/v1/namespaces/:namespace/:resource/:name', (req, res, p) =>
    serve(req, res, '', 'v1', p.resource!, p.namespace, p.name),
  );
  router.on([...methods], '/apis/:group/:version/:resource', (req, res, p) =>
    serve(req, res, p.group!, p.version!, p.resource!, undefined, undefined),
  );
  router.on([...methods], '/apis/:group/:version/:resource/:name', (req, res, p) =>
    serve(req, res, p.group!, p.version!, p.resource!, undefined, p.name),
  );
  router.on([...methods], '/apis/:group/:version/namespaces/:namespace/:resource', (req, res, p) =>
    serve(req, res, p.group!, p.version!, p.resource!, p.namespace, undefined),
  );
  router.on([...methods], '/apis/:group/:version/namespaces/:namespace/:resource/:name', (req, res, p) =>
    serve(req, res, p.group!, p.version!, p.resource!, p.namespace, p.name),
  );
}

/** namespaceObject is an Active Namespace, the state of every namespace that holds events. */
function namespaceObject(name: string): Record<string, unknown> {
  return {
    kind: 'Namespace',
    apiVersion: 'v1',
    metadata: { name, labels: { 'kubernetes.io/metadata.name': name } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  };
}

async function answer(req: IncomingMessage, res: ServerResponse, kind: KnownKind, name: string | undefined, deps: { store: EventStore }): Promise<void> {
  if (req.method !== 'GET') throw newMethodNotAllowed();
  if (name !== undefined && kind.group === '' && kind.resource === 'namespaces') {
    // A namespace that holds events exists as far as kevents can tell. kubectl asks for it after a NotFound
    // of a namespaced get, to tell "no such event" from "no such namespace".
    const held = await deps.store.list({ namespace: name, limit: 1 });
    if (held.items.length > 0) {
      sendObject(res, 200, namespaceObject(name), negotiateOutput(req.headers.accept, false));
      return;
    }
  }
  if (name !== undefined) throw newNotFound({ group: kind.group, resource: kind.resource }, name);
  const target = requestTarget(req);
  const query = parseListQuery(target.params, target.watch);
  const resourceVersion = String(await deps.store.currentResourceVersion());
  if (query.watch) {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const seconds = query.timeoutSeconds !== undefined && query.timeoutSeconds > 0 ? query.timeoutSeconds : MIN_REQUEST_TIMEOUT_SECONDS;
    const timer = setTimeout(() => res.end(), seconds * 1000);
    res.on('close', () => clearTimeout(timer));
    return;
  }
  const format = negotiateOutput(req.headers.accept, false);
  sendObject(res, 200, { kind: `${kind.kind}List`, apiVersion: groupVersionString(kind), metadata: { resourceVersion }, items: [] }, format);
}
