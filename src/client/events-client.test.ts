import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import type { EventsV1Event, Status } from '../api/index.js';
import { isStatusError } from '../api/index.js';
import { createEventsClient } from './events-client.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

async function serve(handler: Handler): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function kubeConfigFor(server: string, token?: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server }],
    users: [{ name: 'u', ...(token !== undefined ? { token } : {}) }],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
    currentContext: 'ctx',
  });
  return kc;
}

function json(res: http.ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(code, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

const ev: EventsV1Event = { metadata: { name: 'a.1', namespace: 'ns' }, eventTime: '2025-01-01T00:00:00.000000Z', reason: 'R' };

void test('requests: paths, verbs, content types and credentials for both APIs', async () => {
  const srv = await serve((req, res, body) => json(res, req.method === 'POST' ? 201 : 200, body ? JSON.parse(body) : { kind: 'EventList', items: [] }));
  try {
    const c = createEventsClient({ kubeConfig: kubeConfigFor(srv.url, 'tok') });
    await c.eventsV1.create('ns', ev);
    await c.eventsV1.patch('ns', 'a.1', { series: { count: 2 } });
    await c.coreV1.patch('ns', 'a.1', { count: 2 }, { patchType: 'merge' });
    await c.coreV1.patch('ns', 'a.1', [{ op: 'replace', path: '/count', value: 3 }], { patchType: 'json', fieldManager: 'me' });
    await c.coreV1.update('ns', { metadata: { name: 'a.1', namespace: 'ns' }, involvedObject: {} });
    await c.coreV1.get('ns', 'a.1');
    await c.coreV1.list({ fieldSelector: 'reason=R', limit: 5 });
    await c.eventsV1.list({ namespace: 'ns', continue: 'tok2', resourceVersion: '0' });
    await c.coreV1.delete('ns', 'a.1');
    assert.deepEqual(
      srv.seen.map((s) => `${s.method} ${s.url} ${s.headers['content-type'] ?? '-'}`),
      [
        'POST /apis/events.k8s.io/v1/namespaces/ns/events application/json',
        'PATCH /apis/events.k8s.io/v1/namespaces/ns/events/a.1 application/strategic-merge-patch+json',
        'PATCH /api/v1/namespaces/ns/events/a.1 application/merge-patch+json',
        'PATCH /api/v1/namespaces/ns/events/a.1?fieldManager=me application/json-patch+json',
        'PUT /api/v1/namespaces/ns/events/a.1 application/json',
        'GET /api/v1/namespaces/ns/events/a.1 -',
        'GET /api/v1/events?fieldSelector=reason%3DR&limit=5 -',
        'GET /apis/events.k8s.io/v1/namespaces/ns/events?continue=tok2&resourceVersion=0 -',
        'DELETE /api/v1/namespaces/ns/events/a.1 -',
      ],
    );
    assert.ok(srv.seen.every((s) => s.headers.authorization === 'Bearer tok'));
    assert.ok(srv.seen.every((s) => s.headers.accept === 'application/json'));
    assert.deepEqual(JSON.parse(srv.seen[0]!.body), ev);
  } finally {
    await srv.close();
  }
});

void test('errors: a Status answer, a bare 502, a 429 Retry-After header, a reset connection', async () => {
  const invalid: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Invalid', message: 'Event "a.1" is invalid: x', code: 422 };
  const answers: Handler[] = [
    (_q, res) => json(res, 422, invalid),
    (_q, res) => {
      res.writeHead(502, { 'Content-Type': 'text/plain' });
      res.end('Bad Gateway');
    },
    (_q, res) => {
      res.writeHead(429, { 'Retry-After': '7', 'Content-Type': 'text/plain' });
      res.end('slow down');
    },
    (req) => req.socket.destroy(),
  ];
  const srv = await serve((req, res, body) => answers.shift()!(req, res, body));
  try {
    const c = createEventsClient({ kubeConfig: kubeConfigFor(srv.url) });
    const errors: unknown[] = [];
    for (let i = 0; i < 4; i++) errors.push(await c.eventsV1.create('ns', ev).then(() => undefined, (e: unknown) => e));
    const [e422, e502, e429, eReset] = errors;
    assert.ok(isStatusError(e422));
    assert.deepEqual(e422.status, invalid);
    assert.ok(isStatusError(e502));
    assert.equal(e502.status.code, 502);
    assert.equal(e502.status.reason, 'InternalError');
    assert.ok(isStatusError(e429));
    assert.equal(e429.status.reason, 'TooManyRequests');
    assert.equal(e429.status.details?.retryAfterSeconds, 7);
    assert.equal(isStatusError(eReset), false);
    assert.ok(eReset instanceof Error);
    assert.equal((eReset.cause as { code?: string }).code, 'ECONNRESET');
  } finally {
    await srv.close();
  }
});

void test('a request that cannot be built fails before it is sent', async () => {
  const srv = await serve((_q, res) => json(res, 200, {}));
  try {
    const c = createEventsClient({ kubeConfig: kubeConfigFor(srv.url) });
    const cases: [() => Promise<unknown>, RegExp][] = [
      [() => c.eventsV1.create('', ev), /can't create an event with empty namespace/],
      [() => c.eventsV1.create('other', ev), /can't create an event with namespace 'ns' in namespace 'other'/],
      [() => c.coreV1.patch('', 'x', {}), /can't patch an event with empty namespace/],
      [() => c.coreV1.update('ns', { metadata: {}, involvedObject: {} }), /without a name/],
    ];
    for (const [call, message] of cases) {
      await assert.rejects(call(), (e: Error) => e.name === 'RequestConstructionError' && message.test(e.message));
    }
    assert.equal(srv.seen.length, 0);
  } finally {
    await srv.close();
  }
});

void test('watch yields frames split across chunks and stops on abort', async () => {
  const frames = [
    { type: 'ADDED', object: { ...ev, metadata: { name: 'a', namespace: 'ns' } } },
    { type: 'MODIFIED', object: { ...ev, metadata: { name: 'a', namespace: 'ns' } } },
  ];
  const srv = await serve((_q, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    const text = frames.map((f) => JSON.stringify(f) + '\n').join('');
    res.write(text.slice(0, 17));
    setImmediate(() => res.write(text.slice(17)));
  });
  try {
    const c = createEventsClient({ kubeConfig: kubeConfigFor(srv.url) });
    const ac = new AbortController();
    const got: string[] = [];
    await assert.rejects(async () => {
      for await (const f of c.eventsV1.watch({ namespace: 'ns', resourceVersion: '5', allowWatchBookmarks: true, signal: ac.signal })) {
        got.push(f.type);
        if (got.length === 2) ac.abort();
      }
    }, /abort/i);
    assert.deepEqual(got, ['ADDED', 'MODIFIED']);
    assert.equal(srv.seen[0]!.url, '/apis/events.k8s.io/v1/namespaces/ns/events?resourceVersion=5&watch=true&allowWatchBookmarks=true');
  } finally {
    await srv.close();
  }
});

void test('a watch refused by the server throws its Status', async () => {
  const gone: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Expired', message: 'too old', code: 410 };
  const srv = await serve((_q, res) => json(res, 410, gone));
  try {
    const c = createEventsClient({ kubeConfig: kubeConfigFor(srv.url) });
    await assert.rejects(async () => {
      for await (const _ of c.coreV1.watch({ resourceVersion: '1' })) assert.fail('no frame expected');
    }, (e: unknown) => isStatusError(e) && e.status.reason === 'Expired');
  } finally {
    await srv.close();
  }
});

void test('a client made from a server URL needs no kubeconfig: same requests, no credentials; exactly one of server and kubeConfig', async () => {
  const srv = await serve((_q, res) => json(res, 200, { kind: 'EventList', metadata: { resourceVersion: '7' }, items: [] }));
  try {
    const c = createEventsClient({ server: `${srv.url}/prefix/` });
    const list = await c.coreV1.list({ limit: 5 });
    assert.equal((list as { metadata: { resourceVersion: string } }).metadata.resourceVersion, '7');
    await c.eventsV1.list({ namespace: 'ns' });
    assert.deepEqual(
      srv.seen.map((s) => s.url),
      ['/prefix/api/v1/events?limit=5', '/prefix/apis/events.k8s.io/v1/namespaces/ns/events'],
    );
    assert.ok(srv.seen.every((s) => s.headers.authorization === undefined && s.headers.accept === 'application/json'));
    assert.throws(() => createEventsClient({}), /either a kubeConfig or a server URL/);
    assert.throws(() => createEventsClient({ server: srv.url, kubeConfig: kubeConfigFor(srv.url) }), /either a kubeConfig or a server URL/);
    assert.throws(() => createEventsClient({ server: 'ftp://x' }), /use http:\/\/ or https:\/\//);
  } finally {
    await srv.close();
  }
});
