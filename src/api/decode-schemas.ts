/**
 * The Go structs an event body decodes into, one per API version (core/v1 Event, events.k8s.io/v1
 * and v1beta1 Event), and which of them a group/version/kind selects, with the scheme's errors for
 * the kinds it does not decode. Apart from the decoder because they are data: a field kube-apiserver
 * adds is a line here, and the decoder does not change.
 */
import { goQuote } from './label-selector.js';

/** Schema is the Go type of a field: its kind, and the Go type name errors quote. */
export type Schema =
  | { k: 'string'; go: string }
  | { k: 'int'; go: 'int32' | 'int64' }
  | { k: 'bool' }
  | { k: 'time' }
  | { k: 'microtime' }
  | { k: 'map' }
  | { k: 'slice'; go: string; elem: Schema }
  | { k: 'struct'; s: StructSchema }
  | { k: 'ptr'; elem: Schema }
  | { k: 'raw' };

/** StructSchema is a Go struct: its name in error contexts, its Go type name, and its fields by JSON name. */
export interface StructSchema {
  name: string;
  go: string;
  fields: Map<string, Schema>;
}

const S = (go = 'string'): Schema => ({ k: 'string', go });
const INT32: Schema = { k: 'int', go: 'int32' };
const INT64: Schema = { k: 'int', go: 'int64' };
const TIME: Schema = { k: 'time' };
const MICRO: Schema = { k: 'microtime' };
const struct = (name: string, go: string, fields: [string, Schema][]): Schema => ({
  k: 'struct',
  s: { name, go, fields: new Map(fields) },
});
const ptr = (elem: Schema): Schema => ({ k: 'ptr', elem });

const objectReference = struct('ObjectReference', 'v1.ObjectReference', [
  ['kind', S()],
  ['namespace', S()],
  ['name', S()],
  ['uid', S('types.UID')],
  ['apiVersion', S()],
  ['resourceVersion', S()],
  ['fieldPath', S()],
]);
const eventSource = struct('EventSource', 'v1.EventSource', [
  ['component', S()],
  ['host', S()],
]);
const ownerReference = struct('OwnerReference', 'v1.OwnerReference', [
  ['apiVersion', S()],
  ['kind', S()],
  ['name', S()],
  ['uid', S('types.UID')],
  ['controller', ptr({ k: 'bool' })],
  ['blockOwnerDeletion', ptr({ k: 'bool' })],
]);
const managedFieldsEntry = struct('ManagedFieldsEntry', 'v1.ManagedFieldsEntry', [
  ['manager', S()],
  ['operation', S('v1.ManagedFieldsOperationType')],
  ['apiVersion', S()],
  ['time', ptr(TIME)],
  ['fieldsType', S()],
  ['fieldsV1', { k: 'raw' }],
  ['subresource', S()],
]);
const objectMeta = struct('ObjectMeta', 'v1.ObjectMeta', [
  ['name', S()],
  ['generateName', S()],
  ['namespace', S()],
  ['selfLink', S()],
  ['uid', S('types.UID')],
  ['resourceVersion', S()],
  ['generation', INT64],
  ['creationTimestamp', TIME],
  ['deletionTimestamp', ptr(TIME)],
  ['deletionGracePeriodSeconds', ptr(INT64)],
  ['labels', { k: 'map' }],
  ['annotations', { k: 'map' }],
  ['ownerReferences', { k: 'slice', go: '[]v1.OwnerReference', elem: ownerReference }],
  ['finalizers', { k: 'slice', go: '[]string', elem: S() }],
  ['managedFields', { k: 'slice', go: '[]v1.ManagedFieldsEntry', elem: managedFieldsEntry }],
]);

const coreEventSchema = struct('Event', 'v1.Event', [
  ['kind', S()],
  ['apiVersion', S()],
  ['metadata', objectMeta],
  ['involvedObject', objectReference],
  ['reason', S()],
  ['message', S()],
  ['source', eventSource],
  ['firstTimestamp', TIME],
  ['lastTimestamp', TIME],
  ['count', INT32],
  ['type', S()],
  ['eventTime', MICRO],
  [
    'series',
    ptr(
      struct('EventSeries', 'v1.EventSeries', [
        ['count', INT32],
        ['lastObservedTime', MICRO],
      ]),
    ),
  ],
  ['action', S()],
  ['related', ptr(objectReference)],
  ['reportingComponent', S()],
  ['reportingInstance', S()],
]);

