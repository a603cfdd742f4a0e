import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { loadKubeConfig } from '../../src/client/index.js';
import { isConfigError, parseExportConfig } from '../../src/export/index.js';
import { createEventsServer } from '../../src/server/index.js';
import { MemoryEventStore } from '../../src/storage/memory/index.js';
import { FUZZ_REGRESSIONS } from './fuzz-regressions.js';

/**
 * The fuzzed surfaces of kevents: what a request may carry to `kevents serve`
 * (event bodies of both APIs, the three kinds of patch, selectors, continue
 * tokens and the other query parameters), the export config reader and the
 * kubeconfig loader. Each property holds for any input: no uncaught exception,
 * no 5xx, and every refusal a 4xx `Status`; a config or kubeconfig is read or
 * refused with a one-line user-facing error. `test/fuzz.test.ts` runs a short
 * budget, `bench/fuzz.ts` the long one; inputs that ever failed are replayed
 * first from `fuzz-regressions.ts`.
 */

/** FuzzTarget is one fuzzed surface: `check` resolves for a good outcome and throws otherwise. */
export interface FuzzTarget<T> {
  name: string;
  arbitrary: fc.Arbitrary<T>;
  check(input: T): Promise<void>;
}

/** FuzzServer is an in-process `kevents serve` surface over a memory store, on a loopback port. */
export interface FuzzServer {
  url: string;
  close(): Promise<void>;
}

/** startFuzzServer starts the server the request properties talk to, with one event to patch. */
export async function startFuzzServer(): Promise<FuzzServer> {
  const store = new MemoryEventStore();
  const server = createEventsServer({ store });
  const address = await server.listen('127.0.0.1', 0);
  const url = `http://127.0.0.1:${address.port}`;
  const created = await fetch(`${url}/api/v1/namespaces/fuzz/events`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(VALID_CORE) });
  if (created.status !== 201) throw new Error(`cannot create the patch target: ${created.status}`);
  return {
    url,
    async close() {
      await server.close();
      await store.close();
    },
  };
}

const VALID_CORE = {
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name: 'target', namespace: 'fuzz' },
  involvedObject: { kind: 'Pod', namespace: 'fuzz', name: 'web-1' },
  reason: 'BackOff',
  message: 'Back-off restarting failed container',
  type: 'Warning',
  count: 1,
};

const VALID_V1 = {
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  metadata: { name: 'v1-event', namespace: 'fuzz' },
  eventTime: '2026-01-01T00:00:00.000000Z',
  reportingController: 'example.com/fuzz',
  reportingInstance: 'fuzz-1',
  action: 'Started',
  reason: 'Started',
  regarding: { kind: 'Pod', namespace: 'fuzz', name: 'web-1' },
  type: 'Normal',
};

/** anyValue is a JSON value of the kinds a decoder meets in a field: wrong types, odd strings, deep nesting. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom('', '-1', '0', '1e309', '2026-13-45T99:99:99Z', 'x'.repeat(300), '../..', '%00', '\u0000', 'a=b,c!=d'),
);

/** mutated takes a valid object and replaces, removes or adds fields at any depth. */
function mutated(base: Record<string, unknown>): fc.Arbitrary<unknown> {
  const keys = Object.keys(base);
  const nested = ['metadata', 'involvedObject', 'regarding', 'series', 'source', 'related'];
  return fc
    .record({
      replace: fc.dictionary(fc.constantFrom(...keys, ...nested, 'series', 'deprecatedCount', 'eventTime', 'firstTimestamp', 'lastTimestamp'), anyValue, { maxKeys: 4 }),
      nestedReplace: fc.dictionary(fc.constantFrom('name', 'namespace', 'uid', 'resourceVersion', 'labels', 'annotations', 'generateName', 'kind', 'count', 'lastObservedTime', 'creationTimestamp'), anyValue, { maxKeys: 3 }),
      into: fc.constantFrom(...nested),
      drop: fc.subarray(keys, { maxLength: 3 }),
    })
    .map(({ replace, nestedReplace, into, drop }) => {
      const o: Record<string, unknown> = structuredClone(base);
      for (const k of drop) delete o[k];
      Object.assign(o, replace);
      const inner = o[into];
      o[into] = { ...(typeof inner === 'object' && inner !== null && !Array.isArray(inner) ? inner : {}), ...nestedReplace };
      return o;
    });
}

