import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AGGREGATED_DISCOVERY_V2_CONTENT_TYPE,
  EVENT_VERBS,
  KNOWN_KINDS,
  READ_ONLY_VERBS,
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  discoveryContentType,
  discoveryETag,
  findKnownKind,
  negotiateDiscovery,
  parseAccept,
  servedGroupVersions,
} from './discovery.js';
import type { APIGroupDiscoveryList, DiscoveryFormat } from './discovery.js';

const V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
const V2BETA1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';
const PB_V2 = 'application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

const EVENT_GROUPS = ['', 'events.k8s.io'];

void test('events are served in core/v1 and events.k8s.io/v1 with short name ev and all verbs (legacy)', () => {
  for (const group of EVENT_GROUPS) {
    const list = apiResourceList({ group, version: 'v1' });
    const events = list?.resources.find((r) => r.name === 'events');
    assert.deepEqual(events, {
      name: 'events',
      singularName: 'event',
      namespaced: true,
      kind: 'Event',
      verbs: [...EVENT_VERBS],
      shortNames: ['ev'],
      // sha256("/v1/Event")[:8], base64: both groups store core/v1 Events.
      storageVersionHash: 'r2yiGXH7wu8=',
    });
  }
});

void test('events are served in both groups with short name ev (aggregated)', () => {
  const found = [
    ...aggregatedDiscovery('api').items.map((g) => ({ g, group: '' })),
    ...aggregatedDiscovery('apis').items.map((g) => ({ g, group: g.metadata.name ?? '' })),
  ]
    .filter(({ group }) => EVENT_GROUPS.includes(group))
    .map(({ g, group }) => ({ group, events: g.versions[0]?.resources.find((r) => r.resource === 'events') }));
  assert.equal(found.length, 2);
  for (const { events } of found) {
    assert.deepEqual(events, {
      resource: 'events',
      responseKind: { group: '', version: '', kind: 'Event' },
      scope: 'Namespaced',
      singularResource: 'event',
      verbs: [...EVENT_VERBS],
      shortNames: ['ev'],
    });
  }
});

void test('aggregated discovery has the upstream envelope for both versions', () => {
  for (const version of ['v2', 'v2beta1'] as const) {
    const api = aggregatedDiscovery('api', version);
    assert.equal(api.kind, 'APIGroupDiscoveryList');
    assert.equal(api.apiVersion, `apidiscovery.k8s.io/${version}`);
    assert.deepEqual(api.metadata, {});
    assert.equal(api.items.length, 1);
    assert.deepEqual(api.items[0]?.metadata, { creationTimestamp: null });
    const apis = aggregatedDiscovery('apis', version);
    assert.deepEqual(
      apis.items.map((i) => i.metadata),
      ['apps', 'events.k8s.io', 'batch', 'archive.kevents.io'].map((name) => ({ name, creationTimestamp: null })),
    );
    for (const item of [...api.items, ...apis.items]) {
      for (const v of item.versions) assert.equal(v.freshness, 'Current');
    }
  }
});

void test('every known kind is in both legacy and aggregated discovery with the same facts', () => {
  const aggregated = new Map<string, APIGroupDiscoveryList['items'][number]>();
  for (const item of [...aggregatedDiscovery('api').items, ...aggregatedDiscovery('apis').items]) {
    aggregated.set(item.metadata.name ?? '', item);
  }
  for (const k of KNOWN_KINDS) {
    const legacy = apiResourceList(k)?.resources.find((r) => r.name === k.resource);
    assert.ok(legacy, `${k.group}/${k.resource} legacy`);
    assert.equal(legacy.kind, k.kind);
    assert.equal(legacy.namespaced, k.namespaced);
    const agg = aggregated.get(k.group)?.versions.find((v) => v.version === k.version)?.resources.find((r) => r.resource === k.resource);
    assert.ok(agg, `${k.group}/${k.resource} aggregated`);
    assert.equal(agg.responseKind.kind, k.kind);
    assert.equal(agg.scope, k.namespaced ? 'Namespaced' : 'Cluster');
    assert.deepEqual(agg.verbs, legacy.verbs);
    assert.deepEqual(agg.shortNames, legacy.shortNames);
    assert.deepEqual(agg.categories, legacy.categories);
    assert.equal(agg.singularResource, legacy.singularName);
  }
});

