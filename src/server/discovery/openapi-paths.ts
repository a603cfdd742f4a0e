/**
 * The paths of the OpenAPI documents: every operation of each served group/version, with its query
 * and path parameters, responses and Kubernetes extensions, and the schemas those reach. Generated
 * data, apart from the code that serves it (`openapi.ts`).
 */
import { kindsOf } from './discovery.js';
import type { GroupVersion, KnownKind } from './discovery.js';
import { META, PACKAGES, gvkOf, schemaName } from './openapi-schemas.js';
import type { Schema } from './openapi-schemas.js';

/** Parameter is an OpenAPI 3.0 parameter object. */
export interface Parameter {
  name: string;
  in: 'query' | 'path';
  description: string;
  required?: boolean;
  schema: Schema;
}

function query(name: string, type: 'string' | 'integer' | 'boolean', description: string): Parameter {
  return { name, in: 'query', description, schema: { type, uniqueItems: true } };
}

const P = {
  pretty: query('pretty', 'string', "If 'true', the output is pretty printed."),
  allowWatchBookmarks: query('allowWatchBookmarks', 'boolean', 'Ask for BOOKMARK frames in a watch.'),
  continue: query('continue', 'string', 'The token of the next page of a chunked list.'),
  fieldSelector: query('fieldSelector', 'string', 'Restrict the returned objects by their fields.'),
  labelSelector: query('labelSelector', 'string', 'Restrict the returned objects by their labels.'),
  limit: query('limit', 'integer', 'The largest number of objects to return in one page.'),
  resourceVersion: query('resourceVersion', 'string', 'Which version of the collection a list or watch starts from.'),
  resourceVersionMatch: query('resourceVersionMatch', 'string', 'How resourceVersion applies to a list: Exact or NotOlderThan.'),
  sendInitialEvents: query('sendInitialEvents', 'boolean', 'Start a watch with the current state as ADDED frames, then a bookmark.'),
  timeoutSeconds: query('timeoutSeconds', 'integer', 'How long a list or watch call may last.'),
  watch: query('watch', 'boolean', 'Stream changes instead of returning a list.'),
  dryRun: query('dryRun', 'string', 'All: process the request without persisting it.'),
  fieldManager: query('fieldManager', 'string', 'Name of the actor making the change.'),
  fieldValidation: query(
    'fieldValidation',
    'string',
    'What the server does with unknown or duplicate fields in the body: Ignore, Warn (a Warning header per field) or Strict (reject).',
  ),
  force: query('force', 'boolean', 'Force an apply request; only for apply patches.'),
  gracePeriodSeconds: query('gracePeriodSeconds', 'integer', 'Seconds before the object is deleted.'),
  ignoreStoreReadError: query(
    'ignoreStoreReadErrorWithClusterBreakingPotential',
    'boolean',
    'Delete objects that cannot be read from storage.',
  ),
  orphanDependents: query('orphanDependents', 'boolean', 'Deprecated; use propagationPolicy.'),
  propagationPolicy: query('propagationPolicy', 'string', 'Orphan, Background or Foreground garbage collection.'),
  name: (kindName: string): Parameter => ({
    name: 'name',
    in: 'path',
    description: `name of the ${kindName}`,
    required: true,
    schema: { type: 'string', uniqueItems: true },
  }),
  namespace: {
    name: 'namespace',
    in: 'path',
    description: 'object name and auth scope, such as for teams and projects',
    required: true,
    schema: { type: 'string', uniqueItems: true },
  } satisfies Parameter,
};

const LIST_PARAMS = [
  P.allowWatchBookmarks,
  P.continue,
  P.fieldSelector,
  P.labelSelector,
  P.limit,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
  P.watch,
];
const WRITE_PARAMS = [P.dryRun, P.fieldManager, P.fieldValidation];
const DELETE_PARAMS = [P.dryRun, P.gracePeriodSeconds, P.ignoreStoreReadError, P.orphanDependents, P.propagationPolicy];
const DELETE_COLLECTION_PARAMS = [
  P.continue,
  P.dryRun,
  P.fieldSelector,
  P.gracePeriodSeconds,
  P.ignoreStoreReadError,
  P.labelSelector,
  P.limit,
  P.orphanDependents,
  P.propagationPolicy,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
];

/** PATCH_CONTENT_TYPES are the patch bodies kevents applies. */
export const PATCH_CONTENT_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
] as const;

function content(types: readonly string[], schemaRef: string): Record<string, { schema: Schema }> {
  const out: Record<string, { schema: Schema }> = {};
  for (const t of types) out[t] = { schema: { $ref: `#/components/schemas/${schemaRef}` } };
  return out;
}

function response(description: string, schemaRef: string, types: readonly string[] = ['application/json']): Schema {
  return { description, content: content(types, schemaRef) };
}

const UNAUTHORIZED = { description: 'Unauthorized' };

/** Operation is an OpenAPI 3.0 operation object with kube-apiserver's extensions. */
export type Operation = Schema;

function operationIdStem(k: KnownKind): string {
  const pkg = PACKAGES[k.group] ?? k.group;
  const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
  return `${cap(pkg)}${cap(k.version)}`;
}

/** pathPrefix is the URL prefix of a group/version: `/api/v1` or `/apis/<group>/<version>`. */
export function pathPrefix(gv: GroupVersion): string {
  return gv.group === '' ? `/api/${gv.version}` : `/apis/${gv.group}/${gv.version}`;
}

function tag(gv: GroupVersion): string {
  return `${PACKAGES[gv.group] ?? gv.group}_${gv.version}`;
}

