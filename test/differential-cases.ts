import type { Case, Step } from './support/differential.js';

// The request sequences the differential suite sends to the real kube-apiserver and to
// `kevents serve`. `{ns}` is a namespace of the case's own (it exists on both servers), `{ns2}`
// a second one; `{rv:N}`/`{continue:N}`/`{itemRv:N}` take values from the answer of step N.

const CORE = '/api/v1';
const EV = '/apis/events.k8s.io/v1';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

/** coreEvent is a valid core/v1 event as an old-style recorder writes it. */
function coreEvent(name: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: '{ns}', labels: { app: 'web', tier: name.endsWith('2') ? 'db' : 'front' } },
    involvedObject: { kind: 'Pod', name: `pod-${name}`, namespace: '{ns}', apiVersion: 'v1', uid: `uid-${name}`, fieldPath: 'spec.containers{app}' },
    reason: 'BackOff',
    message: 'Back-off restarting failed container app',
    type: 'Warning',
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: '2026-01-01T00:00:00Z',
    lastTimestamp: '2026-01-01T00:05:00Z',
    count: 3,
    ...over,
  };
}

/** newEvent is a valid events.k8s.io/v1 event as client-go's new recorder writes it. */
function newEvent(name: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name, namespace: '{ns}', labels: { app: 'web' } },
    eventTime: '2026-01-01T00:00:00.123456Z',
    reportingController: 'default-scheduler',
    reportingInstance: 'default-scheduler-node-1',
    action: 'Scheduling',
    reason: 'FailedScheduling',
    type: 'Warning',
    note: '0/3 nodes are available: 3 Insufficient cpu.',
    regarding: { kind: 'Pod', name: `pod-${name}`, namespace: '{ns}', apiVersion: 'v1', uid: `uid-${name}` },
    ...over,
  };
}

function post(path: string, body: unknown, headers?: Record<string, string>): Step {
  return { method: 'POST', path, body, ...(headers ? { headers } : {}) };
}
function get(path: string, headers?: Record<string, string>): Step {
  return { method: 'GET', path, ...(headers ? { headers } : {}) };
}
function setup(step: Step): Step {
  return { ...step, compare: false };
}
const coreNs = `${CORE}/namespaces/{ns}/events`;
const evNs = `${EV}/namespaces/{ns}/events`;

const cases: Case[] = [];
function add(id: string, title: string, steps: Step[]): void {
  cases.push({ id, title, steps });
}

// --- create and read through both APIs -------------------------------------------------------
add('create-core', 'core/v1 create answers 201 with the stored event', [post(coreNs, coreEvent('e1')), get(`${coreNs}/e1`)]);
add('create-new', 'events.k8s.io/v1 create answers 201 with the stored event', [post(evNs, newEvent('e1')), get(`${evNs}/e1`)]);
add('cross-read-core-as-new', 'a core/v1 event read through events.k8s.io/v1', [setup(post(coreNs, coreEvent('e1'))), get(`${evNs}/e1`)]);
add('cross-read-new-as-core', 'an events.k8s.io/v1 event read through core/v1', [setup(post(evNs, newEvent('e1'))), get(`${coreNs}/e1`)]);
add('create-new-series', 'an events.k8s.io/v1 event with a series', [post(evNs, newEvent('e1', { series: { count: 4, lastObservedTime: '2026-01-01T00:10:00.000001Z' } })), get(`${coreNs}/e1`)]);
add('create-core-minimal', 'a core/v1 event with only a name and its object', [post(coreNs, { metadata: { name: 'e1' }, involvedObject: { kind: 'Pod', name: 'p', namespace: '{ns}' } }), get(`${evNs}/e1`)]);
add('create-core-no-kind', 'a body without kind and apiVersion (the Python client) takes them from the URL', [post(coreNs, { metadata: { name: 'e1' }, involvedObject: { name: 'p', namespace: '{ns}' }, reason: 'R' })]);
add('create-core-ns-from-url', 'an object without a namespace takes the URL namespace', [post(coreNs, { metadata: { name: 'e1' }, involvedObject: { name: 'p', namespace: '{ns}' } })]);
add('create-core-generate-name', 'generateName makes a name', [post(coreNs, { metadata: { generateName: 'web-' }, involvedObject: { name: 'p', namespace: '{ns}' } })]);
add('create-new-generate-name', 'generateName through events.k8s.io/v1', [post(evNs, newEvent('x', { metadata: { generateName: 'web-', namespace: '{ns}' } }))]);
add('create-core-any-type', 'core/v1 takes any type, Critical included', [post(coreNs, coreEvent('e1', { type: 'Critical' })), get(`${evNs}/e1`)]);
add('create-core-empty-type', 'core/v1 takes an empty type', [post(coreNs, coreEvent('e1', { type: '' }))]);
add('create-core-upper-name', 'core/v1 accepts a name that is not a DNS subdomain', [post(coreNs, coreEvent('Foo_Bar'))]);
add('create-duplicate', 'a second create of the same name is a conflict', [setup(post(coreNs, coreEvent('e1'))), post(coreNs, coreEvent('e1'))]);
add('create-duplicate-cross', 'a create through the other API of an existing name is a conflict', [setup(post(coreNs, coreEvent('e1'))), post(evNs, newEvent('e1'))]);
add('create-core-eventtime-kube-system', 'an event with eventTime and no object namespace in a namespace other than default', [post(coreNs, coreEvent('e1', { involvedObject: { kind: 'Node', name: 'n1' }, eventTime: '2026-01-01T00:00:00.000000Z', reportingComponent: 'c', reportingInstance: 'i', action: 'A' }))]);
add('create-core-cluster-object', 'a core event about a Node (no object namespace) in default', [{ method: 'POST', path: `${CORE}/namespaces/default/events`, body: { metadata: { name: '{ns}-node' }, involvedObject: { kind: 'Node', name: 'n1' }, reason: 'NodeReady' } }, { method: 'DELETE', path: `${CORE}/namespaces/default/events/{ns}-node` }]);
add('create-core-related', 'related and reportingComponent survive a cross-read', [post(coreNs, coreEvent('e1', { related: { kind: 'Node', name: 'n1', apiVersion: 'v1' }, reportingComponent: 'kubelet', reportingInstance: 'node-1' })), get(`${evNs}/e1`)]);
add('create-new-deprecated-read', 'events.k8s.io/v1 shows core counts as deprecated fields', [setup(post(coreNs, coreEvent('e1', { count: 12 }))), get(`${evNs}/e1`)]);
add('create-dry-run', 'dryRun=All validates and stores nothing', [post(`${coreNs}?dryRun=All`, coreEvent('e1')), get(`${coreNs}/e1`)]);
add('create-annotations', 'labels and annotations are kept', [post(coreNs, coreEvent('e1', { metadata: { name: 'e1', annotations: { a: 'b' }, labels: { x: 'y' } } })), get(`${evNs}/e1`)]);

