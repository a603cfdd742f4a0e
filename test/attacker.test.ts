import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { legacyEvent, request } from './support/http.js';
import { rawExchange } from './support/raw-http.js';
import { sleep } from './support/wait.js';
import { launchChromium } from './ui-scenario.js';

const NS = '/api/v1/namespaces/default/events';
const REBIND = 'rebind.evil.example';

/** Answer is what a request sent with a hand-made Host header got back. */
interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** send makes one request with exactly the headers given (fetch will not send a foreign Host). */
function send(base: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, method, path, headers: { ...headers, ...(body !== undefined ? { 'Content-Length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
        // A watch that was let through streams on: its first bytes are the answer.
        if (res.headers['transfer-encoding'] === 'chunked' && method === 'GET' && path.includes('watch')) res.destroy();
      });
      const done = (): void => resolve({ status: res.statusCode ?? 0, headers: res.headers, text });
      res.on('end', done);
      res.on('close', done);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const event = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  ...legacyEvent({ name, object: name, reason: 'Probe', message: `m ${name}`, firstAgo: 5, lastAgo: 5 }),
  ...extra,
});

async function names(base: string, ns = 'default'): Promise<string[]> {
  const list = await request(base, 'GET', `/api/v1/namespaces/${ns}/events`);
  assert.equal(list.status, 200, list.text);
  return (list.json.items as { metadata: { name: string } }[]).map((e) => e.metadata.name).sort();
}

