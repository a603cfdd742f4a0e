import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KNOWN_KINDS } from './discovery.js';
import { buildOpenApiV3Specs, openApiV3Index, openApiV3Spec, openApiV3Specs, specHash } from './openapi.js';
import type { OpenApiV3Document } from './openapi.js';
import type { Parameter } from './openapi-paths.js';
import { schemaName } from './openapi-schemas.js';
import type { Schema } from './openapi-schemas.js';
import { OPENAPI_V2_PROTOBUF_CONTENT_TYPE, openApiV2Protobuf } from './openapi-v2.js';

const EVENT_APIS = [
  { path: 'api/v1', group: '', prefix: '/api/v1', schema: 'io.k8s.api.core.v1.Event' },
  { path: 'apis/events.k8s.io/v1', group: 'events.k8s.io', prefix: '/apis/events.k8s.io/v1', schema: 'io.k8s.api.events.v1.Event' },
];
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

function doc(path: string): OpenApiV3Document {
  const spec = openApiV3Spec(path);
  assert.ok(spec, path);
  return spec.document;
}

function operation(d: OpenApiV3Document, path: string, method: string): Schema {
  const op = d.paths[path]?.[method];
  assert.ok(op !== undefined && typeof op === 'object', `${method} ${path}`);
  return op as Schema;
}

function paramNames(op: Schema): string[] {
  return ((op.parameters ?? []) as Parameter[]).map((p) => p.name);
}

// The check kubectl (cli-runtime queryParamVerifierV3) makes before it trusts the server to
// validate fields: the first PATCH operation tagged with the GVK must take the query parameter.
function kubectlSeesServerSideValidation(d: OpenApiV3Document, gvk: { group: string; version: string; kind: string }): boolean {
  for (const item of Object.values(d.paths)) {
    const patch = item.patch as Schema | undefined;
    if (patch === undefined) continue;
    const ext = patch['x-kubernetes-group-version-kind'] as Record<string, string> | undefined;
    if (ext?.group !== gvk.group || ext.version !== gvk.version || ext.kind !== gvk.kind) continue;
    return ((patch.parameters ?? []) as Parameter[]).some((p) => p.name === 'fieldValidation' && p.in === 'query');
  }
  return false;
}

void test('the index points at every served group/version with the hash of its exact bytes', () => {
  const index = openApiV3Index();
  assert.deepEqual(Object.keys(index.paths), ['api/v1', 'apis/apps/v1', 'apis/archive.kevents.io/v1alpha1', 'apis/batch/v1', 'apis/events.k8s.io/v1']);
  for (const [path, { serverRelativeURL }] of Object.entries(index.paths)) {
    const spec = openApiV3Spec(path);
    assert.ok(spec);
    assert.match(spec.hash, /^[0-9A-F]{128}$/);
    assert.equal(spec.hash, specHash(spec.json));
    assert.equal(serverRelativeURL, `/openapi/v3/${path}?hash=${spec.hash}`);
    assert.deepEqual(JSON.parse(spec.json), spec.document);
  }
});

void test('hashes are stable across builds and differ between documents', () => {
  const a = buildOpenApiV3Specs();
  const b = buildOpenApiV3Specs();
  for (const [path, spec] of a) assert.equal(b.get(path)?.hash, spec.hash, path);
  assert.equal(new Set([...a.values()].map((s) => s.hash)).size, a.size);
  assert.equal(openApiV3Specs(), openApiV3Specs());
});

void test('specHash is upper-case hex sha512', () => {
  assert.equal(
    specHash(''),
    'CF83E1357EEFB8BDF1542850D66D8007D620E4050B5715DC83F4A921D36CE9CE47D0D13C5D85F2B0FF8318D2877EEC2F63B931BD47417A81A538327AF927DA3E',
  );
});

void test('openApiV3Spec accepts the index key with or without the /openapi/v3 prefix', () => {
  const cases: Array<[string, string | undefined]> = [
    ['api/v1', 'api/v1'],
    ['/openapi/v3/api/v1', 'api/v1'],
    ['/openapi/v3/apis/events.k8s.io/v1', 'apis/events.k8s.io/v1'],
    ['apis/policy/v1', undefined],
    ['/openapi/v3', undefined],
  ];
  for (const [input, want] of cases) assert.equal(openApiV3Spec(input)?.path, want, input);
});

