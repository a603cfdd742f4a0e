import { newBadRequest } from '../../api/index.js';

/**
 * Continue tokens are upstream's: unpadded base64url of
 * `{"v":"meta.k8s.io/v1","rv":<rev>,"start":"<key after the last item>"}`, where
 * the key is relative to the listed prefix (`<name>` inside a namespace,
 * `<namespace>/<name>` across namespaces) and ends in a NUL byte so that the
 * next page starts strictly after the last item.
 */

/** ContinuePosition is what a continue token carries. */
export interface ContinuePosition {
  /** resourceVersion is the revision the first page was read at; -1 means "latest". */
  resourceVersion: number;
  /** startKey is the full store key (`<namespace>/<name>`) after which the next page starts. */
  startKey: string;
}

const TOKEN_VERSION = 'meta.k8s.io/v1';

/** encodeContinue makes a continue token for the page that ended at `lastKey`. */
export function encodeContinue(lastKey: string, namespace: string | undefined, resourceVersion: number): string {
  const relative = namespace === undefined ? lastKey : lastKey.slice(namespace.length + 1);
  const json = JSON.stringify({ v: TOKEN_VERSION, rv: resourceVersion, start: `${relative}\u0000` });
  return Buffer.from(json, 'utf8').toString('base64url');
}

function invalid(detail: string): never {
  throw newBadRequest(`invalid continue token: ${detail}`);
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** decodeContinue reads a continue token; a malformed one is upstream's 400. */
export function decodeContinue(token: string, namespace: string | undefined): ContinuePosition {
  if (!BASE64URL.test(token) || token.length % 4 === 1) {
    const at = token.search(/[^A-Za-z0-9_-]/);
    invalid(`continue key is not valid: illegal base64 data at input byte ${at >= 0 ? at : token.length - 1}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch (e) {
    invalid(`continue key is not valid: ${(e as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null) invalid('continue key is not valid');
  const { v, rv, start } = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (v !== TOKEN_VERSION) invalid('continue key is not valid: server does not recognize this encoded version');
  if (typeof rv !== 'number' || !Number.isInteger(rv) || rv === 0) {
    invalid(`continue key is not valid: incorrect encoded start resourceVersion (version ${TOKEN_VERSION})`);
  }
  if (typeof start !== 'string' || start === '') {
    invalid(`continue key is not valid: encoded start key empty (version ${TOKEN_VERSION})`);
  }
  const relative = start.endsWith('\u0000') ? start.slice(0, -1) : start;
  // Reject path traversal like upstream: the cleaned key must stay inside the prefix.
  if (relative.split('/').some((part) => part === '.' || part === '..')) invalid('continue key is not valid');
  if (namespace !== undefined && relative.includes('/')) invalid('continue key is not valid');
  return { resourceVersion: rv, startKey: namespace === undefined ? relative : `${namespace}/${relative}` };
}
