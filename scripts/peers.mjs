#!/usr/bin/env node
// Builds the real upstream peers the tests run against (kube-apiserver, kube-scheduler,
// kube-controller-manager, kwok, the OpenTelemetry Collector, prometheus, alertmanager, krew, and the real node's
// kubelet with its pause and busybox images) from their published Go modules, once, into a cache outside the repository
// keyed by version, and prints where they are.
//
//   node scripts/peers.mjs [--json] [--only NAME[,NAME]] [--cache DIR] [--log FILE]
//
// Standard output carries only the result: what go prints goes to the log file
// (default CACHE/build.log), named in the error when a build fails.
//
// k8s.io/kubernetes cannot be built with `go install pkg@version`: its go.mod requires its
// staging modules at v0.0.0 and replaces them with ./staging folders. The build therefore
// goes through a throw-away wrapper module in the cache folder that requires
// k8s.io/kubernetes and replaces each of those staging modules with its published twin
// (v0.MINOR.PATCH). The list of staging modules is read from that go.mod, not written here.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync, renameSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { runLogged, withLock } from './builder-io.mjs';
import { buildNodeImages } from './node-images.mjs';

/** KUBERNETES_VERSION matches the newest bundled kubectl minor (1.33). */
export const KUBERNETES_VERSION = 'v1.33.13';
/** KWOK_VERSION is a kwok release built against Kubernetes 1.33 libraries. */
export const KWOK_VERSION = 'v0.7.0';
/**
 * OTELCOL_VERSION is the one collector release whose contrib k8seventsreceiver the Go module proxy
 * serves (newer versions of that module are refused there); every component is of that release.
 */
export const OTELCOL_VERSION = 'v0.111.0';

/** PROMETHEUS_VERSION is the Go module version of Prometheus 3.x (module tags are v0.3xx.y). */
export const PROMETHEUS_VERSION = 'v0.316.0';
/** ALERTMANAGER_VERSION is the Alertmanager release the alerting tests run against. */
export const ALERTMANAGER_VERSION = 'v0.35.0';
/**
 * KREW_VERSION is the newest krew release the Go module proxy serves here (v0.4.5 was refused with a 403 on
 * 2026-12-07); the plugin's manifest is installed with it.
 */
export const KREW_VERSION = 'v0.4.4';

const KUBE_COMMANDS = ['kube-apiserver', 'kube-scheduler', 'kube-controller-manager'];
const ALL = [...KUBE_COMMANDS, 'kubelet', 'kwok', 'etcd', 'otelcol', 'prometheus', 'alertmanager', 'krew'];

function parseArgs(argv) {
  const opts = { json: false, only: ALL, cache: process.env.KEVENTS_PEERS_CACHE ?? join(homedir(), '.cache', 'kevents-peers'), quiet: false, log: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--json') opts.json = true;
    else if (a === '--log') opts.log = String(argv[++i] ?? '');
    else if (a.startsWith('--log=')) opts.log = a.slice('--log='.length);
    else if (a === '--quiet') opts.quiet = true;
    else if (a === '--only') opts.only = String(argv[++i] ?? '').split(',').filter(Boolean);
    else if (a === '--cache') opts.cache = String(argv[++i] ?? '');
    else if (a === '--help' || a === '-h') {
      process.stdout.write('usage: npm run --silent peers -- [--json] [--only kube-apiserver,kwok,…] [--cache DIR] [--log FILE]\n');
      process.exit(0);
    } else {
      process.stderr.write(`peers: unknown argument ${a}\n`);
      process.exit(2);
    }
  }
  for (const name of opts.only) {
    if (!ALL.includes(name)) {
      process.stderr.write(`peers: unknown peer ${name} (known: ${ALL.join(', ')})\n`);
      process.exit(2);
    }
  }
  opts.log = opts.log || join(opts.cache, 'build.log');
  return opts;
}

function log(opts, msg) {
  if (!opts.quiet) process.stderr.write(`peers: ${msg}\n`);
}

function findGo() {
  for (const candidate of [process.env.GO, 'go', '/usr/local/go/bin/go', '/usr/lib/go/bin/go']) {
    if (!candidate) continue;
    const r = spawnSync(candidate, ['version'], { encoding: 'utf8' });
    if (r.status === 0) return candidate;
  }
  return undefined;
}

