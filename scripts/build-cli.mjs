#!/usr/bin/env node
// Bundles the CLI (src/cli/main.ts and what it imports of src/) into dist/bin/:
// the entry point `kevents.js` with the static graph of `kevents serve` and the
// other commands in one file, and each command's own modules, loaded on demand,
// in shared chunks. Loading a hundred small modules was a fifth of a start.
// Packages in node_modules stay external; dist/bin sits at the depth of the
// other dist folders, so paths relative to a module (the UI assets in dist/ui,
// package.json) resolve the same from a chunk as from the compiled module.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist/bin`;
rmSync(outdir, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  // The SQLite writer thread (kevents serve --writer-thread) starts from an entry of its own, beside the CLI's.
  // kubectl-kevents is the kubectl plugin: the same commands, reading the archive through the cluster's aggregation layer.
  entryPoints: { kevents: 'src/cli/main.ts', 'kubectl-kevents': 'src/cli/kubectl-main.ts', 'sqlite-writer': 'src/storage/sqlite/writer-thread-main.ts' },
  entryNames: '[name]',
  chunkNames: '[name]-[hash]',
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});