// --- validation: every rule of upstream-events.md §1 --------------------------------------------
const bad = (id: string, title: string, path: string, body: unknown): void => add(`invalid-${id}`, title, [post(path, body)]);
bad('core-ns-mismatch', 'involvedObject.namespace other than the event namespace', coreNs, coreEvent('e1', { involvedObject: { kind: 'Pod', name: 'p', namespace: 'other' } }));
bad('core-no-object-ns-nondefault', 'no object namespace in a namespace other than default (no eventTime)', coreNs, coreEvent('e1', { involvedObject: { kind: 'Pod', name: 'p' } }));
bad('core-eventtime-no-controller', 'eventTime set through core/v1 requires reportingComponent, instance, action, reason', coreNs, { metadata: { name: 'e1' }, involvedObject: { kind: 'Pod', name: 'p', namespace: '{ns}' }, eventTime: '2026-01-01T00:00:00.000000Z' });
bad('core-eventtime-bad-controller', 'a reportingComponent that is not a qualified name', coreNs, coreEvent('e1', { eventTime: '2026-01-01T00:00:00.000000Z', reportingComponent: 'bad name!', reportingInstance: 'i', action: 'A' }));
bad('core-eventtime-long-instance', 'a reportingInstance over 128 bytes', coreNs, coreEvent('e1', { eventTime: '2026-01-01T00:00:00.000000Z', reportingComponent: 'c', reportingInstance: 'i'.repeat(129), action: 'A' }));
bad('core-eventtime-long-action', 'an action over 128 bytes', coreNs, coreEvent('e1', { eventTime: '2026-01-01T00:00:00.000000Z', reportingComponent: 'c', reportingInstance: 'i', action: 'a'.repeat(129) }));
bad('core-eventtime-long-reason', 'a reason over 128 bytes', coreNs, coreEvent('e1', { eventTime: '2026-01-01T00:00:00.000000Z', reportingComponent: 'c', reportingInstance: 'i', action: 'A', reason: 'r'.repeat(129) }));
bad('core-eventtime-long-message', 'a message over 1024 bytes', coreNs, coreEvent('e1', { eventTime: '2026-01-01T00:00:00.000000Z', reportingComponent: 'c', reportingInstance: 'i', action: 'A', message: 'm'.repeat(1025) }));
bad('core-eventtime-multibyte-message', 'a message of 400 three-byte characters is over 1024 bytes', coreNs, coreEvent('e1', { eventTime: '2026-01-01T00:00:00.000000Z', reportingComponent: 'c', reportingInstance: 'i', action: 'A', message: '한'.repeat(400) }));
bad('core-bad-namespace', 'a namespace that is not a DNS-1123 label', `${CORE}/namespaces/Bad_NS/events`, { metadata: { name: 'e1', namespace: 'Bad_NS' }, involvedObject: { name: 'p', namespace: 'Bad_NS' } });
bad('core-no-name', 'no name and no generateName', coreNs, { metadata: {}, involvedObject: { name: 'p', namespace: '{ns}' } });
bad('core-name-dot', 'the name "."', coreNs, { metadata: { name: '.' }, involvedObject: { name: 'p', namespace: '{ns}' } });
bad('core-name-dotdot', 'the name ".."', coreNs, { metadata: { name: '..' }, involvedObject: { name: 'p', namespace: '{ns}' } });
bad('core-name-percent', 'a name with %', coreNs, { metadata: { name: 'a%b' }, involvedObject: { name: 'p', namespace: '{ns}' } });
bad('body-ns-mismatch', 'an object namespace other than the URL namespace', coreNs, coreEvent('e1', { metadata: { name: 'e1', namespace: 'elsewhere' } }));
bad('new-ns-mismatch', 'events.k8s.io/v1: an object namespace other than the URL namespace', evNs, newEvent('e1', { metadata: { name: 'e1', namespace: 'elsewhere' } }));
bad('new-no-eventtime', 'events.k8s.io/v1 requires eventTime', evNs, newEvent('e1', { eventTime: undefined }));
bad('new-no-controller', 'events.k8s.io/v1 requires reportingController', evNs, newEvent('e1', { reportingController: '' }));
bad('new-no-instance', 'events.k8s.io/v1 requires reportingInstance', evNs, newEvent('e1', { reportingInstance: '' }));
bad('new-no-action', 'events.k8s.io/v1 requires action', evNs, newEvent('e1', { action: '' }));
bad('new-no-reason', 'events.k8s.io/v1 requires reason', evNs, newEvent('e1', { reason: '' }));
bad('new-type-critical', 'events.k8s.io/v1 refuses type Critical', evNs, newEvent('e1', { type: 'Critical' }));
bad('new-type-lowercase', 'events.k8s.io/v1 refuses type warning (case matters)', evNs, newEvent('e1', { type: 'warning' }));
bad('new-type-empty', 'events.k8s.io/v1 refuses an empty type', evNs, newEvent('e1', { type: '' }));
bad('new-series-count-1', 'a series of count 1', evNs, newEvent('e1', { series: { count: 1, lastObservedTime: '2026-01-01T00:00:01.000000Z' } }));
bad('new-series-no-time', 'a series without lastObservedTime', evNs, newEvent('e1', { series: { count: 2 } }));
bad('new-deprecated-count', 'deprecatedCount set through events.k8s.io/v1', evNs, newEvent('e1', { deprecatedCount: 3 }));
bad('new-deprecated-first', 'deprecatedFirstTimestamp set', evNs, newEvent('e1', { deprecatedFirstTimestamp: '2026-01-01T00:00:00Z' }));
bad('new-deprecated-last', 'deprecatedLastTimestamp set', evNs, newEvent('e1', { deprecatedLastTimestamp: '2026-01-01T00:00:00Z' }));
bad('new-deprecated-source', 'deprecatedSource set', evNs, newEvent('e1', { deprecatedSource: { component: 'kubelet' } }));
bad('new-bad-name', 'events.k8s.io/v1 requires a DNS-subdomain name', evNs, newEvent('Foo_Bar'));
bad('new-long-note', 'a note over 1024 bytes', evNs, newEvent('e1', { note: 'n'.repeat(1025) }));
bad('new-long-action', 'an action over 128 bytes', evNs, newEvent('e1', { action: 'a'.repeat(129) }));
bad('new-bad-controller', 'a reportingController that is not a qualified name', evNs, newEvent('e1', { reportingController: 'not a/qualified/name' }));
bad('new-no-regarding-ns', 'no regarding namespace in a namespace other than default or kube-system', evNs, newEvent('e1', { regarding: { kind: 'Node', name: 'n1' } }));
bad('new-many', 'several errors at once are listed together', evNs, newEvent('e1', { type: 'Critical', action: '', reportingInstance: '', series: { count: 1 } }));
bad('malformed-json', 'a body that is not JSON', coreNs, '{"metadata": {"name": ');
bad('wrong-kind', 'a body of another kind', coreNs, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'e1' } });
bad('wrong-api-version', 'a body of another API version', coreNs, { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'e1' } });
bad('wrong-field-type', 'a string where count is a number', coreNs, coreEvent('e1', { count: 'three' }));
bad('bad-time', 'a firstTimestamp that is not a time', coreNs, coreEvent('e1', { firstTimestamp: 'yesterday' }));
add('unknown-field-strict', 'fieldValidation=Strict refuses an unknown field', [post(`${coreNs}?fieldValidation=Strict`, coreEvent('e1', { colour: 'red' }))]);
add('unknown-field-warn', 'fieldValidation=Warn stores and warns', [post(`${coreNs}?fieldValidation=Warn`, coreEvent('e1', { colour: 'red' }))]);
add('unknown-field-ignore', 'fieldValidation=Ignore stores silently', [post(`${coreNs}?fieldValidation=Ignore`, coreEvent('e1', { colour: 'red' }))]);
add('unknown-field-default', 'no fieldValidation: stores and warns', [post(coreNs, coreEvent('e1', { colour: 'red' }))]);
add('field-validation-bogus', 'an unknown fieldValidation value', [post(`${coreNs}?fieldValidation=Loud`, coreEvent('e1'))]);
add('duplicate-field-strict', 'a duplicated field with Strict', [post(`${coreNs}?fieldValidation=Strict`, '{"metadata":{"name":"e1"},"involvedObject":{"name":"p","namespace":"{ns}"},"reason":"A","reason":"B"}')]);
add('unknown-field-strict-new', 'events.k8s.io/v1 Strict refuses an unknown field', [post(`${evNs}?fieldValidation=Strict`, newEvent('e1', { colour: 'red' }))]);

