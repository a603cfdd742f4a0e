#!/usr/bin/env node
// Prepares a machine for `npm test`, idempotently: the Debian packages the tests drive
// (kubectl, etcd, the Python client, Chromium, PostgreSQL, NATS, podman), a private PostgreSQL
// server on 127.0.0.1 for the tests, the real upstream peers (scripts/peers.mjs), the
// sink servers (scripts/sinks.mjs) and the local bases of the image (scripts/image-bases.mjs).
// Quick when everything is already there.
//
//   node scripts/setup.mjs            set up, then print what the tests will use
//   node scripts/setup.mjs --check    only say what is missing (exit 1 if anything is)
//   node scripts/setup.mjs --packages-only   only the Debian packages and the PostgreSQL server
//
// run-tests.mjs calls prepare() and hands the result to the tests as environment variables.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync, chownSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** TEST_POSTGRES_PORT is the port of the tests' own PostgreSQL server, away from a system one on 5432. */
export const TEST_POSTGRES_PORT = Number(process.env.KEVENTS_TEST_POSTGRES_PORT ?? 55432);

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

function has(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function pythonHasKubernetes() {
  return existsSync('/usr/bin/python3') && spawnSync('/usr/bin/python3', ['-c', 'import kubernetes'], { stdio: 'ignore' }).status === 0;
}

function postgresBinDir() {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const majors = readdirSync(base).filter((v) => existsSync(join(base, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
  return majors[0] ? join(base, majors[0], 'bin') : undefined;
}

/** REQUIREMENTS are what the tests need from the machine: a check and the Debian package that satisfies it. */
const REQUIREMENTS = [
  { what: 'kubectl', pkg: 'kubernetes-client', ok: () => has('kubectl') },
  { what: 'etcd', pkg: 'etcd-server', ok: () => existsSync('/usr/bin/etcd') },
  { what: 'etcdctl', pkg: 'etcd-client', ok: () => has('etcdctl') },
  { what: 'the Python kubernetes client for /usr/bin/python3', pkg: 'python3-kubernetes', ok: pythonHasKubernetes },
  { what: 'Chromium', pkg: 'chromium', ok: () => existsSync('/usr/bin/chromium') },
  { what: 'PostgreSQL server', pkg: 'postgresql', ok: () => postgresBinDir() !== undefined },
  { what: 'openssl', pkg: 'openssl', ok: () => has('openssl') },
  { what: 'NATS server', pkg: 'nats-server', ok: () => has('nats-server') || existsSync('/usr/bin/nats-server') },
  { what: 'Java 17+ (Kafka)', pkg: 'openjdk-17-jre-headless', ok: () => has('java') },
  { what: 'Maven (Kafka jars)', pkg: 'maven', ok: () => has('mvn') },
  // The image test builds deploy/Dockerfile and runs it; its bases are made from Debian's packages.
  { what: 'podman', pkg: 'podman', ok: () => has('podman') },
  { what: 'runc', pkg: 'runc', ok: () => has('runc') || existsSync('/usr/sbin/runc') },
  { what: 'mmdebstrap', pkg: 'mmdebstrap', ok: () => has('mmdebstrap') },
];

/**
 * NODE_REQUIREMENTS are what the real node (kubelet tests, `kevents lab up --kubelet`) needs beyond
 * REQUIREMENTS. They are optional: where they cannot be installed the kubelet tests skip with the
 * reason, and every other test still runs.
 */
const NODE_REQUIREMENTS = [
  { what: 'containerd', pkg: 'containerd', ok: () => has('containerd') && has('ctr') },
  { what: 'busybox (static, for the node image)', pkg: 'busybox-static', ok: () => existsSync('/bin/busybox') && isStatic('/bin/busybox') },
  { what: 'a static C library (the pause image)', pkg: 'libc6-dev', ok: () => existsSync('/usr/lib/x86_64-linux-gnu/libc.a') || existsSync('/usr/lib/aarch64-linux-gnu/libc.a') },
  { what: 'gcc (the pause image)', pkg: 'gcc', ok: () => has('gcc') },
  { what: 'the CNI loopback plugin', pkg: 'containernetworking-plugins', ok: () => existsSync('/usr/lib/cni/loopback') },
  // Without it only the pull cases skip (test/support/real-node.ts looks for it): not a reason to skip the node.
  { what: 'an image registry on loopback (docker-registry)', pkg: 'docker-registry', ok: () => existsSync('/usr/bin/docker-registry'), optional: true },
];

function isStatic(path) {
  const r = spawnSync('file', ['-L', path], { encoding: 'utf8' });
  // Without file(1), trust Debian: /bin/busybox of busybox-static is static, busybox's is not.
  if (r.status !== 0) return spawnSync('dpkg', ['-s', 'busybox-static'], { stdio: 'ignore' }).status === 0;
  return /statically linked|static-pie/.test(r.stdout);
}

/**
 * aptInstallNoServices installs packages without letting Debian start their services
 * (containerd's would listen on the system's socket): policy-rc.d answers 101 ("action
 * forbidden") to invoke-rc.d for the length of the install, unless the machine has its own.
 */
function aptInstallNoServices(pkgs, env) {
  const policy = '/usr/sbin/policy-rc.d';
  const ours = !existsSync(policy);
  if (ours) writeFileSync(policy, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
  try {
    execFileSync('apt-get', ['-o', 'DPkg::Lock::Timeout=600', 'install', '-y', '-qq', '--no-install-recommends', ...pkgs], { stdio: ['ignore', 'ignore', 'inherit'], env });
  } finally {
    if (ours) rmSync(policy, { force: true });
  }
}

/** installNodePackages installs what the real node needs, and says (instead of failing) what is still missing. */
export function installNodePackages({ quiet }) {
  const missing = NODE_REQUIREMENTS.filter((r) => !r.ok());
  if (missing.length === 0) return undefined;
  const pkgs = [...new Set(missing.map((r) => r.pkg))];
  if (!isRoot && missing.every((r) => r.optional)) return undefined;
  if (!isRoot) return `missing ${missing.map((r) => r.what).join(', ')} (sudo apt-get install -y --no-install-recommends ${pkgs.join(' ')})`;
  log(quiet, `installing ${pkgs.join(' ')} (Debian packages of the real node; their services are not started)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['-o', 'DPkg::Lock::Timeout=600', 'update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
    aptInstallNoServices(pkgs, env);
  } catch (err) {
    // One package the archive lacks fails the whole install: try the others one by one.
    for (const pkg of pkgs) {
      try {
        aptInstallNoServices([pkg], env);
      } catch {
        log(quiet, `apt-get install ${pkg} failed: ${err.message.split('\n')[0]}`);
      }
    }
  }
  const still = NODE_REQUIREMENTS.filter((r) => !r.ok() && !r.optional);
  return still.length > 0 ? `still missing after apt-get install: ${still.map((r) => r.what).join(', ')}` : undefined;
}

function log(quiet, msg) {
  if (!quiet) process.stderr.write(`setup: ${msg}\n`);
}

export function installPackages({ quiet }) {
  const missing = REQUIREMENTS.filter((r) => !r.ok());
  if (missing.length === 0) return;
  const pkgs = [...new Set(missing.map((r) => r.pkg))];
  if (!isRoot) {
    throw new Error(
      `missing ${missing.map((r) => r.what).join(', ')}; install them with: sudo apt-get install -y --no-install-recommends ${pkgs.join(' ')}` +
        ' (or run npm test as root once, which installs them)',
    );
  }
  log(quiet, `installing ${pkgs.join(' ')} (Debian packages)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['-o', 'DPkg::Lock::Timeout=600', 'update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  execFileSync('apt-get', ['-o', 'DPkg::Lock::Timeout=600', 'install', '-y', '-qq', '--no-install-recommends', ...pkgs], { stdio: ['ignore', 'ignore', 'inherit'], env });
  // Debian starts a packaged server on install; the tests run their own.
  const still = REQUIREMENTS.filter((r) => !r.ok());
  if (still.length > 0) throw new Error(`still missing after apt-get install: ${still.map((r) => r.what).join(', ')}`);
}

function postgresDataDir() {
  const major = postgresBinDir()?.split('/').at(-2) ?? 'x';
  // As root the server runs as the postgres user, which cannot enter /root.
  return isRoot ? `/var/lib/kevents-test/postgres-${major}` : join(homedir(), '.cache', 'kevents-test', `postgres-${major}`);
}

function asServerUser(bin, args) {
  const cmd = isRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  return spawnSync(cmd[0], cmd[1], { encoding: 'utf8', cwd: '/' });
}

function postgresReady(bin) {
  return spawnSync(join(bin, 'pg_isready'), ['-q', '-h', '127.0.0.1', '-p', String(TEST_POSTGRES_PORT)], { stdio: 'ignore' }).status === 0;
}

/** startPostgres runs the tests' own PostgreSQL server (trust on 127.0.0.1 only) and makes the `test` database. */
export function startPostgres({ quiet }) {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL is not installed (apt-get install postgresql)');
  const data = postgresDataDir();
  if (!postgresReady(bin)) {
    if (!existsSync(join(data, 'PG_VERSION'))) {
      log(quiet, `creating the tests' PostgreSQL cluster in ${data}`);
      mkdirSync(data, { recursive: true, mode: 0o700 });
      if (isRoot) {
        const pg = execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim();
        const pgGroup = execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim();
        chownSync(dirname(data), Number(pg), Number(pgGroup));
        chownSync(data, Number(pg), Number(pgGroup));
      }
      const init = asServerUser(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8']);
      if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
      writeFileSync(join(data, 'pg_hba.conf'), 'local all all trust\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n');
      if (isRoot) {
        const pg = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
        chownSync(join(data, 'pg_hba.conf'), pg, Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()));
      }
    }
    log(quiet, `starting the tests' PostgreSQL on 127.0.0.1:${TEST_POSTGRES_PORT}`);
    const opts = `-p ${TEST_POSTGRES_PORT} -k ${data} -c listen_addresses=127.0.0.1 -c max_connections=300`;
    const start = asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-l', join(data, 'server.log'), '-o', opts, '-w', '-t', '60', 'start']);
    if (start.status !== 0 && !postgresReady(bin)) {
      let tail = '';
      try {
        tail = readFileSync(join(data, 'server.log'), 'utf8').split('\n').slice(-8).join('\n');
      } catch {
        // No log written yet.
      }
      throw new Error(`PostgreSQL did not start: ${start.stderr || start.stdout}\n${tail}`);
    }
  }
  const psql = join(bin, 'psql');
  const conn = ['-h', '127.0.0.1', '-p', String(TEST_POSTGRES_PORT), '-U', 'postgres', '-At'];
  const exists = spawnSync(psql, [...conn, '-d', 'postgres', '-c', "SELECT 1 FROM pg_database WHERE datname = 'test'"], { encoding: 'utf8' });
  if (exists.status !== 0) throw new Error(`PostgreSQL answered no query: ${exists.stderr}`);
  if (exists.stdout.trim() !== '1') execFileSync(psql, [...conn, '-d', 'postgres', '-c', 'CREATE DATABASE test'], { stdio: 'ignore' });
  return `postgres://postgres@127.0.0.1:${TEST_POSTGRES_PORT}/test`;
}

/** BUILDERS are the scripts that build or fetch what the tests run against, and what each is for. */
const BUILDERS = { 'peers.mjs': 'the upstream peers', 'sinks.mjs': 'the sink servers', 'image-bases.mjs': "the image's local base images" };

/** builderLog is where a builder's children (go, mvn, javac) write: kept, so a failure can be read later. */
export function builderLog(script) {
  return join(homedir(), '.cache', 'kevents-setup', `${script.replace(/\.mjs$/, '')}.log`);
}

/**
 * runBuilder runs one builder with --json and parses what it prints. Its standard output must be
 * the JSON alone; a failure, or anything else on standard output, is one line naming the builder
 * and its log.
 */
export function runBuilder(script, { quiet, scriptsDir = join(root, 'scripts'), env = process.env, log = builderLog(script) }) {
  const path = join(scriptsDir, script);
  if (!existsSync(path)) return undefined;
  const what = `scripts/${script} (${BUILDERS[script] ?? 'a builder'})`;
  const r = spawnSync(process.execPath, [path, '--json', '--log', log, ...(quiet ? ['--quiet'] : [])], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], env, maxBuffer: 1 << 20 });
  if (r.error) throw new Error(`${what} could not run: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${what} failed (exit ${r.status ?? r.signal}); its build log is ${log}`);
  try {
    return JSON.parse(r.stdout);
  } catch {
    throw new Error(`${what} printed something other than JSON on standard output (${JSON.stringify(r.stdout.slice(0, 40))}…); its build log is ${log}`);
  }
}

/**
 * prepare sets the machine up for the tests and returns the environment variables that tell the
 * tests where everything is: KEVENTS_TEST_POSTGRES, KEVENTS_PEERS (JSON), KEVENTS_SINKS (JSON) and
 * KEVENTS_IMAGE_BASES (JSON: the local bases deploy/Dockerfile builds from here, and podman's options).
 */
export function prepare({ quiet = false, packagesOnly = false } = {}) {
  installPackages({ quiet });
  const env = {};
  env.KEVENTS_TEST_POSTGRES = process.env.KEVENTS_TEST_POSTGRES ?? startPostgres({ quiet });
  if (packagesOnly) return env;
  const nodeMissing = installNodePackages({ quiet });
  const peers = runBuilder('peers.mjs', { quiet });
  if (peers && nodeMissing !== undefined) peers.kubeletUnavailable = nodeMissing;
  if (peers) env.KEVENTS_PEERS = JSON.stringify(peers);
  const sinks = runBuilder('sinks.mjs', { quiet });
  if (sinks) env.KEVENTS_SINKS = JSON.stringify(sinks);
  const bases = runBuilder('image-bases.mjs', { quiet });
  if (bases) env.KEVENTS_IMAGE_BASES = JSON.stringify(bases);
  return env;
}

function main() {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write('usage: node scripts/setup.mjs [--check] [--packages-only] [--quiet]\n');
    return;
  }
  if (args.includes('--check')) {
    const missing = REQUIREMENTS.filter((r) => !r.ok());
    for (const r of missing) process.stdout.write(`missing: ${r.what} (Debian package ${r.pkg})\n`);
    process.exitCode = missing.length > 0 ? 1 : 0;
    return;
  }
  try {
    const env = prepare({ quiet: args.includes('--quiet'), packagesOnly: args.includes('--packages-only') });
    if (!args.includes('--quiet')) for (const [k, v] of Object.entries(env)) process.stdout.write(`${k}=${v.length > 200 ? `${v.slice(0, 200)}…` : v}\n`);
  } catch (err) {
    process.stderr.write(`setup: ${err.message}\n`);
    process.exitCode = 1;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