describe('kevents serve against an attacker (no authentication, loopback)', () => {
  let srv: ServerProcess;
  before(async () => {
    srv = await startServer();
    for (const n of ['keep-1', 'keep-2']) assert.equal((await request(srv.url, 'POST', NS, event(n))).status, 201);
  });
  after(async () => {
    await srv.stop();
  });

  it('refuses the cross-site beacon: a POST with no Content-Type, text/plain or a form, or from another origin, writes nothing', async () => {
    const body = JSON.stringify(event('beacon'));
    const host = new URL(srv.url).host;
    const attempts: [string, Record<string, string>, number][] = [
      ['no Content-Type', { Host: host }, 415],
      ['text/plain', { Host: host, 'Content-Type': 'text/plain;charset=UTF-8' }, 415],
      ['a form', { Host: host, 'Content-Type': 'application/x-www-form-urlencoded' }, 415],
      ['another site', { Host: host, 'Content-Type': 'application/json', Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' }, 403],
      ['another port of 127.0.0.1', { Host: host, 'Content-Type': 'application/json', Origin: 'http://127.0.0.1:1', 'Sec-Fetch-Site': 'same-site' }, 403],
      ['another origin, no Sec-Fetch-Site', { Host: host, 'Content-Type': 'application/json', Origin: 'http://evil.example' }, 403],
    ];
    for (const [what, headers, code] of attempts) {
      const got = await send(srv.url, 'POST', NS, headers, body);
      assert.equal(got.status, code, `${what}: ${got.text}`);
      assert.equal(JSON.parse(got.text).kind, 'Status', what);
      if (code === 403) assert.equal(got.headers.connection, 'close', `${what}: a refused client keeps no connection`);
    }
    assert.deepEqual(await names(srv.url), ['keep-1', 'keep-2']);
    // The server's own page (its origin, same-origin) and API clients (no Origin) still write.
    const own = await send(srv.url, 'POST', NS, { Host: host, 'Content-Type': 'application/json', Origin: srv.url, 'Sec-Fetch-Site': 'same-origin' }, JSON.stringify(event('own-page')));
    assert.equal(own.status, 201, own.text);
    assert.equal((await request(srv.url, 'DELETE', `${NS}/own-page`)).status, 200);
  });

  it('refuses a rebinding Host on list, watch, PUT, PATCH, DELETE and deletecollection, naming --allowed-host', async () => {
    const host = `${REBIND}:${srv.port}`;
    const json = { Host: host, 'Content-Type': 'application/json' };
    const attempts: [string, string, Record<string, string>, string?][] = [
      ['GET', NS, { Host: host }],
      ['GET', `${NS}?watch=true`, { Host: host }],
      ['GET', '/api/v1/watch/events', { Host: host }],
      ['PUT', `${NS}/keep-1`, json, JSON.stringify(event('keep-1', { message: 'forged' }))],
      ['PATCH', `${NS}/keep-1`, { Host: host, 'Content-Type': 'application/merge-patch+json' }, '{"message":"forged"}'],
      ['DELETE', `${NS}/keep-1`, { Host: host }],
      ['DELETE', NS, { Host: host }],
      ['POST', NS, json, JSON.stringify(event('rebound'))],
    ];
    for (const [method, path, headers, body] of attempts) {
      const got = await send(srv.url, method, path, headers, body);
      assert.equal(got.status, 403, `${method} ${path}: ${got.text}`);
      const status = JSON.parse(got.text);
      assert.equal(status.reason, 'Forbidden');
      assert.match(status.message, new RegExp(`--allowed-host ${REBIND.replace(/\./g, '\\.')}`));
    }
    assert.deepEqual(await names(srv.url), ['keep-1', 'keep-2']);
    assert.equal((await request(srv.url, 'GET', `${NS}/keep-1`)).json.message, 'm keep-1');
    for (const ok of [`127.0.0.1:${srv.port}`, `localhost:${srv.port}`, `kevents.localhost:${srv.port}`, `[::1]:${srv.port}`]) {
      assert.equal((await send(srv.url, 'GET', NS, { Host: ok })).status, 200, ok);
    }
  });

  it('refuses percent-encoded static segments and absolute-form targets, which the gate and the router could read apart', async () => {
    for (const path of ['/api/v1/namespaces/default/%65vents', '/api/v1/namespaces/default/%65vents/keep-1', '/api/%761/events', '/api/v1/namespaces/default/events/..']) {
      const got = await send(srv.url, 'DELETE', path, { Host: `127.0.0.1:${srv.port}` });
      assert.equal(got.status, 400, `${path}: ${got.text}`);
    }
    const raw = await rawExchange({ url: srv.url }, `DELETE http://${REBIND}${NS} HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nConnection: close\r\n\r\n`);
    assert.equal(raw.status, 400, raw.body);
    assert.match(raw.body, /origin-form/);
    // A namespace or a name may be encoded: it is read decoded, by the gate and the handler alike.
    assert.equal((await send(srv.url, 'GET', `${NS.replace('default', '%64efault')}/keep%2D1`, { Host: `127.0.0.1:${srv.port}` })).status, 200);
    assert.deepEqual(await names(srv.url), ['keep-1', 'keep-2']);
  });

  it('keeps a namespaced timeline to its namespace: no Node, no other namespace', async () => {
    const nodeEvent = legacyEvent({ name: 'n1.secret', namespace: 'default', kind: 'Node', object: 'n1', reason: 'NodeNotReady', message: 'secret of default', type: 'Warning', firstAgo: 30, lastAgo: 30 });
    (nodeEvent.involvedObject as Record<string, unknown>).namespace = '';
    assert.equal((await request(srv.url, 'POST', NS, nodeEvent)).status, 201);
    const podEvent = legacyEvent({ name: 'p1.sched', namespace: 'team-a', object: 'p1', reason: 'Scheduled', message: 'Successfully assigned team-a/p1 to n1', component: 'default-scheduler', firstAgo: 40, lastAgo: 40 });
    assert.equal((await request(srv.url, 'POST', '/api/v1/namespaces/team-a/events', podEvent)).status, 201);
    const base = '/apis/archive.kevents.io/v1alpha1';
    const node = await request(srv.url, 'GET', `${base}/namespaces/team-a/timeline?for=Node/n1`);
    assert.equal(node.status, 400, node.text);
    assert.doesNotMatch(node.text, /secret of default/);
    const pod = await request(srv.url, 'GET', `${base}/namespaces/team-a/timeline?for=Pod/p1`);
    assert.equal(pod.status, 200, pod.text);
    assert.doesNotMatch(pod.text, /secret of default/);
    assert.match(pod.text, /Successfully assigned team-a\/p1 to n1/);
    const whole = await request(srv.url, 'GET', `${base}/namespaces/team-a/timeline`);
    assert.doesNotMatch(whole.text, /secret of default/);
    // The cluster-wide route is where a Node's timeline is read.
    const cluster = await request(srv.url, 'GET', `${base}/timeline?for=Node/n1`);
    assert.equal(cluster.status, 200, cluster.text);
    assert.match(cluster.text, /secret of default/);
  });

  it('refuses archive.kevents.io/* labels and annotations from a writer outside the privileged groups', async () => {
    const posing = await request(srv.url, 'POST', NS, event('posing', { metadata: { name: 'posing', namespace: 'default', labels: { 'archive.kevents.io/cluster': 'prod' } } }));
    assert.equal(posing.status, 422, posing.text);
    assert.match(posing.json.message, /metadata\.labels\[archive\.kevents\.io\/cluster\]: Forbidden/);
    const patched = await request(srv.url, 'PATCH', `${NS}/keep-2`, { metadata: { annotations: { 'archive.kevents.io/cluster-uid': 'x' } } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(patched.status, 422, patched.text);
    assert.deepEqual(await names(srv.url), ['keep-1', 'keep-2', 'n1.secret']);
  });

  it('writes a Warning with any character in ASCII: a committed create is never a 500', async () => {
    const body = { ...event('warned'), 'unknöwn☕\u202efield': 1 };
    const got = await request(srv.url, 'POST', NS, body);
    assert.equal(got.status, 201, got.text);
    const warning = got.headers.get('warning') ?? '';
    assert.match(warning, /^299 - "unknown field \\"unkn\\u00f6wn\\u2615/);
    assert.match(warning, /^[\x20-\x7e]+$/);
    assert.equal((await request(srv.url, 'DELETE', `${NS}/warned`)).status, 200);
  });

  it('lists the /readyz checks by name only, unless ?verbose', async () => {
    const plain = await request(srv.url, 'GET', '/readyz');
    assert.equal(plain.text, 'ok');
    const verbose = await request(srv.url, 'GET', '/readyz?verbose');
    assert.equal(verbose.status, 200);
    assert.match(verbose.text, /^\[\+\]storage ok\nreadyz check passed$/);
  });

  it('answers a huge selector with a 400 at once, and a selector at the caps while /healthz still answers (latency reported)', async (t) => {
    for (let i = 0; i < 1000; i += 100) {
      const batch = await Promise.all(Array.from({ length: 100 }, (_, j) => request(srv.url, 'POST', '/api/v1/namespaces/bulk/events', event(`bulk-${i + j}`, { metadata: { name: `bulk-${i + j}`, namespace: 'bulk' }, involvedObject: { kind: 'Pod', namespace: 'bulk', name: `p-${i + j}` } }))));
      for (const r of batch) assert.equal(r.status, 201, r.text);
    }
    const terms = (bytes: number, max = Infinity): string => {
      const parts: string[] = [];
      for (let i = 0, size = 0; size < bytes && parts.length < max; i++) {
        parts.push(`k${i}!=v${i}`);
        size += parts.at(-1)!.length + 1;
      }
      return parts.join(',');
    };
    const whileRunning = async (path: string): Promise<{ status: number; text: string; healthz: number[] }> => {
      const healthz: number[] = [];
      let done = false;
      const poll = (async () => {
        while (!done) {
          const started = performance.now();
          await request(srv.url, 'GET', '/healthz');
          healthz.push(performance.now() - started);
          await sleep(10);
        }
      })();
      // node:http, not fetch: undici refuses to send a request line of a megabyte.
      const got = await send(srv.url, 'GET', path, { Host: `127.0.0.1:${srv.port}` });
      done = true;
      await poll;
      return { status: got.status, text: got.text, healthz };
    };
    // `!`, `=` and `,` need no escaping in a query: 829 KB of selector fit in kube-apiserver's 1 MiB of headers.
    const huge = await whileRunning(`/api/v1/events?labelSelector=${terms(829_000)}`);
    assert.equal(huge.status, 400, huge.text.slice(0, 200));
    assert.match(JSON.parse(huge.text).message, /^labelSelector: Too long: must have at most 32768 bytes/);
    const capped = await whileRunning(`/api/v1/events?labelSelector=${encodeURIComponent(terms(32_000, 256))}`);
    assert.equal(capped.status, 200, capped.text.slice(0, 200));
    assert.equal(JSON.parse(capped.text).items.length > 1000, true);
    const max = (l: number[]): string => (l.length === 0 ? 'none' : `${Math.max(...l).toFixed(1)} ms`);
    t.diagnostic(`/healthz beside an 829 KB selector: ${huge.healthz.length} answers, slowest ${max(huge.healthz)}; beside a selector at the caps over ${JSON.parse(capped.text).items.length} events: ${capped.healthz.length} answers, slowest ${max(capped.healthz)}`);
  });

  it('cuts a watch that does not read: its connection is reset, not kept with its buffer', async () => {
    const u = new URL(srv.url);
    let closed = false;
    let response: IncomingMessage | undefined;
    let bytes = 0;
    const watch = httpRequest({ host: u.hostname, port: u.port, path: `${NS}?watch=true&resourceVersion=0` }, (res) => {
      res.pause(); // a client that stops reading
      res.on('data', (d: Buffer) => (bytes += d.length));
      res.on('error', () => {});
      res.on('close', () => (closed = true));
      response = res;
    });
    watch.on('error', () => (closed = true));
    watch.end();
    await sleep(300);
    // 100 KiB of annotation each: 30 MiB, well past a watch's 8 MiB and what the kernel holds.
    const pad = 'x'.repeat(100 * 1024);
    for (let i = 0; i < 300; i++) {
      const r = await request(srv.url, 'POST', NS, event(`flood-${i}`, { metadata: { name: `flood-${i}`, namespace: 'default', annotations: { pad } } }));
      assert.equal(r.status, 201, r.text);
    }
    await sleep(500);
    response?.resume();
    for (let i = 0; i < 100 && !closed; i++) await sleep(100);
    assert.ok(closed, 'the slow watch was never cut');
    assert.equal(response?.complete, false, 'the watch was ended cleanly: its unsent bytes stayed buffered until the client read them');
    assert.ok(bytes < 30 * 1024 * 1024, `${bytes} bytes reached the watcher: nothing was bounded`);
  });
});

describe('kevents serve --allowed-host, and tokens with privileged groups', () => {
  let srv: ServerProcess;
  before(async () => {
    srv = await startServer(['--allowed-host', 'kevents.proxy.example', '--allowed-host', 'other.example']);
  });
  after(async () => {
    await srv.stop();
  });
  it('answers the Host names it was given', async () => {
    for (const host of [`kevents.proxy.example:${srv.port}`, 'other.example']) assert.equal((await send(srv.url, 'GET', NS, { Host: host })).status, 200, host);
    assert.equal((await send(srv.url, 'GET', NS, { Host: `${REBIND}:${srv.port}` })).status, 403);
  });
  it('with tokens, lets kevents:archivers write archive labels, checks the origin still, and leaves the Host alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kevents-attacker-'));
    const tokens = join(dir, 'tokens.csv');
    writeFileSync(tokens, 'w-token,writer,1,"kevents:writers"\na-token,archiver,2,"kevents:writers,kevents:archivers"\n');
    const authed = await startServer(['--token-auth-file', tokens]);
    try {
      const labelled = (name: string): Record<string, unknown> => event(name, { metadata: { name, namespace: 'default', labels: { 'archive.kevents.io/cluster': 'prod' } } });
      const writer = await request(authed.url, 'POST', NS, labelled('by-writer'), { Authorization: 'Bearer w-token' });
      assert.equal(writer.status, 422, writer.text);
      const archiver = await request(authed.url, 'POST', NS, labelled('by-archiver'), { Authorization: 'Bearer a-token' });
      assert.equal(archiver.status, 201, archiver.text);
      const cross = await send(authed.url, 'POST', NS, { Host: `127.0.0.1:${authed.port}`, Authorization: 'Bearer a-token', 'Content-Type': 'application/json', Origin: 'https://evil.example' }, JSON.stringify(event('cross')));
      assert.equal(cross.status, 403, cross.text);
      // A rebinding page carries no bearer token: with authentication the Host is not what protects.
      assert.equal((await send(authed.url, 'GET', NS, { Host: `${REBIND}:${authed.port}`, Authorization: 'Bearer w-token' })).status, 200);
      const anonymous = await send(authed.url, 'GET', NS, { Host: `127.0.0.1:${authed.port}` });
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.headers.connection, 'close', 'an unauthenticated client keeps no connection');
    } finally {
      await authed.stop();
    }
  });
});

