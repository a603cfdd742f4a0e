import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { FakeClock, noopLogger } from '../internal/index.js';
import {
  bearerToken,
  createRequestGate,
  groupAuthorizer,
  isLoopbackHost,
  parseCsv,
  parseTokenFile,
  parseRequestTarget,
  requestAttributes,
  subjectAccessReviewAuthorizer,
  tokenReviewAuthenticator,
} from './index.js';
import type { ReviewClient, UserInfo } from './index.js';

void describe('parseCsv', () => {
  void it('reads quoted fields, doubled quotes, CRLF, blank lines and leading spaces as encoding/csv does', () => {
    assert.deepEqual(parseCsv('a,b,c\r\n\n t, "x,y",z\n"q""q",2,"multi\nline"\n'), [
      { line: 1, fields: ['a', 'b', 'c'] },
      { line: 3, fields: ['t', 'x,y', 'z'] },
      { line: 4, fields: ['q"q', '2', 'multi\nline'] },
    ]);
  });
  void it('refuses a bare quote and an unterminated quoted field', () => {
    assert.throws(() => parseCsv('a,b"c,d\n'), /line 1: bare " in non-quoted-field/);
    assert.throws(() => parseCsv('a,"bc\n'), /line 1: extraneous or missing " in quoted-field/);
  });
});

void describe('parseTokenFile', () => {
  void it('reads token,user,uid[,"groups"] and adds system:authenticated', () => {
    const warnings: string[] = [];
    const tokens = parseTokenFile('t1,alice,1,"kevents:readers,ops"\nt2,bob,2\n,empty,3\nt1,alice2,4,kevents:writers\n', 'tokens.csv', (w) => warnings.push(w));
    assert.deepEqual(tokens.get('t1'), { username: 'alice2', uid: '4', groups: ['kevents:writers', 'system:authenticated'] });
    assert.deepEqual(tokens.get('t2'), { username: 'bob', uid: '2', groups: ['system:authenticated'] });
    assert.equal(tokens.size, 2);
    assert.deepEqual(warnings, [
      "empty token has been found in token file 'tokens.csv', record number '3'",
      "duplicate token has been found in token file 'tokens.csv', record number '4'",
    ]);
  });
  void it('refuses a record of fewer than three columns, with upstream\'s message', () => {
    assert.throws(() => parseTokenFile('t1,alice\n', 'x.csv'), /^Error: token file 'x.csv' must have at least 3 columns \(token, user name, user uid\), found 2$/);
  });
});

void describe('bearerToken', () => {
  const cases: [string | undefined, string | undefined][] = [
    [undefined, undefined],
    ['Bearer abc', 'abc'],
    ['bearer abc', 'abc'],
    ['  Bearer abc  ', 'abc'],
    ['Bearer', undefined],
    ['Bearer  abc', undefined],
    ['Basic abc', undefined],
  ];
  for (const [header, token] of cases) void it(`${JSON.stringify(header)} -> ${String(token)}`, () => assert.equal(bearerToken(header), token));
});

void describe('requestAttributes', () => {
  const cases: [string, string, Partial<ReturnType<typeof requestAttributes>>][] = [
    ['GET', '/api/v1/events', { resourceRequest: true, verb: 'list', resource: 'events', namespace: '', apiGroup: '' }],
    ['GET', '/api/v1/events?watch=true', { verb: 'watch' }],
    ['GET', '/api/v1/events?watch=1&limit=5', { verb: 'watch' }],
    ['GET', '/api/v1/events?watch=false', { verb: 'list' }],
    ['GET', '/api/v1/watch/namespaces/ns/events', { verb: 'watch', namespace: 'ns', resource: 'events' }],
    ['GET', '/api/v1/namespaces/ns/events/e1', { verb: 'get', namespace: 'ns', name: 'e1' }],
    ['POST', '/apis/events.k8s.io/v1/namespaces/ns/events', { verb: 'create', apiGroup: 'events.k8s.io', apiVersion: 'v1', namespace: 'ns' }],
    ['PUT', '/api/v1/namespaces/ns/events/e1', { verb: 'update', name: 'e1' }],
    ['PATCH', '/api/v1/namespaces/ns/events/e1', { verb: 'patch' }],
    ['DELETE', '/api/v1/namespaces/ns/events/e1', { verb: 'delete' }],
    ['DELETE', '/api/v1/namespaces/ns/events', { verb: 'deletecollection' }],
    ['GET', '/api/v1/namespaces/ns', { verb: 'get', resource: 'namespaces', name: 'ns', namespace: 'ns' }],
    ['GET', '/api/v1/namespaces/ns/status', { resource: 'namespaces', name: 'ns', subresource: 'status' }],
    ['GET', '/apis/archive.kevents.io/v1alpha1/namespaces/ns/occurrences', { verb: 'list', apiGroup: 'archive.kevents.io', resource: 'occurrences' }],
    // The archive's search reads events: authorized as listing them, in its namespace or across all.
    ['GET', '/apis/archive.kevents.io/v1alpha1/namespaces/ns/search?q=x', { verb: 'list', apiGroup: '', apiVersion: 'v1', resource: 'events', namespace: 'ns' }],
    ['GET', '/apis/archive.kevents.io/v1alpha1/search?q=x', { verb: 'list', apiGroup: '', resource: 'events', namespace: '' }],
    ['POST', '/apis/archive.kevents.io/v1alpha1/search', { verb: 'create', apiGroup: 'archive.kevents.io', resource: 'search' }],
    ['GET', '/api', { resourceRequest: false, verb: 'get', path: '/api' }],
    ['GET', '/api/v1', { resourceRequest: false, path: '/api/v1' }],
    ['GET', '/apis/events.k8s.io/v1', { resourceRequest: false }],
    ['GET', '/openapi/v3?x=1', { resourceRequest: false, path: '/openapi/v3' }],
    ['POST', '/metrics', { resourceRequest: false, verb: 'post' }],
    // The handlers' reading of watch: anything but 0 and false (kube-apiserver's parameter codec).
    ['GET', '/api/v1/events?watch=yes', { verb: 'watch' }],
    ['GET', '/api/v1/events?watch=on', { verb: 'watch' }],
    ['GET', '/api/v1/events?watch=2', { verb: 'watch' }],
    ['GET', '/api/v1/events?watch=', { verb: 'watch' }],
    ['GET', '/api/v1/events?watch=FALSE', { verb: 'list' }],
    ['GET', '/api/v1/events?watch=0&watch=1', { verb: 'list' }],
    ['GET', '/api/v1/namespaces/ns/events/e1?watch=true', { verb: 'watch', name: 'e1' }],
    // A namespace or name is read decoded, as the router reads it.
    ['GET', '/api/v1/namespaces/%64efault/events/e%31', { namespace: 'default', name: 'e1', verb: 'get' }],
  ];
  for (const [method, url, want] of cases) {
    void it(`${method} ${url}`, () => {
      const got = requestAttributes(method, url);
      for (const [k, v] of Object.entries(want)) assert.equal(got[k as keyof typeof got], v, k);
    });
  }
});

void describe('parseRequestTarget refuses targets the router could read otherwise', () => {
  const refused: [string, string][] = [
    ['GET', 'http://evil.example/api/v1/events'],
    ['OPTIONS', '*'],
    ['GET', '/api/v1/namespaces/default/%65vents'],
    ['DELETE', '/api/%761/namespaces/default/events'],
    ['GET', '/apis/events.k8s.io%2Fv1/events'],
    ['GET', '/api/v1/watch/namespaces/default/%65vents'],
    ['GET', '/api/v1/namespaces/default/events/..'],
    ['GET', '/api/v1/namespaces/default/events/%2E%2E'],
    ['GET', '/api/v1/namespaces/default/events/a%2Fb'],
    ['GET', '/api/v1/namespaces/default/events/%zz'],
    ['GET', '/metr%69cs'],
  ];
  for (const [method, url] of refused) {
    void it(`${method} ${url}`, () => {
      assert.throws(() => parseRequestTarget(method, url), (e: unknown) => (e as { status?: { code?: number } }).status?.code === 400);
    });
  }
});

void describe('groupAuthorizer', () => {
  const user = (...groups: string[]): UserInfo => ({ username: 'u', uid: '', groups: [...groups, 'system:authenticated'] });
  const cases: [string[], string, string, boolean][] = [
    [['kevents:readers'], 'GET', '/api/v1/events', true],
    [['kevents:readers'], 'GET', '/api/v1/watch/events', true],
    [['kevents:readers'], 'POST', '/api/v1/namespaces/a/events', false],
    [['kevents:readers'], 'GET', '/metrics', true],
    [['kevents:writers'], 'POST', '/api/v1/namespaces/a/events', true],
    [['kevents:writers'], 'DELETE', '/api/v1/namespaces/a/events', true],
    [['kevents:writers'], 'GET', '/api/v1/events', true],
    [[], 'GET', '/api/v1/events', false],
    [[], 'GET', '/apis', true],
    [[], 'GET', '/openapi/v2', true],
    [[], 'GET', '/metrics', false],
    [[], 'POST', '/apis', false],
    [['system:masters'], 'DELETE', '/api/v1/namespaces/a/events', true],
  ];
  for (const [groups, method, url, allowed] of cases) {
    void it(`${groups.join(',') || '(no group)'} ${method} ${url}: ${allowed ? 'allowed' : 'denied'}`, () => {
      const d = groupAuthorizer.authorize(user(...groups), requestAttributes(method, url));
      assert.deepEqual(d, { allowed, reason: '' });
    });
  }
});

void describe('isLoopbackHost', () => {
  const cases: [string, boolean][] = [
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['localhost', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['', false],
    ['10.0.0.1', false],
    ['example.com', false],
  ];
  for (const [host, want] of cases) void it(`${JSON.stringify(host)}: ${want}`, () => assert.equal(isLoopbackHost(host), want));
});

const req = (method: string, url: string, authorization?: string): IncomingMessage =>
  ({ method, url, headers: authorization === undefined ? {} : { authorization } }) as unknown as IncomingMessage;

void describe('createRequestGate', () => {
  const tokens = new Map<string, UserInfo>([['r', { username: 'reader', uid: '1', groups: ['kevents:readers'] }]]);
  const gate = createRequestGate({ authenticators: [{ authenticateToken: (t) => tokens.get(t) }], authorizers: [groupAuthorizer], logger: noopLogger });
  void it('lets the probes through without a token, answers 401 without one elsewhere, 403 when the role does not allow', () => {
    assert.equal(gate.admit(req('GET', '/readyz')), undefined);
    assert.equal(gate.admit(req('GET', '/livez?verbose')), undefined);
    const none = gate.admit(req('GET', '/api/v1/events'));
    assert.equal((none as { status: { code: number } }).status.code, 401);
    assert.equal((gate.admit(req('POST', '/readyz')) as { status: { code: number } }).status.code, 401);
    assert.equal(gate.admit(req('GET', '/api/v1/events', 'Bearer r')), undefined, 'synchronous and allowed');
    const denied = gate.admit(req('POST', '/api/v1/namespaces/x/events', 'Bearer r')) as { status: { code: number; message: string } };
    assert.equal(denied.status.code, 403);
    assert.equal(denied.status.message, 'events is forbidden: User "reader" cannot create resource "events" in API group "" in the namespace "x"');
  });
  void it('asks for credentials for the details of /readyz?verbose, and authorizes the watch the handler will serve', () => {
    assert.equal((gate.admit(req('GET', '/readyz?verbose')) as { status: { code: number } }).status.code, 401);
    assert.equal(gate.admit(req('GET', '/readyz?verbose', 'Bearer r')), undefined);
    const g = createRequestGate({
      authenticators: [{ authenticateToken: (t) => tokens.get(t) }],
      authorizers: [{ authorize: (_u, a) => ({ allowed: a.verb !== 'watch', reason: '' }) }],
      logger: noopLogger,
    });
    assert.equal((g.admit(req('GET', '/api/v1/events?watch=yes', 'Bearer r')) as { status: { code: number } }).status.code, 403);
    assert.equal((g.admit(req('GET', '/api/v1/namespaces/default/%65vents', 'Bearer r')) as { status: { code: number } }).status.code, 400);
  });
  void it('marks the requests of system:masters and kevents:archivers as privileged, no one else', () => {
    const users = new Map<string, UserInfo>([
      ['w', { username: 'writer', uid: '1', groups: ['kevents:writers'] }],
      ['a', { username: 'archiver', uid: '2', groups: ['kevents:writers', 'kevents:archivers'] }],
      ['m', { username: 'admin', uid: '3', groups: ['system:masters'] }],
    ]);
    const g = createRequestGate({ authenticators: [{ authenticateToken: (t) => users.get(t) }], authorizers: [groupAuthorizer], logger: noopLogger });
    for (const [token, want] of [['w', false], ['a', true], ['m', true]] as const) {
      const r = req('POST', '/api/v1/namespaces/x/events', `Bearer ${token}`);
      assert.equal(g.admit(r), undefined);
      assert.equal(g.privileged(r), want, token);
    }
  });
  void it('tries each authenticator and each authorizer in turn (a union), asynchronous ones included, and joins the denial reasons', async () => {
    const g = createRequestGate({
      authenticators: [{ authenticateToken: () => undefined }, { authenticateToken: (t) => Promise.resolve(t === 'late' ? { username: 'late', uid: '', groups: [] } : undefined) }],
      authorizers: [groupAuthorizer, { authorize: () => Promise.resolve({ allowed: false, reason: 'no rule matched' }) }],
      logger: noopLogger,
    });
    const denied = (await g.admit(req('GET', '/api/v1/events', 'Bearer late'))) as { status: { message: string } };
    assert.equal(denied.status.message, 'events is forbidden: User "late" cannot list resource "events" in API group "" at the cluster scope: no rule matched');
    assert.equal(((await g.admit(req('GET', '/api/v1/events', 'Bearer other'))) as { status: { code: number } }).status.code, 401);
    const broken = createRequestGate({ authenticators: [{ authenticateToken: () => Promise.reject(new Error('review failed')) }], authorizers: [], logger: noopLogger });
    assert.equal(((await broken.admit(req('GET', '/api/v1/events', 'Bearer x'))) as { status: { code: number } }).status.code, 500);
  });
});

void describe('delegated reviews', () => {
  const fake = (answer: (body: Record<string, unknown>) => unknown): ReviewClient & { bodies: unknown[] } => {
    const bodies: unknown[] = [];
    return {
      bodies,
      request<T>(r: { body: unknown }): Promise<T> {
        bodies.push(r.body);
        return Promise.resolve(answer(r.body as Record<string, unknown>) as T);
      },
    };
  };
  void it('a TokenReview names the user; answers are cached for 10 s', async () => {
    const clock = new FakeClock();
    const client = fake((b) => ({ status: (b.spec as { token: string }).token === 'good' ? { authenticated: true, user: { username: 'system:serviceaccount:ns:sa', uid: 'u1', groups: ['system:serviceaccounts'] } } : { authenticated: false } }));
    const a = tokenReviewAuthenticator(client, { clock });
    assert.deepEqual(await a.authenticateToken('good'), { username: 'system:serviceaccount:ns:sa', uid: 'u1', groups: ['system:serviceaccounts'] });
    assert.equal(await a.authenticateToken('bad'), undefined);
    await a.authenticateToken('good');
    await a.authenticateToken('bad');
    assert.equal(client.bodies.length, 2);
    await clock.advance(10_001);
    await a.authenticateToken('good');
    assert.equal(client.bodies.length, 3);
    assert.deepEqual(client.bodies[0], { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'good' } });
  });
  void it('a SubjectAccessReview carries the request\'s attributes, resource or non-resource', async () => {
    const client = fake(() => ({ status: { allowed: false, reason: 'nope' } }));
    const z = subjectAccessReviewAuthorizer(client);
    const user = { username: 'u', uid: 'i', groups: ['g'] };
    assert.deepEqual(await z.authorize(user, requestAttributes('POST', '/apis/events.k8s.io/v1/namespaces/ns/events')), { allowed: false, reason: 'nope' });
    await z.authorize(user, requestAttributes('GET', '/metrics'));
    assert.deepEqual(client.bodies, [
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user: 'u', uid: 'i', groups: ['g'], resourceAttributes: { namespace: 'ns', verb: 'create', group: 'events.k8s.io', version: 'v1', resource: 'events', subresource: '', name: '' } },
      },
      { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'u', uid: 'i', groups: ['g'], nonResourceAttributes: { path: '/metrics', verb: 'get' } } },
    ]);
  });
});
