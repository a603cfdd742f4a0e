import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { noopLogger } from '../internal/index.js';
import { createRequestGate, DEFAULT_REQUEST_HEADERS, groupAuthorizer, parseHeaderList, requestHeaderAuthenticator } from './index.js';
import type { Authorizer, UserInfo } from './index.js';

interface FakeConnection {
  cert?: { subject: { CN: string } };
  authorized?: boolean;
}

/** fakeRequest is a request on a TLS connection that presented `conn.cert` (none: no certificate), with these headers. */
function fakeRequest(conn: FakeConnection, headers: [string, string][], url = '/apis/archive.kevents.io/v1alpha1/namespaces/shop/incidents'): IncomingMessage {
  const distinct: Record<string, string[]> = {};
  for (const [k, v] of headers) (distinct[k.toLowerCase()] ??= []).push(v);
  const flat = Object.fromEntries(Object.entries(distinct).map(([k, v]) => [k, v.join(', ')]));
  const socket = { authorized: conn.authorized ?? false, authorizationError: conn.authorized === true ? undefined : 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', getPeerCertificate: () => conn.cert ?? {}, remoteAddress: '127.0.0.1' };
  return { method: 'GET', url, headers: flat, headersDistinct: distinct, socket } as unknown as IncomingMessage;
}

const proxy = { cert: { subject: { CN: 'front-proxy-client' } }, authorized: true };
const config = { allowedNames: ['front-proxy-client'], ...DEFAULT_REQUEST_HEADERS };

void describe('requestHeaderAuthenticator', () => {
  const auth = requestHeaderAuthenticator(config);
  const cases: { name: string; conn: FakeConnection; headers: [string, string][]; want: unknown }[] = [
    {
      name: 'a verified, allowed proxy names the user, its groups (each header value) and extra, and system:authenticated is added',
      conn: proxy,
      headers: [['X-Remote-User', 'alice'], ['X-Remote-Group', 'dev'], ['X-Remote-Group', 'ops'], ['X-Remote-Extra-Scopes', 'a'], ['X-Remote-Extra-Acme.com%2Fteam', 'b']],
      want: { user: { username: 'alice', uid: '', groups: ['dev', 'ops', 'system:authenticated'], extra: { scopes: ['a'], 'acme.com/team': ['b'] } } },
    },
    { name: 'no client certificate: the headers are ignored', conn: {}, headers: [['X-Remote-User', 'admin'], ['X-Remote-Group', 'system:masters']], want: undefined },
    {
      name: 'a certificate that did not verify against the CA is refused',
      conn: { cert: { subject: { CN: 'front-proxy-client' } }, authorized: false },
      headers: [['X-Remote-User', 'admin']],
      want: { refused: 'client certificate not verified against the request-header CA: UNABLE_TO_VERIFY_LEAF_SIGNATURE' },
    },
    {
      name: 'a verified certificate with a name not allowed is refused',
      conn: { cert: { subject: { CN: 'someone-else' } }, authorized: true },
      headers: [['X-Remote-User', 'admin']],
      want: { refused: 'client certificate CN "someone-else" is not one of --requestheader-allowed-names' },
    },
    { name: 'a verified proxy that names no user authenticates nothing', conn: proxy, headers: [['X-Remote-Group', 'dev']], want: undefined },
    { name: 'an empty user header is no user', conn: proxy, headers: [['X-Remote-User', '']], want: undefined },
  ];
  for (const c of cases) void it(c.name, () => assert.deepEqual(auth.authenticateRequest(fakeRequest(c.conn, c.headers)), c.want));

  void it('with no allowed names, any certificate the CA signed may assert users', () => {
    const any = requestHeaderAuthenticator({ ...config, allowedNames: [] });
    const r = any.authenticateRequest(fakeRequest({ cert: { subject: { CN: 'x' } }, authorized: true }, [['X-Remote-User', 'bob']]));
    assert.deepEqual(r, { user: { username: 'bob', uid: '', groups: ['system:authenticated'] } });
  });
  void it('reads the headers it is told to, the first username header with a value winning', () => {
    const custom = requestHeaderAuthenticator({ allowedNames: [], usernameHeaders: ['X-User', 'X-Remote-User'], groupHeaders: ['X-Groups'], extraHeaderPrefixes: ['X-Ex-'] });
    const r = custom.authenticateRequest(fakeRequest(proxy, [['X-Remote-User', 'second'], ['X-User', 'first'], ['X-Remote-Group', 'ignored'], ['X-Groups', 'g'], ['X-Ex-K', 'v']]));
    assert.deepEqual(r, { user: { username: 'first', uid: '', groups: ['g', 'system:authenticated'], extra: { k: ['v'] } } });
  });
});

void describe('parseHeaderList', () => {
  void it('splits each value on commas as pflag string slices do', () => {
    assert.deepEqual(parseHeaderList(['a,b', ' c ', '']), ['a', 'b', 'c']);
    assert.equal(parseHeaderList([]), undefined);
    assert.equal(parseHeaderList(undefined), undefined);
  });
});

void describe('createRequestGate with a front proxy', () => {
  const seen: UserInfo[] = [];
  const onlyAlice: Authorizer = {
    authorize(user) {
      seen.push(user);
      return { allowed: user.username === 'alice', reason: '' };
    },
  };
  const gate = createRequestGate({
    authenticators: [{ authenticateToken: (t) => (t === 'tok' ? { username: 'alice', uid: '1', groups: [] } : undefined) }],
    requestAuthenticators: [requestHeaderAuthenticator(config)],
    authorizers: [onlyAlice],
    logger: noopLogger,
  });
  const code = async (req: IncomingMessage): Promise<number | undefined> => (await gate.admit(req))?.status.code;

  void it('authorizes the user a verified proxy names: the proxy certificate alone grants nothing', async () => {
    assert.equal(await code(fakeRequest(proxy, [['X-Remote-User', 'alice']])), undefined);
    assert.equal(await code(fakeRequest(proxy, [['X-Remote-User', 'mallory'], ['X-Remote-Group', 'system:masters']])), 403);
    assert.deepEqual(seen.at(-1), { username: 'mallory', uid: '', groups: ['system:masters', 'system:authenticated'] });
  });
  void it('refuses forged headers without the certificate, a certificate of another CA and a name not allowed (401)', async () => {
    assert.equal(await code(fakeRequest({}, [['X-Remote-User', 'alice']])), 401);
    assert.equal(await code(fakeRequest({ cert: { subject: { CN: 'front-proxy-client' } }, authorized: false }, [['X-Remote-User', 'alice']])), 401);
    assert.equal(await code(fakeRequest({ cert: { subject: { CN: 'other' } }, authorized: true }, [['X-Remote-User', 'alice']])), 401);
  });
  void it('a bearer token still authenticates beside a refused certificate, and forged headers beside a token are ignored', async () => {
    const withToken = (conn: FakeConnection): IncomingMessage => {
      const req = fakeRequest(conn, [['X-Remote-User', 'mallory'], ['Authorization', 'Bearer tok']]);
      req.headers.authorization = 'Bearer tok';
      return req;
    };
    assert.equal(await code(withToken({ cert: { subject: { CN: 'other' } }, authorized: true })), undefined);
    assert.equal(await code(withToken({})), undefined);
    assert.equal(seen.at(-1)?.username, 'alice');
  });
  void it('with groupAuthorizer, a proxied user has the roles of its groups', async () => {
    const g = createRequestGate({ authenticators: [], requestAuthenticators: [requestHeaderAuthenticator(config)], authorizers: [groupAuthorizer], logger: noopLogger });
    assert.equal((await g.admit(fakeRequest(proxy, [['X-Remote-User', 'r'], ['X-Remote-Group', 'kevents:readers']])))?.status.code, undefined);
    assert.equal((await g.admit(fakeRequest(proxy, [['X-Remote-User', 'r']])))?.status.code, 403);
  });
});