describe('a page of another local origin, in Chromium', () => {
  let srv: ServerProcess;
  let page: Server;
  let browser: Browser;
  let pageUrl: string;
  before(async () => {
    srv = await startServer();
    const target = `${srv.url}${NS}`;
    const body = JSON.stringify(event('from-page'));
    const html = `<!doctype html><title>evil</title><script>
      const target = ${JSON.stringify(target)};
      const body = ${JSON.stringify(body)};
      navigator.sendBeacon(target, new Blob([body]));
      navigator.sendBeacon(target, body);
      fetch(target, { method: 'POST', mode: 'no-cors', body }).catch(() => {});
      fetch(target, { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body }).catch(() => {});
      fetch(target, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body }).catch(() => {});
      document.title = 'sent';
    </script>`;
    page = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(html);
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => page.close(resolve));
    await srv.stop();
  });

  it('tries sendBeacon and fetch at kevents: every one reaches it and is refused, nothing is written', async () => {
    const context = await browser.newContext();
    const tab = await context.newPage();
    const answers: number[] = [];
    tab.on('response', (r) => {
      if (r.url().startsWith(srv.url) && r.request().method() === 'POST') answers.push(r.status());
    });
    await tab.goto(pageUrl);
    await tab.waitForFunction('document.title === "sent"');
    // Four simple requests go straight out (the JSON fetch asks first, and kevents grants no CORS).
    for (let i = 0; i < 100 && answers.length < 4; i++) await sleep(100);
    await context.close();
    assert.ok(answers.length >= 4, `the browser sent ${answers.length} of the requests: ${answers.join(', ')}`);
    assert.ok(answers.every((s) => s === 403 || s === 415), answers.join(', '));
    assert.deepEqual(await names(srv.url), []);
  });
});
