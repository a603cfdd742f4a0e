import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HTTPVersion, Instance as Router } from 'find-my-way';
import {
  ARCHIVE_API,
  ARCHIVE_GROUP,
  incidentObjects,
  incidentsAnswer,
  incidentTable,
  isIncidentWindowError,
  newBadRequest,
  newMethodNotAllowed,
  newNotFound,
  newPathNotFound,
  parseFieldSelector,
  parseGoDuration,
  parseIncidentQueryParams,
  parseLabelSelector,
} from '../../api/index.js';
import type { IncidentList } from '../../api/index.js';
import { requestTarget } from '../../auth/index.js';
import type { Clock, Logger } from '../../internal/index.js';
import { negotiateOutput, sendJsonStream, sendObject } from '../http/http-io.js';
import { route } from '../http/route.js';
import type { ServerMetrics } from '../http/metrics.js';
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
  clock: Clock;
  logger: Logger;
  metrics: ServerMetrics;
  /** maxAnswerBytes bounds an answer's JSON: past it the oldest incidents give up their evidence, then are left out (and counted). */
  maxAnswerBytes: number;
}

/** DEFAULT_INCIDENT_WINDOW_MS is the window of an incidents request that names none: the last hour, the events' own TTL. */
export const DEFAULT_INCIDENT_WINDOW_MS = 60 * 60 * 1000;

/**
 * selectedWindow reads the incidents' field selector: `window=DURATION` (Go's syntax, `24h`) is
 * the window ending now, as `kubectl get incidents --field-selector window=24h` asks, and
 * `window=all` the whole archive (what `kevents incidents` without `--since` asks);
 * `metadata.namespace=NS` is the namespace the path names (another is an empty list, as upstream).
 * Any other field is upstream's 400.
 */
function selectedWindow(params: URLSearchParams): { windowMs?: number | 'all'; namespace?: string } {
  const out: { windowMs?: number | 'all'; namespace?: string } = {};
  for (const r of parseFieldSelector(params.get('fieldSelector') ?? '')) {
    if (r.field === 'window' && r.operator === '=' && r.value === 'all') {
      out.windowMs = 'all';
    } else if (r.field === 'window' && r.operator === '=') {
      let ms: number;
      try {
        ms = parseGoDuration(r.value);
      } catch (e) {
        throw newBadRequest(`fieldSelector window: ${(e as Error).message}`);
      }
      if (ms <= 0) throw newBadRequest('fieldSelector window: must be longer than 0s');
      out.windowMs = ms;
    } else if (r.field === 'metadata.namespace' && r.operator === '=') {
      out.namespace = r.value;
    } else {
      throw newBadRequest(`field label not supported: ${r.field}${r.operator === '!=' ? ' (with !=)' : ''}`);
    }
  }
  return out;
}

/**
 * parseIncidentQuery reads `since`, `until` (RFC 3339), `lookBack` (a
 * duration) with src/api's one window reader, what `kevents incidents` and the
 * web UI send (incidentQueryParams), and `cluster` (comma-separated, or
 * repeated), or the field selector's `window`, as kubectl sends it; with
 * neither `since` nor a window, the window is the last hour before `now`. The
 * timeline's `for` and `types` have no meaning here and are refused.
 */
export function parseIncidentQuery(params: URLSearchParams, namespace: string | undefined, now: number): IncidentQuery & { empty?: boolean } {
  for (const name of ['for', 'types']) {
    if (params.has(name)) throw newBadRequest(`${name}: not a parameter of incidents (an incident's timeline takes it)`);
  }
  let t;
  try {
    t = parseIncidentQueryParams(params);
  } catch (e) {
    if (isIncidentWindowError(e)) throw newBadRequest(`${e.param === 'sinceTime' ? 'since' : e.param}: ${e.message}`);
    throw e;
  }
  const w = selectedWindow(params);
  if (typeof w.windowMs === 'number' && (t.since !== undefined || t.until !== undefined)) throw newBadRequest('fieldSelector window: give a window or since and until, not both');
  const clusters = [...new Set(listParam(params, 'cluster'))];
  let ns = namespace;
  // An incident has no labels: a label selector keeps all of them, or none.
  let empty = !parseLabelSelector(params.get('labelSelector') ?? '').matches({});
  if (w.namespace !== undefined) {
    if (ns !== undefined && ns !== w.namespace) empty = true;
    ns = w.namespace;
  }
  const since = t.since ?? (w.windowMs === 'all' ? undefined : now - (w.windowMs ?? DEFAULT_INCIDENT_WINDOW_MS));
  return { namespace: ns, since, until: t.until, lookBack: t.lookBack, ...(clusters.length > 0 ? { clusters } : {}), ...(empty ? { empty } : {}) };
}

