import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import FindMyWay from 'find-my-way';
import { registerUiAssets, UI_CONTENT_SECURITY_POLICY } from '../src/server/http/ui-assets.js';
import { noopLogger } from '../src/internal/index.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';

const BUILT_UI = fileURLToPath(new URL('../dist/ui/index.html', import.meta.url));

async function serveDir(dir: string): Promise<{ url: string; server: Server }> {
  const router = FindMyWay({ defaultRoute: (_req, res) => res.writeHead(418).end('default') });
  registerUiAssets(router, { dir, logger: noopLogger });
  const server = createServer((req, res) => router.lookup(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('registerUiAssets over a directory', () => {
  let dir: string;
  let url: string;
  let server: Server;
  const js = `console.log(${JSON.stringify('x'.repeat(4000))});\n`;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kevents-ui-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><script type="module" src="/assets/app-abc123.js"></script>');
    writeFileSync(join(dir, 'assets', 'app-abc123.js'), js);
    writeFileSync(join(dir, 'assets', 'app-abc123.css'), 'body{}');
    writeFileSync(join(dir, 'secret.txt'), 'not served');
    ({ url, server } = await serveDir(dir));
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const cases: { path: string; status: number; type?: string; cache?: string }[] = [
    { path: '/', status: 200, type: 'text/html; charset=utf-8', cache: 'no-cache' },
    { path: '/index.html', status: 200, type: 'text/html; charset=utf-8', cache: 'no-cache' },
    { path: '/assets/app-abc123.js', status: 200, type: 'text/javascript; charset=utf-8', cache: 'public, max-age=31536000, immutable' },
    { path: '/assets/app-abc123.css', status: 200, type: 'text/css; charset=utf-8', cache: 'public, max-age=31536000, immutable' },
    { path: '/assets/missing.js', status: 404 },
    { path: '/assets/../secret.txt', status: 418 },
    { path: '/assets/..%2fsecret.txt', status: 404 },
    { path: '/assets/%2e%2e%2fsecret.txt', status: 404 },
    { path: '/secret.txt', status: 418 },
  ];
  for (const c of cases) {
    it(`GET ${c.path} answers ${c.status}`, async () => {
      const res = await fetch(url + c.path, { headers: { 'Accept-Encoding': 'identity' } });
      assert.equal(res.status, c.status);
      if (c.type !== undefined) assert.equal(res.headers.get('content-type'), c.type);
      if (c.cache !== undefined) assert.equal(res.headers.get('cache-control'), c.cache);
      if (c.status === 200) {
        assert.equal(res.headers.get('content-security-policy'), UI_CONTENT_SECURITY_POLICY);
        assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      }
    });
  }

  it('sends gzip when asked, revalidates by ETag, and answers HEAD without a body', async () => {
    const gz = await fetch(`${url}/assets/app-abc123.js`, { headers: { 'Accept-Encoding': 'gzip' } });
    assert.equal(gz.headers.get('content-encoding'), 'gzip');
    assert.equal(await gz.text(), js);
    const etag = gz.headers.get('etag');
    assert.ok(etag);
    const again = await fetch(`${url}/assets/app-abc123.js`, { headers: { 'If-None-Match': etag } });
    assert.equal(again.status, 304);
    const head = await fetch(`${url}/`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
  });

  it('says the UI is not built when the directory has no index.html', async () => {
    const empty = await serveDir(mkdtempSync(join(tmpdir(), 'kevents-ui-empty-')));
    try {
      const res = await fetch(`${empty.url}/`);
      assert.equal(res.status, 404);
      assert.match(await res.text(), /not built/);
    } finally {
      await new Promise<void>((r) => empty.server.close(() => r()));
    }
  });
});

describe('kevents serve with the web UI', () => {
  let srv: ServerProcess;
  before(async () => {
    assert.ok(existsSync(BUILT_UI), `${BUILT_UI} is missing: run "npm run build" (vite build --config src/ui/vite.config.ts)`);
    srv = await startServer();
  });
  after(() => srv.stop());

  it('serves the built index and the bundles it names', async () => {
    const res = await fetch(`${srv.url}/`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-security-policy'), UI_CONTENT_SECURITY_POLICY);
    const html = await res.text();
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script: the CSP would block it');
    const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    assert.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), html);
    for (const a of assets) {
      const r = await fetch(srv.url + a);
      assert.equal(r.status, 200, a);
      assert.equal(r.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    }
  });

  const apiPaths: { path: string; type: RegExp }[] = [
    { path: '/version', type: /^application\/json/ },
    { path: '/healthz', type: /^text\/plain/ },
    { path: '/metrics', type: /^text\/plain/ },
    { path: '/api', type: /^application\/json/ },
    { path: '/apis', type: /^application\/json/ },
    { path: '/api/v1/events', type: /^application\/json/ },
    { path: '/apis/events.k8s.io/v1/events', type: /^application\/json/ },
    { path: '/openapi/v2', type: /^application\/json/ },
    { path: '/api/v1/nonexistent', type: /^application\/json/ },
  ];
  for (const c of apiPaths) {
    it(`leaves ${c.path} to the API`, async () => {
      const res = await fetch(srv.url + c.path, { headers: { Accept: 'application/json' } });
      assert.match(res.headers.get('content-type') ?? '', c.type);
      assert.equal(res.headers.get('content-security-policy'), null);
      assert.doesNotMatch(await res.text(), /<!doctype html>/i);
    });
  }
});
