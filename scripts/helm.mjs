#!/usr/bin/env node
// Builds helm (the chart tests render deploy/chart/kevents with it) from its Go module, once,
// into a cache outside the repository keyed by version, and prints the binary's path.
//
//   node scripts/helm.mjs [--cache DIR] [--log FILE]
//
// Standard output carries only the path: what go prints goes to the log (default CACHE/build.log).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { logArg, runLogged } from './builder-io.mjs';

/** HELM_VERSION is the helm release the chart is tested with. */
export const HELM_VERSION = 'v3.17.3';

const i = process.argv.indexOf('--cache');
const cache = i > 0 ? process.argv[i + 1] : (process.env.KEVENTS_HELM_CACHE ?? join(homedir(), '.cache', 'kevents-helm'));
const bin = join(cache, HELM_VERSION, 'bin');
const helm = join(bin, 'helm');
if (!existsSync(helm)) {
  const go = ['go', '/usr/local/go/bin/go', '/usr/lib/go/bin/go'].find((g) => spawnSync(g, ['version']).status === 0);
  if (go === undefined) {
    process.stderr.write('helm: no Go toolchain found (install Debian\'s golang-go, or Go from its module proxy)\n');
    process.exit(1);
  }
  mkdirSync(bin, { recursive: true });
  const log = logArg(process.argv.slice(2), join(cache, 'build.log'));
  process.stderr.write(`helm: building helm ${HELM_VERSION} into ${bin} (once; output in ${log})\n`);
  try {
    runLogged(go, ['install', `helm.sh/helm/v3/cmd/helm@${HELM_VERSION}`], { env: { ...process.env, GOBIN: bin }, log });
  } catch (e) {
    process.stderr.write(`helm: ${e.message}\n`);
    process.exit(1);
  }
}
process.stdout.write(`${helm}\n`);
