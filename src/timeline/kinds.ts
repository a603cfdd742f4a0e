/**
 * The built-in kinds users name with `--for`: `pod/web-1`, `deploy/web`,
 * `Deployment/web`, `replicasets.apps/web-7d4b9c8f5`. Events name their objects by
 * Kind and apiVersion, so a resource name is only useful once it is resolved.
 */

import { BUILTIN_KIND_TABLE, kindApiVersion } from '../api/index.js';

/** KindInfo is a resolvable kind: its Kind, preferred apiVersion and whether it lives in a namespace. */
export interface KindInfo {
  kind: string;
  apiVersion: string;
  namespaced: boolean;
  /** names are the lower-case resource names kubectl accepts: plural, singular, short names. */
  names: readonly string[];
}

/** BUILTIN_KINDS are the kinds `--for` resolves without asking the server: api's one kind table, with kubectl's names for each. */
export const BUILTIN_KINDS: readonly KindInfo[] = BUILTIN_KIND_TABLE.map((b) => ({
  kind: b.kind,
  apiVersion: kindApiVersion(b),
  namespaced: b.namespaced,
  names: [...new Set([b.resource, b.kind.toLowerCase(), ...b.shortNames])],
}));

/** ObjectRef names one object: Kind and name, and its namespace when it has one. */
export interface ObjectRef {
  kind: string;
  name: string;
  namespace?: string;
  /** apiVersion is the kind's preferred version, when resolved. */
  apiVersion?: string;
}

/**
 * resolveKind finds a built-in kind by resource name (`pods`, `po`, `pods.v1`,
 * `deployments.apps`, `deployments.v1.apps`) or by Kind (`Deployment`), case-insensitively.
 */
export function resolveKind(resource: string): KindInfo | undefined {
  const lower = resource.toLowerCase();
  const [name = '', ...rest] = lower.split('.');
  const group = rest.length === 0 ? undefined : rest.length >= 2 && /^v\d/.test(rest[0]!) ? rest.slice(1).join('.') : /^v\d/.test(rest[0]!) ? '' : rest.join('.');
  return BUILTIN_KINDS.find((k) => {
    if (!k.names.includes(name) && k.kind.toLowerCase() !== name) return false;
    if (group === undefined) return true;
    const kGroup = k.apiVersion.includes('/') ? k.apiVersion.slice(0, k.apiVersion.indexOf('/')) : '';
    return kGroup === group;
  });
}

/** ForParseError is a `--for` argument that is not `resource/name` (its message is kubectl's). */
export class ForParseError extends Error {
  override name = 'ForParseError';
}

/**
 * parseForArgument reads `--for TYPE/NAME` with kubectl's messages: a missing
 * slash, a second slash and an unknown type are errors. Unknown types keep their
 * text as the Kind when `allowUnknown` is set (archives hold custom resources too).
 */
export function parseForArgument(text: string, options: { allowUnknown?: boolean } = {}): ObjectRef {
  const slash = text.indexOf('/');
  if (slash < 0) throw new ForParseError('--for must be in resource/name form');
  if (text.indexOf('/', slash + 1) >= 0) throw new ForParseError('arguments in resource/name form may not have more than one slash');
  const resource = text.slice(0, slash);
  const name = text.slice(slash + 1);
  if (resource === '' || name === '') throw new ForParseError('arguments in resource/name form must have a single resource and name');
  const info = resolveKind(resource);
  if (info === undefined) {
    if (options.allowUnknown) return { kind: resource, name };
    throw new ForParseError(`the server doesn't have a resource type "${resource}"`);
  }
  return { kind: info.kind, name, apiVersion: info.apiVersion };
}

/** isNamespacedKind tells whether objects of a Kind live in a namespace (unknown kinds are assumed to). */
export function isNamespacedKind(kind: string): boolean {
  return BUILTIN_KINDS.find((k) => k.kind === kind)?.namespaced ?? true;
}