// --- lists, selectors -----------------------------------------------------------------------------
function seeded(id: string, title: string, reads: Step[]): void {
  add(id, title, [
    setup(post(coreNs, coreEvent('a1'))),
    setup(post(coreNs, coreEvent('a2', { reason: 'Pulled', type: 'Normal', involvedObject: { kind: 'Pod', name: 'pod-a2', namespace: '{ns}', uid: 'uid-a2' } }))),
    setup(post(evNs, newEvent('b1'))),
    setup(post(evNs, newEvent('b2', { regarding: { kind: 'Deployment', name: 'web', namespace: '{ns}', apiVersion: 'apps/v1' }, reason: 'ScalingReplicaSet', type: 'Normal', reportingController: 'deployment-controller', action: 'Scale' }))),
    ...reads,
  ]);
}
seeded('list-core', 'core/v1 list of a namespace', [get(coreNs)]);
seeded('list-new', 'events.k8s.io/v1 list of a namespace', [get(evNs)]);
const coreLabels = [
  'involvedObject.kind=Pod', 'involvedObject.kind=Deployment', 'involvedObject.namespace={ns}', 'involvedObject.name=pod-a1',
  'involvedObject.uid=uid-a2', 'involvedObject.apiVersion=apps/v1', 'involvedObject.resourceVersion=', 'involvedObject.fieldPath=spec.containers{app}',
  'reason=BackOff', 'reason!=BackOff', 'reason==Pulled', 'type=Normal', 'type!=Warning', 'reportingComponent=default-scheduler', 'source=kubelet',
  'source=default-scheduler', 'metadata.name=b1', 'metadata.namespace={ns}', 'reason=BackOff,type=Warning', 'involvedObject.kind=Pod,reason!=FailedScheduling',
];
for (const [i, sel] of coreLabels.entries()) seeded(`field-core-${i}`, `core/v1 fieldSelector ${sel}`, [get(`${coreNs}?fieldSelector=${encodeURIComponent(sel)}`)]);
const newLabels = [
  'regarding.kind=Pod', 'regarding.name=web', 'regarding.uid=uid-b1', 'regarding.namespace={ns}', 'regarding.apiVersion=v1', 'reportingController=deployment-controller',
  'reason=FailedScheduling', 'type=Warning', 'source=kubelet', 'metadata.name=a2', 'regarding.kind=Pod,type!=Normal',
];
for (const [i, sel] of newLabels.entries()) seeded(`field-new-${i}`, `events.k8s.io/v1 fieldSelector ${sel}`, [get(`${evNs}?fieldSelector=${encodeURIComponent(sel)}`)]);
// kevents' own field label for archives of several clusters, which kube-apiserver refuses (a known difference).
seeded('field-core-cluster', 'core/v1 fieldSelector kevents.io/cluster=prod', [get(`${coreNs}?fieldSelector=${encodeURIComponent('kevents.io/cluster=prod')}`)]);
seeded('field-new-cluster', 'events.k8s.io/v1 fieldSelector kevents.io/cluster=prod', [get(`${evNs}?fieldSelector=${encodeURIComponent('kevents.io/cluster=prod')}`)]);
const badCore = ['source.component=kubelet', 'message=x', 'count=3', 'reportingInstance=i', 'regarding.name=x', 'reason', 'reason in (a,b)', 'involvedObject.name=a=b', 'lastTimestamp=x'];
for (const [i, sel] of badCore.entries()) add(`field-core-bad-${i}`, `core/v1 refuses fieldSelector ${sel}`, [get(`${coreNs}?fieldSelector=${encodeURIComponent(sel)}`)]);
const badNew = ['involvedObject.name=x', 'note=x', 'reportingInstance=x', 'deprecatedCount=1', 'series.count=2'];
for (const [i, sel] of badNew.entries()) add(`field-new-bad-${i}`, `events.k8s.io/v1 refuses fieldSelector ${sel}`, [get(`${evNs}?fieldSelector=${encodeURIComponent(sel)}`)]);
const labelSels = ['app=web', 'tier=db', 'tier!=db', 'tier in (front,db)', 'tier notin (db)', 'tier', '!tier', 'app=web,tier=front'];
for (const [i, sel] of labelSels.entries()) seeded(`label-${i}`, `labelSelector ${sel}`, [get(`${coreNs}?labelSelector=${encodeURIComponent(sel)}`)]);
const badLabelSels = ['app==', 'tier in front', '=web', 'a b'];
for (const [i, sel] of badLabelSels.entries()) add(`label-bad-${i}`, `refuses labelSelector ${sel}`, [get(`${coreNs}?labelSelector=${encodeURIComponent(sel)}`)]);