void test('kinds users name in `kubectl events --for` and `describe` resolve, read-only', () => {
  const cases: Array<[string, string, string, boolean, string[]]> = [
    ['', 'pods', 'Pod', true, ['po']],
    ['', 'nodes', 'Node', false, ['no']],
    ['', 'namespaces', 'Namespace', false, ['ns']],
    ['', 'services', 'Service', true, ['svc']],
    ['apps', 'deployments', 'Deployment', true, ['deploy']],
    ['apps', 'replicasets', 'ReplicaSet', true, ['rs']],
    ['apps', 'statefulsets', 'StatefulSet', true, ['sts']],
    ['apps', 'daemonsets', 'DaemonSet', true, ['ds']],
    ['batch', 'jobs', 'Job', true, []],
    ['batch', 'cronjobs', 'CronJob', true, ['cj']],
  ];
  for (const [group, resource, kind, namespaced, shortNames] of cases) {
    const k = findKnownKind(group, 'v1', resource);
    assert.ok(k, resource);
    assert.equal(k.kind, kind);
    assert.equal(k.namespaced, namespaced);
    assert.deepEqual(k.shortNames, shortNames);
    assert.deepEqual(k.verbs, READ_ONLY_VERBS);
  }
  assert.equal(findKnownKind('', 'v1', 'secrets'), undefined);
  assert.equal(findKnownKind('apps', 'v1', 'pods'), undefined);
});

void test('legacy /api names the client address and /api/v1 omits apiVersion as upstream does', () => {
  assert.deepEqual(apiVersions({ serverAddress: '127.0.0.1:8080' }), {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1:8080' }],
  });
  const core = apiResourceList({ group: '', version: 'v1' });
  assert.ok(core);
  assert.equal('apiVersion' in core, false);
  assert.equal(core.groupVersion, 'v1');
  assert.deepEqual(
    core.resources.map((r) => r.name),
    ['events', 'namespaces', 'nodes', 'pods', 'services'],
  );
  const apps = apiResourceList({ group: 'apps', version: 'v1' });
  assert.equal(apps?.apiVersion, 'v1');
  assert.equal(apps.groupVersion, 'apps/v1');
  assert.equal(apiResourceList({ group: 'apps', version: 'v2' }), undefined);
  assert.equal(apiResourceList({ group: 'policy', version: 'v1' }), undefined);
});

void test('legacy /apis lists each named group with its preferred version', () => {
  const list = apiGroupList();
  assert.equal(list.kind, 'APIGroupList');
  assert.equal(list.apiVersion, 'v1');
  assert.deepEqual(
    list.groups.map((g) => [g.name, g.preferredVersion.groupVersion, g.versions.map((v) => v.groupVersion)]),
    [
      ['apps', 'apps/v1', ['apps/v1']],
      ['events.k8s.io', 'events.k8s.io/v1', ['events.k8s.io/v1']],
      ['batch', 'batch/v1', ['batch/v1']],
      ['archive.kevents.io', 'archive.kevents.io/v1alpha1', ['archive.kevents.io/v1alpha1']],
    ],
  );
  assert.deepEqual(apiGroup('events.k8s.io'), {
    kind: 'APIGroup',
    apiVersion: 'v1',
    name: 'events.k8s.io',
    versions: [{ groupVersion: 'events.k8s.io/v1', version: 'v1' }],
    preferredVersion: { groupVersion: 'events.k8s.io/v1', version: 'v1' },
  });
  assert.equal(apiGroup(''), undefined);
  assert.equal(apiGroup('policy'), undefined);
  assert.equal(servedGroupVersions().length, 5);
});

