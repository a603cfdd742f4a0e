import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestTarget } from '../../auth/index.js';
import type { HTTPVersion, Instance as Router } from 'find-my-way';
import { ARCHIVE_API, newBadRequest, newMethodNotAllowed, newPathNotFound, parseTime, timelineAnswer } from '../../api/index.js';
import type { Timeline } from '../../api/index.js';
import type { Logger } from '../../internal/index.js';
import { negotiateOutput, sendJsonStream, sendObject } from '../http/http-io.js';
import { route } from '../http/route.js';
import type { ServerMetrics } from '../http/metrics.js';

/** TimelineQuery is a timeline request: a namespace (undefined: all), an object, a window (Unix ms) and types. */
export interface TimelineQuery {
  namespace?: string | undefined;
  /** for is `KIND/NAME` as `kevents timeline --for` takes it. */
  for?: string | undefined;
  since?: number | undefined;
  until?: number | undefined;
  types?: string[] | undefined;
  /** clusters keeps what was archived from these clusters (`cluster`, repeatable); undefined keeps all. */
  clusters?: string[] | undefined;
}

/**
 * TimelineReader builds the timeline of a query over the server's store. It is
 * declared here, by its consumer, and composed by the CLI from src/timeline, so
 * the web UI draws the very rows `kevents timeline` prints. It rejects a query
 * it cannot answer with a Status error (a 400 for a bad `for`).
 */
export type TimelineReader = (query: TimelineQuery) => Promise<Timeline>;

/** TimelineRouteDeps are what the timeline route needs from the server. */
export interface TimelineRouteDeps {
  timeline: TimelineReader | undefined;
  logger: Logger;
  metrics: ServerMetrics;
  /** maxAnswerBytes bounds an answer's JSON: the rows past it are left out and counted (`rowsLeftOut`). */
  maxAnswerBytes: number;
}

/** timeParam reads an RFC 3339 `since` or `until` parameter (Unix ms), undefined when absent or empty; anything else is a 400. */
export function timeParam(params: URLSearchParams, name: 'since' | 'until'): number | undefined {
  const text = params.get(name);
  if (text === null || text === '') return undefined;
  try {
    return parseTime(text);
  } catch {
    throw newBadRequest(`${name}: invalid time ${JSON.stringify(text)}: use RFC 3339, e.g. 2025-01-01T00:00:00Z`);
  }
}

/** listParam reads a parameter given comma-separated, repeated, or both. */
export function listParam(params: URLSearchParams, name: string): string[] {
  return params.getAll(name).flatMap((t) => t.split(',')).map((t) => t.trim()).filter((t) => t !== '');
}

/**
 * parseTimelineQuery reads `since`, `until` (RFC 3339), `for` (KIND/NAME),
 * `types` and `cluster` (each comma-separated, or repeated).
 */
export function parseTimelineQuery(params: URLSearchParams, namespace: string | undefined): TimelineQuery {
  const q: TimelineQuery = { namespace };
  q.since = timeParam(params, 'since');
  q.until = timeParam(params, 'until');
  if (q.since !== undefined && q.until !== undefined && q.until <= q.since) throw newBadRequest('until must be after since');
  const forArg = params.get('for');
  if (forArg !== null && forArg !== '') q.for = forArg;
  const types = listParam(params, 'types');
  for (const t of types) if (!/^(normal|warning)$/i.test(t)) throw newBadRequest(`types: valid types are Normal or Warning, not ${JSON.stringify(t)}`);
  if (types.length > 0) q.types = types;
  const clusters = [...new Set(listParam(params, 'cluster'))];
  if (clusters.length > 0) q.clusters = clusters;
  return q;
}

/**
 * registerTimelineRoutes serves the timeline document (src/api/timeline.ts,
 * the shape of `kevents timeline -o json`) beside the archive API:
 *
 *   GET /apis/archive.kevents.io/v1alpha1/timeline
 *   GET /apis/archive.kevents.io/v1alpha1/namespaces/{namespace}/timeline
 *     ?since=RFC3339&until=RFC3339&for=KIND/NAME&types=Warning&cluster=NAME
 *
 * `cluster` (repeatable) keeps the events archived from those clusters and their
 * history, as `kevents timeline --cluster` does. A row of an archived event names its cluster.
 *
 * A server composed without a TimelineReader answers NotFound.
 */
export function registerTimelineRoutes(router: Router<HTTPVersion.V1>, deps: TimelineRouteDeps): void {
  const base = `/apis/${ARCHIVE_API}`;
  const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
  const serve = route(deps, { resource: 'timeline', verb: 'GET' }, (req, res, namespace: string | undefined) => get(req, res, namespace, deps));
  router.on([...methods], `${base}/timeline`, (req, res) => serve(req, res, undefined));
  router.on([...methods], `${base}/namespaces/:namespace/timeline`, (req, res, p) => serve(req, res, p.namespace));
}

async function get(req: IncomingMessage, res: ServerResponse, namespace: string | undefined, deps: TimelineRouteDeps): Promise<void> {
  if (deps.timeline === undefined) throw newPathNotFound();
  if (req.method !== 'GET') throw newMethodNotAllowed();
  const format = negotiateOutput(req.headers.accept, false);
  const query = parseTimelineQuery(requestTarget(req).params, namespace);
  const answer = timelineAnswer(await deps.timeline(query), deps.maxAnswerBytes);
  if (format.kind === 'json') await sendJsonStream(res, 200, answer, 'rows');
  else sendObject(res, 200, answer, format);
}
