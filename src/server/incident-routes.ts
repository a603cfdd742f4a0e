import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HTTPVersion, Instance as Router } from 'find-my-way';
import { ARCHIVE_API, incidentsAnswer, isIncidentWindowError, newBadRequest, newMethodNotAllowed, newPathNotFound, parseIncidentQueryParams } from '../api/index.js';
import type { IncidentList } from '../api/index.js';
import { requestTarget } from '../auth/index.js';
import type { Logger } from '../internal/index.js';
import { negotiateOutput, sendError, sendJsonStream, sendObject } from './http-io.js';
import type { ServerMetrics } from './metrics.js';
import { listParam } from './timeline-routes.js';

/** IncidentQuery is an incidents request: a namespace (undefined: all), a window (Unix ms), its look-back (ms) and clusters. */
export interface IncidentQuery {
  namespace?: string | undefined;
  since?: number | undefined;
  until?: number | undefined;
  /** lookBack is how long before `since` the archive is read for causes, roots and starts (src/api's incidentWindow); undefined: its default. */
  lookBack?: number | undefined;
  /** clusters keeps what was archived from these clusters (`cluster`, repeatable); undefined keeps all. */
  clusters?: string[] | undefined;
}

/**
 * IncidentReader builds the incidents of a query over the server's store. It is
 * declared here, by its consumer, and composed by the CLI from src/diagnosis,
 * so the web UI shows the very incidents `kevents incidents` prints.
 */
export type IncidentReader = (query: IncidentQuery) => Promise<IncidentList>;

/** IncidentRouteDeps are what the incidents route needs from the server. */
export interface IncidentRouteDeps {
  incidents: IncidentReader | undefined;
  logger: Logger;
  metrics: ServerMetrics;
  /** maxAnswerBytes bounds an answer's JSON: past it the oldest incidents give up their evidence, then are left out (and counted). */
  maxAnswerBytes: number;
}

/**
 * parseIncidentQuery reads `since`, `until` (RFC 3339), `lookBack` (a
 * duration) with src/api's one window reader, what `kevents incidents` and the
 * web UI send (incidentQueryParams), and `cluster` (comma-separated, or
 * repeated); the timeline's `for` and `types` have no meaning here and are refused.
 */
export function parseIncidentQuery(params: URLSearchParams, namespace: string | undefined): IncidentQuery {
  for (const name of ['for', 'types']) {
    if (params.has(name)) throw newBadRequest(`${name}: not a parameter of incidents (an incident's timeline takes it)`);
  }
  let w;
  try {
    w = parseIncidentQueryParams(params);
  } catch (e) {
    if (isIncidentWindowError(e)) throw newBadRequest(`${e.param === 'sinceTime' ? 'since' : e.param}: ${e.message}`);
    throw e;
  }
  const clusters = [...new Set(listParam(params, 'cluster'))];
  return { namespace, since: w.since, until: w.until, lookBack: w.lookBack, ...(clusters.length > 0 ? { clusters } : {}) };
}

/**
 * registerIncidentRoutes serves the incidents document (src/api/incident.ts,
 * the shape of `kevents incidents -o json`) beside the timeline:
 *
 *   GET /apis/archive.kevents.io/v1alpha1/incidents
 *   GET /apis/archive.kevents.io/v1alpha1/namespaces/{namespace}/incidents
 *     ?since=RFC3339&until=RFC3339&lookBack=DURATION&cluster=NAME
 *
 * A server composed without an IncidentReader answers NotFound.
 */
export function registerIncidentRoutes(router: Router<HTTPVersion.V1>, deps: IncidentRouteDeps): void {
  const base = `/apis/${ARCHIVE_API}`;
  const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
  const serve = (req: IncomingMessage, res: ServerResponse, namespace: string | undefined): void => {
    const started = performance.now();
    res.once('finish', () => deps.metrics.requests.inc({ verb: req.method ?? '', resource: 'incidents', code: String(res.statusCode) }));
    get(req, res, namespace, deps)
      .catch((e: unknown) => sendError(res, e, deps.logger, `${req.method} ${req.url ?? ''}`))
      .finally(() => deps.metrics.requestDuration.observe({ verb: 'GET', resource: 'incidents' }, (performance.now() - started) / 1000));
  };
  router.on([...methods], `${base}/incidents`, (req, res) => serve(req, res, undefined));
  router.on([...methods], `${base}/namespaces/:namespace/incidents`, (req, res, p) => serve(req, res, p.namespace));
}

async function get(req: IncomingMessage, res: ServerResponse, namespace: string | undefined, deps: IncidentRouteDeps): Promise<void> {
  if (deps.incidents === undefined) throw newPathNotFound();
  if (req.method !== 'GET') throw newMethodNotAllowed();
  const format = negotiateOutput(req.headers.accept, false);
  // The one request parser: the gate authorized the very target read here.
  const query = parseIncidentQuery(requestTarget(req).params, namespace);
  const answer = incidentsAnswer(await deps.incidents(query), deps.maxAnswerBytes);
  if (format.kind === 'json') await sendJsonStream(res, 200, answer, 'incidents');
  else sendObject(res, 200, answer, format);
}