void test('negotiateDiscovery follows kube-apiserver: first aggregated clause by q, then header order', () => {
  const cases: Array<[string | undefined, DiscoveryFormat, string]> = [
    [undefined, 'legacy', 'no Accept'],
    ['', 'legacy', 'empty Accept'],
    ['application/json', 'legacy', 'plain JSON'],
    ['*/*', 'legacy', 'client-node'],
    [`${V2},${V2BETA1},application/json`, 'v2', 'kubectl 1.30+'],
    [`${V2BETA1},application/json`, 'v2beta1', 'kubectl 1.27-1.29'],
    [`application/json, ${V2}`, 'v2', 'a plain clause first does not win'],
    [`${V2BETA1};q=0.5,${V2};q=0.9`, 'v2', 'higher q wins'],
    [`${V2BETA1},${V2}`, 'v2beta1', 'equal q keeps header order'],
    [`${PB_V2},${V2BETA1}`, 'v2beta1', 'protobuf is passed over'],
    [PB_V2, 'legacy', 'only protobuf'],
    ['*/*;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList', 'v2', 'wildcard type'],
    ['application/*;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList', 'v2', 'wildcard subtype'],
    [`*/*;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,${V2}`, 'v2', 'concrete type before wildcard'],
    ['application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList', 'legacy', 'unknown version'],
    ['application/json;g=apidiscovery.k8s.io;v=v2', 'legacy', 'no as'],
    ['application/json;g=example.com;v=v2;as=APIGroupDiscoveryList', 'legacy', 'wrong group'],
    ['application/json; g=apidiscovery.k8s.io; v=v2; as=APIGroupDiscoveryList', 'v2', 'spaces around params'],
    [`text/html, ${V2};q=0`, 'v2', 'q=0 does not drop a clause (goautoneg)'],
    [`${V2};q=abc`, 'v2', 'a bad q ranks last but stays'],
    ['Application/JSON;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList', 'legacy', 'types compare case-sensitively'],
    [`${V2};profile=nopeer`, 'v2', 'unknown params are ignored'],
    ['application', 'legacy', 'not a media range'],
  ];
  for (const [accept, want, why] of cases) assert.equal(negotiateDiscovery(accept), want, why);
});

void test('negotiateDiscovery can decline v2beta1 as kube-apiserver 1.33 does by default', () => {
  assert.equal(negotiateDiscovery(`${V2BETA1},application/json`, { v2beta1: false }), 'legacy');
  assert.equal(negotiateDiscovery(`${V2BETA1},${V2};q=0.5`, { v2beta1: false }), 'v2');
});

void test('discoveryContentType is exactly what clients compare against', () => {
  const cases: Array<[DiscoveryFormat, string]> = [
    ['v2', 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'],
    ['v2beta1', 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList'],
    ['legacy', 'application/json'],
  ];
  for (const [format, want] of cases) assert.equal(discoveryContentType(format), want);
  assert.equal(AGGREGATED_DISCOVERY_V2_CONTENT_TYPE, V2);
});

void test('parseAccept orders clauses as goautoneg does under Go\'s insertion sort', () => {
  const order = (header: string): string[] => parseAccept(header).map((c) => `${c.type}/${c.subType};q=${c.q}`);
  assert.deepEqual(order('text/html;q=0.5, application/json'), ['application/json;q=1', 'text/html;q=0.5']);
  assert.deepEqual(order('*/*, application/json'), ['application/json;q=1', '*/*;q=1']);
  assert.deepEqual(order('text/*, text/plain'), ['text/plain;q=1', 'text/*;q=1']);
  assert.deepEqual(order('a/x;q=0.2, b/y;q=0.2, c/z;q=0.2'), ['a/x;q=0.2', 'b/y;q=0.2', 'c/z;q=0.2']);
  // goautoneg's comparison puts a concrete type before a wildcard whatever their q, so a
  // low-q concrete clause can overtake a q=1 wildcard; kube-apiserver inherits this.
  assert.deepEqual(order('text/*;q=0.5, */*, application/json;v=1, text/plain;q=0.5'), [
    'application/json;q=1',
    'text/plain;q=0.5',
    '*/*;q=1',
    'text/*;q=0.5',
  ]);
  assert.deepEqual(parseAccept('application/json;v=1;q=0.3;x')[0]?.params, { v: '1' });
  assert.deepEqual(parseAccept('*').map((c) => `${c.type}/${c.subType}`), ['*/*']);
  assert.deepEqual(parseAccept('a/b/c, x'), []);
});

void test('discoveryETag is a quoted upper-case sha512 that changes with the document', () => {
  const tag = discoveryETag(aggregatedDiscovery('apis'));
  assert.match(tag, /^"[0-9A-F]{128}"$/);
  assert.equal(discoveryETag(aggregatedDiscovery('apis')), tag);
  assert.notEqual(discoveryETag(aggregatedDiscovery('api')), tag);
});