/** PER_INCIDENT_BYTES is room for what the list kind adds to each incident of the document (its apiVersion, kind and metadata). */
const PER_INCIDENT_BYTES = 768;

/**
 * registerIncidentRoutes serves the incidents as the list kind `IncidentList`
 * (src/api/incident-object.ts: each item's status is an incident of
 * `kevents incidents -o json`), as JSON, YAML or a Table, beside the timeline:
 *
 *   GET /apis/archive.kevents.io/v1alpha1/incidents
 *   GET /apis/archive.kevents.io/v1alpha1/namespaces/{namespace}/incidents
 *   GET /apis/archive.kevents.io/v1alpha1/namespaces/{namespace}/incidents/{name}
 *     ?since=RFC3339&until=RFC3339&lookBack=DURATION&cluster=NAME&fieldSelector=window%3D24h
 *
 * One incident is found by its name among its namespace's of the same window: it is built at each
 * read, not stored.
 * A server composed without an IncidentReader answers NotFound.
 */
export function registerIncidentRoutes(router: Router<HTTPVersion.V1>, deps: IncidentRouteDeps): void {
  const base = `/apis/${ARCHIVE_API}`;
  const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
  const serve = route(deps, { resource: 'incidents', verb: 'GET' }, (req, res, namespace: string | undefined, name?: string) => get(req, res, namespace, name, deps));
  router.on([...methods], `${base}/incidents`, (req, res) => serve(req, res, undefined));
  router.on([...methods], `${base}/namespaces/:namespace/incidents`, (req, res, p) => serve(req, res, p.namespace));
  router.on([...methods], `${base}/namespaces/:namespace/incidents/:name`, (req, res, p) => serve(req, res, p.namespace, p.name));
}

async function get(req: IncomingMessage, res: ServerResponse, namespace: string | undefined, name: string | undefined, deps: IncidentRouteDeps): Promise<void> {
  if (deps.incidents === undefined) throw newPathNotFound();
  if (req.method !== 'GET') throw newMethodNotAllowed();
  if (requestTarget(req).watch) throw newMethodNotAllowed();
  const format = negotiateOutput(req.headers.accept, true);
  // The one request parser: the gate authorized the very target read here.
  const params = requestTarget(req).params;
  const now = deps.clock.now();
  const { empty, ...query } = parseIncidentQuery(params, namespace, now);
  const doc = empty === true ? { window: { since: query.since === undefined ? null : new Date(query.since).toISOString(), until: null }, incidents: [] } : await deps.incidents(query);
  const room = Math.max(deps.maxAnswerBytes / 2, deps.maxAnswerBytes - PER_INCIDENT_BYTES * doc.incidents.length);
  const all = incidentObjects(incidentsAnswer(doc, room));
  let list = all;
  if (name !== undefined) {
    const item = all.items.find((i) => i.metadata.name === name);
    if (item === undefined) throw newNotFound({ group: ARCHIVE_GROUP, resource: 'incidents' }, name);
    if (format.kind !== 'table') return sendObject(res, 200, item, format);
    list = { ...all, items: [item] };
  }
  if (format.kind === 'table') sendObject(res, 200, incidentTable(list, now, params.get('includeObject')), format);
  else if (format.kind === 'json') await sendJsonStream(res, 200, list, 'items');
  else sendObject(res, 200, list, format);
}
