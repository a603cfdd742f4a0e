/**
 * The component schemas of the OpenAPI documents: the metav1 types, both Event APIs, and an outline
 * of each other kind kevents lists. Generated data, apart from the code that serves it
 * (`openapi.ts`), so a change to a schema is read without the serving around it.
 */
import { kindsOf, servedGroupVersions } from './discovery.js';
import type { KnownKind } from './discovery.js';

/** Schema is an OpenAPI 3.0 schema object, kept open because its vocabulary is large. */
export type Schema = Record<string, unknown>;

/** GroupVersionKindRef is the value shape of the `x-kubernetes-group-version-kind` extension. */
export interface GroupVersionKindRef {
  group: string;
  kind: string;
  version: string;
}

/** META is the schema name prefix of the metav1 types. */
export const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';

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

/** PACKAGES names the Go package of each API group's types in schema names. */
export const PACKAGES: Record<string, string> = { '': 'core', apps: 'apps', batch: 'batch', 'events.k8s.io': 'events' };

/** schemaName is the OpenAPI schema name of a kind, e.g. `io.k8s.api.events.v1.Event`. */
export function schemaName(k: Pick<KnownKind, 'group' | 'version' | 'kind'>, suffix = ''): string {
  const pkg = PACKAGES[k.group] ?? k.group.split('.')[0] ?? k.group;
  return `io.k8s.api.${pkg}.${k.version}.${k.kind}${suffix}`;
}

/** gvkOf is a kind's `x-kubernetes-group-version-kind` value (`suffix`: `List`). */
export function gvkOf(k: KnownKind, suffix = ''): GroupVersionKindRef {
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

/** allSchemas is every component schema by name: metav1, both Event APIs, and each listed kind and its list. */
export function allSchemas(): Record<string, Schema> {
  const schemas: Record<string, Schema> = { ...metaSchemas(), ...eventSchemas() };
  for (const gv of servedGroupVersions()) {
    for (const k of kindsOf(gv)) {
      schemas[schemaName(k)] ??= outlineSchema(k);
      schemas[schemaName(k, 'List')] = listSchema(k);
    }
  }
  return schemas;
}
