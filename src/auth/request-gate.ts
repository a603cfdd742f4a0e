import type { IncomingMessage } from 'node:http';
import { newForbidden, newInternalError, newUnauthorized } from '../api/index.js';
import type { StatusError } from '../api/index.js';
import type { Logger } from '../internal/index.js';
import type { Authorizer, Decision } from './group-authorizer.js';
import { requestTarget } from './request-attributes.js';
import type { RequestAttributes } from './request-attributes.js';
import type { RequestAuthenticator } from './request-header.js';
import { ARCHIVERS_GROUP, MASTERS_GROUP } from './user.js';
import type { Authenticator, UserInfo } from './user.js';

/** PUBLIC_PATHS answer without credentials: kubelet probes and load balancers carry none. */
export const PUBLIC_PATHS: ReadonlySet<string> = new Set(['/healthz', '/livez', '/readyz', '/version']);

/** PRIVILEGED_GROUPS may write what only kevents itself writes: the archive's `archive.kevents.io/*` labels and annotations. */
export const PRIVILEGED_GROUPS: readonly string[] = [MASTERS_GROUP, ARCHIVERS_GROUP];

/** RequestGate admits a request (undefined) or answers it with a Status error (401, 403). */
export interface RequestGate {
  admit(req: IncomingMessage): StatusError | undefined | Promise<StatusError | undefined>;
  /** privileged is true when an admitted request's user is in one of PRIVILEGED_GROUPS. */
  privileged(req: IncomingMessage): boolean;
}

/**
 * isPublic: kubelet probes and load balancers read the health paths without credentials; the
 * details of `/readyz?verbose` (why a check fails) are for an authorized client only.
 */
function isPublic(method: string | undefined, path: string, params: URLSearchParams): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false;
  return PUBLIC_PATHS.has(path) && !(path === '/readyz' && params.has('verbose'));
}

/** bearerToken reads `Authorization: Bearer <token>` as kube-apiserver does, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const parts = header.trim().split(' ');
  if (parts.length < 2 || parts[0]!.toLowerCase() !== 'bearer') return undefined;
  const token = parts[1]!;
  return token === '' ? undefined : token;
}

type Maybe<T> = T | Promise<T>;

function then<T, U>(v: Maybe<T>, f: (t: T) => Maybe<U>): Maybe<U> {
  return v instanceof Promise ? v.then(f) : f(v);
}

/**
 * createRequestGate authenticates each request by what it carries besides a token (a front
 * proxy's verified certificate and its headers, `requestAuthenticators`), else its bearer token
 * with the first authenticator that knows it, then asks each authorizer until one allows
 * (a union, as kube-apiserver's `--authorization-mode` list). No or an
 * unknown token is upstream's 401 `Unauthorized`; a denial is upstream's 403
 * naming the user, verb and resource. Everything stays synchronous when the
 * authenticators and authorizers are (a token file and groups), so the create
 * path pays a map lookup and no extra turn of the event loop.
 */
export function createRequestGate(options: {
  authenticators: Authenticator[];
  requestAuthenticators?: RequestAuthenticator[];
  authorizers: Authorizer[];
  logger: Logger;
}): RequestGate {
  const { authenticators, authorizers, logger } = options;
  const requestAuthenticators = options.requestAuthenticators ?? [];
  /** fromRequest is the user a request authenticator found, or the refusals to log should no token authenticate it either. */
  const fromRequest = (req: IncomingMessage): { user?: UserInfo; refused: string[] } => {
    const refused: string[] = [];
    for (const a of requestAuthenticators) {
      const r = a.authenticateRequest(req);
      if (r === undefined) continue;
      if ('user' in r) return { user: r.user, refused };
      refused.push(r.refused);
    }
    return { refused };
  };
  const authenticate = (token: string, i = 0): Maybe<UserInfo | undefined> => {
    const a = authenticators[i];
    if (a === undefined) return undefined;
    return then(a.authenticateToken(token), (user) => user ?? authenticate(token, i + 1));
  };
  const authorize = (user: UserInfo, attrs: RequestAttributes, i = 0, reasons: string[] = []): Maybe<Decision> => {
    const z = authorizers[i];
    if (z === undefined) return { allowed: false, reason: reasons.filter((r) => r !== '').join('; ') };
    return then(z.authorize(user, attrs), (d) => (d.allowed ? d : authorize(user, attrs, i + 1, [...reasons, d.reason])));
  };
  const fail = (e: unknown): StatusError => {
    logger.error('authenticating or authorizing a request failed', { error: (e as Error).message });
    return newInternalError(e);
  };
  const privileged = new WeakMap<IncomingMessage, boolean>();
  return {
    privileged: (req) => privileged.get(req) === true,
    admit(req) {
      let target;
      try {
        target = requestTarget(req);
      } catch (e) {
        return e as StatusError;
      }
      if (isPublic(req.method, target.path, target.params)) return undefined;
      const proxied = requestAuthenticators.length > 0 ? fromRequest(req) : { refused: [] };
      const token = proxied.user === undefined ? bearerToken(req.headers.authorization) : undefined;
      const unauthorized = (): StatusError => {
        if (proxied.refused.length > 0) logger.info('front-proxy authentication refused', { reasons: proxied.refused.join('; '), remote: req.socket.remoteAddress });
        return newUnauthorized();
      };
      if (proxied.user === undefined && token === undefined) return unauthorized();
      const attrs = target.attributes;
      try {
        const out = then(proxied.user ?? authenticate(token!), (user): Maybe<StatusError | undefined> => {
          if (user === undefined) return unauthorized();
          return then(authorize(user, attrs), (d) => {
            if (!d.allowed) return newForbidden({ ...attrs, user: user.username }, d.reason);
            if (user.groups.some((g) => PRIVILEGED_GROUPS.includes(g))) privileged.set(req, true);
            return undefined;
          });
        });
        return out instanceof Promise ? out.catch(fail) : out;
      } catch (e) {
        return fail(e);
      }
    },
  };
}
