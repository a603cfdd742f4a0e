import type { IncomingMessage } from 'node:http';
import { ARCHIVE_GROUP, newBadRequest } from '../api/index.js';
import type { AuthorizationAttributes } from '../api/index.js';

/** RequestAttributes are what an authorizer decides on, for one request (apiserver's RequestInfo). */
export type RequestAttributes = Omit<AuthorizationAttributes, 'user'> & { apiVersion: string };

/**
 * RequestTarget is a request's target read once, for the auth gate and the handlers alike: the path,
 * the query, whether it asks for a watch, and the attributes an authorizer decides on.
 */
export interface RequestTarget {
  path: string;
  params: URLSearchParams;
  /** watch is true for a `/watch/` path or a `watch` parameter the handlers read as true. */
  watch: boolean;
  attributes: RequestAttributes;
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/**
 * watchParam reads `watch` as kube-apiserver's parameter codec does (and so its RequestInfoFactory,
 * which falls back to the same reading): anything but `0` and `false` in any case is true.
 */
export function watchParam(params: URLSearchParams): boolean {
  const v = params.getAll('watch')[0];
  return v !== undefined && v !== '0' && v.toLowerCase() !== 'false';
}

/**
 * decodeSegment decodes the one path segment that may carry percent-encoding (a namespace or a name).
 * A dot segment, a malformed escape or an encoded slash is refused: the router would read it otherwise.
 */
function decodeSegment(raw: string): string {
  // Without an escape there is nothing to decode (and no slash: the path was split on them).
  if (!raw.includes('%')) {
    if (raw === '.' || raw === '..') throw newBadRequest(`invalid path segment ${JSON.stringify(raw)}`);
    return raw;
  }
  let text: string;
  try {
    text = decodeURIComponent(raw);
  } catch {
    throw newBadRequest(`invalid path segment ${JSON.stringify(raw)}: malformed percent-encoding`);
  }
  if (text === '.' || text === '..' || text.includes('/')) throw newBadRequest(`invalid path segment ${JSON.stringify(raw)}`);
  return text;
}

/** staticSegment refuses percent-encoding and dot segments where the router matches literal text. */
function staticSegment(raw: string): string {
  if (raw.includes('%')) {
    throw newBadRequest(`invalid path segment ${JSON.stringify(raw)}: percent-encoding is allowed only in a namespace or a name`);
  }
  if (raw === '.' || raw === '..') throw newBadRequest(`invalid path segment ${JSON.stringify(raw)}`);
  return raw;
}

/**
 * parseRequestTarget reads the verb and resource of a request from its method and
 * target, as kube-apiserver's RequestInfoFactory does: `/api/v1/…` and
 * `/apis/GROUP/VERSION/…` are resource requests (with `watch/` or `?watch` as
 * the watch verb, and `namespaces/NS/` scoping), anything else is a
 * non-resource request whose verb is the lower-cased HTTP method. A target the
 * router could read differently from the gate is a 400: an absolute-form or
 * asterisk-form target, percent-encoding outside a namespace or name, a dot segment.
 */
export function parseRequestTarget(method: string, url: string): RequestTarget {
  if (!url.startsWith('/')) throw newBadRequest('the request target must be a path (origin-form), not an absolute URL');
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const params = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
  const m = method.toUpperCase();
  const raw = path.split('/').filter((p) => p !== '');
  const nonResource = (): RequestTarget => {
    for (const s of raw) staticSegment(s);
    const attributes: RequestAttributes = {
      verb: m.toLowerCase(),
      resourceRequest: false,
      path,
      apiGroup: '',
      apiVersion: '',
      resource: '',
      subresource: '',
      namespace: '',
      name: '',
    };
    return { path, params, watch: false, attributes };
  };
  let parts = raw;
  let apiGroup = '';
  let apiVersion: string;
  if (parts[0] === 'api' && parts.length >= 3) {
    apiVersion = staticSegment(parts[1]!);
    parts = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    apiGroup = staticSegment(parts[1]!);
    apiVersion = staticSegment(parts[2]!);
    parts = parts.slice(3);
  } else {
    return nonResource();
  }
  let watchPath = false;
  if (parts[0] === 'watch' && parts.length >= 2) {
    watchPath = true;
    parts = parts.slice(1);
  }
  let namespace = '';
  if (staticSegment(parts[0]!) === 'namespaces' && parts.length >= 2) {
    namespace = decodeSegment(parts[1]!);
    // `namespaces/NS` (and its status and finalize) is the namespace object itself.
    if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2]!)) parts = parts.slice(2);
  }
  const resource = staticSegment(parts[0] ?? '');
  const name = parts[1] === undefined ? '' : decodeSegment(parts[1]);
  const subresource = parts.slice(2).map(staticSegment).join('/');
  const watch = watchPath || ((m === 'GET' || m === 'HEAD') && watchParam(params));
  let verb: string;
  switch (m) {
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name === '' ? 'deletecollection' : 'delete';
      break;
    case 'GET':
    case 'HEAD':
      verb = watch ? 'watch' : name === '' ? 'list' : 'get';
      break;
    default:
      verb = m.toLowerCase();
  }
  if (apiGroup === ARCHIVE_GROUP && resource === 'search' && name === '' && verb === 'list') {
    // The archive's search reads events: it is authorized as listing core/v1 events in its namespace.
    return { path, params, watch, attributes: { verb, resourceRequest: true, path, apiGroup: '', apiVersion: 'v1', resource: 'events', subresource: '', namespace, name: '' } };
  }
  return { path, params, watch, attributes: { verb, resourceRequest: true, path, apiGroup, apiVersion, resource, subresource, namespace, name } };
}

/** requestAttributes are the attributes of parseRequestTarget alone. */
export function requestAttributes(method: string, url: string): RequestAttributes {
  return parseRequestTarget(method, url).attributes;
}

/**
 * TARGET keys the target kept on the request object itself: a WeakMap entry per request cost more (a hash
 * stamped on each request, an ephemeron for the collector to trace) than a property every request gets alike.
 */
const TARGET = Symbol('kevents.requestTarget');

/**
 * requestTarget is parseRequestTarget of a request, read once and kept with it: the
 * server reads it before routing, the gate and the handlers read the same object.
 */
export function requestTarget(req: IncomingMessage): RequestTarget {
  const kept = req as IncomingMessage & { [TARGET]?: RequestTarget };
  return (kept[TARGET] ??= parseRequestTarget(req.method ?? 'GET', req.url ?? '/'));
}