// --- limit, continue, resourceVersion ---------------------------------------------------------------
seeded('limit-1', 'limit=1 gives one item and a continue token', [get(`${coreNs}?limit=1`)]);
seeded('limit-pages', 'limit=3 then continue gives the rest', [get(`${coreNs}?limit=3`), get(`${coreNs}?limit=3&continue={continue:4}`)]);
seeded('limit-pages-new', 'paging through events.k8s.io/v1', [get(`${evNs}?limit=2`), get(`${evNs}?limit=2&continue={continue:4}`)]);
seeded('limit-pages-field', 'paging with a field selector', [get(`${coreNs}?limit=1&fieldSelector=type%3DWarning`), get(`${coreNs}?limit=1&fieldSelector=type%3DWarning&continue={continue:4}`)]);
seeded('limit-0', 'limit=0 means no limit', [get(`${coreNs}?limit=0`)]);
seeded('limit-negative', 'a negative limit', [get(`${coreNs}?limit=-1`)]);
add('limit-nan', 'a limit that is not a number', [get(`${coreNs}?limit=abc`)]);
add('continue-bogus', 'a continue token that is not one', [get(`${coreNs}?limit=1&continue=bogus`)]);
add('continue-bogus-b64', 'a base64 continue token of nonsense', [get(`${coreNs}?limit=1&continue=${Buffer.from('{"v":"meta.k8s.io/v1"}').toString('base64')}`)]);
seeded('continue-with-rv', 'continue together with resourceVersion', [get(`${coreNs}?limit=1`), get(`${coreNs}?limit=1&continue={continue:4}&resourceVersion=5`)]);
seeded('rv-0', 'resourceVersion=0 (any, from cache)', [get(`${coreNs}?resourceVersion=0`)]);
seeded('rv-match-notolder', 'resourceVersionMatch=NotOlderThan with a resourceVersion', [get(`${coreNs}?limit=1`), get(`${coreNs}?resourceVersion={rv:4}&resourceVersionMatch=NotOlderThan`)]);
seeded('rv-match-exact', 'resourceVersionMatch=Exact at the list resourceVersion', [get(coreNs), get(`${coreNs}?resourceVersion={rv:4}&resourceVersionMatch=Exact`)]);
add('rv-match-no-rv', 'resourceVersionMatch without resourceVersion', [get(`${coreNs}?resourceVersionMatch=NotOlderThan`)]);
add('rv-match-bogus', 'an unknown resourceVersionMatch', [get(`${coreNs}?resourceVersion=1&resourceVersionMatch=Sometimes`)]);
add('rv-bogus', 'a resourceVersion that is not a number', [get(`${coreNs}?resourceVersion=abc`)]);
add('rv-match-exact-0', 'resourceVersionMatch=Exact with resourceVersion 0', [get(`${coreNs}?resourceVersion=0&resourceVersionMatch=Exact`)]);
add('rv-future', 'a resourceVersion far in the future with NotOlderThan', [get(`${coreNs}?resourceVersion=999999999&resourceVersionMatch=NotOlderThan`)]);
add('rv-too-old-exact', 'a compacted resourceVersion with Exact', [get(`${coreNs}?resourceVersion=1&resourceVersionMatch=Exact&limit=10`)]);

