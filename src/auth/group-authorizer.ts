import type { RequestAttributes } from './request-attributes.js';
import { MASTERS_GROUP, READERS_GROUP, WRITERS_GROUP } from './user.js';
import type { UserInfo } from './user.js';

/** Decision is an authorizer's answer; reason is added to the 403 message when not empty. */
export interface Decision {
  allowed: boolean;
  reason: string;
}

/** Authorizer decides whether a user may do what a request asks. */
export interface Authorizer {
  authorize(user: UserInfo, attributes: RequestAttributes): Decision | Promise<Decision>;
}

/** READ_VERBS are the verbs of the read role. */
export const READ_VERBS: ReadonlySet<string> = new Set(['get', 'list', 'watch']);

/** WRITE_VERBS are the verbs the write role adds to reading. */
export const WRITE_VERBS: ReadonlySet<string> = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

// The non-resource paths RBAC's system:discovery and system:public-info-viewer roles give every
// authenticated user: discovery, OpenAPI, version and health.
const DISCOVERY_EXACT = new Set(['/api', '/apis', '/openapi', '/version', '/healthz', '/livez', '/readyz']);
const DISCOVERY_PREFIXES = ['/api/', '/apis/', '/openapi/', '/version/', '/healthz/', '/livez/', '/readyz/'];

/** isDiscoveryPath tells whether a non-resource path is open to every authenticated user. */
export function isDiscoveryPath(path: string): boolean {
  return DISCOVERY_EXACT.has(path) || DISCOVERY_PREFIXES.some((p) => path.startsWith(p));
}

const ALLOW: Decision = { allowed: true, reason: '' };
const DENY: Decision = { allowed: false, reason: '' };

/**
 * groupAuthorizer maps groups to roles: `kevents:readers` may get, list and watch
 * (and read /metrics and the web UI), `kevents:writers` may also create, update,
 * patch and delete, `system:masters` may do anything. Every authenticated user
 * may read discovery, OpenAPI, /version and the health paths, as with RBAC's
 * default roles. A denial carries no reason, as RBAC's does not.
 */
export const groupAuthorizer: Authorizer = {
  authorize(user, a) {
    const groups = user.groups;
    if (groups.includes(MASTERS_GROUP)) return ALLOW;
    const writer = groups.includes(WRITERS_GROUP);
    const reader = writer || groups.includes(READERS_GROUP);
    if (!a.resourceRequest) {
      if (a.verb !== 'get' && a.verb !== 'head') return DENY;
      if (isDiscoveryPath(a.path)) return ALLOW;
      return reader ? ALLOW : DENY;
    }
    if (READ_VERBS.has(a.verb)) return reader ? ALLOW : DENY;
    if (WRITE_VERBS.has(a.verb)) return writer ? ALLOW : DENY;
    return DENY;
  },
};