/** eventsEventSchema is events.k8s.io Event; v1beta1 has the same fields under another Go package name. */
const eventsEventSchema = (pkg: string): Schema =>
  struct('Event', `${pkg}.Event`, [
    ['kind', S()],
    ['apiVersion', S()],
    ['metadata', objectMeta],
    ['eventTime', MICRO],
    [
      'series',
      ptr(
        struct('EventSeries', `${pkg}.EventSeries`, [
          ['count', INT32],
          ['lastObservedTime', MICRO],
        ]),
      ),
    ],
    ['reportingController', S()],
    ['reportingInstance', S()],
    ['action', S()],
    ['reason', S()],
    ['regarding', objectReference],
    ['related', ptr(objectReference)],
    ['note', S()],
    ['type', S()],
    ['deprecatedSource', eventSource],
    ['deprecatedFirstTimestamp', TIME],
    ['deprecatedLastTimestamp', TIME],
    ['deprecatedCount', INT32],
  ]);


/** GroupVersionKind names a registered type, as apimachinery does. */
export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** gvString is a group/version as an apiVersion string. */
export const gvString = (g: { group: string; version: string }): string => (g.group === '' ? g.version : `${g.group}/${g.version}`);

/** SCHEME_NAME is how kube-apiserver's scheme names itself in "no kind is registered" errors. */
const SCHEME_NAME = 'pkg/api/legacyscheme/scheme.go:30';

/** CORE_V1_KINDS are kinds registered in core/v1 besides Event; posting one to events fails in conversion. */
const CORE_V1_KINDS = new Set([
  'Binding', 'ComponentStatus', 'ComponentStatusList', 'ConfigMap', 'ConfigMapList', 'Endpoints', 'EndpointsList',
  'EventList', 'LimitRange', 'LimitRangeList', 'List', 'Namespace', 'NamespaceList', 'Node', 'NodeList',
  'PersistentVolume', 'PersistentVolumeClaim', 'PersistentVolumeClaimList', 'PersistentVolumeList', 'Pod', 'PodList',
  'PodTemplate', 'PodTemplateList', 'RangeAllocation', 'ReplicationController', 'ReplicationControllerList',
  'ResourceQuota', 'ResourceQuotaList', 'Secret', 'SecretList', 'Service', 'ServiceAccount', 'ServiceAccountList',
  'ServiceList', 'DeleteOptions', 'ListOptions', 'GetOptions', 'CreateOptions', 'UpdateOptions', 'PatchOptions', 'WatchEvent',
]);
/** UNVERSIONED_KINDS are registered for every version (metav1's unversioned types). */
const UNVERSIONED_KINDS = new Set(['Status', 'APIVersions', 'APIGroupList', 'APIGroup', 'APIResourceList']);

/** schemaFor finds the Go type the apiserver would decode this group/version/kind into, or the error it would give. */
export function schemaFor(gvk: GroupVersionKind): Schema {
  const gv = gvString(gvk);
  if (gvk.kind === 'Event') {
    if (gv === 'v1') return coreEventSchema;
    if (gv === 'events.k8s.io/v1') return eventsEventSchema('v1');
    if (gv === 'events.k8s.io/v1beta1') return eventsEventSchema('v1beta1');
  }
  const registered =
    UNVERSIONED_KINDS.has(gvk.kind) ||
    (gv === 'v1' && CORE_V1_KINDS.has(gvk.kind)) ||
    ((gv === 'events.k8s.io/v1' || gv === 'events.k8s.io/v1beta1') && gvk.kind === 'EventList');
  if (registered) {
    const pkg = gvk.version === '' ? 'v1' : gvk.version;
    throw new Error(`converting (${UNVERSIONED_KINDS.has(gvk.kind) ? 'v1' : pkg}.${gvk.kind}) to (core.Event): unknown conversion`);
  }
  throw new Error(`no kind ${goQuote(gvk.kind)} is registered for version ${goQuote(gv)} in scheme ${goQuote(SCHEME_NAME)}`);
}