// --- get, update, patch, delete --------------------------------------------------------------------
add('get-missing', 'GET of a missing event is a NotFound Status', [get(`${coreNs}/nope`)]);
add('get-missing-new', 'GET of a missing event through events.k8s.io/v1', [get(`${evNs}/nope`)]);
add('put-update-core', 'PUT with the current resourceVersion updates', [post(coreNs, coreEvent('e1')), { method: 'PUT', path: `${coreNs}/e1`, body: coreEvent('e1', { metadata: { name: 'e1', resourceVersion: '{rv:0}' }, count: 4 }) }]);
add('put-conflict', 'PUT with a stale resourceVersion is a Conflict', [post(coreNs, coreEvent('e1')), setup({ method: 'PUT', path: `${coreNs}/e1`, body: coreEvent('e1', { count: 5 }) }), { method: 'PUT', path: `${coreNs}/e1`, body: coreEvent('e1', { metadata: { name: 'e1', resourceVersion: '{rv:0}' }, count: 6 }) }]);
add('put-unconditional', 'PUT without a resourceVersion updates unconditionally', [setup(post(coreNs, coreEvent('e1'))), { method: 'PUT', path: `${coreNs}/e1`, body: coreEvent('e1', { count: 9 }) }]);
add('put-create', 'PUT of a missing event creates it', [{ method: 'PUT', path: `${coreNs}/e1`, body: coreEvent('e1') }]);
add('put-name-mismatch', 'PUT whose body names another event', [{ method: 'PUT', path: `${coreNs}/e1`, body: coreEvent('e2') }]);
add('put-new-immutable', 'events.k8s.io/v1 PUT changing the note is refused', [setup(post(evNs, newEvent('e1'))), { method: 'PUT', path: `${evNs}/e1`, body: newEvent('e1', { note: 'changed' }) }]);
add('put-new-series', 'events.k8s.io/v1 PUT adding a series', [setup(post(evNs, newEvent('e1'))), { method: 'PUT', path: `${evNs}/e1`, body: newEvent('e1', { series: { count: 2, lastObservedTime: '2026-01-01T00:01:00.000000Z' } }) }]);
add('put-new-bad-series', 'events.k8s.io/v1 PUT with a series of count 1', [setup(post(evNs, newEvent('e1'))), { method: 'PUT', path: `${evNs}/e1`, body: newEvent('e1', { series: { count: 1, lastObservedTime: '2026-01-01T00:01:00.000000Z' } }) }]);
add('put-new-immutable-many', 'events.k8s.io/v1 PUT changing reason, type and action', [setup(post(evNs, newEvent('e1'))), { method: 'PUT', path: `${evNs}/e1`, body: newEvent('e1', { reason: 'Other', type: 'Normal', action: 'Other' }) }]);
add('put-core-changes-anything', 'core/v1 PUT may change message, count and lastTimestamp', [setup(post(coreNs, coreEvent('e1'))), { method: 'PUT', path: `${coreNs}/e1`, body: coreEvent('e1', { message: 'new', count: 10, lastTimestamp: '2026-01-01T01:00:00Z' }) }]);
const merge = { 'Content-Type': 'application/merge-patch+json' };
const strategic = { 'Content-Type': 'application/strategic-merge-patch+json' };
const jsonPatch = { 'Content-Type': 'application/json-patch+json' };
add('patch-merge-count', 'a merge patch bumping count (the legacy recorder)', [setup(post(coreNs, coreEvent('e1'))), { method: 'PATCH', path: `${coreNs}/e1`, body: { count: 4, lastTimestamp: '2026-01-01T00:06:00Z', message: 'again' }, headers: merge }]);
add('patch-strategic-count', 'a strategic merge patch bumping count', [setup(post(coreNs, coreEvent('e1'))), { method: 'PATCH', path: `${coreNs}/e1`, body: { count: 5 }, headers: strategic }]);
add('patch-json', 'a JSON patch', [setup(post(coreNs, coreEvent('e1'))), { method: 'PATCH', path: `${coreNs}/e1`, body: [{ op: 'replace', path: '/count', value: 7 }], headers: jsonPatch }]);
add('patch-json-test-fails', 'a JSON patch whose test fails', [setup(post(coreNs, coreEvent('e1'))), { method: 'PATCH', path: `${coreNs}/e1`, body: [{ op: 'test', path: '/count', value: 99 }], headers: jsonPatch }]);
add('patch-series', 'a merge patch of series (the new recorder)', [setup(post(evNs, newEvent('e1', { series: { count: 2, lastObservedTime: '2026-01-01T00:01:00.000000Z' } }))), { method: 'PATCH', path: `${evNs}/e1`, body: { series: { count: 3, lastObservedTime: '2026-01-01T00:02:00.000000Z' } }, headers: merge }]);
add('patch-series-strategic', 'a strategic merge patch of series', [setup(post(evNs, newEvent('e1'))), { method: 'PATCH', path: `${evNs}/e1`, body: { series: { count: 2, lastObservedTime: '2026-01-01T00:02:00.000000Z' } }, headers: strategic }]);
add('patch-missing', 'a patch of a missing event is NotFound', [{ method: 'PATCH', path: `${coreNs}/nope`, body: { count: 2 }, headers: merge }]);
add('patch-missing-new', 'a series patch of a missing event is NotFound (the recorder then creates)', [{ method: 'PATCH', path: `${evNs}/nope`, body: { series: { count: 2, lastObservedTime: '2026-01-01T00:02:00.000000Z' } }, headers: merge }]);
add('patch-bad-content-type', 'a patch with an unsupported content type', [setup(post(coreNs, coreEvent('e1'))), { method: 'PATCH', path: `${coreNs}/e1`, body: { count: 2 }, headers: { 'Content-Type': 'text/plain' } }]);
add('patch-malformed', 'a merge patch that is not JSON', [setup(post(coreNs, coreEvent('e1'))), { method: 'PATCH', path: `${coreNs}/e1`, body: '{"count":', headers: merge }]);
add('patch-new-immutable', 'events.k8s.io/v1 patch changing the note is refused', [setup(post(evNs, newEvent('e1'))), { method: 'PATCH', path: `${evNs}/e1`, body: { note: 'changed' }, headers: merge }]);
add('patch-labels-new', 'events.k8s.io/v1 patch of labels is allowed', [setup(post(evNs, newEvent('e1'))), { method: 'PATCH', path: `${evNs}/e1`, body: { metadata: { labels: { seen: 'yes' } } }, headers: merge }]);
add('patch-rv-precondition', 'a merge patch with a stale resourceVersion is a Conflict', [post(coreNs, coreEvent('e1')), setup({ method: 'PATCH', path: `${coreNs}/e1`, body: { count: 4 }, headers: merge }), { method: 'PATCH', path: `${coreNs}/e1`, body: { metadata: { resourceVersion: '{rv:0}' }, count: 5 }, headers: merge }]);
add('delete', 'DELETE answers the deleted object (events have no finalizers)', [setup(post(coreNs, coreEvent('e1'))), { method: 'DELETE', path: `${coreNs}/e1` }, get(`${coreNs}/e1`)]);
add('delete-new', 'DELETE through events.k8s.io/v1', [setup(post(coreNs, coreEvent('e1'))), { method: 'DELETE', path: `${evNs}/e1` }]);
add('delete-missing', 'DELETE of a missing event is NotFound', [{ method: 'DELETE', path: `${coreNs}/nope` }]);
add('delete-precondition', 'DELETE with a stale resourceVersion precondition', [setup(post(coreNs, coreEvent('e1'))), { method: 'DELETE', path: `${coreNs}/e1`, body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: '1' } } }]);
add('delete-dry-run', 'DELETE with dryRun keeps the event', [setup(post(coreNs, coreEvent('e1'))), { method: 'DELETE', path: `${coreNs}/e1?dryRun=All` }, get(`${coreNs}/e1`)]);
seeded('deletecollection-field', 'DELETE of a collection selected by a field selector', [{ method: 'DELETE', path: `${coreNs}?fieldSelector=type%3DNormal` }, get(coreNs)]);
seeded('deletecollection-label', 'DELETE of a collection selected by a label selector', [{ method: 'DELETE', path: `${evNs}?labelSelector=tier%3Ddb` }, get(coreNs)]);
seeded('deletecollection-all-new', 'DELETE of a whole collection through events.k8s.io/v1: the listed events, in that API', [{ method: 'DELETE', path: evNs }, get(coreNs)]);
seeded('deletecollection-limit', 'DELETE of a collection with a limit: that page only, with its continue token', [{ method: 'DELETE', path: `${coreNs}?limit=2` }, get(coreNs)]);
seeded('deletecollection-continue', 'DELETE of a collection page by page with limit and continue', [
  { method: 'DELETE', path: `${coreNs}?limit=1` },
  { method: 'DELETE', path: `${coreNs}?limit=2&continue={continue:4}` },
  get(coreNs),
]);
const xml = { Accept: 'application/xml' };
/**
 * notAcceptable is a request refused with 406: all of its Status is compared but the list of
 * representations, where kube-apiserver names protobuf, which kevents does not encode
 * (docs/compatibility.md).
 */