/** pathsOf is every path of a group/version with its operations, sorted by path. */
export function pathsOf(gv: GroupVersion): Record<string, Schema> {
  const paths: Record<string, Schema> = {};
  const prefix = pathPrefix(gv);
  const tags = [tag(gv)];
  for (const k of kindsOf(gv)) {
    const stem = operationIdStem(k);
    const scoped = k.namespaced ? `Namespaced${k.kind}` : k.kind;
    const gvk = gvkOf(k);
    const item = schemaName(k);
    const list = schemaName(k, 'List');
    const verbs = new Set(k.verbs);
    const op = (verb: string, action: string, description: string, rest: Schema): Operation => ({
      tags,
      description,
      operationId: `${verb}${stem}${scoped}`,
      ...rest,
      'x-kubernetes-action': action,
      'x-kubernetes-group-version-kind': gvk,
    });
    const listResponses = {
      '200': response('OK', list, ['application/json', 'application/json;stream=watch']),
      '401': UNAUTHORIZED,
    };
    const collection: Schema = {};
    if (verbs.has('list')) {
      collection.get = op('list', 'list', `list or watch objects of kind ${k.kind}`, {
        parameters: LIST_PARAMS,
        responses: listResponses,
      });
    }
    if (verbs.has('create')) {
      collection.post = op('create', 'post', `create ${article(k.kind)}`, {
        parameters: WRITE_PARAMS,
        requestBody: { content: content(['*/*'], item), required: true },
        responses: {
          '200': response('OK', item),
          '201': response('Created', item),
          '202': response('Accepted', item),
          '401': UNAUTHORIZED,
        },
      });
    }
    if (verbs.has('deletecollection')) {
      collection.delete = {
        ...op('delete', 'deletecollection', `delete collection of ${k.kind}`, {
          parameters: DELETE_COLLECTION_PARAMS,
          requestBody: { content: content(['*/*'], `${META}.DeleteOptions`) },
          responses: { '200': response('OK', `${META}.Status`), '401': UNAUTHORIZED },
        }),
        operationId: `delete${stem}Collection${scoped}`,
      };
    }
    const collectionPath = k.namespaced ? `${prefix}/namespaces/{namespace}/${k.resource}` : `${prefix}/${k.resource}`;
    const scopeParams = k.namespaced ? [P.namespace] : [];
    if (Object.keys(collection).length > 0) paths[collectionPath] = { ...collection, parameters: [...scopeParams, P.pretty] };

    const single: Schema = {};
    const itemOk = { '200': response('OK', item), '401': UNAUTHORIZED };
    if (verbs.has('get')) {
      single.get = op('read', 'get', `read the specified ${k.kind}`, { responses: itemOk });
    }
    if (verbs.has('update')) {
      single.put = op('replace', 'put', `replace the specified ${k.kind}`, {
        parameters: WRITE_PARAMS,
        requestBody: { content: content(['*/*'], item), required: true },
        responses: { ...itemOk, '201': response('Created', item) },
      });
    }
    if (verbs.has('patch')) {
      single.patch = op('patch', 'patch', `partially update the specified ${k.kind}`, {
        parameters: [...WRITE_PARAMS, P.force],
        requestBody: { content: content(PATCH_CONTENT_TYPES, `${META}.Patch`), required: true },
        responses: { ...itemOk, '201': response('Created', item) },
      });
    }
    if (verbs.has('delete')) {
      single.delete = op('delete', 'delete', `delete ${article(k.kind)}`, {
        parameters: DELETE_PARAMS,
        requestBody: { content: content(['*/*'], `${META}.DeleteOptions`) },
        responses: {
          '200': response('OK', `${META}.Status`),
          '202': response('Accepted', `${META}.Status`),
          '401': UNAUTHORIZED,
        },
      });
    }
    if (Object.keys(single).length > 0) {
      paths[`${collectionPath}/{name}`] = { ...single, parameters: [P.name(k.kind), ...scopeParams, P.pretty] };
    }

    if (k.namespaced && verbs.has('list')) {
      paths[`${prefix}/${k.resource}`] = {
        get: {
          ...op('list', 'list', `list or watch objects of kind ${k.kind}`, { responses: listResponses }),
          operationId: `list${stem}${k.kind}ForAllNamespaces`,
        },
        parameters: [...LIST_PARAMS, P.pretty],
      };
    }
  }
  return Object.fromEntries(Object.entries(paths).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function article(kindName: string): string {
  return /^[AEIOU]/.test(kindName) ? `an ${kindName}` : `a ${kindName}`;
}

function collectRefs(node: unknown, into: Set<string>): void {
  if (Array.isArray(node)) {
    for (const v of node) collectRefs(v, into);
  } else if (node !== null && typeof node === 'object') {
    for (const [key, v] of Object.entries(node)) {
      if (key === '$ref' && typeof v === 'string') into.add(v.replace('#/components/schemas/', ''));
      else collectRefs(v, into);
    }
  }
}

/** reachableSchemas are the schemas `paths` reach: a document carries only those, as kube-apiserver's do. */
export function reachableSchemas(paths: Record<string, Schema>, all: Record<string, Schema>): Record<string, Schema> {
  const names = new Set<string>();
  collectRefs(paths, names);
  const done = new Set<string>();
  const pending = [...names];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (done.has(name)) continue;
    done.add(name);
    const found = new Set<string>();
    collectRefs(all[name], found);
    pending.push(...found);
  }
  const out: Record<string, Schema> = {};
  for (const name of [...done].sort()) {
    const schema = all[name];
    if (schema === undefined) throw new Error(`openapi: schema ${name} is referenced but not defined`);
    out[name] = schema;
  }
  return out;
}
