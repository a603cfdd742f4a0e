#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with Node's own test runner.
// Node 20 takes no globs on --test, so the files are listed here; a run that
// finds no test file fails rather than passing silently.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { prepare } from './setup.mjs';

const root = new URL('..', import.meta.url).pathname;
const filter = process.argv.slice(2);

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith('.test.ts')) out.push(relative(root, path));
  }
  return out;
}

let files = [...walk(join(root, 'src'), []), ...walk(join(root, 'test'), [])].sort();
if (filter.length > 0) files = files.filter((f) => filter.some((x) => f.includes(x)));
if (files.length === 0) {
  console.error('run-tests: no test files found');
  process.exit(1);
}
let testEnv;
try {
  // Idempotent and quick once the machine is set up; it tells the tests where PostgreSQL and the peers are.
  testEnv = prepare({ quiet: true });
} catch (err) {
  console.error(`run-tests: ${err.message}`);
  process.exit(1);
}
const concurrency = process.env.KEVENTS_TEST_CONCURRENCY ?? '3';
const result = spawnSync(
  process.execPath,
  ['--enable-source-maps', '--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...files],
  { cwd: root, stdio: 'inherit', env: { ...process.env, ...testEnv } },
);
process.exit(result.status ?? 1);
