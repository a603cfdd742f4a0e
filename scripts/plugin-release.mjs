#!/usr/bin/env node
// Makes the kubectl plugin's krew release: one JavaScript bundle of `kubectl kevents` (the read commands, with
// commander, yaml and client-node inside, no native module), a launcher that checks Node's version, the per-platform
// .tar.gz archives holding both, and the krew manifest naming each archive's URL and sha256.
//
//   npm run --silent plugin-release -- --base-url URL [--version X.Y.Z] [--out DIR] [--manifest FILE]
//
// --base-url is where the archives will be published (the manifest's uri is BASE-URL/ARCHIVE-NAME); --version
// defaults to package.json's; --out (default dist/krew) receives the archives; --manifest (default
// deploy/krew/kevents.yaml) the manifest. Standard output lists the files written.
//
// The archives are byte-for-byte reproducible (sorted names, owner 0, mtime 0, gzip without a name or time), so
// a checkout's manifest can be checked against a rebuild. They need GNU tar (Debian's; gtar on macOS).
// Every platform gets the same JavaScript; Windows gets none: krew installs a Windows plugin's bin as
// kubectl-NAME.exe, which a script cannot be.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = fileURLToPath(new URL('..', import.meta.url));

/** PLATFORMS are the krew selectors an archive is made for (os and arch as krew's matchLabels name them). */
export const PLATFORMS = [
  { os: 'linux', arch: 'amd64' },
  { os: 'linux', arch: 'arm64' },
  { os: 'darwin', arch: 'amd64' },
  { os: 'darwin', arch: 'arm64' },
];

/** MIN_NODE is the oldest Node major the bundle runs on (package.json's engines). */
export const MIN_NODE = 20;

const BUNDLE = 'kubectl-kevents.mjs';
const BIN = 'kubectl-kevents';

// The packages the read commands load through requireCjs (src/internal/cjs.ts): written as static requires, so
// that the bundler puts them in the file. Any other name is no part of the plugin (better-sqlite3, the drivers).
const BUNDLED_CJS = ['commander', 'yaml'];

/** PLUGIN_NEVER are the source paths (relative to the checkout) no part of `kubectl kevents` imports. */
const PLUGIN_NEVER = ['src/cli/command-table.ts', 'src/cli/commands/serve/', 'src/server/', 'src/storage/sqlite/', 'src/storage/postgres/', 'src/storage/etcd/', 'src/storage/memory/', 'src/lab/', 'src/export/', 'src/mirror/'];

/**
 * LAUNCHER is the plugin's bin: CommonJS in syntax any Node parses (krew's install folder has no package.json),
 * so an old Node reaches the version check and says what is wrong in one line instead of a syntax error.
 */
const LAUNCHER = `#!/usr/bin/env node
// kubectl-kevents: \`kubectl kevents\`, the kevents archive's read commands through the current kubeconfig context.
// It needs Node.js ${MIN_NODE} or newer as \`node\` on PATH; the commands are in ${BUNDLE} beside this file.
var major = Number(String(process.versions.node).split('.')[0]);
if (!(major >= ${MIN_NODE})) {
  process.stderr.write('kubectl-kevents needs Node.js ${MIN_NODE} or newer as node on PATH; found Node.js ' + process.versions.node + '\\n');
  process.exit(1);
}
var bundle = require('url').pathToFileURL(require('path').join(__dirname, '${BUNDLE}')).href;
// import() through a Function: a parser older than dynamic import must still reach the check above.
new Function('u', 'return import(u)')(bundle).catch(function (e) {
  process.stderr.write('kubectl-kevents: ' + (e && e.stack ? e.stack : String(e)) + '\\n');
  process.exitCode = 70;
});
`;

function parseArgs(argv) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const opts = { version: pkg.version, baseUrl: undefined, out: join(root, 'dist', 'krew'), manifest: join(root, 'deploy', 'krew', 'kevents.yaml') };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s);
    const value = () => inline ?? argv[++i] ?? '';
    if (flag === '--version') opts.version = value().replace(/^v/, '');
    else if (flag === '--base-url') opts.baseUrl = value().replace(/\/+$/, '');
    else if (flag === '--out') opts.out = resolve(value());
    else if (flag === '--manifest') opts.manifest = resolve(value());
    else if (flag === '--help' || flag === '-h') {
      process.stdout.write('usage: npm run --silent plugin-release -- --base-url URL [--version X.Y.Z] [--out DIR] [--manifest FILE]\n');
      process.exit(0);
    } else usage(`unknown argument ${argv[i]}`);
  }
  if (opts.baseUrl === undefined || opts.baseUrl === '') usage('--base-url is required: where the archives will be published');
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(opts.version)) usage(`--version ${opts.version} is no semantic version (krew needs one)`);
  return opts;
}

function usage(message) {
  process.stderr.write(`plugin-release: ${message}\n`);
  process.exit(2);
}

/**
 * bundlePlugin builds src/cli/kubectl-main.ts and everything it imports into one ES module. Two modules are
 * swapped for the bundle: version.ts reads package.json beside dist/ (absent from an archive), and cjs.ts's
 * createRequire would look for packages in a node_modules the archive does not have.
 */
