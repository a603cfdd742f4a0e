/**
 * OpenAPI v3 documents of the served group/versions, as kube-apiserver publishes them under
 * `/openapi/v3`. kubectl reads them for `explain` and, for `create -f` with validation on, to
 * learn from the PATCH operation of a kind whether the server validates fields itself.
 */
import { createHash } from 'node:crypto';
import { kindsOf, servedGroupVersions } from './discovery.js';
import type { GroupVersion, KnownKind } from './discovery.js';

/** specHash is how kube-openapi names a document version: upper-case hex sha512 of its bytes. */
export function specHash(json: string): string {
  return createHash('sha512').update(json).digest('hex').toUpperCase();
}

/** Schema is an OpenAPI 3.0 schema object, kept open because its vocabulary is large. */
export type Schema = Record<string, unknown>;

/** GroupVersionKindRef is the value shape of the `x-kubernetes-group-version-kind` extension. */
export interface GroupVersionKindRef {
  group: string;
  kind: string;
  version: string;
}

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';

function ref(name: string, description?: string): Schema {
  const s: Schema = { allOf: [{ $ref: `#/components/schemas/${name}` }] };
  if (description !== undefined) s.description = description;
  return s;
}

function str(description: string): Schema {
  return { description, type: 'string' };
}

function int(format: 'int32' | 'int64', description: string): Schema {
  return { description, type: 'integer', format };
}

function bool(description: string): Schema {
  return { description, type: 'boolean' };
}

function arrayOf(items: Schema, description: string): Schema {
  return { description, type: 'array', items };
}

function object(description: string, properties: Record<string, Schema>, required: string[] = []): Schema {
  const s: Schema = { description, type: 'object', properties };
  if (required.length > 0) s.required = required;
  return s;
}

const API_VERSION = str('The versioned schema of this representation of an object.');
const KIND = str('The REST resource this object represents, in CamelCase.');

function withGvk(schema: Schema, gvks: GroupVersionKindRef[]): Schema {
  return { ...schema, 'x-kubernetes-group-version-kind': gvks };
}

