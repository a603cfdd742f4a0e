import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ADMIN_TOKEN, startControlPlane } from './support/control-plane.js';
import type { ControlPlane } from './support/control-plane.js';
import { request } from './support/http.js';
import { rawExchange, slowClient } from './support/raw-http.js';
import type { RawAnswer, RawTarget } from './support/raw-http.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { until } from './support/wait.js';

/**
 * Slow and hostile clients against `kevents serve`: a thousand connections
 * that send their headers one byte a second do not stop anyone else from being
 * served and are cut off once their time is up; the connection cap holds;
 * oversized heads, URLs and bodies get the answers the real kube-apiserver
 * gives to the same bytes.
 */

const SLOW_CLIENTS = 1_000;
/** A request head long enough that a client sending a byte a second never finishes it before it is cut off. */
const SLOW_HEAD = `GET /api/v1/namespaces/default/events HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slowloris/${'z'.repeat(200)}\r\n\r\n`;

function event(name: string): unknown {
  return { metadata: { name }, involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-1' }, reason: 'Started', message: name, type: 'Normal' };
}

void describe('slow clients', () => {
  let server: ServerProcess;
  before(async () => {
    // The thousand slow clients all come from 127.0.0.1: the per-address cap (a sixteenth, 256) would close most of them on arrival.
    server = await startServer(['--read-header-timeout', '4s', '--read-timeout', '6s', '--max-connections-per-address', '4096']);
  });
  after(async () => {
    await server?.stop();
  });

  void it('serves others while a thousand clients send their headers a byte a second, then cuts those off', { timeout: 180_000 }, async (t) => {
    const target = { url: server.url };
    // A watch opened before the storm and still open after it: the read timeout is not a watch timeout.
    const controller = new AbortController();
    const watch = await fetch(`${server.url}/api/v1/namespaces/default/events?watch=true`, { signal: controller.signal });
    assert.equal(watch.status, 200);
    const reader = watch.body!.getReader();
    const slow = Array.from({ length: SLOW_CLIENTS }, () => slowClient(target, SLOW_HEAD, 1_000));
    try {
      await Promise.all(slow.map((c) => c.connected));
      const latencies: number[] = [];
      for (let i = 0; i < 200; i += 10) {
        const batch = Array.from({ length: 10 }, async (_, j) => {
          const started = performance.now();
          const r = (i + j) % 2 === 0
            ? await request(server.url, 'POST', '/api/v1/namespaces/default/events', event(`during-${i + j}`))
            : await request(server.url, 'GET', '/api/v1/namespaces/default/events?limit=50');
          latencies.push(performance.now() - started);
          return r;
        });
        for (const r of await Promise.all(batch)) assert.ok(r.status === 201 || r.status === 200, `${r.status} ${r.text}`);
      }
      latencies.sort((a, b) => a - b);
      t.diagnostic(`200 requests beside ${SLOW_CLIENTS} slow clients: median ${latencies[100]!.toFixed(1)} ms, p99 ${latencies[198]!.toFixed(1)} ms`);
      // Every slow client is cut off by the server, with Node's 408, once its headers are late.
      const answers = await Promise.all(slow.map((c) => c.ended));
      const cut = answers.filter((a) => a.startsWith('HTTP/1.1 408 Request Timeout\r\n')).length;
      assert.equal(cut, SLOW_CLIENTS, `answers: ${JSON.stringify([...new Set(answers)].slice(0, 3))}`);
      const created = await request(server.url, 'POST', '/api/v1/namespaces/default/events', event('after-the-storm'));
      assert.equal(created.status, 201);
      let seen = '';
      const decoder = new TextDecoder();
      while (!seen.includes('after-the-storm')) {
        const { value, done } = await reader.read();
        assert.equal(done, false, 'the watch was ended');
        seen += decoder.decode(value);
      }
    } finally {
      for (const c of slow) c.stop();
      controller.abort();
    }
  });

  void it('answers 408 to a body that does not arrive within --read-timeout', { timeout: 60_000 }, async () => {
    const body = JSON.stringify(event('slow-body'));
    const head = `POST /api/v1/namespaces/default/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const c = slowClient({ url: server.url }, head + body, 50);
    const answer = await c.ended;
    assert.match(answer, /^HTTP\/1\.1 408 Request Timeout\r\n/);
    const get = await request(server.url, 'GET', '/api/v1/namespaces/default/events/slow-body');
    assert.equal(get.status, 404, 'a body cut off was stored');
  });
});

void describe('the connection cap', () => {
  let server: ServerProcess;
  before(async () => {
    server = await startServer(['--max-connections', '20', '--max-connections-per-address', '20', '--read-header-timeout', '2s', '--read-timeout', '2s']);
  });
  after(async () => {
    await server?.stop();
  });

  void it('refuses requests beyond --max-connections (bar health checks) until the held ones are let go', { timeout: 60_000 }, async () => {
    const slow = Array.from({ length: 20 }, () => slowClient({ url: server.url }, SLOW_HEAD, 1_000));
    try {
      await Promise.all(slow.map((c) => c.connected));
      await until('the server counts the held connections', async () => {
        const a = await rawExchange({ url: server.url }, 'GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
        return a.status === 429;
      });
      await Promise.all(slow.map((c) => c.ended));
      // A held connection's slot is free once the server sees it closed, a moment after the client
      // sees the server's answer and end; until then one more request is still refused.
      await until('the server serves again once the held connections are let go', async () => {
        const ok = await request(server.url, 'GET', '/version').catch(() => undefined);
        return ok?.status === 200;
      }, 10_000, 50);
    } finally {
      for (const c of slow) c.stop();
    }
  });
});

/** Oversized is one request of raw bytes, sent alike to both servers, and which parts of the answers must agree. */
interface Oversized {
  title: string;
  request: (auth: string) => string | Buffer;
  /** body: the answer's body must be the same text (Go's plain-text answers) or the same Status (JSON). */
  compare: 'text' | 'status-json' | 'status-code';
}

const MiB = 1 << 20;

function get(path: string, extra = ''): (auth: string) => string {
  return (auth) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}${extra}Connection: close\r\n\r\n`;
}

function withBody(method: string, path: string, contentType: string, body: string, chunked = false): (auth: string) => Buffer {
  return (auth) => {
    const framing = chunked ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${Buffer.byteLength(body)}\r\n`;
    const head = `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Type: ${contentType}\r\n${framing}Connection: close\r\n\r\n`;
    const payload = chunked ? `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n` : body;
    return Buffer.from(head + payload);
  };
}

const bigEvent = JSON.stringify({ ...(event('big') as object), message: 'm'.repeat(4 * MiB) });

const OVERSIZED: Oversized[] = [
  { title: 'a 2 MiB header', request: get('/api/v1/namespaces/default/events', `X-Big: ${'a'.repeat(2 * MiB)}\r\n`), compare: 'text' },
  { title: 'a 2 MiB query string', request: get(`/api/v1/namespaces/default/events?labelSelector=${'a'.repeat(2 * MiB)}`), compare: 'text' },
  { title: '3,000 headers of 500 bytes (1.5 MB)', request: get('/api/v1/namespaces/default/events', Array.from({ length: 3000 }, (_, i) => `X-H${i}: ${'b'.repeat(500)}\r\n`).join('')), compare: 'text' },
  { title: 'a 600 KiB header (under the limit)', request: get('/api/v1/namespaces/default/events?limit=1', `X-Big: ${'a'.repeat(600 << 10)}\r\n`), compare: 'status-code' },
  { title: 'a 4 MiB event (Content-Length)', request: withBody('POST', '/api/v1/namespaces/default/events', 'application/json', bigEvent), compare: 'status-json' },
  { title: 'a 4 MiB event (chunked)', request: withBody('POST', '/apis/events.k8s.io/v1/namespaces/default/events', 'application/json', bigEvent, true), compare: 'status-json' },
  { title: 'a 4 MiB merge patch', request: withBody('PATCH', '/api/v1/namespaces/default/events/big', 'application/merge-patch+json', JSON.stringify({ message: 'm'.repeat(4 * MiB) })), compare: 'status-json' },
];

/**
 * answerOf reads a server's answer to a raw request. A server that answers an
 * oversized request before reading it all then resets the connection, and on a
 * busy machine the reset can overtake the answer in the client's kernel: such
 * a try says nothing about the answer and is made again (eight times at most,
 * a little later each time: under load three resets in a row were seen).
 */
async function answerOf(target: RawTarget, bytes: string | Buffer): Promise<RawAnswer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await rawExchange(target, bytes);
    } catch (e) {
      if (attempt >= 8 || !/closed without a complete answer/.test((e as Error).message)) throw e;
      await sleep(50 * attempt);
    }
  }
}

function statusOf(a: RawAnswer): unknown {
  const s = JSON.parse(a.body) as { kind?: string; code?: number; reason?: string; message?: string; status?: string };
  return { kind: s.kind, status: s.status, code: s.code, reason: s.reason, message: s.message };
}

void describe('oversized requests, against the real kube-apiserver', () => {
  let cp: ControlPlane;
  let server: ServerProcess;
  let upstream: RawTarget;
  before(async () => {
    [cp, server] = await Promise.all([startControlPlane(), startServer()]);
    upstream = { url: cp.url, ca: readFileSync(cp.caFile) };
  });
  after(async () => {
    await server?.stop();
    await cp?.stop();
  });

  for (const c of OVERSIZED) {
    void it(`answers ${c.title} as kube-apiserver does`, { timeout: 60_000 }, async () => {
      const want = await answerOf(upstream, c.request(`Authorization: Bearer ${ADMIN_TOKEN}\r\n`));
      const got = await answerOf({ url: server.url }, c.request(''));
      assert.equal(got.status, want.status, `kube-apiserver: ${want.statusLine} ${want.body.slice(0, 200)}\nkevents: ${got.statusLine} ${got.body.slice(0, 200)}`);
      if (c.compare === 'text') {
        assert.equal(got.statusLine, want.statusLine);
        assert.equal(got.headers['content-type'], want.headers['content-type']);
        assert.equal(got.body, want.body);
      } else if (c.compare === 'status-json') {
        assert.deepEqual(statusOf(got), statusOf(want));
      }
    });
  }
});