function notAcceptable(step: Step): Step {
  return { ...step, select: (j) => ({ ...j, message: typeof j.message === 'string' ? j.message.replace(/(Available representations: ).*$/s, '$1…') : j.message }) };
}
seeded('deletecollection-not-acceptable', 'DELETE of a collection asking for an output it cannot have: 406, nothing deleted', [
  notAcceptable({ method: 'DELETE', path: coreNs, headers: xml }),
  get(coreNs),
]);
seeded('deletecollection-table', 'DELETE of a collection asking for a Table (as kubectl asks for lists)', [{ method: 'DELETE', path: `${coreNs}?fieldSelector=type%3DWarning`, headers: { Accept: TABLE } }, get(coreNs)]);
seeded('delete-not-acceptable', 'DELETE of one event asking for an output it cannot have: 406, nothing deleted', [
  notAcceptable({ method: 'DELETE', path: `${coreNs}/a1`, headers: xml }),
  get(coreNs),
]);
seeded('get-not-acceptable', 'GET of one event asking for an output it cannot have', [notAcceptable(get(`${coreNs}/a1`, xml))]);
seeded('list-not-acceptable', 'a list asking for an output it cannot have', [notAcceptable(get(coreNs, xml))]);

add('create-not-acceptable', 'POST asking for an output it cannot have: 406, nothing created', [notAcceptable(post(coreNs, coreEvent('e1'), xml)), get(coreNs)]);
add('put-not-acceptable', 'PUT asking for an output it cannot have: 406, nothing written', [
  setup(post(coreNs, coreEvent('e1'))),
  notAcceptable({ method: 'PUT', path: `${coreNs}/e1`, body: coreEvent('e1', { count: 9 }), headers: xml }),
  get(`${coreNs}/e1`),
]);
add('patch-not-acceptable', 'PATCH asking for an output it cannot have: 406, nothing written', [
  setup(post(coreNs, coreEvent('e1'))),
  notAcceptable({ method: 'PATCH', path: `${coreNs}/e1`, body: { count: 4 }, headers: { 'Content-Type': 'application/merge-patch+json', Accept: 'application/xml' } }),
  get(`${coreNs}/e1`),
]);
seeded('watch-not-acceptable', 'a watch asking for an output it cannot have', [notAcceptable(get(`${coreNs}?watch=true&timeoutSeconds=1`, xml))]);
seeded('accept-application-star', 'a list accepting application/* (the route lists exact types)', [notAcceptable(get(coreNs, { Accept: 'application/*' }))]);
/** asYaml asks for YAML and compares the data it holds (kube-apiserver lays it out as Go's encoder does; docs/compatibility.md). */
function asYaml(step: Step): Step {
  return { ...step, headers: { ...step.headers, Accept: 'application/yaml' }, yaml: true };
}
seeded('yaml-get-core', 'GET of one core/v1 event as YAML', [asYaml(get(`${coreNs}/a1`))]);
seeded('yaml-get-new', 'GET of one events.k8s.io/v1 event as YAML', [asYaml(get(`${evNs}/b1`))]);
seeded('yaml-list', 'a list as YAML', [asYaml(get(coreNs))]);
add('yaml-create', 'a create answered as YAML, with a message over several lines and strings YAML 1.1 reads as booleans', [
  asYaml(post(coreNs, coreEvent('e1', { message: 'line one\nline two: yes\n  indented', reason: 'yes', source: { component: 'on', host: 'n' } }))),
]);
seeded('yaml-deletecollection', 'DELETE of a collection answered as YAML', [asYaml({ method: 'DELETE', path: `${coreNs}?fieldSelector=type%3DWarning` }), get(coreNs)]);
seeded('accept-spaced-list', 'a list accepting "text/plain, */*" (as curl and the Python client may)', [get(coreNs, { Accept: 'text/plain, */*' })]);

