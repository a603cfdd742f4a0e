import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { legacyEvent } from './support/http.js';
import { findKubectls, runKubectl } from './support/kubectl.js';
import { CLI, startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { ca as makeCa, CLIENT_EXT, leaf, makeCertificates } from './support/tls.js';
import type { TestCertificates } from './support/tls.js';

/**
 * `kevents serve` off loopback: HTTPS from certificate files (reloaded when they
 * change), bearer tokens from a kube-apiserver token file, read and write roles
 * by group, and upstream's 401 and 403 answers, driven with every bundled kubectl.
 */

const kubectls = findKubectls();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Answer {
  status: number;
  text: string;
  json: Record<string, unknown>;
}

function call(url: string, ca: Buffer, method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<Answer> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL(path, url),
      {
        method,
        ca,
        headers: {
          Accept: 'application/json',
          ...(options.token !== undefined ? { Authorization: `Bearer ${options.token}` } : {}),
          ...(payload !== undefined ? { 'Content-Type': 'application/json' } : {}),
        },
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let json: Record<string, unknown> = {};
          try {
            json = JSON.parse(text) as Record<string, unknown>;
          } catch {
            json = {};
          }
          resolve({ status: res.statusCode ?? 0, text, json });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

function manifest(name: string): string {
  return JSON.stringify(legacyEvent({ name, object: 'web-1', reason: 'Started', message: 'Started container web', firstAgo: 5, lastAgo: 5 }));
}

void describe('kevents serve with TLS and a token file', { timeout: 600_000 }, () => {
  let certs: TestCertificates;
  let server: ServerProcess;
  let tokenFile: string;
  let ca: Buffer;
  before(async () => {
    certs = makeCertificates();
    ca = readFileSync(certs.caFile);
    tokenFile = join(certs.dir, 'tokens.csv');
    writeFileSync(
      tokenFile,
      ['read-token,reader,uid-1,"kevents:readers"', 'write-token,writer,uid-2,"kevents:writers"', 'plain-token,nobody,uid-3', 'admin-token,admin,uid-4,"system:masters,ops"', ''].join('\n'),
    );
    server = await startServer(['--listen', '127.0.0.1:0', '--tls-cert-file', certs.certFile, '--tls-private-key-file', certs.keyFile, '--token-auth-file', tokenFile]);
  });
  after(async () => {
    await server.stop();
  });

  void it('answers https, with upstream\'s exact 401 body for no token and for an unknown one', async () => {
    assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const expected = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };
    for (const token of [undefined, 'no-such-token']) {
      const r = await call(server.url, ca, 'GET', '/api/v1/events', token === undefined ? {} : { token });
      assert.equal(r.status, 401, r.text);
      assert.deepEqual(r.json, expected);
    }
    // Probes carry no token.
    for (const path of ['/livez', '/readyz', '/healthz', '/version']) assert.equal((await call(server.url, ca, 'GET', path)).status, 200, path);
    assert.equal((await call(server.url, ca, 'GET', '/metrics')).status, 401);
  });

  void it('gives readers get/list/watch, writers also create/update/patch/delete, and answers upstream\'s 403 otherwise', async () => {
    const path = '/api/v1/namespaces/default/events';
    const created = await call(server.url, ca, 'POST', path, { token: 'write-token', body: JSON.parse(manifest('by-writer')) });
    assert.equal(created.status, 201, created.text);
    const refused = await call(server.url, ca, 'POST', path, { token: 'read-token', body: JSON.parse(manifest('by-reader')) });
    assert.equal(refused.status, 403, refused.text);
    assert.deepEqual(refused.json, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'events is forbidden: User "reader" cannot create resource "events" in API group "" in the namespace "default"',
      reason: 'Forbidden',
      details: { kind: 'events' },
      code: 403,
    });
    const named = await call(server.url, ca, 'DELETE', '/apis/events.k8s.io/v1/namespaces/default/events/by-writer', { token: 'read-token' });
    assert.equal(named.status, 403);
    assert.equal(named.json.message, 'events.events.k8s.io "by-writer" is forbidden: User "reader" cannot delete resource "events" in API group "events.k8s.io" in the namespace "default"');
    assert.deepEqual(named.json.details, { name: 'by-writer', group: 'events.k8s.io', kind: 'events' });
    const cluster = await call(server.url, ca, 'GET', '/api/v1/events', { token: 'plain-token' });
    assert.equal(cluster.json.message, 'events is forbidden: User "nobody" cannot list resource "events" in API group "" at the cluster scope');
    const watch = await call(server.url, ca, 'GET', '/api/v1/events?watch=true', { token: 'plain-token' });
    assert.equal(watch.json.message, 'events is forbidden: User "nobody" cannot watch resource "events" in API group "" at the cluster scope');
    const metrics = await call(server.url, ca, 'GET', '/metrics', { token: 'plain-token' });
    assert.equal(metrics.status, 403);
    assert.deepEqual(metrics.json.details, {});
    assert.equal(metrics.json.message, 'forbidden: User "nobody" cannot get path "/metrics"');
    // Discovery is every authenticated user's, as with RBAC's system:discovery.
    assert.equal((await call(server.url, ca, 'GET', '/apis', { token: 'plain-token' })).status, 200);
    assert.equal((await call(server.url, ca, 'GET', '/api/v1/namespaces/default/events/by-writer', { token: 'read-token' })).status, 200);
    assert.equal((await call(server.url, ca, 'GET', '/metrics', { token: 'read-token' })).status, 200);
    const patched = await call(server.url, ca, 'DELETE', `${path}/by-writer`, { token: 'admin-token' });
    assert.equal(patched.status, 200, patched.text);
  });

  for (const k of kubectls) {
    void it(`kubectl 1.${k.minor}: the read token lists and is refused a create with upstream's 403, the write token creates, an unknown token gets 401`, async () => {
      const tls = ['--certificate-authority', certs.caFile];
      const listed = await runKubectl(k, server.url, [...tls, '--token', 'read-token', 'get', 'events', '-A']);
      assert.equal(listed.code, 0, listed.stderr);
      const refused = await runKubectl(k, server.url, [...tls, '--token', 'read-token', 'create', '-f', '-'], { input: manifest(`reader-${k.minor}`) });
      assert.equal(refused.code, 1);
      assert.equal(
        refused.stderr.trim(),
        'Error from server (Forbidden): error when creating "STDIN": events is forbidden: User "reader" cannot create resource "events" in API group "" in the namespace "default"',
      );
      const created = await runKubectl(k, server.url, [...tls, '--token', 'write-token', 'create', '-f', '-'], { input: manifest(`writer-${k.minor}`) });
      assert.equal(created.code, 0, created.stderr);
      assert.equal(created.stdout.trim(), `event/writer-${k.minor} created`);
      const got = await runKubectl(k, server.url, [...tls, '--token', 'read-token', 'get', 'events', `writer-${k.minor}`, '-o', 'name']);
      assert.equal(got.stdout.trim(), `event/writer-${k.minor}`, got.stderr);
      // With no credentials at all kubectl prompts for a user name before it sends anything (as against
      // kube-apiserver); an unknown token reaches the server and gets the 401 (its body is checked above).
      const unknown = await runKubectl(k, server.url, [...tls, '--token', 'no-such-token', 'get', 'events']);
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /error: You must be logged in to the server \((Unauthorized|the server has asked for the client to provide credentials)\)/);
      const wrongCa = await runKubectl(k, server.url, ['--token', 'read-token', 'get', 'events']);
      assert.equal(wrongCa.code, 1);
      assert.match(wrongCa.stderr, /certificate signed by unknown authority/);
    });
  }

  void it('reloads the token file and the certificate when they change', async () => {
    writeFileSync(`${tokenFile}.new`, 'fresh-token,fresh,uid-9,"kevents:readers"\n');
    renameSync(`${tokenFile}.new`, tokenFile);
    const deadline = Date.now() + 20_000;
    while ((await call(server.url, ca, 'GET', '/api/v1/events', { token: 'fresh-token' })).status !== 200) {
      assert.ok(Date.now() < deadline, 'the new token is accepted');
      await sleep(200);
    }
    // With --workers (KEVENTS_TEST_WORKERS) each process reloads the file on its own, within moments of the others.
    const removedBy = Date.now() + (process.env.KEVENTS_TEST_WORKERS ? 5_000 : 0);
    for (;;) {
      const status = (await call(server.url, ca, 'GET', '/api/v1/events', { token: 'read-token' })).status;
      if (status === 401 || Date.now() >= removedBy) {
        assert.equal(status, 401, 'a removed token is refused');
        break;
      }
      await sleep(200);
    }
    // A certificate from another CA replaces the first: new handshakes trust only the new CA.
    const next = makeCertificates({ dir: mkdtempSync(join(tmpdir(), 'kevents-tls-next-')), commonName: 'kevents-next-ca' });
    copyFileSync(next.keyFile, `${certs.keyFile}.tmp`);
    copyFileSync(next.certFile, `${certs.certFile}.tmp`);
    renameSync(`${certs.certFile}.tmp`, certs.certFile);
    renameSync(`${certs.keyFile}.tmp`, certs.keyFile);
    const nextCa = readFileSync(next.caFile);
    for (;;) {
      try {
        const r = await call(server.url, nextCa, 'GET', '/api/v1/events', { token: 'fresh-token' });
        assert.equal(r.status, 200);
        break;
      } catch (e) {
        assert.ok(Date.now() < deadline + 20_000, `the new certificate is served: ${(e as Error).message}`);
        await sleep(200);
      }
    }
    const replacedBy = Date.now() + (process.env.KEVENTS_TEST_WORKERS ? 5_000 : 0);
    for (;;) {
      const old = call(server.url, ca, 'GET', '/version');
      if (Date.now() >= replacedBy) {
        await assert.rejects(old, /self-signed|unable to verify|unknown authority|certificate/);
        break;
      }
      if (await old.then(() => false, () => true)) break;
      await sleep(200);
    }
  });
});