void test('kubectl sees server-side field validation for events in both APIs', () => {
  for (const api of EVENT_APIS) {
    assert.equal(kubectlSeesServerSideValidation(doc(api.path), { group: api.group, version: 'v1', kind: 'Event' }), true, api.path);
  }
  // A kind whose PATCH is not served must not claim it.
  assert.equal(kubectlSeesServerSideValidation(doc('api/v1'), { group: '', version: 'v1', kind: 'Pod' }), false);
});

void test('event operations carry the GVK, the action and their query parameters', () => {
  const write = ['dryRun', 'fieldManager', 'fieldValidation'];
  const list = ['allowWatchBookmarks', 'continue', 'fieldSelector', 'labelSelector', 'limit', 'resourceVersion', 'resourceVersionMatch', 'sendInitialEvents', 'timeoutSeconds', 'watch'];
  for (const api of EVENT_APIS) {
    const d = doc(api.path);
    const collection = `${api.prefix}/namespaces/{namespace}/events`;
    const item = `${collection}/{name}`;
    const cases: Array<[string, string, string, string[]]> = [
      [collection, 'get', 'list', list],
      [collection, 'post', 'post', write],
      [collection, 'delete', 'deletecollection', ['fieldSelector', 'labelSelector', 'dryRun']],
      [item, 'get', 'get', []],
      [item, 'put', 'put', write],
      [item, 'patch', 'patch', [...write, 'force']],
      [item, 'delete', 'delete', ['dryRun', 'gracePeriodSeconds', 'propagationPolicy']],
      [`${api.prefix}/events`, 'get', 'list', []],
    ];
    for (const [path, method, action, params] of cases) {
      const op = operation(d, path, method);
      assert.deepEqual(op['x-kubernetes-group-version-kind'], { group: api.group, kind: 'Event', version: 'v1' }, `${method} ${path}`);
      assert.equal(op['x-kubernetes-action'], action, `${method} ${path}`);
      for (const p of params) assert.ok(paramNames(op).includes(p), `${method} ${path} lacks ${p}`);
    }
    assert.deepEqual(((d.paths[`${api.prefix}/events`]?.parameters ?? []) as Parameter[]).map((p) => p.name).filter((n) => list.includes(n)), list);
    const patchBody = operation(d, item, 'patch').requestBody as { content: Record<string, unknown> };
    assert.deepEqual(Object.keys(patchBody.content), ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json']);
  }
});

void test('operation ids follow kube-apiserver naming', () => {
  const cases: Array<[string, string, string, string]> = [
    ['api/v1', '/api/v1/namespaces/{namespace}/events/{name}', 'patch', 'patchCoreV1NamespacedEvent'],
    ['api/v1', '/api/v1/namespaces/{namespace}/events', 'delete', 'deleteCoreV1CollectionNamespacedEvent'],
    ['api/v1', '/api/v1/events', 'get', 'listCoreV1EventForAllNamespaces'],
    ['api/v1', '/api/v1/nodes/{name}', 'get', 'readCoreV1Node'],
    ['apis/events.k8s.io/v1', '/apis/events.k8s.io/v1/namespaces/{namespace}/events', 'post', 'createEventsV1NamespacedEvent'],
    ['apis/apps/v1', '/apis/apps/v1/deployments', 'get', 'listAppsV1DeploymentForAllNamespaces'],
    ['apis/batch/v1', '/apis/batch/v1/namespaces/{namespace}/cronjobs/{name}', 'get', 'readBatchV1NamespacedCronJob'],
  ];
  for (const [path, p, method, id] of cases) assert.equal(operation(doc(path), p, method).operationId, id);
});

void test('read-only kinds offer exactly get and list, namespaced ones across namespaces too', () => {
  for (const k of KNOWN_KINDS.filter((x) => x.resource !== 'events' && x.verbs.includes('get'))) {
    const path = k.group === '' ? 'api/v1' : `apis/${k.group}/${k.version}`;
    const prefix = `/${path}`;
    const d = doc(path);
    const collection = k.namespaced ? `${prefix}/namespaces/{namespace}/${k.resource}` : `${prefix}/${k.resource}`;
    const methodsOf = (p: string): string[] => METHODS.filter((m) => d.paths[p]?.[m] !== undefined);
    assert.deepEqual(methodsOf(collection), ['get'], collection);
    assert.deepEqual(methodsOf(`${collection}/{name}`), ['get'], `${collection}/{name}`);
    if (k.namespaced) assert.deepEqual(methodsOf(`${prefix}/${k.resource}`), ['get']);
  }
});

void test('list-only kinds (the archive\'s occurrences) offer a list and nothing else', () => {
  for (const k of KNOWN_KINDS.filter((x) => x.verbs.length === 1 && x.verbs[0] === 'list')) {
    const prefix = `/apis/${k.group}/${k.version}`;
    const d = doc(prefix.slice(1));
    const methodsOf = (p: string): string[] => METHODS.filter((m) => d.paths[p]?.[m] !== undefined);
    assert.deepEqual(methodsOf(`${prefix}/namespaces/{namespace}/${k.resource}`), ['get']);
    assert.deepEqual(methodsOf(`${prefix}/${k.resource}`), ['get']);
    assert.equal(d.paths[`${prefix}/namespaces/{namespace}/${k.resource}/{name}`], undefined);
  }
});

void test('the documents carry the event schemas with their GVK', () => {
  const core = doc('api/v1').components.schemas;
  const required: Array<[string, unknown]> = [
    ['io.k8s.api.core.v1.Event', [{ group: '', kind: 'Event', version: 'v1' }]],
    ['io.k8s.api.core.v1.EventList', [{ group: '', kind: 'EventList', version: 'v1' }]],
    ['io.k8s.api.core.v1.ObjectReference', undefined],
    ['io.k8s.api.core.v1.EventSource', undefined],
    ['io.k8s.api.core.v1.EventSeries', undefined],
    ['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta', undefined],
    ['io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta', undefined],
    ['io.k8s.apimachinery.pkg.apis.meta.v1.Time', undefined],
    ['io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime', undefined],
    ['io.k8s.apimachinery.pkg.apis.meta.v1.Status', [{ group: '', kind: 'Status', version: 'v1' }]],
    ['io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions', undefined],
    ['io.k8s.apimachinery.pkg.apis.meta.v1.Patch', undefined],
    ['io.k8s.api.core.v1.Pod', [{ group: '', kind: 'Pod', version: 'v1' }]],
  ];
  for (const [name, gvk] of required) {
    assert.ok(core[name], name);
    if (gvk !== undefined) assert.deepEqual(core[name]['x-kubernetes-group-version-kind'], gvk, name);
  }
  assert.deepEqual(core['io.k8s.api.core.v1.Event']?.required, ['metadata', 'involvedObject']);
  const events = doc('apis/events.k8s.io/v1').components.schemas;
  assert.deepEqual(events['io.k8s.api.events.v1.Event']?.['x-kubernetes-group-version-kind'], [{ group: 'events.k8s.io', kind: 'Event', version: 'v1' }]);
  assert.deepEqual(events['io.k8s.api.events.v1.Event']?.required, ['eventTime']);
  assert.ok(events['io.k8s.api.events.v1.EventSeries']);
  assert.ok(events['io.k8s.api.core.v1.ObjectReference'], 'regarding uses the core ObjectReference');
  assert.equal(events['io.k8s.api.core.v1.Pod'], undefined, 'schemas are pruned to what the document reaches');
  const eventProps = Object.keys(events['io.k8s.api.events.v1.Event']?.properties ?? {});
  for (const field of ['regarding', 'note', 'reportingController', 'deprecatedSource', 'deprecatedCount', 'series']) {
    assert.ok(eventProps.includes(field), field);
  }
});

function refsOf(node: unknown, into: string[] = []): string[] {
  if (Array.isArray(node)) for (const v of node) refsOf(v, into);
  else if (node !== null && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') into.push(v);
      else refsOf(v, into);
    }
  }
  return into;
}

