#!/usr/bin/env node
// Checks ARCHITECTURE.md's module table on src/: which module may import which, and that a module is
// reached only through an index.ts. Imports inside one module are free. A unit test (*.test.ts) composes
// like cli/ does (a mirror's test starts a server): it may import any module, through its index.ts.
// Prints one line per broken rule and exits 1 when there is any. Usage: node scripts/check-layers.mjs [SRC_DIR]
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const src = resolve(process.argv[2] ?? join(new URL('..', import.meta.url).pathname, 'src'));
const root = dirname(src);

/** MAY is ARCHITECTURE.md's "may import" column; `storage` is the contract (src/storage/index.ts) only. */
const MAY = {
  api: [],
  internal: [],
  client: ['api', 'internal'],
  recorder: ['api', 'internal'],
  storage: ['api', 'internal'],
  auth: ['api', 'internal'],
  server: ['api', 'internal', 'storage', 'auth'],
  mirror: ['api', 'internal', 'client', 'storage'],
  timeline: ['api', 'storage'],
  lint: ['api'],
  print: ['api', 'lint'],
  diagnosis: ['api', 'storage', 'timeline'],
  export: ['api', 'internal', 'storage'],
  metrics: ['api', 'internal', 'storage'],
  cluster: ['api', 'internal', 'client'],
  lab: ['api', 'internal', 'client', 'timeline', 'print'],
  cli: '*',
  ui: ['api'],
};

/** ROOT_MODULE stands for the files directly in src/: the package's entry points, which compose modules as cli does. */
const ROOT_MODULE = '(root)';

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const moduleOf = (file) => {
  const rel = relative(src, file).split(sep);
  return rel.length === 1 ? ROOT_MODULE : rel[0];
};

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g;

const problems = [];
for (const file of walk(src, [])) {
  const from = moduleOf(file);
  const isTest = /\.test\.tsx?$/.test(file);
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (!spec.startsWith('.')) continue;
    const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
    if (!target.startsWith(src + sep)) continue;
    const to = moduleOf(target);
    if (to === from) continue;
    const where = `${relative(root, file)}: imports ${spec}`;
    const allowed = isTest || from === ROOT_MODULE || MAY[from] === '*' || (MAY[from] ?? []).includes(to);
    if (!allowed) {
      problems.push(`${where}: ${from}/ may not import ${to}/ (ARCHITECTURE.md, "may import")`);
      continue;
    }
    const rel = relative(join(src, to), target).split(sep);
    const throughIndex = rel[rel.length - 1] === 'index.ts';
    // cli and the package's entry points compose backends: they may reach a backend's own index (storage/sqlite/index.ts).
    const composer = isTest || from === ROOT_MODULE || MAY[from] === '*';
    if (!throughIndex) problems.push(`${where}: ${to}/ is imported only through an index.ts`);
    else if (!composer && rel.length > 1) problems.push(`${where}: ${from}/ reaches ${to}/ through its top index.ts only (a backend is picked by cli/)`);
  }
}
for (const p of problems) console.error(p);
if (problems.length > 0) {
  console.error(`check-layers: ${problems.length} import(s) against ARCHITECTURE.md's module table`);
  process.exit(1);
}
