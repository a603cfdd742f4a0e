import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../internal/index.js';
import { sendError } from './http-io.js';
import type { ServerMetrics } from './metrics.js';

/** RouteDeps is what the route wrapper needs of a server: its metrics and its logger. */
export interface RouteDeps {
  metrics: ServerMetrics;
  logger: Logger;
}

/** RouteOptions name a route's requests in the metrics: their resource, and the verb they count as. */
export interface RouteOptions {
  resource: string;
  /** verb is the verb of the duration histogram (`LIST`, `GET`). */
  verb: string;
  /** countAs is the verb a request is counted as, from its method; by default the method itself. */
  countAs?: (method: string) => string;
}

/**
 * route wraps a request handler of the archive API once for every route: it counts the request by its status when
 * the answer is finished, times it, and turns whatever the handler rejects with into the upstream Status answer
 * (`sendError`), so no handler repeats that boundary.
 */
export function route<A extends unknown[]>(
  deps: RouteDeps,
  o: RouteOptions,
  handler: (req: IncomingMessage, res: ServerResponse, ...args: A) => Promise<void>,
): (req: IncomingMessage, res: ServerResponse, ...args: A) => void {
  return (req, res, ...args) => {
    const started = performance.now();
    const method = req.method ?? '';
    res.once('finish', () => deps.metrics.requests.inc({ verb: o.countAs?.(method) ?? method, resource: o.resource, code: String(res.statusCode) }));
    handler(req, res, ...args)
      .catch((e: unknown) => sendError(res, e, deps.logger, `${req.method} ${req.url ?? ''}`))
      .finally(() => deps.metrics.requestDuration.observe({ verb: o.verb, resource: o.resource }, (performance.now() - started) / 1000));
  };
}