/** body is what a request body may be: a mutated valid object as JSON, or YAML, or any JSON, or any text. */
function body(base: Record<string, unknown>): fc.Arbitrary<{ text: string; contentType: string }> {
  return fc.oneof(
    { weight: 5, arbitrary: mutated(base).map((o) => ({ text: JSON.stringify(o), contentType: 'application/json' })) },
    { weight: 1, arbitrary: mutated(base).map((o) => ({ text: stringify(o), contentType: 'application/yaml' })) },
    { weight: 1, arbitrary: fc.jsonValue().map((v) => ({ text: JSON.stringify(v), contentType: 'application/json' })) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary' }).map((text) => ({ text, contentType: 'application/json' })) },
    { weight: 1, arbitrary: fc.string().map((text) => ({ text, contentType: 'application/yaml' })) },
  );
}

/** expectStatus requires an answer below 500 and, for a refusal, a Status whose code is the answer's. */
async function expectStatus(res: Response, what: string): Promise<void> {
  const text = await res.text();
  // kube-apiserver's own 500 for a create that carries a resourceVersion, kept for parity (the differential suite).
  if (res.status === 500 && text.includes('"message":"Internal error occurred: resourceVersion should not be set on objects to be created"')) return;
  if (res.status >= 500) throw new Error(`${what}: ${res.status} ${text.slice(0, 300)}`);
  if (res.status < 400) return;
  let status: { kind?: unknown; code?: unknown };
  try {
    status = JSON.parse(text) as typeof status;
  } catch {
    throw new Error(`${what}: a ${res.status} that is not a Status: ${text.slice(0, 300)}`);
  }
  if (status.kind !== 'Status' || status.code !== res.status) throw new Error(`${what}: a ${res.status} whose body is not its Status: ${text.slice(0, 300)}`);
}

const send = (url: string, method: string, path: string, b?: { text: string; contentType: string }): Promise<Response> =>
  fetch(url + path, { method, ...(b !== undefined ? { body: b.text, headers: { 'Content-Type': b.contentType } } : {}) });

const name = fc.oneof(fc.constant('target'), fc.string({ maxLength: 40 }), fc.stringMatching(/^[a-z0-9.-]{1,30}$/));

/** selector is what a field or label selector may be: grammar-shaped pieces and anything at all. */
const selector = fc.oneof(
  fc.string(),
  fc.array(
    fc.tuple(
      fc.constantFrom('metadata.name', 'involvedObject.kind', 'reason', 'type', 'source', 'app', 'a.b/c', '!app', '', 'x'.repeat(70)),
      fc.constantFrom('=', '==', '!=', ' in ', ' notin ', '', '>', '<', ' in (', '=('),
      fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('(a,b)', '()', 'Pod', 'x y', '\\,', ',')),
    ).map(([k, op, v]) => `${k}${op}${v}`),
    { maxLength: 4 },
  ).map((parts) => parts.join(',')),
);

/** query is a list query: selectors, a continue token (random, or a real one damaged), limits and versions. */
const query = fc.record(
  {
    fieldSelector: selector,
    labelSelector: selector,
    continue: fc.oneof(fc.string(), fc.base64String(), fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v)).toString('base64'))),
    limit: fc.oneof(fc.integer().map(String), fc.string({ maxLength: 8 })),
    resourceVersion: fc.oneof(fc.constantFrom('0', '', '1', '99999999999999999999'), fc.string({ maxLength: 10 })),
    resourceVersionMatch: fc.oneof(fc.constantFrom('Exact', 'NotOlderThan', ''), fc.string({ maxLength: 10 })),
    timeoutSeconds: fc.oneof(fc.integer().map(String), fc.string({ maxLength: 5 })),
    pretty: fc.string({ maxLength: 5 }),
    fieldValidation: fc.oneof(fc.constantFrom('Strict', 'Warn', 'Ignore'), fc.string({ maxLength: 6 })),
    dryRun: fc.oneof(fc.constant('All'), fc.string({ maxLength: 6 })),
  },
  { requiredKeys: [] },
);