void test('every document is well-formed OpenAPI 3.0: refs resolve, path parameters declared, responses present', () => {
  for (const spec of openApiV3Specs().values()) {
    const d = spec.document;
    assert.equal(d.openapi, '3.0.0');
    for (const r of refsOf(d)) {
      assert.ok(r.startsWith('#/components/schemas/'), r);
      assert.ok(d.components.schemas[r.slice('#/components/schemas/'.length)], `${spec.path}: ${r}`);
    }
    for (const [path, item] of Object.entries(d.paths)) {
      const declared = ((item.parameters ?? []) as Parameter[]).filter((p) => p.in === 'path').map((p) => p.name).sort();
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      assert.deepEqual(declared, templated, path);
      for (const m of METHODS) {
        const op = item[m] as Schema | undefined;
        if (op === undefined) continue;
        assert.ok(op.responses && Object.keys(op.responses).length > 0, `${m} ${path}`);
        assert.equal(typeof op.operationId, 'string');
      }
    }
    for (const k of KNOWN_KINDS.filter((x) => spec.path === (x.group === '' ? 'api/v1' : `apis/${x.group}/v1`))) {
      assert.ok(d.components.schemas[schemaName(k)], schemaName(k));
      assert.ok(d.components.schemas[schemaName(k, 'List')], schemaName(k, 'List'));
    }
  }
});