function metaSchemas(): Record<string, Schema> {
  const time = (d: string): Schema => ref(`${META}.Time`, d);
  return {
    [`${META}.Time`]: { description: 'A timestamp in RFC 3339 form, to the second.', type: 'string', format: 'date-time' },
    [`${META}.MicroTime`]: {
      description: 'A timestamp in RFC 3339 form with microseconds.',
      type: 'string',
      format: 'date-time',
    },
    [`${META}.FieldsV1`]: { description: 'The set of fields a manager owns, in the FieldsV1 encoding.', type: 'object' },
    [`${META}.ManagedFieldsEntry`]: object('A workflow and the fields it manages.', {
      apiVersion: str('The version of the resource this entry applies to.'),
      fieldsType: str('The format of fieldsV1; only "FieldsV1".'),
      fieldsV1: ref(`${META}.FieldsV1`, 'The fields this entry owns.'),
      manager: str('The workflow managing these fields.'),
      operation: str('The kind of operation that wrote this entry: Apply or Update.'),
      subresource: str('The subresource used to update the object, if any.'),
      time: time('When these fields were last changed.'),
    }),
    [`${META}.OwnerReference`]: {
      ...object(
        'An object that owns this one.',
        {
          apiVersion: str('API version of the owner.'),
          blockOwnerDeletion: bool('Whether the owner cannot be deleted before this object is.'),
          controller: bool('Whether the owner is the managing controller.'),
          kind: str('Kind of the owner.'),
          name: str('Name of the owner.'),
          uid: str('UID of the owner.'),
        },
        ['apiVersion', 'kind', 'name', 'uid'],
      ),
      'x-kubernetes-map-type': 'atomic',
    },
    [`${META}.ObjectMeta`]: object('Metadata that every persisted resource has.', {
      annotations: { description: 'Unstructured key/value data.', type: 'object', additionalProperties: { type: 'string', default: '' } },
      creationTimestamp: time('When the server created the object.'),
      deletionGracePeriodSeconds: int('int64', 'Seconds allowed for graceful termination.'),
      deletionTimestamp: time('When the object will be deleted.'),
      finalizers: {
        ...arrayOf({ type: 'string', default: '' }, 'Conditions that must clear before the object is deleted.'),
        'x-kubernetes-list-type': 'set',
        'x-kubernetes-patch-strategy': 'merge',
      },
      generateName: str('Prefix from which the server generates a unique name when name is empty.'),
      generation: int('int64', 'Sequence number of a specific generation of the desired state.'),
      labels: { description: 'Key/value pairs for organising and selecting objects.', type: 'object', additionalProperties: { type: 'string', default: '' } },
      managedFields: arrayOf(ref(`${META}.ManagedFieldsEntry`), 'Field ownership, written by the server.'),
      name: str('Name, unique within a namespace.'),
      namespace: str('Namespace of the object; empty for cluster-scoped objects.'),
      ownerReferences: {
        ...arrayOf(ref(`${META}.OwnerReference`), 'Objects this one depends on.'),
        'x-kubernetes-list-map-keys': ['uid'],
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-patch-merge-key': 'uid',
        'x-kubernetes-patch-strategy': 'merge',
      },
      resourceVersion: str('Opaque version of the object, for concurrency control and watches.'),
      selfLink: str('Deprecated and unset.'),
      uid: str('Unique identifier the server assigns on creation.'),
    }),
    [`${META}.ListMeta`]: object('Metadata of a list.', {
      continue: str('Token for the next page of a chunked list.'),
      remainingItemCount: int('int64', 'Number of items after this page, when known.'),
      resourceVersion: str('Version of the list, to watch from.'),
      selfLink: str('Deprecated and unset.'),
    }),
    [`${META}.StatusCause`]: object('One cause of an error.', {
      field: str('The field the cause refers to, as a JSON path.'),
      message: str('A human-readable description of the cause.'),
      reason: str('A machine-readable description of the cause.'),
    }),
    [`${META}.StatusDetails`]: object('Details of an error.', {
      causes: { ...arrayOf(ref(`${META}.StatusCause`), 'The causes of the error.'), 'x-kubernetes-list-type': 'atomic' },
      group: str('Group of the resource the error concerns.'),
      kind: str('Kind of the resource the error concerns.'),
      name: str('Name of the resource the error concerns.'),
      retryAfterSeconds: int('int32', 'Seconds to wait before retrying.'),
      uid: str('UID of the resource the error concerns.'),
    }),
    [`${META}.Status`]: withGvk(
      object('The result of an operation that returns no object, and every error.', {
        apiVersion: API_VERSION,
        code: int('int32', 'HTTP status code.'),
        details: ref(`${META}.StatusDetails`, 'Details of the error, when any.'),
        kind: KIND,
        message: str('A human-readable description of the status.'),
        metadata: { ...ref(`${META}.ListMeta`, 'Standard list metadata.'), default: {} },
        reason: str('A machine-readable reason for a Failure status.'),
        status: str('Success or Failure.'),
      }),
      [{ group: '', kind: 'Status', version: 'v1' }],
    ),
    [`${META}.Preconditions`]: object('Conditions that must hold before a delete.', {
      resourceVersion: str('Required resourceVersion of the object.'),
      uid: str('Required UID of the object.'),
    }),
    [`${META}.DeleteOptions`]: withGvk(
      object('Options of a delete request.', {
        apiVersion: API_VERSION,
        dryRun: { ...arrayOf({ type: 'string', default: '' }, 'All: process the request without persisting it.'), 'x-kubernetes-list-type': 'atomic' },
        gracePeriodSeconds: int('int64', 'Seconds before the object is deleted.'),
        ignoreStoreReadErrorWithClusterBreakingPotential: bool('Delete objects that cannot be read from storage.'),
        kind: KIND,
        orphanDependents: bool('Deprecated; use propagationPolicy.'),
        preconditions: ref(`${META}.Preconditions`, 'Conditions that must hold before the delete.'),
        propagationPolicy: str('Orphan, Background or Foreground garbage collection.'),
      }),
      [
        { group: '', kind: 'DeleteOptions', version: 'v1' },
        { group: 'apps', kind: 'DeleteOptions', version: 'v1' },
        { group: 'batch', kind: 'DeleteOptions', version: 'v1' },
        { group: 'events.k8s.io', kind: 'DeleteOptions', version: 'v1' },
      ],
    ),
    [`${META}.Patch`]: { description: 'A patch body: a JSON patch, a merge patch or a strategic merge patch.', type: 'object' },
    [`${META}.WatchEvent`]: withGvk(
      object(
        'One frame of a watch stream.',
        {
          object: ref('io.k8s.apimachinery.pkg.runtime.RawExtension', 'The object: the resource for ADDED, MODIFIED and DELETED, a Status for ERROR.'),
          type: { ...str('ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.'), default: '' },
        },
        ['type', 'object'],
      ),
      [
        { group: '', kind: 'WatchEvent', version: 'v1' },
        { group: 'apps', kind: 'WatchEvent', version: 'v1' },
        { group: 'batch', kind: 'WatchEvent', version: 'v1' },
        { group: 'events.k8s.io', kind: 'WatchEvent', version: 'v1' },
      ],
    ),
    'io.k8s.apimachinery.pkg.runtime.RawExtension': { description: 'An embedded object of any kind.', type: 'object' },
  };
}