async function bundlePlugin(version, outfile) {
  const swaps = {
    [join(root, 'src/cli/version.ts')]: `export const version = ${JSON.stringify(version)};\n`,
    [join(root, 'src/internal/cjs.ts')]: [
      'export function requireCjs(id) {',
      '  switch (id) {',
      ...BUNDLED_CJS.map((id) => `    case ${JSON.stringify(id)}: return require(${JSON.stringify(id)});`),
      '    default: throw new Error(`${id} is not in the kubectl-kevents bundle`);',
      '  }',
      '}',
      '',
    ].join('\n'),
  };
  const result = await build({
    absWorkingDir: root,
    entryPoints: ['src/cli/kubectl-main.ts'],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    minify: true,
    legalComments: 'eof',
    metafile: true,
    // A bundled CommonJS package's require('events') needs a require in an ES module.
    banner: { js: "import { createRequire as __keventsRequire } from 'node:module'; const require = __keventsRequire(import.meta.url);" },
    logLevel: 'warning',
    plugins: [
      {
        name: 'kevents-plugin-swaps',
        setup(b) {
          b.onLoad({ filter: /[\\/]src[\\/](cli[\\/]version|internal[\\/]cjs)\.ts$/ }, (args) => {
            const contents = swaps[args.path];
            return contents === undefined ? undefined : { contents, loader: 'js' };
          });
        },
      },
    ],
  });
  const inputs = Object.keys(result.metafile.inputs);
  const native = inputs.filter((p) => /better-sqlite3|\.node$/.test(p));
  if (native.length > 0) throw new Error(`the plugin bundle would load a native module: ${native.join(', ')}`);
  // The backends load their drivers through requireCjs, which the swap above hides from the check on native
  // modules: their folders, the server and the full command table (a static import() reaches them) are refused.
  const foreign = inputs.filter((p) => PLUGIN_NEVER.some((prefix) => p.startsWith(prefix)));
  if (foreign.length > 0) throw new Error(`the plugin bundle would carry code the read commands never run: ${foreign.slice(0, 5).join(', ')}${foreign.length > 5 ? ', …' : ''}`);
  return inputs.length;
}

/** archive writes a reproducible .tar.gz of the given files (name → source path and mode) from a staging folder. */
function archive(stage, names, out) {
  const tar = execFileSync('tar', ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '--format=ustar', '-C', stage, '-cf', '-', ...names], { maxBuffer: 1 << 28 });
  const gz = gzipSync(tar, { level: 9 });
  writeFileSync(out, gz);
  return createHash('sha256').update(gz).digest('hex');
}

/** manifest is the krew Plugin for the archives (platform, file name, sha256). */
function manifest(version, entries) {
  const lines = [
    '# The krew manifest of the kevents kubectl plugin, written by scripts/plugin-release.mjs (docs/deploy.md#the-kubectl-plugin-with-krew).',
    '# Each uri is the release base URL given to the script; the sha256s are of the archives it made.',
    'apiVersion: krew.googlecontainertools.github.com/v1alpha2',
    'kind: Plugin',
    'metadata:',
    '  name: kevents',
    'spec:',
    `  version: v${version}`,
    '  shortDescription: Read the kevents events archive through the cluster',
    '  description: |',
    '    kubectl kevents incidents|timeline|search|events|get|lint: what is broken, since when and why,',
    '    read from the kevents archive (events kept past the cluster\'s TTL) through the current kubeconfig',
    '    context, where the cluster aggregates archive.kevents.io, under the cluster\'s RBAC.',
    '  caveats: |',
    `    kubectl kevents runs on Node.js ${MIN_NODE} or newer: \`node\` must be on PATH.`,
    '    The cluster must serve the archive API (kevents with its aggregated-api component).',
    '  platforms:',
  ];
  for (const e of entries) {
    lines.push(
      '  - selector:',
      '      matchLabels:',
      `        os: ${e.os}`,
      `        arch: ${e.arch}`,
      `    uri: ${e.uri}`,
      `    sha256: ${e.sha256}`,
      `    bin: ${BIN}`,
      '    files:',
      `    - from: ${BIN}`,
      '      to: .',
      `    - from: ${BUNDLE}`,
      '      to: .',
      '    - from: LICENSE',
      '      to: .',
    );
  }
  return `${lines.join('\n')}\n`;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const stage = mkdtempSync(join(tmpdir(), 'kevents-plugin-'));
  try {
    const modules = await bundlePlugin(opts.version, join(stage, BUNDLE));
    writeFileSync(join(stage, BIN), LAUNCHER, { mode: 0o755 });
    copyFileSync(join(root, 'LICENSE'), join(stage, 'LICENSE'));
    mkdirSync(opts.out, { recursive: true });
    const entries = [];
    for (const p of PLATFORMS) {
      const name = `kubectl-kevents-v${opts.version}-${p.os}-${p.arch}.tar.gz`;
      const sha256 = archive(stage, [BIN, BUNDLE, 'LICENSE'], join(opts.out, name));
      entries.push({ ...p, uri: `${opts.baseUrl}/${name}`, sha256, path: join(opts.out, name) });
    }
    mkdirSync(dirname(opts.manifest), { recursive: true });
    writeFileSync(opts.manifest, manifest(opts.version, entries));
    for (const e of entries) process.stdout.write(`${e.os}/${e.arch}\t${e.path}\t${e.sha256}\n`);
    process.stdout.write(`manifest\t${opts.manifest}\t(${modules} modules bundled)\n`);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (err) {
  process.stderr.write(`plugin-release: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