function isExecutable(path) {
  try {
    return statSync(path).isFile() && (statSync(path).mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

function run(opts, go, args, cwd, env) {
  runLogged(go, args, { cwd, env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local', ...env }, log: opts.log });
}

/**
 * versionLdflags stamps the binaries as upstream's release build does (hack/lib/version.sh):
 * without it /version says v0.0.0-master with an empty minor, and kubectl's dispatcher, which picks
 * its bundled client by the server's minor, falls back to another version.
 */
function versionLdflags() {
  const [major, minor] = KUBERNETES_VERSION.slice(1).split('.');
  const vars = { gitVersion: KUBERNETES_VERSION, gitMajor: major, gitMinor: minor, gitTreeState: 'clean', gitCommit: '', buildDate: '1970-01-01T00:00:00Z' };
  const flags = ['-s', '-w'];
  for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
    for (const [k, v] of Object.entries(vars)) if (v !== '') flags.push(`-X ${pkg}.${k}=${v}`);
  }
  return flags.join(' ');
}

/** writeWrapper writes the throw-away module that builds k8s.io/kubernetes commands (see the header). */
function writeWrapper(go, wrapper) {
  mkdirSync(wrapper, { recursive: true });
  const info = JSON.parse(execFileSync(go, ['mod', 'download', '-json', `k8s.io/kubernetes@${KUBERNETES_VERSION}`], { encoding: 'utf8', env: { ...process.env, GOTOOLCHAIN: 'local' }, stdio: ['ignore', 'pipe', 'inherit'] }));
  const upstreamMod = readFileSync(info.GoMod, 'utf8');
  const staging = [...upstreamMod.matchAll(/^\s*(k8s\.io\/[\w.\-/]+)\s+v0\.0\.0\s*$/gm)].map((m) => m[1]);
  if (staging.length === 0) throw new Error(`no staging modules found in ${info.GoMod}`);
  const goVersion = /^go\s+(\S+)/m.exec(upstreamMod)?.[1] ?? '1.24';
  const twin = `v0.${KUBERNETES_VERSION.slice(3)}`;
  const lines = [
    'module kevents.local/peers',
    '',
    `go ${goVersion}`,
    '',
    `require k8s.io/kubernetes ${KUBERNETES_VERSION}`,
    '',
    'replace (',
    ...staging.map((m) => `\t${m} => ${m} ${twin}`),
    ')',
    '',
  ];
  writeFileSync(join(wrapper, 'go.mod'), lines.join('\n'));
  writeFileSync(join(wrapper, 'peers.go'), '// Package peers only anchors the build of upstream commands.\npackage peers\n');
  return info.Dir;
}

/** kubernetesModuleDir is where the module cache holds k8s.io/kubernetes (the pause image's source is there). */
function kubernetesModuleDir(go) {
  if (!go) throw new Error('no go was found on PATH to download k8s.io/kubernetes');
  return JSON.parse(execFileSync(go, ['mod', 'download', '-json', `k8s.io/kubernetes@${KUBERNETES_VERSION}`], { encoding: 'utf8', env: { ...process.env, GOTOOLCHAIN: 'local' }, stdio: ['ignore', 'pipe', 'inherit'] })).Dir;
}

function buildKube(opts, go, names) {
  const dir = join(opts.cache, `kubernetes-${KUBERNETES_VERSION}-stamped`);
  const bin = join(dir, 'bin');
  const missing = names.filter((n) => !isExecutable(join(bin, n)));
  if (missing.length === 0) return dir;
  withLock(dir, () => {
    const still = names.filter((n) => !isExecutable(join(bin, n)));
    if (still.length === 0) return;
    const wrapper = join(dir, 'wrapper');
    writeWrapper(go, wrapper);
    log(opts, `building ${still.join(', ')} ${KUBERNETES_VERSION} (a cold build takes many minutes; output in ${opts.log})`);
    mkdirSync(bin, { recursive: true });
    for (const name of still) {
      const out = join(bin, `${name}.partial`);
      // The kubelet needs modules (circbuf, otelrestful, testify/mock) that the wrapper's go.sum
      // lacks after the other commands; `go get` adds them at upstream's versions.
      if (name === 'kubelet') run(opts, go, ['get', `k8s.io/kubernetes/cmd/kubelet@${KUBERNETES_VERSION}`], wrapper);
      run(opts, go, ['build', '-trimpath', `-ldflags=${versionLdflags()}`, '-o', out, `k8s.io/kubernetes/cmd/${name}`], wrapper, { CGO_ENABLED: '0' });
      renameSync(out, join(bin, name));
    }
  });
  return dir;
}

function buildKwok(opts, go) {
  const dir = join(opts.cache, `kwok-${KWOK_VERSION}`);
  const target = join(dir, 'bin', 'kwok');
  if (isExecutable(target)) return target;
  withLock(dir, () => {
    if (isExecutable(target)) return;
    log(opts, `building kwok ${KWOK_VERSION} (output in ${opts.log})`);
    run(opts, go, ['install', '-trimpath', '-ldflags=-s -w', `sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}`], dir, { GOBIN: join(dir, 'bin'), CGO_ENABLED: '0', GOFLAGS: '' });
  });
  return target;
}

/**
 * otelcolManifest is the OpenTelemetry Collector Builder's manifest: the receivers and exporters
 * the OTLP sink's tests need (the k8s_events receiver to compare against, the otlp receiver kevents
 * sends to, the file exporter both write to) and the env and file config providers.
 */
function otelcolManifest(go, out) {
  const v = OTELCOL_VERSION;
  const contrib = 'github.com/open-telemetry/opentelemetry-collector-contrib';
  return [
    'dist:',
    '  module: kevents.local/otelcol',
    '  name: otelcol',
    '  description: OpenTelemetry Collector for the kevents OTLP sink tests',
    `  version: ${v.slice(1)}`,
    `  otelcol_version: ${v.slice(1)}`,
    `  output_path: ${out}`,
    `  go: ${go}`,
    'receivers:',
    `  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver ${v}`,
    `  - gomod: ${contrib}/receiver/k8seventsreceiver ${v}`,
    'exporters:',
    `  - gomod: go.opentelemetry.io/collector/exporter/debugexporter ${v}`,
    `  - gomod: ${contrib}/exporter/fileexporter ${v}`,
    // The stable confmap modules of a 0.N release are numbered 1.(N-94); env is the default scheme.
    'providers:',
    `  - gomod: go.opentelemetry.io/collector/confmap/provider/envprovider v1.${Number(v.split('.')[1]) - 94}.0`,
    `  - gomod: go.opentelemetry.io/collector/confmap/provider/fileprovider v1.${Number(v.split('.')[1]) - 94}.0`,
    '',
  ].join('\n');
}

/** buildOtelcol builds the collector with the OpenTelemetry Collector Builder (ocb) of the same release. */
function buildOtelcol(opts, go) {
  const dir = join(opts.cache, `otelcol-${OTELCOL_VERSION}`);
  const target = join(dir, 'bin', 'otelcol');
  if (isExecutable(target)) return target;
  withLock(dir, () => {
    if (isExecutable(target)) return;
    log(opts, `building otelcol ${OTELCOL_VERSION} with the collector builder (a cold build takes many minutes; output in ${opts.log})`);
    const tools = join(dir, 'tools');
    const src = join(dir, 'src');
    const env = { GOBIN: tools, CGO_ENABLED: '0', GOFLAGS: '' };
    run(opts, go, ['install', '-trimpath', `go.opentelemetry.io/collector/cmd/builder@${OTELCOL_VERSION}`], dir, env);
    writeFileSync(join(dir, 'manifest.yaml'), otelcolManifest(go, src));
    runLogged(join(tools, 'builder'), ['--config', join(dir, 'manifest.yaml')], { cwd: dir, env: { ...process.env, GOTOOLCHAIN: 'local', ...env }, log: opts.log });
    mkdirSync(join(dir, 'bin'), { recursive: true });
    renameSync(join(src, 'otelcol'), target);
  });
  return target;
}

/**
 * buildPrometheus installs cmd/prometheus with `remove_all_sd`: the tests scrape static targets, and
 * the build tag leaves out every service-discovery plugin (cloud SDKs, Kubernetes client) but file
 * and http, so none of those SDKs is compiled (the module's go.mod needs Go 1.26.7). Without `builtinassets` the web UI's assets are not
 * compiled in; the HTTP API the tests use does not need them.
 */
function buildPrometheus(opts, go) {
  return goInstall(opts, go, { name: 'prometheus', version: PROMETHEUS_VERSION, pkg: 'github.com/prometheus/prometheus/cmd/prometheus', tags: 'remove_all_sd' });
}

/**
 * buildAlertmanager builds cmd/alertmanager from a copy of its module: ui/web.go embeds
 * ui/app/dist, the compiled web UI, which the published module does not carry (the release
 * builds it with npm first), so `go install` fails on the missing pattern. The copy gets a
 * placeholder page there; the API the tests use does not need the UI.
 */
function buildAlertmanager(opts, go) {
  const dir = join(opts.cache, `alertmanager-${ALERTMANAGER_VERSION}`);
  const target = join(dir, 'bin', 'alertmanager');
  if (isExecutable(target)) return target;
  withLock(dir, () => {
    if (isExecutable(target)) return;
    log(opts, `building alertmanager ${ALERTMANAGER_VERSION} (a cold build takes a few minutes; output in ${opts.log})`);
    const env = { CGO_ENABLED: '0', GOFLAGS: '' };
    const module = moduleDir(opts, go, `github.com/prometheus/alertmanager@${ALERTMANAGER_VERSION}`, dir);
    const src = join(dir, 'src');
    rmSync(src, { recursive: true, force: true });
    runLogged('cp', ['-R', module, src], { log: opts.log });
    runLogged('chmod', ['-R', 'u+w', src], { log: opts.log });
    for (const ui of ['elm', 'mantine']) {
      mkdirSync(join(src, 'ui', 'app', 'dist', ui), { recursive: true });
      writeFileSync(join(src, 'ui', 'app', 'dist', ui, 'index.html'), '<!doctype html><title>Alertmanager</title><p>This build has no web UI; use the API.</p>\n');
    }
    run(opts, go, ['build', '-trimpath', '-ldflags=-s -w', '-o', `${target}.partial`, './cmd/alertmanager'], src, env);
    renameSync(`${target}.partial`, target);
  });
  return target;
}

/**
 * buildKrew builds cmd/krew, and cmd/validate-krew-manifest (the check krew-index runs on a submitted manifest),
 * inside their module's folder in the module cache: `go install sigs.k8s.io/krew/cmd/krew@V` first asks the proxy
 * for a module named sigs.k8s.io/krew/cmd/krew, and the proxy's 403 for it ends the lookup before sigs.k8s.io/krew
 * is tried. The tag is stamped as krew's release does; a build without it is a development build to krew.
 */
function buildKrew(opts, go) {
  const dir = join(opts.cache, `krew-${KREW_VERSION}`);
  const targets = KREW_COMMANDS.map((c) => join(dir, 'bin', c));
  if (targets.every(isExecutable)) return dir;
  withLock(dir, () => {
    if (targets.every(isExecutable)) return;
    log(opts, `building krew ${KREW_VERSION} (output in ${opts.log})`);
    const module = moduleDir(opts, go, `sigs.k8s.io/krew@${KREW_VERSION}`, dir);
    mkdirSync(join(dir, 'bin'), { recursive: true });
    const ldflags = `-s -w -X sigs.k8s.io/krew/internal/version.gitTag=${KREW_VERSION}`;
    for (const [i, command] of KREW_COMMANDS.entries()) {
      run(opts, go, ['build', '-trimpath', `-ldflags=${ldflags}`, '-o', `${targets[i]}.partial`, `./cmd/${command}`], module, { CGO_ENABLED: '0', GOFLAGS: '' });
      renameSync(`${targets[i]}.partial`, targets[i]);
    }
  });
  return dir;
}

/** KREW_COMMANDS are the commands of the krew module the tests run. */
const KREW_COMMANDS = ['krew', 'validate-krew-manifest'];

/** moduleDir downloads a module into the module cache and says where it is (go's JSON goes to a log of its own, read back). */
function moduleDir(opts, go, module, dir) {
  const out = join(dir, 'module.json');
  rmSync(out, { force: true });
  runLogged(go, ['mod', 'download', '-json', module], { cwd: dir, env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '' }, log: out });
  const text = readFileSync(out, 'utf8');
  const info = JSON.parse(text.slice(text.indexOf('{')));
  if (!info.Dir) throw new Error(`go mod download ${module} named no folder (${out})`);
  return info.Dir;
}

/** goInstall builds one command with `go install pkg@version` into CACHE/NAME-VERSION/bin, once. */
function goInstall(opts, go, { name, version, pkg, tags }) {
  const dir = join(opts.cache, `${name}-${version}`);
  const target = join(dir, 'bin', pkg.split('/').pop());
  if (isExecutable(target)) return target;
  withLock(dir, () => {
    if (isExecutable(target)) return;
    log(opts, `building ${name} ${version} (a cold build takes several minutes; output in ${opts.log})`);
    const args = ['install', '-trimpath', '-ldflags=-s -w'];
    if (tags) args.push(`-tags=${tags}`);
    run(opts, go, [...args, `${pkg}@${version}`], dir, { GOBIN: join(dir, 'bin'), CGO_ENABLED: '0', GOFLAGS: '' });
  });
  return target;
}

/** GO_PEERS are the peers built each from a Go module of its own: how, and where the binary lands. */
const GO_PEERS = {
  prometheus: { build: buildPrometheus, target: (cache) => join(cache, `prometheus-${PROMETHEUS_VERSION}`, 'bin', 'prometheus') },
  otelcol: { build: buildOtelcol, target: (cache) => join(cache, `otelcol-${OTELCOL_VERSION}`, 'bin', 'otelcol') },
  alertmanager: { build: buildAlertmanager, target: (cache) => join(cache, `alertmanager-${ALERTMANAGER_VERSION}`, 'bin', 'alertmanager') },
};

function findEtcd() {
  for (const candidate of [process.env.KEVENTS_ETCD, '/usr/bin/etcd']) {
    if (candidate && isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const result = {};
  const wantKube = opts.only.filter((n) => KUBE_COMMANDS.includes(n));
  const needsGo = wantKube.some((n) => !isExecutable(join(opts.cache, `kubernetes-${KUBERNETES_VERSION}-stamped`, 'bin', n))) || (opts.only.includes('kwok') && !isExecutable(join(opts.cache, `kwok-${KWOK_VERSION}`, 'bin', 'kwok'))) ||
    Object.entries(GO_PEERS).some(([n, p]) => opts.only.includes(n) && !isExecutable(p.target(opts.cache)));
  const wantKubelet = opts.only.includes('kubelet');
  const wantKrew = opts.only.includes('krew');
  // The kubelet's images need go too (the pause source is in the k8s.io/kubernetes module).
  const go = needsGo || wantKubelet ? findGo() : undefined;
  if (needsGo && !go) {
    process.stderr.write('peers: Go 1.24 or newer is needed to build the upstream binaries once; no go was found on PATH (set GO to its path)\n');
    process.exit(1);
  }
  try {
    if (wantKube.length > 0) {
      const dir = buildKube(opts, go, wantKube);
      for (const n of wantKube) result[n] = join(dir, 'bin', n);
    }
    if (opts.only.includes('kwok')) result.kwok = buildKwok(opts, go);
    for (const [n, p] of Object.entries(GO_PEERS)) if (opts.only.includes(n)) result[n] = p.build(opts, go);
  } catch (err) {
    process.stderr.write(`peers: ${err.message}\n`);
    process.exit(1);
  }
  // The real node is optional: a machine that cannot build or run it still runs every other
  // test, and the kubelet tests skip with the reason given here.
  if (wantKubelet) {
    try {
      if (!go && !isExecutable(join(opts.cache, `kubernetes-${KUBERNETES_VERSION}-stamped`, 'bin', 'kubelet'))) throw new Error('no go was found on PATH to build it (set GO to its path)');
      result.kubelet = join(buildKube(opts, go, ['kubelet']), 'bin', 'kubelet');
      result.nodeImages = buildNodeImages({ cache: opts.cache, log: opts.log, goModDir: () => kubernetesModuleDir(go), say: (m) => log(opts, m) });
    } catch (err) {
      result.kubeletUnavailable = `the kubelet or its images could not be built: ${err.message.split('\n')[0]}`;
      log(opts, result.kubeletUnavailable);
    }
  }
  // krew is optional as the real node is: the plugin's install test skips with the reason given here.
  if (wantKrew) {
    try {
      const krewGo = go ?? findGo();
      if (!krewGo && !KREW_COMMANDS.every((c) => isExecutable(join(opts.cache, `krew-${KREW_VERSION}`, 'bin', c)))) throw new Error('no go was found on PATH to build it (set GO to its path)');
      const dir = buildKrew(opts, krewGo);
      result.krew = join(dir, 'bin', 'krew');
      result.krewValidateManifest = join(dir, 'bin', 'validate-krew-manifest');
    } catch (err) {
      // One line, with the end of go's output: what was refused is in it.
      result.krewUnavailable = `krew ${KREW_VERSION} could not be built: ${err.message.replace(/\s*\n\s*/g, ' ').slice(0, 600)}`;
      log(opts, result.krewUnavailable);
    }
  }
  if (opts.only.includes('etcd')) {
    const etcd = findEtcd();
    if (!etcd) {
      process.stderr.write('peers: etcd not found: apt-get install etcd-server (or set KEVENTS_ETCD)\n');
      process.exit(1);
    }
    result.etcd = etcd;
  }
  result.kubernetesVersion = KUBERNETES_VERSION;
  result.kwokVersion = KWOK_VERSION;
  if (opts.only.includes('otelcol')) result.otelcolVersion = OTELCOL_VERSION;
  if (opts.only.includes('prometheus')) result.prometheusVersion = PROMETHEUS_VERSION;
  if (opts.only.includes('alertmanager')) result.alertmanagerVersion = ALERTMANAGER_VERSION;
  if (opts.only.includes('krew')) result.krewVersion = KREW_VERSION;
  if (opts.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else for (const [k, v] of Object.entries(result)) process.stdout.write(`${k}\t${v}\n`);
}

main();
