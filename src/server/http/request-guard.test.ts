import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { checkArchiveRead, checkBodyType, checkHost, checkOrigin, hostName } from './request-guard.js';

const req = (method: string, headers: Record<string, string>): IncomingMessage => ({ method, headers }) as unknown as IncomingMessage;
const code = (e: unknown): number | undefined => (e as { status?: { code?: number } } | undefined)?.status?.code;

describe('checkOrigin', () => {
  const cases: [string, string, Record<string, string>, boolean, number | undefined][] = [
    ['kubectl: no Origin, no Sec-Fetch-Site', 'POST', { host: '127.0.0.1:8080' }, false, undefined],
    ['the web UI: its own origin, same-origin', 'POST', { host: '127.0.0.1:8080', origin: 'http://127.0.0.1:8080', 'sec-fetch-site': 'same-origin' }, false, undefined],
    ['typed into the address bar', 'DELETE', { host: 'localhost:8080', 'sec-fetch-site': 'none' }, false, undefined],
    ['default port dropped from Origin', 'PUT', { host: 'kevents.example:443', origin: 'https://kevents.example' }, true, undefined],
    ['a page of another site', 'POST', { host: '127.0.0.1:8080', origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }, false, 403],
    ['another port of 127.0.0.1 (same-site)', 'POST', { host: '127.0.0.1:8080', origin: 'http://127.0.0.1:9999', 'sec-fetch-site': 'same-site' }, false, 403],
    ['another origin, no Sec-Fetch-Site (an older browser)', 'PATCH', { host: '127.0.0.1:8080', origin: 'http://127.0.0.1:9999' }, false, 403],
    ['an opaque origin', 'DELETE', { host: '127.0.0.1:8080', origin: 'null' }, false, 403],
    ['http origin against an https server', 'POST', { host: '127.0.0.1:8443', origin: 'http://127.0.0.1:8443' }, true, 403],
    ['an Origin without a Host', 'POST', { origin: 'http://127.0.0.1:8080' }, false, 403],
    ['a cross-site read is not a write', 'GET', { host: '127.0.0.1:8080', origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }, false, undefined],
  ];
  for (const [name, method, headers, tls, want] of cases) it(name, () => assert.equal(code(checkOrigin(req(method, headers), tls)), want));
});

describe('checkArchiveRead', () => {
  const search = '/apis/archive.kevents.io/v1alpha1/search?q=x509';
  const evil = { host: '127.0.0.1:8080', origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' };
  const cases: [string, string, string, Record<string, string>, number | undefined][] = [
    ['kubectl: no Origin, no Sec-Fetch-Site', 'GET', search, { host: '127.0.0.1:8080' }, undefined],
    ['the web UI: same-origin', 'GET', search, { host: '127.0.0.1:8080', 'sec-fetch-site': 'same-origin' }, undefined],
    ['typed into the address bar', 'GET', search, { host: '127.0.0.1:8080', 'sec-fetch-site': 'none' }, undefined],
    ['a page of another site: search', 'GET', search, evil, 403],
    ['a page of another site: a namespace\'s search', 'GET', '/apis/archive.kevents.io/v1alpha1/namespaces/shop/search?q=a', evil, 403],
    ['a page of another site: incidents', 'GET', '/apis/archive.kevents.io/v1alpha1/incidents', evil, 403],
    ['a page of another site: timeline', 'GET', '/apis/archive.kevents.io/v1alpha1/namespaces/shop/timeline?kind=Pod&name=a', evil, 403],
    ['a page of another site: occurrences', 'HEAD', '/apis/archive.kevents.io/v1alpha1/occurrences', evil, 403],
    ['a page of another site with a bearer token (a client, not a page)', 'GET', search, { ...evil, authorization: 'Bearer abc' }, undefined],
    ['an older browser: another origin, no Sec-Fetch-Site', 'GET', search, { host: '127.0.0.1:8080', origin: 'http://127.0.0.1:9999' }, 403],
    ['an older browser: its own origin', 'GET', search, { host: '127.0.0.1:8080', origin: 'http://127.0.0.1:8080' }, undefined],
    ['another site reading the event list (not the archive)', 'GET', '/api/v1/events', evil, undefined],
    ['another site reading discovery', 'GET', '/apis/archive.kevents.io/v1alpha1', evil, undefined],
  ];
  for (const [name, method, url, headers, want] of cases) {
    it(name, () => assert.equal(code(checkArchiveRead({ method, url, headers } as unknown as IncomingMessage, false)), want));
  }
});

describe('checkBodyType', () => {
  const cases: [string, Record<string, string>, number | undefined][] = [
    ['POST', { 'content-length': '10', 'content-type': 'application/json' }, undefined],
    ['POST', { 'content-length': '10', 'content-type': 'application/json; charset=utf-8' }, undefined],
    ['PUT', { 'transfer-encoding': 'chunked', 'content-type': 'application/yaml' }, undefined],
    ['DELETE', { 'content-length': '40', 'content-type': 'application/json' }, undefined],
    ['DELETE', {}, undefined],
    ['POST', { 'content-length': '0' }, undefined],
    ['PATCH', { 'content-length': '5', 'content-type': 'application/strategic-merge-patch+json' }, undefined],
    ['POST', { 'content-length': '10' }, 415],
    ['POST', { 'content-length': '10', 'content-type': 'text/plain;charset=UTF-8' }, 415],
    ['POST', { 'content-length': '10', 'content-type': 'application/x-www-form-urlencoded' }, 415],
    ['POST', { 'transfer-encoding': 'chunked', 'content-type': 'multipart/form-data; boundary=x' }, 415],
    ['DELETE', { 'content-length': '40', 'content-type': 'text/plain' }, 415],
    ['PATCH', { 'content-length': '5' }, 415],
    ['PATCH', { 'content-length': '5', 'content-type': 'application/json' }, 415],
  ];
  for (const [method, headers, want] of cases) it(`${method} ${JSON.stringify(headers)}`, () => assert.equal(code(checkBodyType(req(method, headers))), want));
});

describe('checkHost', () => {
  const policy = { listenHost: 'kevents-box', allowedHosts: ['Proxy.Example.', 'fwd.internal'] };
  const cases: [string | undefined, number | undefined][] = [
    ['127.0.0.1:8080', undefined],
    ['[::1]:8080', undefined],
    ['10.1.2.3', undefined],
    ['localhost:8080', undefined],
    ['LOCALHOST.', undefined],
    ['ui.localhost:8080', undefined],
    ['kevents-box:8080', undefined],
    ['proxy.example', undefined],
    ['fwd.internal:443', undefined],
    [undefined, undefined],
    ['rebind.evil.example:8080', 403],
    ['localhost.evil.example', 403],
    ['127.0.0.1.nip.io:8080', 403],
    ['', 403],
  ];
  for (const [host, want] of cases) {
    it(String(host), () => {
      const got = checkHost(req('GET', host === undefined ? {} : { host }), policy);
      assert.equal(code(got), want);
      if (want !== undefined) assert.match((got as { message: string }).message, /--allowed-host/);
    });
  }
  it('reads a Host as a name: port, brackets and a trailing dot dropped', () => {
    assert.deepEqual(['a.b:80', '[::1]:1', 'A.B.', 'x'].map(hostName), ['a.b', '::1', 'a.b', 'x']);
  });
});
