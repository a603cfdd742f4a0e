import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { ARCHIVE_API, failureStatus, newUnsupportedMediaType, StatusError } from '../../api/index.js';
import { mediaTypeOf } from './http-io.js';

/** STATE_CHANGING are the methods a page of another origin must not send: each one writes. */
const STATE_CHANGING: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** BODY_TYPES are the media types a request body may have: the ones the handlers decode (no form or text type a page can send without asking). */
export const BODY_TYPES: readonly string[] = ['application/json', 'application/yaml'];

/** PATCH_BODY_TYPES are the patch types kube-apiserver names; the patch handler answers those it does not apply. */
const PATCH_BODY_TYPES: readonly string[] = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
];

/** forbidden is a 403 Status of the guard, in kube-apiserver's shape. */
function forbidden(message: string): StatusError {
  return new StatusError(failureStatus(403, 'Forbidden', message, {}));
}

/** hasBody tells whether a request carries a body: a length above zero, or a chunked one. */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return length !== '0';
  return req.headers['transfer-encoding'] !== undefined;
}

/**
 * checkOrigin refuses a state-changing request sent by a page of another site
 * or origin: browsers mark it with `Sec-Fetch-Site` and `Origin`; kubectl,
 * client-go and the other API clients send neither, and the web UI sends its
 * own origin. A cross-site `sendBeacon` or form post is a CORS "simple
 * request", sent without asking the server first: this check is its answer.
 */
export function checkOrigin(req: IncomingMessage, tls: boolean): StatusError | undefined {
  if (!STATE_CHANGING.has(req.method ?? '')) return undefined;
  const site = req.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') {
    return forbidden(`a ${req.method} from another site (Sec-Fetch-Site: ${site}) is refused: kevents takes writes from API clients and its own web UI only`);
  }
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  if (origin !== ownOrigin(req.headers.host, tls)) {
    return forbidden(`a ${req.method} from the origin ${JSON.stringify(origin)} is refused: kevents takes writes from API clients and its own web UI only`);
  }
  return undefined;
}

/**
 * ARCHIVE_READS are the archive's reads a browser can be sent to by any page
 * (a link, an image, a fetch in no-cors mode): each may cost the server a
 * search over the whole archive, and the page never needs to read the answer.
 */
const ARCHIVE_READS = new RegExp(`^/apis/${ARCHIVE_API.replace(/\./g, '\\.')}/(?:namespaces/[^/]+/)?(?:search|incidents|timeline|occurrences|events)/?$`);

/** BEARER is an Authorization header a page of another site cannot make a browser send without asking the server first (CORS preflight). */
const BEARER = /^bearer\s+\S/i;

/**
 * checkArchiveRead refuses a read of the archive (search, incidents, timeline,
 * occurrences) that a page of another site made a browser send: its
 * `Sec-Fetch-Site` is `cross-site`, or, from a browser that sends none, its
 * `Origin` is not this server's. kubectl and the other API clients send
 * neither header, and the web UI reads from its own origin (`same-origin`); a
 * request carrying a bearer token was written by a client, not a page, and
 * passes.
 */
export function checkArchiveRead(req: IncomingMessage, tls: boolean): StatusError | undefined {
  if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
  const path = (req.url ?? '').split('?', 1)[0]!;
  if (!ARCHIVE_READS.test(path) || BEARER.test(req.headers.authorization ?? '')) return undefined;
  const site = req.headers['sec-fetch-site'];
  if (site === 'cross-site') return forbidden('a read of the archive from another site (Sec-Fetch-Site: cross-site) is refused: kevents answers archive reads to API clients and its own web UI only');
  const origin = req.headers.origin;
  if (site === undefined && origin !== undefined && origin !== ownOrigin(req.headers.host, tls)) {
    return forbidden(`a read of the archive from the origin ${JSON.stringify(origin)} is refused: kevents answers archive reads to API clients and its own web UI only`);
  }
  return undefined;
}

/** ownOrigin is the origin a page this server served would send, or undefined without a Host. */
function ownOrigin(host: string | undefined, tls: boolean): string | undefined {
  if (host === undefined || host === '') return undefined;
  try {
    // The URL parser drops a scheme's default port, as a browser's Origin does.
    return new URL(`${tls ? 'https' : 'http'}://${host}`).origin;
  } catch {
    return undefined;
  }
}

/**
 * checkBodyType refuses a body whose Content-Type is missing or one no handler
 * decodes: a page can send text/plain, a form or no type at all without asking
 * first, and a missing type would be read as JSON. The answer is the 415 the
 * handler gives the type (go-restful's for a PATCH, the decoder's otherwise).
 */
export function checkBodyType(req: IncomingMessage): StatusError | undefined {
  if (!STATE_CHANGING.has(req.method ?? '') || !hasBody(req)) return undefined;
  const type = mediaTypeOf(req.headers['content-type']);
  if (req.method === 'PATCH') {
    if (PATCH_BODY_TYPES.includes(type)) return undefined;
    return new StatusError(failureStatus(415, 'UnsupportedMediaType', '415: Unsupported Media Type', {}));
  }
  if (BODY_TYPES.includes(type)) return undefined;
  return newUnsupportedMediaType([...BODY_TYPES]);
}

/** HostPolicy is what the no-authentication mode answers: the `--listen` host and each `--allowed-host`. */
export interface HostPolicy {
  listenHost?: string | undefined;
  allowedHosts: readonly string[];
}

/** hostName is a Host header without its port and brackets, lower-cased, without a trailing dot. */
export function hostName(host: string): string {
  let name = host.trim().toLowerCase();
  if (name.startsWith('[')) {
    const end = name.indexOf(']');
    name = end < 0 ? name : name.slice(1, end);
  } else {
    const colon = name.lastIndexOf(':');
    if (colon >= 0 && name.indexOf(':') === colon) name = name.slice(0, colon);
  }
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

/**
 * checkHost refuses, without authentication, a Host that is not this server's
 * own name: a DNS rebinding page reaches 127.0.0.1 under its own name, which
 * it controls, while an IP literal, `localhost` and `*.localhost` always name
 * this machine. `--allowed-host` adds the name of a port-forward or a proxy.
 * A request without a Host comes from no browser, which always sends one.
 */
export function checkHost(req: IncomingMessage, policy: HostPolicy): StatusError | undefined {
  const host = req.headers.host;
  if (host === undefined) return undefined;
  const name = hostName(host);
  if (isIP(name) !== 0 || name === 'localhost' || name.endsWith('.localhost')) return undefined;
  if (policy.listenHost !== undefined && name === hostName(policy.listenHost)) return undefined;
  if (policy.allowedHosts.some((h) => hostName(h) === name)) return undefined;
  return forbidden(
    `the Host ${JSON.stringify(host)} is not one this server answers without authentication: use an IP address or localhost, or start kevents serve with --allowed-host ${name}`,
  );
}