/** asProxy sends GET /api/v1/events with a client certificate and a front proxy's headers, on `agent` or a new connection. */
function asProxy(url: string, serverCa: Buffer, cert: [Buffer, Buffer], agent?: https.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL('/api/v1/events', url),
      {
        ca: serverCa,
        cert: cert[0],
        key: cert[1],
        headers: { Accept: 'application/json', 'X-Remote-User': 'proxied', 'X-Remote-Group': 'kevents:readers' },
        agent: agent ?? false,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

void describe('kevents serve with a front proxy CA file that rotates', { timeout: 600_000 }, () => {
  void it('trusts the new CA from the next handshake on, closes the connections the old one verified, and keeps it through a broken file', async () => {
    const certs = makeCertificates();
    const serverCa = readFileSync(certs.caFile);
    for (const name of ['proxy-ca-old', 'proxy-ca-new']) makeCa(certs.dir, name);
    leaf(certs.dir, 'old-client', '/CN=front-proxy-client', certs.dir, 'proxy-ca-old', CLIENT_EXT);
    leaf(certs.dir, 'new-client', '/CN=front-proxy-client', certs.dir, 'proxy-ca-new', CLIENT_EXT);
    const pair = (name: string): [Buffer, Buffer] => [readFileSync(join(certs.dir, `${name}.crt`)), readFileSync(join(certs.dir, `${name}.key`))];
    const [oldClient, newClient] = [pair('old-client'), pair('new-client')];
    const caFile = join(certs.dir, 'front-proxy-ca.crt');
    copyFileSync(join(certs.dir, 'proxy-ca-old.crt'), caFile);
    const server = await startServer([
      '--tls-cert-file', certs.certFile, '--tls-private-key-file', certs.keyFile,
      '--requestheader-client-ca-file', caFile, '--requestheader-allowed-names', 'front-proxy-client',
    ]);
    // One kept-alive connection, as kube-apiserver's proxy keeps one: it must not outlive the CA that verified it.
    const kept = new https.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      assert.equal(await asProxy(server.url, serverCa, oldClient), 200);
      assert.equal(await asProxy(server.url, serverCa, newClient), 401);
      assert.equal(await asProxy(server.url, serverCa, oldClient, kept), 200);

      copyFileSync(join(certs.dir, 'proxy-ca-new.crt'), `${caFile}.tmp`);
      renameSync(`${caFile}.tmp`, caFile);
      const deadline = Date.now() + 20_000;
      while ((await asProxy(server.url, serverCa, newClient)) !== 200) {
        assert.ok(Date.now() < deadline, 'the new CA is trusted');
        await sleep(200);
      }
      // With --workers (KEVENTS_TEST_WORKERS) each process reloads the file on its own, within moments of the others.
      const replacedBy = Date.now() + (process.env.KEVENTS_TEST_WORKERS ? 5_000 : 0);
      for (;;) {
        const fresh = await asProxy(server.url, serverCa, oldClient);
        const reused = await asProxy(server.url, serverCa, oldClient, kept);
        if ((fresh === 401 && reused === 401) || Date.now() >= replacedBy) {
          assert.deepEqual([fresh, reused], [401, 401], 'the old CA verifies no new connection, and its kept-alive one is gone');
          break;
        }
        await sleep(200);
      }

      // A file holding no certificate (a rotation half written) keeps the CA in use.
      writeFileSync(`${caFile}.tmp`, 'not a certificate\n');
      renameSync(`${caFile}.tmp`, caFile);
      while (!server.stderr().includes('front-proxy-ca.crt\' holds no PEM certificate')) {
        assert.ok(Date.now() < deadline + 20_000, `the broken file is reported: ${server.stderr()}`);
        await sleep(200);
      }
      assert.equal(await asProxy(server.url, serverCa, newClient), 200);
      assert.equal(await asProxy(server.url, serverCa, oldClient), 401);
    } finally {
      kept.destroy();
      await server.stop();
    }
  });
});

void describe('kevents serve beyond loopback', () => {
  const serve = (args: string[]): { status: number | null; stderr: string } => {
    const r = spawnSync(process.execPath, [CLI, 'serve', '--storage', 'memory:', ...args], { encoding: 'utf8', timeout: 30_000 });
    return { status: r.status, stderr: r.stderr };
  };
  void it('refuses a non-loopback address without TLS and authentication, and says what is missing', () => {
    const plain = serve(['--listen', '0.0.0.0:0']);
    assert.equal(plain.status, 2, plain.stderr);
    assert.match(
      plain.stderr,
      /refusing to listen on 0\.0\.0\.0 without TLS \(--tls-cert-file and --tls-private-key-file\) and authentication \(--token-auth-file, --delegate-auth or --requestheader-client-ca-file\): .*--insecure-allow-remote/,
    );
    const certs = makeCertificates();
    const tlsOnly = serve(['--listen', '[::]:0', '--tls-cert-file', certs.certFile, '--tls-private-key-file', certs.keyFile]);
    assert.equal(tlsOnly.status, 2);
    assert.match(tlsOnly.stderr, /refusing to listen on :: without authentication \(--token-auth-file, --delegate-auth or --requestheader-client-ca-file\)/);
    const half = serve(['--tls-cert-file', certs.certFile]);
    assert.equal(half.status, 2);
    assert.match(half.stderr, /--tls-cert-file and --tls-private-key-file go together/);
    const other = makeCertificates();
    const mismatched = serve(['--tls-cert-file', certs.certFile, '--tls-private-key-file', other.keyFile]);
    assert.equal(mismatched.status, 1);
    assert.match(mismatched.stderr, /do not make a usable pair/);
    const badFile = join(certs.dir, 'bad.csv');
    writeFileSync(badFile, 'only,two\n');
    const bad = serve(['--token-auth-file', badFile]);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /token file '.*bad\.csv' must have at least 3 columns \(token, user name, user uid\), found 2/);
  });
  void it('refuses front-proxy flags without their CA, the CA without TLS, and a CA file holding no certificate', async () => {
    const certs = makeCertificates();
    const names = serve(['--requestheader-allowed-names', 'front-proxy-client']);
    assert.equal(names.status, 2);
    assert.match(names.stderr, /--requestheader-allowed-names needs --requestheader-client-ca-file: headers are trusted only from a client certificate that CA signed/);
    const noTls = serve(['--requestheader-client-ca-file', certs.caFile]);
    assert.equal(noTls.status, 2);
    assert.match(noTls.stderr, /--requestheader-client-ca-file needs --tls-cert-file and --tls-private-key-file/);
    const notPem = serve(['--tls-cert-file', certs.certFile, '--tls-private-key-file', certs.keyFile, '--requestheader-client-ca-file', certs.keyFile]);
    assert.equal(notPem.status, 1);
    assert.match(notPem.stderr, /--requestheader-client-ca-file '.*' holds no PEM certificate/);
    // With its CA, a front proxy is authentication enough to listen beyond loopback.
    const remote = await startServer(['--listen', '0.0.0.0:0', '--tls-cert-file', certs.certFile, '--tls-private-key-file', certs.keyFile, '--requestheader-client-ca-file', certs.caFile, '--requestheader-allowed-names', 'a,b']);
    assert.match(remote.url, /^https:\/\/0\.0\.0\.0:\d+$/);
    await remote.stop();
  });

  void it('listens anyway when told --insecure-allow-remote', async () => {
    const s = await startServer(['--listen', '0.0.0.0:0', '--insecure-allow-remote']);
    try {
      const r = await fetch(`http://127.0.0.1:${s.port}/version`);
      assert.equal(r.status, 200);
    } finally {
      await s.stop();
    }
  });
});
