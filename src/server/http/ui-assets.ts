import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { HTTPVersion, Instance as Router } from 'find-my-way';
import type { Logger } from '../../internal/index.js';

/**
 * UI_CONTENT_SECURITY_POLICY allows only the UI's own scripts, styles and API
 * calls. Event text is untrusted input; `require-trusted-types-for` makes any
 * string reaching an HTML sink (innerHTML and friends) throw instead of parse.
 */
export const UI_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

/** UiAssetsOptions configure where the built web UI is read from. */
export interface UiAssetsOptions {
  /** dir holds the Vite build (index.html, assets/); default dist/ui next to the compiled server. */
  dir?: string;
  logger: Logger;
}

interface Asset {
  body: Buffer;
  gzip: Buffer | undefined;
  type: string;
  etag: string;
  cacheControl: string;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

// Vite names every file under assets/ by its content hash, so a year is safe;
// index.html names the current hashes and must be revalidated every time.
const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';
const GZIP_MIN_BYTES = 1024;

/**
 * registerUiAssets serves the built web UI: `/` is index.html and `/assets/*`
 * the hashed bundles. It claims only those paths, so it never shadows the API,
 * discovery, OpenAPI, health or metrics routes. It answers whether the UI is
 * built (when not, `/` says how to build it).
 */
export function registerUiAssets(router: Router<HTTPVersion.V1>, options: UiAssetsOptions): boolean {
  const dir = options.dir ?? defaultUiDir();
  const assets = dir === undefined ? new Map<string, () => Asset>() : findAssets(dir);
  if (!assets.has('index.html')) options.logger.info('web UI not built; / answers 404', { dir: dir ?? '' });

  const serve = (name: string) => (req: IncomingMessage, res: ServerResponse): void => {
    const asset = assets.get(name)?.();
    if (asset === undefined) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
      res.end(name === 'index.html' ? 'The kevents web UI is not built (npm run build).\n' : '404 page not found\n');
      return;
    }
    sendAsset(req, res, asset);
  };
  router.on(['GET', 'HEAD'], '/', serve('index.html'));
  router.on(['GET', 'HEAD'], '/index.html', serve('index.html'));
  router.on(['GET', 'HEAD'], '/assets/*', (req, res, params) => serve(`assets/${params['*'] ?? ''}`)(req, res));
  return assets.has('index.html');
}

function sendAsset(req: IncomingMessage, res: ServerResponse, asset: Asset): void {
  res.setHeader('Content-Type', asset.type);
  res.setHeader('Cache-Control', asset.cacheControl);
  res.setHeader('ETag', asset.etag);
  res.setHeader('Vary', 'Accept-Encoding');
  res.setHeader('Content-Security-Policy', UI_CONTENT_SECURITY_POLICY);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  if (req.headers['if-none-match'] === asset.etag) {
    res.writeHead(304);
    res.end();
    return;
  }
  const gzip = asset.gzip !== undefined && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  const body = gzip ? asset.gzip! : asset.body;
  if (gzip) res.setHeader('Content-Encoding', 'gzip');
  res.setHeader('Content-Length', body.length);
  res.writeHead(200);
  res.end(req.method === 'HEAD' ? undefined : body);
}

function defaultUiDir(): string | undefined {
  // Bundled: dist/bin → dist/ui. Compiled: dist/server/http → dist/ui. From source (tsx): src/server/http → dist/ui.
  for (const rel of ['../ui/', '../../ui/', '../../../dist/ui/']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(join(dir, 'index.html'))) return dir;
  }
  return undefined;
}

/** findAssets lists the servable files; each is read, hashed and compressed on its first request, not at start. */
function findAssets(dir: string): Map<string, () => Asset> {
  const out = new Map<string, () => Asset>();
  if (!existsSync(dir)) return out;
  for (const file of walk(dir)) {
    const name = relative(dir, file).split(sep).join('/');
    if (name !== 'index.html' && !name.startsWith('assets/')) continue;
    const type = CONTENT_TYPES[extname(name)];
    if (type === undefined) continue;
    let asset: Asset | undefined;
    out.set(name, () => (asset ??= loadAsset(file, name, type)));
  }
  return out;
}

function loadAsset(file: string, name: string, type: string): Asset {
  const body = readFileSync(file);
  const compressible = /^(text\/|application\/json|image\/svg)/.test(type) && body.length >= GZIP_MIN_BYTES;
  return {
    body,
    gzip: compressible ? gzipSync(body) : undefined,
    type,
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
    cacheControl: name === 'index.html' ? REVALIDATE : IMMUTABLE,
  };
}

function walk(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) files.push(...walk(path));
    else files.push(path);
  }
  return files;
}