// --- server-side Table --------------------------------------------------------------------------
seeded('table-core', 'kubectl get events asks for a Table', [get(`${coreNs}?limit=500`, { Accept: TABLE })]);
seeded('table-core-object', 'a Table with includeObject=Object (kubectl -o wide, --sort-by)', [get(`${coreNs}?includeObject=Object`, { Accept: TABLE })]);
seeded('table-new', 'a Table of events.k8s.io/v1 events', [get(`${evNs}?limit=500`, { Accept: TABLE })]);
seeded('table-get-one', 'a Table of one event', [get(`${coreNs}/a1`, { Accept: TABLE })]);
seeded('table-get-one-new', 'a Table of one events.k8s.io/v1 event', [get(`${evNs}/b2`, { Accept: TABLE })]);
seeded('table-none', 'a Table with includeObject=None', [get(`${coreNs}?includeObject=None`, { Accept: TABLE })]);
seeded('table-field', 'a Table of a field-selected list', [get(`${coreNs}?fieldSelector=type%3DWarning`, { Accept: TABLE })]);
add('table-empty', 'a Table of an empty namespace', [get(coreNs, { Accept: TABLE })]);

// --- watch ----------------------------------------------------------------------------------------
const w = (path: string, during: Step[], frames?: number): Step => ({ method: 'GET', path, watch: { during, ...(frames !== undefined ? { frames } : {}) } });
add('watch-added-modified-deleted', 'a watch from a list resourceVersion sees ADDED, MODIFIED, DELETED', [
  get(coreNs),
  w(`${coreNs}?watch=true&resourceVersion={rv:0}&timeoutSeconds=2`, [post(coreNs, coreEvent('e1')), { method: 'PATCH', path: `${coreNs}/e1`, body: { count: 4 }, headers: merge }, { method: 'DELETE', path: `${coreNs}/e1` }], 3),
]);
add('watch-new-api', 'an events.k8s.io/v1 watch shows events in its own field names', [
  get(evNs),
  w(`${evNs}?watch=true&resourceVersion={rv:0}&timeoutSeconds=2`, [post(coreNs, coreEvent('e1')), post(evNs, newEvent('e2'))], 2),
]);
seeded('watch-replay', 'a watch without resourceVersion replays current events as ADDED', [w(`${coreNs}?watch=true&timeoutSeconds=2`, [], 4)]);
seeded('watch-field', 'a watch with a field selector sees only matching events', [
  get(coreNs),
  w(`${coreNs}?watch=true&resourceVersion={rv:4}&fieldSelector=type%3DNormal&timeoutSeconds=2`, [post(coreNs, coreEvent('c1', { type: 'Normal' })), post(coreNs, coreEvent('c2'))], 1),
]);
seeded('watch-label', 'a watch with a label selector', [
  get(coreNs),
  w(`${coreNs}?watch=true&resourceVersion={rv:4}&labelSelector=tier%3Ddb&timeoutSeconds=2`, [post(coreNs, coreEvent('c1')), post(coreNs, coreEvent('c2'))], 1),
]);
seeded('watch-send-initial', 'sendInitialEvents=true replays, then a BOOKMARK marks the end of the initial events', [
  w(`${coreNs}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=2`, [], 5),
]);
add('watch-send-initial-no-bookmarks', 'sendInitialEvents without allowWatchBookmarks', [w(`${coreNs}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1`, [])]);
add('watch-send-initial-no-match', 'sendInitialEvents without resourceVersionMatch', [get(`${coreNs}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true`)]);
add('watch-too-old', 'a watch from a compacted resourceVersion gets 410 Expired', [w(`${coreNs}?watch=true&resourceVersion=1&timeoutSeconds=2`, [], 1)]);
add('watch-bogus-rv', 'a watch from a resourceVersion that is not a number', [get(`${coreNs}?watch=true&resourceVersion=abc`)]);
add('watch-bad-selector', 'a watch with an unsupported field selector', [get(`${coreNs}?watch=true&fieldSelector=message%3Dx`)]);
add('watch-timeout-empty', 'a watch that sees nothing ends at timeoutSeconds with no frame', [get(coreNs), w(`${coreNs}?watch=true&resourceVersion={rv:0}&timeoutSeconds=1`, [])]);
add('watch-table', 'a watch asking for Tables gets one-row Tables', [
  get(coreNs),
  { ...w(`${coreNs}?watch=true&resourceVersion={rv:0}&timeoutSeconds=2`, [post(coreNs, coreEvent('e1'))], 1), headers: { Accept: TABLE } },
]);
add('watch-all-namespaces-field', 'a cluster-wide watch with a namespace field selector', [
  get(coreNs),
  w(`${CORE}/events?watch=true&resourceVersion={rv:0}&fieldSelector=metadata.namespace%3D{ns}&timeoutSeconds=2`, [post(coreNs, coreEvent('e1'))], 1),
]);
add('watch-one-name', 'a watch of one event by metadata.name', [
  get(coreNs),
  w(`${coreNs}?watch=true&resourceVersion={rv:0}&fieldSelector=metadata.name%3De2&timeoutSeconds=2`, [post(coreNs, coreEvent('e1')), post(coreNs, coreEvent('e2'))], 1),
]);