function eventSchemas(): Record<string, Schema> {
  const CORE = 'io.k8s.api.core.v1';
  const EVENTS = 'io.k8s.api.events.v1';
  const meta = { ...ref(`${META}.ObjectMeta`, 'Standard object metadata.'), default: {} };
  return {
    [`${CORE}.ObjectReference`]: {
      ...object('A reference to an object.', {
        apiVersion: str('API version of the referent.'),
        fieldPath: str('A field within the referent, e.g. spec.containers{name}.'),
        kind: str('Kind of the referent.'),
        name: str('Name of the referent.'),
        namespace: str('Namespace of the referent.'),
        resourceVersion: str('resourceVersion of the referent the reference was made against.'),
        uid: str('UID of the referent.'),
      }),
      'x-kubernetes-map-type': 'atomic',
    },
    [`${CORE}.EventSource`]: object('The component that reported an event.', {
      component: str('The reporting component.'),
      host: str('The node the event was generated on.'),
    }),
    [`${CORE}.EventSeries`]: object('The series of an event that keeps recurring.', {
      count: int('int32', 'Occurrences in the series up to the last heartbeat.'),
      lastObservedTime: ref(`${META}.MicroTime`, 'Time of the last occurrence observed.'),
    }),
    [`${CORE}.Event`]: withGvk(
      object(
        'A report of something that happened in the cluster.',
        {
          action: str('What action was taken or failed regarding the involved object.'),
          apiVersion: API_VERSION,
          count: int('int32', 'How many times this event has occurred.'),
          eventTime: ref(`${META}.MicroTime`, 'When this event was first observed.'),
          firstTimestamp: ref(`${META}.Time`, 'When this event was first recorded.'),
          involvedObject: { ...ref(`${CORE}.ObjectReference`, 'The object this event is about.'), default: {} },
          kind: KIND,
          lastTimestamp: ref(`${META}.Time`, 'When this event was most recently recorded.'),
          message: str('A human-readable description of the status of this operation.'),
          metadata: meta,
          reason: str('A short, machine-understandable reason for the transition into the object\'s current status.'),
          related: ref(`${CORE}.ObjectReference`, 'A secondary object, if any.'),
          reportingComponent: { ...str('Name of the controller that emitted this event.'), default: '' },
          reportingInstance: { ...str('ID of the controller instance.'), default: '' },
          series: ref(`${CORE}.EventSeries`, 'Data about the series this event belongs to, if any.'),
          source: { ...ref(`${CORE}.EventSource`, 'The component reporting this event.'), default: {} },
          type: str('Type of this event (Normal, Warning).'),
        },
        ['metadata', 'involvedObject'],
      ),
      [{ group: '', kind: 'Event', version: 'v1' }],
    ),
    [`${EVENTS}.EventSeries`]: object(
      'The series of an event that keeps recurring.',
      {
        count: { ...int('int32', 'Occurrences in the series up to the last heartbeat.'), default: 0 },
        lastObservedTime: { ...ref(`${META}.MicroTime`, 'Time of the last occurrence observed.'), default: {} },
      },
      ['count', 'lastObservedTime'],
    ),
    [`${EVENTS}.Event`]: withGvk(
      object(
        'A report of something that happened in the cluster.',
        {
          action: str('What action was taken or failed regarding the regarding object.'),
          apiVersion: API_VERSION,
          deprecatedCount: int('int32', 'The core/v1 count, kept for compatibility.'),
          deprecatedFirstTimestamp: ref(`${META}.Time`, 'The core/v1 firstTimestamp, kept for compatibility.'),
          deprecatedLastTimestamp: ref(`${META}.Time`, 'The core/v1 lastTimestamp, kept for compatibility.'),
          deprecatedSource: { ...ref(`${CORE}.EventSource`, 'The core/v1 source, kept for compatibility.'), default: {} },
          eventTime: { ...ref(`${META}.MicroTime`, 'When this event was first observed.'), default: {} },
          kind: KIND,
          metadata: meta,
          note: str('A human-readable description of the status of this operation.'),
          reason: str('Why the action was taken.'),
          regarding: { ...ref(`${CORE}.ObjectReference`, 'The object this event is about.'), default: {} },
          related: ref(`${CORE}.ObjectReference`, 'A secondary object, if any.'),
          reportingController: str('Name of the controller that emitted this event.'),
          reportingInstance: str('ID of the controller instance.'),
          series: ref(`${EVENTS}.EventSeries`, 'Data about the series this event belongs to, if any.'),
          type: str('Type of this event (Normal, Warning).'),
        },
        ['eventTime'],
      ),
      [{ group: 'events.k8s.io', kind: 'Event', version: 'v1' }],
    ),
  };
}