// A minimal protobuf reader: field number -> list of values (varints as numbers, the rest as bytes).
function decode(buf: Buffer): Map<number, Array<number | Buffer>> {
  const fields = new Map<number, Array<number | Buffer>>();
  let i = 0;
  const varint = (): number => {
    let n = 0;
    let mul = 1;
    for (;;) {
      const b = buf[i++];
      assert.ok(b !== undefined, 'truncated varint');
      n += (b & 0x7f) * mul;
      mul *= 128;
      if (b < 0x80) return n;
    }
  };
  while (i < buf.length) {
    const key = varint();
    const wire = key & 7;
    let value: number | Buffer;
    if (wire === 0) value = varint();
    else if (wire === 2) {
      const len = varint();
      value = buf.subarray(i, i + len);
      assert.equal(value.length, len, 'truncated field');
      i += len;
    } else assert.fail(`unexpected wire type ${wire}`);
    const list = fields.get(key >> 3) ?? [];
    list.push(value);
    fields.set(key >> 3, list);
  }
  return fields;
}

const bytesOf = (m: Map<number, Array<number | Buffer>>, field: number): Buffer[] => (m.get(field) ?? []).filter((v): v is Buffer => Buffer.isBuffer(v));
const textOf = (m: Map<number, Array<number | Buffer>>, field: number): string | undefined => bytesOf(m, field)[0]?.toString('utf8');

void test('OpenAPI v2 protobuf carries what kubectl 1.27/1.28 check: PATCH with GVK and fieldValidation', () => {
  assert.equal(OPENAPI_V2_PROTOBUF_CONTENT_TYPE, 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
  // Field numbers from gnostic openapiv2/OpenAPIv2.proto: Document.swagger=1, info=2, paths=8;
  // Paths.path=2; NamedPathItem name=1 value=2; PathItem.patch=8; Operation.parameters=8,
  // vendor_extension=13; ParametersItem.parameter=1; Parameter.non_body_parameter=2;
  // NonBodyParameter.query_parameter_sub_schema=3; QueryParameterSubSchema.name=4, in=2;
  // NamedAny name=1 value=2; Any.yaml=2.
  const doc = decode(openApiV2Protobuf());
  assert.equal(textOf(doc, 1), '2.0');
  const info = decode(bytesOf(doc, 2)[0] ?? Buffer.alloc(0));
  assert.equal(textOf(info, 1), 'Kubernetes');
  const paths = decode(bytesOf(doc, 8)[0] ?? Buffer.alloc(0));
  const items = new Map(bytesOf(paths, 2).map((b) => {
    const named = decode(b);
    return [textOf(named, 1) ?? '', decode(bytesOf(named, 2)[0] ?? Buffer.alloc(0))];
  }));
  assert.deepEqual([...items.keys()], [...items.keys()].sort());
  for (const [path, group] of [
    ['/api/v1/namespaces/{namespace}/events/{name}', ''],
    ['/apis/events.k8s.io/v1/namespaces/{namespace}/events/{name}', 'events.k8s.io'],
  ] as const) {
    const item = items.get(path);
    assert.ok(item, path);
    const patch = decode(bytesOf(item, 8)[0] ?? Buffer.alloc(0));
    const extensions = Object.fromEntries(bytesOf(patch, 13).map((b) => {
      const named = decode(b);
      return [textOf(named, 1), textOf(decode(bytesOf(named, 2)[0] ?? Buffer.alloc(0)), 2)];
    }));
    assert.equal(extensions['x-kubernetes-group-version-kind'], `group: ${JSON.stringify(group)}\nkind: "Event"\nversion: "v1"\n`);
    assert.equal(extensions['x-kubernetes-action'], 'patch\n');
    const params = bytesOf(patch, 8).map((b) => {
      const query = decode(bytesOf(decode(bytesOf(decode(bytesOf(decode(b), 1)[0] ?? Buffer.alloc(0)), 2)[0] ?? Buffer.alloc(0)), 3)[0] ?? Buffer.alloc(0));
      return `${textOf(query, 2)}:${textOf(query, 4)}`;
    });
    assert.ok(params.includes('query:fieldValidation'), params.join());
  }
  assert.equal(items.get('/api/v1/namespaces/{namespace}/pods/{name}')?.has(8), false, 'no PATCH where none is served');
  assert.equal(openApiV2Protobuf(), openApiV2Protobuf());
});