// --- cluster-scoped paths, misc -------------------------------------------------------------------
seeded('list-all-field-ns', 'the cluster-wide list selected down to one namespace', [get(`${CORE}/events?fieldSelector=metadata.namespace%3D{ns}`)]);
seeded('list-all-new-field-ns', 'the cluster-wide events.k8s.io/v1 list selected down to one namespace', [get(`${EV}/events?fieldSelector=metadata.namespace%3D{ns}`)]);
add('post-cluster-scope', 'a POST to the cluster-wide path', [post(`${CORE}/events`, coreEvent('e1'))]);
add('method-not-allowed', 'a PUT of the collection', [{ method: 'PUT', path: coreNs, body: coreEvent('e1') }]);
add('unsupported-media', 'a POST with a content type the server does not decode', [post(coreNs, 'x: y', { 'Content-Type': 'text/plain' })]);
add('yaml-body-yes', 'a POST in YAML whose reason is yes (a boolean in YAML 1.1)', [post(coreNs, 'apiVersion: v1\nkind: Event\nmetadata:\n  name: e1\ninvolvedObject:\n  name: p\n  namespace: {ns}\nreason: yes\nmessage: on\n', { 'Content-Type': 'application/yaml' })]);
add('yaml-body-times', 'a POST in YAML with unquoted times and a name YAML 1.1 reads as a number', [post(coreNs, 'apiVersion: v1\nkind: Event\nmetadata:\n  name: 1e3\ninvolvedObject:\n  name: p\n  namespace: {ns}\nreason: R\nfirstTimestamp: 2026-01-01T00:00:00Z\nlastTimestamp: 2026-01-01T00:05:00Z\ncount: 2\n', { 'Content-Type': 'application/yaml' })]);
add('yaml-body', 'a POST in YAML', [post(coreNs, 'apiVersion: v1\nkind: Event\nmetadata:\n  name: e1\ninvolvedObject:\n  name: p\n  namespace: {ns}\nreason: R\n', { 'Content-Type': 'application/yaml' })]);
add('unknown-resource', 'an unknown resource under /api/v1', [get(`${CORE}/namespaces/{ns}/widgets`)]);
add('unknown-group', 'an unknown API group', [get('/apis/example.com/v1/widgets')]);
add('events-v1beta1', 'events.k8s.io/v1beta1 is no longer served', [get('/apis/events.k8s.io/v1beta1/events')]);
add('discovery-group', 'the events.k8s.io group document', [get('/apis/events.k8s.io')]);
add('discovery-group-version', 'the events.k8s.io/v1 resource list', [get('/apis/events.k8s.io/v1')]);
add('pretty', 'pretty=true indents the answer', [post(coreNs, coreEvent('e1')), get(`${coreNs}/e1?pretty=true`)]);
add('get-with-rv-0', 'GET of one event with resourceVersion=0', [setup(post(coreNs, coreEvent('e1'))), get(`${coreNs}/e1?resourceVersion=0`)]);
add('bool-maybe', 'watch=maybe is a watch: only 0 and false are false', [w(`${coreNs}?watch=maybe&timeoutSeconds=1`, [])]);
add('bool-f', 'watch=f is a watch too', [w(`${coreNs}?watch=f&timeoutSeconds=1`, [])]);
add('bool-empty', 'watch= (empty) is a watch', [w(`${coreNs}?watch=&timeoutSeconds=1`, [])]);
add('bool-false-upper', 'watch=FALSE is a list', [get(`${coreNs}?watch=FALSE`)]);
add('bool-zero', 'watch=0 is a list', [get(`${coreNs}?watch=0`)]);
add('watch-python-bool', 'watch=True (the Python client) is a watch', [get(coreNs), w(`${coreNs}?watch=True&resourceVersion={rv:0}&timeoutSeconds=1`, [])]);
add('timeout-seconds-bad', 'a timeoutSeconds that is not a number', [get(`${coreNs}?watch=true&timeoutSeconds=soon`)]);

add('discovery-core', 'the events entry of the core/v1 resource list', [{ ...get('/api/v1'), select: (j) => ({ ...j, resources: j.resources.filter((r: any) => r.name === 'events') }) }]);
add('discovery-apis', 'the events.k8s.io entry of the legacy group list', [{ ...get('/apis'), select: (j) => ({ ...j, groups: j.groups.filter((g: any) => g.name === 'events.k8s.io') }) }]);
add('discovery-aggregated', 'the events entry of aggregated discovery for /api', [{ ...get('/api', { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' }), select: (j) => j.items?.map((g: any) => ({ ...g, versions: g.versions.map((v: any) => ({ ...v, resources: v.resources.filter((r: any) => r.resource === 'events') })) })) }]);
add('discovery-aggregated-apis', 'the events.k8s.io entry of aggregated discovery for /apis', [{ ...get('/apis', { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' }), select: (j) => j.items?.filter((g: any) => g.metadata.name === 'events.k8s.io') }]);
add('dry-run-bogus', 'an unknown dryRun value', [post(`${coreNs}?dryRun=Some`, coreEvent('e1'))]);
add('field-validation-bogus-put', 'an unknown fieldValidation value on PUT', [{ method: 'PUT', path: `${coreNs}/e1?fieldValidation=Loud`, body: coreEvent('e1') }]);
add('field-validation-bogus-patch', 'an unknown fieldValidation value on PATCH', [setup(post(coreNs, coreEvent('e1'))), { method: 'PATCH', path: `${coreNs}/e1?fieldValidation=Loud`, body: { count: 2 }, headers: merge }]);
add('delete-uid-precondition', 'DELETE with a uid precondition that does not match', [setup(post(coreNs, coreEvent('e1'))), { method: 'DELETE', path: `${coreNs}/e1`, body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'not-the-uid' } } }]);
add('delete-rv-precondition-current', 'DELETE with the current resourceVersion as precondition', [post(coreNs, coreEvent('e1')), { method: 'DELETE', path: `${coreNs}/e1`, body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: '{rv:0}' } } }]);
add('watch-new-send-initial', 'an events.k8s.io/v1 watch-list ends its replay with its own bookmark', [setup(post(evNs, newEvent('e1'))), { method: 'GET', path: `${evNs}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1`, watch: { frames: 2 } }]);
add('patch-missing-core-series', 'a strategic merge patch of a missing core event', [{ method: 'PATCH', path: `${coreNs}/nope`, body: { count: 2 }, headers: strategic }]);
add('get-table-missing', 'a Table request for a missing event is a NotFound Status', [get(`${coreNs}/nope`, { Accept: TABLE })]);

/** CASES is every case of the differential suite, in order. */
export const CASES: readonly Case[] = cases;
