import type { AuthorizationAttributes } from '../api/index.js';

/** RequestAttributes are what an authorizer decides on, for one request (apiserver's RequestInfo). */
export type RequestAttributes = Omit<AuthorizationAttributes, 'user'> & { apiVersion: string };

// strconv.ParseBool's true spellings.
const WATCH_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/**
 * requestAttributes reads the verb and resource of a request from its method and
 * path, as kube-apiserver's RequestInfoFactory does: `/api/v1/…` and
 * `/apis/GROUP/VERSION/…` are resource requests (with `watch/` or `?watch=true`
 * as the watch verb, and `namespaces/NS/` scoping), anything else is a
 * non-resource request whose verb is the lower-cased HTTP method.
 */
export function requestAttributes(method: string, url: string): RequestAttributes {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const m = method.toUpperCase();
  const nonResource: RequestAttributes = {
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
  let parts = path.split('/').filter((p) => p !== '');
  let apiGroup = '';
  let apiVersion: string;
  if (parts[0] === 'api' && parts.length >= 3) {
    apiVersion = parts[1]!;
    parts = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    apiGroup = parts[1]!;
    apiVersion = parts[2]!;
    parts = parts.slice(3);
  } else {
    return nonResource;
  }
  let watchPath = false;
  if (parts[0] === 'watch' && parts.length >= 2) {
    watchPath = true;
    parts = parts.slice(1);
  }
  let namespace = '';
  if (parts[0] === 'namespaces' && parts.length >= 2) {
    namespace = parts[1]!;
    // `namespaces/NS` (and its status and finalize) is the namespace object itself.
    if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2]!)) parts = parts.slice(2);
  }
  const resource = parts[0] ?? '';
  const name = parts[1] ?? '';
  const subresource = parts.slice(2).join('/');
  let verb: string;
  const watchQuery = q >= 0 && WATCH_TRUE.has(new URLSearchParams(url.slice(q + 1)).get('watch') ?? '');
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
      verb = watchPath || watchQuery ? 'watch' : name === '' ? 'list' : 'get';
      break;
    default:
      verb = m.toLowerCase();
  }
  return { verb, resourceRequest: true, path, apiGroup, apiVersion, resource, subresource, namespace, name };
}
