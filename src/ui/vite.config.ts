import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('./app/', import.meta.url));
const outDir = fileURLToPath(new URL('../../dist/ui/', import.meta.url));

/** The web UI build: Preact through Vite's own JSX transform, written to dist/ui for `kevents serve`. */
export default defineConfig({
  root,
  base: '/',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir,
    emptyOutDir: true,
    target: 'es2022',
    // The polyfill is an inline script, which the UI's Content-Security-Policy forbids.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
  },
  server: { host: '127.0.0.1' },
});
