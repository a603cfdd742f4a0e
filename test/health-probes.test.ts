import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { rawExchange } from './support/raw-http.js';
import type { RawAnswer, RawTarget } from './support/raw-http.js';
import { CLI, startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { makeCertificates } from './support/tls.js';

/**
 * Health probes against a full `kevents serve`: idle connections fill
 * --max-connections (or one address's share of it), and /healthz, /livez and
 * /readyz are still answered 200 while any other request is refused 429, over
 * HTTP and over HTTPS with authentication.
 */

/**
 * NEVER keeps the server from cutting the idle connections while a test runs: the caps alone are under test.
 * One process even where the suites run every server with --workers (KEVENTS_TEST_WORKERS): workers share
 * the caps, and which worker a connection reaches is the primary's choice, so which one is full is not known.
 */
const NEVER = ['--read-header-timeout', '10m', '--read-timeout', '10m', '--workers', '1'];

/** idle opens TCP connections that never send a byte, resolved once each is connected (so queued before any later one). */
async function idle(target: RawTarget, n: number): Promise<Socket[]> {
  const u = new URL(target.url);
  const sockets = Array.from({ length: n }, () => connect({ port: Number(u.port), host: u.hostname, ...(target.localAddress !== undefined ? { localAddress: target.localAddress } : {}) }));
  await Promise.all(sockets.map((s) => new Promise((resolve, reject) => s.once('connect', resolve).once('error', reject))));
  // The server closes those it holds over the caps: that is not this test's failure.
  for (const s of sockets) s.on('error', () => {});
  return sockets;
}

function get(target: RawTarget, path: string, token?: string): Promise<RawAnswer> {
  const auth = token !== undefined ? `Authorization: Bearer ${token}\r\n` : '';
  return rawExchange(target, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}\r\n`);
}

/** assertHealthy checks that every health path answers 200, over the caps on a connection it may not keep. */
async function assertHealthy(target: RawTarget, overCap = true): Promise<void> {
  for (const path of ['/healthz', '/livez', '/readyz']) {
    const a = await get(target, path);
    assert.equal(a.status, 200, `${path}: ${a.statusLine} ${a.body}`);
    assert.equal(a.body, 'ok');
    if (overCap) assert.equal(a.headers.connection, 'close', `${path} on a connection over the cap is not kept alive`);
  }
}

function assertRefused(a: RawAnswer): void {
  assert.equal(a.status, 429, `${a.statusLine} ${a.body}`);
  assert.equal(a.headers['retry-after'], '1');
  assert.equal(a.headers.connection, 'close');
  const s = JSON.parse(a.body) as { kind: string; reason: string; code: number };
  assert.deepEqual([s.kind, s.reason, s.code], ['Status', 'TooManyRequests', 429]);
}

void describe('health probes over a full connection cap', () => {
  let server: ServerProcess;
  let held: Socket[] = [];
  before(async () => {
    server = await startServer(['--max-connections', '16', '--max-connections-per-address', '16', ...NEVER]);
  });
  after(async () => {
    for (const s of held) s.destroy();
    await server?.stop();
  });

  void it('answers /healthz, /livez and /readyz while idle connections hold every slot, and refuses anything else', { timeout: 60_000 }, async () => {
    const target = { url: server.url };
    held = await idle(target, 16);
    await assertHealthy(target);
    assertRefused(await get(target, '/api/v1/namespaces/default/events'));
    assertRefused(await get(target, '/version'));
    // Idle connections beyond the cap take the health slots too, and are closed for the probes that come after them.
    held.push(...(await idle(target, 40)));
    await assertHealthy(target);
    assertRefused(await get(target, '/api/v1/namespaces/default/events'));
    // The cap's own slots were never given up: once the idle connections go, everything is served again.
    for (const s of held) s.destroy();
    held = [];
    let answer: RawAnswer;
    do answer = await get(target, '/api/v1/namespaces/default/events');
    while (answer.status === 429);
    assert.equal(answer.status, 200, `${answer.statusLine} ${answer.body}`);
  });
});

void describe('the per-address cap without authentication', () => {
  let server: ServerProcess;
  let held: Socket[] = [];
  before(async () => {
    server = await startServer(['--max-connections', '64', '--max-connections-per-address', '4', ...NEVER]);
  });
  after(async () => {
    for (const s of held) s.destroy();
    await server?.stop();
  });

  void it('refuses one address its fifth connection while another address is served, and answers both addresses\' probes', { timeout: 60_000 }, async () => {
    const greedy = { url: server.url, localAddress: '127.0.0.2' };
    const other = { url: server.url, localAddress: '127.0.0.1' };
    held = await idle(greedy, 4);
    assertRefused(await get(greedy, '/api/v1/namespaces/default/events'));
    const served = await get(other, '/api/v1/namespaces/default/events');
    assert.equal(served.status, 200, `${served.statusLine} ${served.body}`);
    await assertHealthy(greedy);
    await assertHealthy(other, false);
    held.pop()!.destroy();
    let answer: RawAnswer;
    do answer = await get(greedy, '/api/v1/namespaces/default/events');
    while (answer.status === 429);
    assert.equal(answer.status, 200, 'a slot of the address is free once one of its connections closes');
  });
});

void describe('health probes over a full cap, with TLS and authentication', () => {
  let server: ServerProcess;
  let target: RawTarget;
  let held: Socket[] = [];
  before(async () => {
    const certs = makeCertificates();
    const tokenFile = join(certs.dir, 'tokens.csv');
    writeFileSync(tokenFile, 'admin-token,admin,uid-1,"system:masters"\n');
    server = await startServer([
      '--tls-cert-file', certs.certFile, '--tls-private-key-file', certs.keyFile, '--token-auth-file', tokenFile,
      '--max-connections', '8', '--max-connections-per-address', '8', ...NEVER,
    ]);
    target = { url: server.url, ca: readFileSync(certs.caFile) };
  });
  after(async () => {
    for (const s of held) s.destroy();
    await server?.stop();
  });

  void it('answers the probes over TLS while connections that never authenticate fill the cap', { timeout: 60_000 }, async () => {
    const before = await get(target, '/api/v1/namespaces/default/events', 'admin-token');
    assert.equal(before.status, 200, `${before.statusLine} ${before.body}`);
    // Seven unauthenticated connections are all the cap lets in (one eighth is kept for clients that authenticated).
    held = await idle({ url: server.url, localAddress: '127.0.0.2' }, 8);
    await assertHealthy(target);
    assertRefused(await get(target, '/api/v1/namespaces/default/events', 'admin-token'));
  });
});

void describe('--max-connections-per-address', () => {
  const serve = (args: string[]): { status: number | null; stderr: string; stdout: string } =>
    spawnSync(process.execPath, [CLI, 'serve', '--storage', 'memory:', ...args], { encoding: 'utf8', timeout: 30_000 });

  for (const [value, cap] of [['0', '4096'], ['1.5', '4096'], ['9', '8'], ['many', '4096']] as const) {
    void it(`refuses ${value} under --max-connections ${cap}, before listening`, () => {
      const r = serve(['--max-connections', cap, '--max-connections-per-address', value]);
      assert.equal(r.status, 2, r.stderr);
      assert.equal(r.stderr.split('\n')[0], `error: --max-connections-per-address must be a whole number from 1 to --max-connections (${cap}), not "${value}"`);
    });
  }

  void it('is in the help, with the health slots of --max-connections', () => {
    const help = serve(['--help']).stdout.replace(/\s+/g, ' ');
    assert.match(help, /--max-connections-per-address <n>/);
    assert.match(help, /may only ask for \/healthz, \/livez or \/readyz/);
  });
});
