import { createHash } from 'node:crypto';
import { LruCache, realClock } from '../internal/index.js';
import type { Clock } from '../internal/index.js';
import type { Authorizer, Decision } from './group-authorizer.js';
import type { RequestAttributes } from './request-attributes.js';
import type { Authenticator, UserInfo } from './user.js';

/** ReviewClient creates one review object on the cluster's API server and returns the answer (a RestClient satisfies it). */
export interface ReviewClient {
  request<T>(req: { method: 'POST'; path: string; body: unknown; verb: string }): Promise<T>;
}

/** DELEGATED_CACHE_TTL_MS is how long a review's answer is reused: k8s.io/apiserver's delegated default of 10 s. */
export const DELEGATED_CACHE_TTL_MS = 10_000;

const CACHE_ENTRIES = 10_000;

interface TokenReview {
  status?: { authenticated?: boolean; user?: { username?: string; uid?: string; groups?: string[] }; error?: string };
}

interface SubjectAccessReview {
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

function ttlCache<V>(clock: Clock): { get(k: string): V | undefined; set(k: string, v: V): void } {
  const lru = new LruCache<string, { v: V; until: number }>({ maxEntries: CACHE_ENTRIES });
  return {
    get(k) {
      const e = lru.get(k);
      if (e === undefined || e.until <= clock.now()) return undefined;
      return e.v;
    },
    set(k, v) {
      lru.set(k, { v, until: clock.now() + DELEGATED_CACHE_TTL_MS });
    },
  };
}

/**
 * tokenReviewAuthenticator asks the cluster who a token belongs to
 * (authentication.k8s.io/v1 TokenReview), caching each answer, keyed by the
 * token's SHA-256, for DELEGATED_CACHE_TTL_MS. A review that fails is an
 * error (a 500), not an unknown token.
 */
export function tokenReviewAuthenticator(client: ReviewClient, options: { clock?: Clock } = {}): Authenticator {
  const cache = ttlCache<UserInfo | null>(options.clock ?? realClock);
  return {
    async authenticateToken(token) {
      const key = createHash('sha256').update(token).digest('base64');
      const hit = cache.get(key);
      if (hit !== undefined) return hit ?? undefined;
      const review = await client.request<TokenReview>({
        method: 'POST',
        path: '/apis/authentication.k8s.io/v1/tokenreviews',
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
        verb: 'create tokenreviews',
      });
      const s = review.status;
      const user = s?.authenticated === true && s.user?.username !== undefined
        ? { username: s.user.username, uid: s.user.uid ?? '', groups: s.user.groups ?? [] }
        : null;
      cache.set(key, user);
      return user ?? undefined;
    },
  };
}

/**
 * subjectAccessReviewAuthorizer asks the cluster whether a user may do what a
 * request asks (authorization.k8s.io/v1 SubjectAccessReview), with the
 * request's attributes as kube-apiserver's webhook authorizer sends them,
 * caching each answer for DELEGATED_CACHE_TTL_MS.
 */
export function subjectAccessReviewAuthorizer(client: ReviewClient, options: { clock?: Clock } = {}): Authorizer {
  const cache = ttlCache<Decision>(options.clock ?? realClock);
  return {
    async authorize(user: UserInfo, a: RequestAttributes): Promise<Decision> {
      const spec: Record<string, unknown> = { user: user.username, uid: user.uid, groups: user.groups };
      if (user.extra !== undefined) spec.extra = user.extra;
      if (a.resourceRequest) {
        spec.resourceAttributes = {
          namespace: a.namespace,
          verb: a.verb,
          group: a.apiGroup,
          version: a.apiVersion,
          resource: a.resource,
          subresource: a.subresource,
          name: a.name,
        };
      } else {
        spec.nonResourceAttributes = { path: a.path, verb: a.verb };
      }
      const key = JSON.stringify(spec);
      const hit = cache.get(key);
      if (hit !== undefined) return hit;
      const review = await client.request<SubjectAccessReview>({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec },
        verb: 'create subjectaccessreviews',
      });
      const s = review.status;
      const decision: Decision = { allowed: s?.allowed === true && s.denied !== true, reason: s?.reason ?? '' };
      cache.set(key, decision);
      return decision;
    },
  };
}