/** serverTargets are the request decoders of `kevents serve`. */
export function serverTargets(server: FuzzServer): FuzzTarget<any>[] {
  const url = server.url;
  return [
    {
      name: 'core/v1 event bodies (POST, PUT)',
      arbitrary: fc.tuple(body(VALID_CORE), fc.constantFrom('POST', 'PUT'), name),
      async check([b, method, n]: [{ text: string; contentType: string }, string, string]) {
        const path = method === 'POST' ? '/api/v1/namespaces/fuzz/events' : `/api/v1/namespaces/fuzz/events/${encodeURIComponent(n)}`;
        await expectStatus(await send(url, method, path, b), `${method} ${path}`);
      },
    },
    {
      name: 'events.k8s.io/v1 event bodies (POST, PUT)',
      arbitrary: fc.tuple(body(VALID_V1), fc.constantFrom('POST', 'PUT'), name),
      async check([b, method, n]: [{ text: string; contentType: string }, string, string]) {
        const path = method === 'POST' ? '/apis/events.k8s.io/v1/namespaces/fuzz/events' : `/apis/events.k8s.io/v1/namespaces/fuzz/events/${encodeURIComponent(n)}`;
        await expectStatus(await send(url, method, path, b), `${method} ${path}`);
      },
    },
    {
      name: 'patches (JSON, merge, strategic merge) of both APIs',
      arbitrary: fc.tuple(
        fc.constantFrom('application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml', 'text/plain'),
        fc.oneof(
          fc.array(fc.record({ op: fc.oneof(fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test'), fc.string()), path: fc.oneof(fc.constantFrom('/message', '/count', '/metadata/name', '/metadata', '', '/series/count', '/-', '/involvedObject/kind'), fc.string()), value: anyValue, from: fc.string() }, { requiredKeys: ['op'] }), { maxLength: 4 }).map((ops) => JSON.stringify(ops)),
          mutated(VALID_CORE).map((o) => JSON.stringify(o)),
          fc.jsonValue().map((v) => JSON.stringify(v)),
          fc.string({ unit: 'binary' }),
        ),
        fc.constantFrom('/api/v1', '/apis/events.k8s.io/v1'),
      ),
      async check([contentType, text, prefix]: [string, string, string]) {
        await expectStatus(await send(url, 'PATCH', `${prefix}/namespaces/fuzz/events/target`, { text, contentType }), `PATCH ${contentType}`);
      },
    },
    {
      name: 'list queries (selectors, continue tokens, parameters)',
      arbitrary: fc.tuple(query, fc.constantFrom('/api/v1/events', '/api/v1/namespaces/fuzz/events', '/apis/events.k8s.io/v1/events', '/apis/events.k8s.io/v1/namespaces/fuzz/events', '/apis/archive.kevents.io/v1alpha1/occurrences')),
      async check([q, path]: [Record<string, string>, string]) {
        const qs = new URLSearchParams(q).toString();
        await expectStatus(await send(url, 'GET', `${path}?${qs}`), `GET ${path}?${qs}`);
      },
    },
  ];
}

const VALID_EXPORT = {
  sinks: [
    { name: 'hooks', type: 'webhook', url: 'http://127.0.0.1:9/hook', policy: 'upsert', batchSize: 7, retry: { initialBackoff: '100ms', maxBackoff: '2s' } },
    { name: 'lines', type: 'file', path: '/tmp/kevents-fuzz/out.jsonl' },
  ],
  route: { drop: [{ namespace: 'kube-system' }], sinks: ['hooks', 'lines'] },
};

/** exportConfigTarget: a config is read or refused with a ConfigError (line and column), never anything else. */
export function exportConfigTarget(): FuzzTarget<string> {
  const sinkFields = fc.dictionary(
    fc.constantFrom('name', 'type', 'url', 'path', 'policy', 'batchSize', 'retry', 'stuckAfter', 'template', 'alert', 'brokers', 'topic', 'index', 'secretEnv', 'format', 'headers', 'labels'),
    anyValue,
    { maxKeys: 5 },
  );
  const mutatedConfig = fc
    .record({ sinks: fc.array(sinkFields, { maxLength: 3 }), route: anyValue, keep: fc.boolean(), extra: fc.dictionary(fc.string({ maxLength: 8 }), anyValue, { maxKeys: 2 }) })
    .map(({ sinks, route, keep, extra }) => ({
      sinks: [...VALID_EXPORT.sinks.map((s, i) => ({ ...s, ...(sinks[i] ?? {}) })), ...sinks.slice(2)],
      ...(keep ? { route: VALID_EXPORT.route } : { route }),
      ...extra,
    }));
  return {
    name: 'export config reader',
    arbitrary: fc.oneof(
      { weight: 4, arbitrary: mutatedConfig.map((c) => stringify(c)) },
      { weight: 1, arbitrary: fc.string() },
      { weight: 1, arbitrary: fc.jsonValue().map((v) => stringify(v)) },
      { weight: 1, arbitrary: mutatedConfig.map((c) => stringify(c)).chain((t) => fc.nat(t.length).map((cut) => t.slice(0, cut))) },
    ),
    check(text: string) {
      try {
        parseExportConfig(text, 'fuzz.yaml');
      } catch (e) {
        if (!isConfigError(e)) return Promise.reject(new Error(`not a ConfigError: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`));
      }
      return Promise.resolve();
    },
  };
}

/** kubeconfigTarget: a kubeconfig file is loaded or refused with a one-line user-facing error. */
export function kubeconfigTarget(): FuzzTarget<{ text: string; context: string | undefined }> & { dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-fuzz-kubeconfig-'));
  const file = join(dir, 'config');
  const valid = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443', 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user: { token: 'abc' } }],
    contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u', namespace: 'ns' } }],
    'current-context': 'ctx',
  };
  const part = fc.dictionary(fc.constantFrom('clusters', 'users', 'contexts', 'current-context', 'apiVersion', 'kind', 'preferences'), anyValue, { maxKeys: 3 });
  const entry = fc.dictionary(fc.constantFrom('name', 'cluster', 'user', 'context', 'server', 'namespace', 'token', 'exec', 'certificate-authority-data', 'client-key'), anyValue, { maxKeys: 3 });
  return {
    name: 'kubeconfig loader',
    arbitrary: fc.record({
      text: fc.oneof(
        { weight: 3, arbitrary: fc.tuple(part, fc.array(entry, { maxLength: 2 })).map(([p, extra]) => stringify({ ...valid, ...p, clusters: [...valid.clusters, ...extra] })) },
        { weight: 1, arbitrary: fc.string() },
        { weight: 1, arbitrary: fc.jsonValue().map((v) => stringify(v)) },
      ),
      context: fc.option(fc.oneof(fc.constant('ctx'), fc.string({ maxLength: 6 })), { nil: undefined }),
    }),
    async check({ text, context }) {
      writeFileSync(file, text);
      try {
        await loadKubeConfig({ kubeconfig: file, context });
      } catch (e) {
        const userFacing = typeof e === 'object' && e !== null && (e as { userFacing?: unknown }).userFacing === true;
        if (!userFacing || (e as Error).message.includes('\n')) throw new Error(`not a one-line user-facing error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      }
    },
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** runTarget checks the target's regression inputs, then `numRuns` generated ones. */
export async function runTarget<T>(target: FuzzTarget<T>, numRuns: number, seed?: number): Promise<void> {
  for (const input of (FUZZ_REGRESSIONS[target.name] ?? []) as T[]) await target.check(input);
  await fc.assert(
    fc.asyncProperty(target.arbitrary, (input) => target.check(input)),
    { numRuns, ...(seed !== undefined ? { seed } : {}) },
  );
}