const PACKAGES: Record<string, string> = { '': 'core', apps: 'apps', batch: 'batch', 'events.k8s.io': 'events' };

/** schemaName is the OpenAPI schema name of a kind, e.g. `io.k8s.api.events.v1.Event`. */
export function schemaName(k: Pick<KnownKind, 'group' | 'version' | 'kind'>, suffix = ''): string {
  const pkg = PACKAGES[k.group] ?? k.group.split('.')[0] ?? k.group;
  return `io.k8s.api.${pkg}.${k.version}.${k.kind}${suffix}`;
}

function gvkOf(k: KnownKind, suffix = ''): GroupVersionKindRef {
  return { group: k.group, kind: k.kind + suffix, version: k.version };
}

// Kinds kevents lists but does not store get an honest outline: their contents never
// come from kevents, so their spec and status are left open.
function outlineSchema(k: KnownKind): Schema {
  const open = (d: string): Schema => ({ description: d, type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
  return withGvk(
    object(`${k.kind}. kevents lists this kind so that clients can name it; it stores no ${k.resource}.`, {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { ...ref(`${META}.ObjectMeta`, 'Standard object metadata.'), default: {} },
      spec: open(`Desired state of the ${k.kind}.`),
      status: open(`Observed state of the ${k.kind}.`),
    }),
    [gvkOf(k)],
  );
}

function listSchema(k: KnownKind): Schema {
  return withGvk(
    object(
      `A list of ${k.kind} objects.`,
      {
        apiVersion: API_VERSION,
        items: arrayOf({ ...ref(schemaName(k)), default: {} }, `The ${k.kind} objects.`),
        kind: KIND,
        metadata: { ...ref(`${META}.ListMeta`, 'Standard list metadata.'), default: {} },
      },
      ['items'],
    ),
    [gvkOf(k, 'List')],
  );
}

function allSchemas(): Record<string, Schema> {
  const schemas: Record<string, Schema> = { ...metaSchemas(), ...eventSchemas() };
  for (const gv of servedGroupVersions()) {
    for (const k of kindsOf(gv)) {
      schemas[schemaName(k)] ??= outlineSchema(k);
      schemas[schemaName(k, 'List')] = listSchema(k);
    }
  }
  return schemas;
}

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

function pathPrefix(gv: GroupVersion): string {
  return gv.group === '' ? `/api/${gv.version}` : `/apis/${gv.group}/${gv.version}`;
}

function tag(gv: GroupVersion): string {
  return `${PACKAGES[gv.group] ?? gv.group}_${gv.version}`;
}

function pathsOf(gv: GroupVersion): Record<string, Schema> {
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

// A document carries only the schemas its operations reach, as kube-apiserver's do.
function reachableSchemas(paths: Record<string, Schema>, all: Record<string, Schema>): Record<string, Schema> {
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

/** OpenApiV3Document is an OpenAPI 3.0 document of one group/version. */
export interface OpenApiV3Document {
  openapi: '3.0.0';
  info: { title: string; version: string };
  paths: Record<string, Schema>;
  components: { schemas: Record<string, Schema> };
}

/** OpenApiV3Spec is one served document with its exact bytes and their hash. */
export interface OpenApiV3Spec {
  /** path is the key of the `/openapi/v3` index: `api/v1`, `apis/events.k8s.io/v1`. */
  path: string;
  document: OpenApiV3Document;
  /** json is the body to send; the hash names these exact bytes. */
  json: string;
  hash: string;
  /** serverRelativeURL is where the index points clients: `/openapi/v3/<path>?hash=<hash>`. */
  serverRelativeURL: string;
}

/** openApiV3Path is the index key of a group/version: `api/v1` or `apis/<group>/<version>`. */
export function openApiV3Path(gv: GroupVersion): string {
  return pathPrefix(gv).slice(1);
}

/**
 * buildOpenApiV3Specs builds every served OpenAPI v3 document afresh; servers use the
 * memoized openApiV3Specs.
 */
export function buildOpenApiV3Specs(): Map<string, OpenApiV3Spec> {
  const all = allSchemas();
  const specs = new Map<string, OpenApiV3Spec>();
  for (const gv of servedGroupVersions()) {
    const paths = pathsOf(gv);
    const document: OpenApiV3Document = {
      openapi: '3.0.0',
      info: { title: 'Kubernetes', version: 'unversioned' },
      paths,
      components: { schemas: reachableSchemas(paths, all) },
    };
    const path = openApiV3Path(gv);
    const json = JSON.stringify(document);
    const hash = specHash(json);
    specs.set(path, { path, document, json, hash, serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` });
  }
  return specs;
}

let cached: Map<string, OpenApiV3Spec> | undefined;

/**
 * openApiV3Specs returns every served OpenAPI v3 document by its index path. The documents
 * are static, so they are built once.
 */
export function openApiV3Specs(): ReadonlyMap<string, OpenApiV3Spec> {
  cached ??= buildOpenApiV3Specs();
  return cached;
}

/** openApiV3Spec returns the document served at `/openapi/v3/<path>`, or undefined. */
export function openApiV3Spec(path: string): OpenApiV3Spec | undefined {
  return openApiV3Specs().get(path.replace(/^\/+/, '').replace(/^openapi\/v3\//, ''));
}

/** OpenApiV3Index is the body of `GET /openapi/v3`. */
export interface OpenApiV3Index {
  paths: Record<string, { serverRelativeURL: string }>;
}

/** openApiV3Index returns the body of `GET /openapi/v3`, keys sorted as Go encodes a map. */
export function openApiV3Index(): OpenApiV3Index {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const key of [...openApiV3Specs().keys()].sort()) {
    const spec = openApiV3Specs().get(key);
    if (spec !== undefined) paths[key] = { serverRelativeURL: spec.serverRelativeURL };
  }
  return { paths };
}

// Protocol buffer wire encoding, just enough for the gnostic OpenAPI v2 messages below.
class ProtoWriter {
  private readonly parts: Buffer[] = [];

  private varint(n: number): void {
    const bytes: number[] = [];
    let v = n;
    while (v > 0x7f) {
      bytes.push((v & 0x7f) | 0x80);
      v = Math.floor(v / 128);
    }
    bytes.push(v);
    this.parts.push(Buffer.from(bytes));
  }

  string(field: number, value: string | undefined): this {
    if (value === undefined || value === '') return this;
    return this.bytes(field, Buffer.from(value, 'utf8'));
  }

  bool(field: number, value: boolean | undefined): this {
    if (value !== true) return this;
    this.varint((field << 3) | 0);
    this.varint(1);
    return this;
  }

  bytes(field: number, value: Buffer): this {
    this.varint((field << 3) | 2);
    this.varint(value.length);
    this.parts.push(value);
    return this;
  }

  message(field: number, build: (w: ProtoWriter) => void): this {
    const inner = new ProtoWriter();
    build(inner);
    return this.bytes(field, inner.finish());
  }

  finish(): Buffer {
    return Buffer.concat(this.parts);
  }
}

// gnostic openapi_v2 field numbers (github.com/google/gnostic-models/openapiv2/OpenAPIv2.proto).
const PB = {
  document: { swagger: 1, info: 2, paths: 8 },
  info: { title: 1, version: 2 },
  paths: { path: 2 },
  namedPathItem: { name: 1, value: 2 },
  pathItem: { parameters: 9 },
  pathItemOperation: { get: 2, put: 3, post: 4, delete: 5, patch: 8 } as Record<string, number>,
  operation: { tags: 1, description: 3, operationId: 5, produces: 6, consumes: 7, parameters: 8, responses: 9, vendorExtension: 13 },
  parametersItem: { parameter: 1 },
  parameter: { nonBody: 2 },
  nonBody: { query: 3, path: 4 },
  query: { required: 1, in: 2, description: 3, name: 4, type: 6, uniqueItems: 20 },
  path: { required: 1, in: 2, description: 3, name: 4, type: 5, uniqueItems: 19 },
  responses: { responseCode: 1 },
  namedResponseValue: { name: 1, value: 2 },
  responseValue: { response: 1 },
  response: { description: 1 },
  namedAny: { name: 1, value: 2 },
  any: { yaml: 2 },
};

// Writes one ParametersItem (at `field` of its parent) holding a non-body parameter.
function writeParameter(w: ProtoWriter, field: number, p: Parameter): void {
  const f = p.in === 'path' ? PB.path : PB.query;
  const type = typeof p.schema.type === 'string' ? p.schema.type : undefined;
  w.message(field, (item) =>
    item.message(PB.parametersItem.parameter, (param) =>
      param.message(PB.parameter.nonBody, (nb) =>
        nb.message(p.in === 'path' ? PB.nonBody.path : PB.nonBody.query, (sub) =>
          sub
            .bool(f.required, p.required)
            .string(f.in, p.in)
            .string(f.description, p.description)
            .string(f.name, p.name)
            .string(f.type, type)
            .bool(f.uniqueItems, p.schema.uniqueItems === true),
        ),
      ),
    ),
  );
}

function yamlOf(value: unknown): string {
  if (typeof value === 'string') return `${value}\n`;
  const entries = Object.entries(value as Record<string, unknown>);
  return entries.map(([k, v]) => `${k}: ${JSON.stringify(v)}\n`).join('');
}

function writeOperation(w: ProtoWriter, op: Schema): void {
  const o = PB.operation;
  for (const t of (op.tags ?? []) as string[]) w.string(o.tags, t);
  w.string(o.description, op.description as string | undefined);
  w.string(o.operationId, op.operationId as string | undefined);
  const responses = (op.responses ?? {}) as Record<string, { description: string; content?: Record<string, unknown> }>;
  const produces = new Set(Object.values(responses).flatMap((r) => Object.keys(r.content ?? {})));
  for (const t of produces) w.string(o.produces, t);
  const body = op.requestBody as { content: Record<string, unknown> } | undefined;
  for (const t of Object.keys(body?.content ?? {})) w.string(o.consumes, t);
  for (const p of (op.parameters ?? []) as Parameter[]) writeParameter(w, o.parameters, p);
  w.message(o.responses, (rs) => {
    for (const [code, r] of Object.entries(responses)) {
      rs.message(PB.responses.responseCode, (nr) =>
        nr
          .string(PB.namedResponseValue.name, code)
          .message(PB.namedResponseValue.value, (rv) =>
            rv.message(PB.responseValue.response, (resp) => resp.string(PB.response.description, r.description)),
          ),
      );
    }
  });
  for (const name of ['x-kubernetes-action', 'x-kubernetes-group-version-kind']) {
    if (op[name] === undefined) continue;
    w.message(o.vendorExtension, (na) =>
      na.string(PB.namedAny.name, name).message(PB.namedAny.value, (a) => a.string(PB.any.yaml, yamlOf(op[name]))),
    );
  }
}

/**
 * openApiV2Protobuf returns `GET /openapi/v2` in the protobuf form kubectl 1.27 and 1.28 ask
 * for (`application/com.github.proto-openapi.spec.v2.v1.0+protobuf`) before `create -f`.
 * It carries the paths and operations of every served group/version, with their query and
 * path parameters and extensions, which is what those clients read to decide that the server
 * validates fields; schema definitions and body parameters are left out (the OpenAPI v3
 * documents carry them, and those kubectls read v3 for `explain`).
 */
export function openApiV2Protobuf(): Buffer {
  cachedV2 ??= buildOpenApiV2Protobuf();
  return cachedV2;
}

let cachedV2: Buffer | undefined;

/** OPENAPI_V2_PROTOBUF_CONTENT_TYPE is the Content-Type kube-apiserver answers `/openapi/v2` protobuf with. */
export const OPENAPI_V2_PROTOBUF_CONTENT_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

function buildOpenApiV2Protobuf(): Buffer {
  const paths: Array<[string, Schema]> = [];
  for (const spec of openApiV3Specs().values()) paths.push(...Object.entries(spec.document.paths));
  paths.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const w = new ProtoWriter();
  w.string(PB.document.swagger, '2.0');
  w.message(PB.document.info, (i) => i.string(PB.info.title, 'Kubernetes').string(PB.info.version, 'unversioned'));
  w.message(PB.document.paths, (ps) => {
    for (const [name, item] of paths) {
      ps.message(PB.paths.path, (np) =>
        np.string(PB.namedPathItem.name, name).message(PB.namedPathItem.value, (pi) => {
          for (const method of ['get', 'put', 'post', 'delete', 'patch']) {
            const op = item[method] as Schema | undefined;
            const field = PB.pathItemOperation[method];
            if (op !== undefined && field !== undefined) pi.message(field, (ow) => writeOperation(ow, op));
          }
          for (const p of (item.parameters ?? []) as Parameter[]) writeParameter(pi, PB.pathItem.parameters, p);
        }),
      );
    }
  });
  return w.finish();
}
