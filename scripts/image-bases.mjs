#!/usr/bin/env node
// Makes the two base images deploy/Dockerfile builds from here, where no container registry is
// reachable, out of Debian's own packages (mmdebstrap, then podman import), once, and prints their
// names and how podman runs on this machine:
//   build: Debian 13 (trixie) with nodejs, npm, the Node headers and python3, make and g++, the
//          stand-in for node:20.19-bookworm-slim
//   run:   Debian 13's nodejs and ca-certificates without apt, at distroless' path /nodejs/bin/node,
//          with the user nonroot (65532): the stand-in for gcr.io/distroless/nodejs20-debian12:nonroot
// Both are tagged by a hash of their recipe, so a changed recipe makes new ones and an unchanged one
// is a `podman image exists` away.
//
//   node scripts/image-bases.mjs [--json] [--log FILE] [--quiet]
//
// Where podman cannot run a container (no user namespaces, no cgroups) the JSON says why in
// `unavailable` and the image test skips with it; any other failure is an error.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { logArg, runLogged, withLock } from './builder-io.mjs';

/** DEBIAN_SUITE is Debian 13, whose nodejs is 20.19 like the public bases'. */
export const DEBIAN_SUITE = 'trixie';

/**
 * PODMAN_GLOBAL are podman's own options here: crun, its default runtime, fails on hybrid cgroups
 * (v1 with a v2 unified mount), runc does not.
 */
export const PODMAN_GLOBAL = ['--runtime', 'runc'];
/**
 * PODMAN_RUN are the options of `podman build` and `podman run`: podman's default ulimits are above
 * what this machine lets a process raise them to, and a container on the host's network keeps the
 * tests' traffic on loopback.
 */
export const PODMAN_RUN = ['--network', 'host', '--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024'];

/**
 * HOST_CA is the CA bundle this machine's own Node and npm trust. Where the way out to the npm registry
 * goes through a proxy that signs with a CA of its own, the build stage has to trust that CA as the
 * host does; the run base is not given it, so the image built never carries it.
 */
const HOST_CA = [process.env.NODE_EXTRA_CA_CERTS, '/etc/ssl/certs/ca-certificates.crt'].find((f) => f && existsSync(f));

/** BASES are the recipes: Debian packages, mmdebstrap variant, hooks run on the tree, and the image's config. */
const BASES = {
  build: {
    variant: 'minbase',
    // libnode-dev: the headers node-gyp compiles better-sqlite3 against when no prebuilt binary can be
    // fetched (they come from nodejs.org otherwise, which is not reachable here either).
    packages: ['nodejs', 'npm', 'libnode-dev', 'python3', 'make', 'g++', 'ca-certificates'],
    hooks: HOST_CA ? [`cp '${HOST_CA.replace(/'/g, "'\\''")}' "$1/etc/ssl/certs/host-ca-certificates.crt"`] : [],
    changes: ['ENV npm_config_nodedir=/usr', ...(HOST_CA ? ['ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/host-ca-certificates.crt'] : []), 'CMD ["/bin/bash"]'],
    hostCa: HOST_CA ? createHash('sha256').update(readFileSync(HOST_CA)).digest('hex') : undefined,
  },
  run: {
    // essential: no apt; what is left is dpkg's essential set, nodejs and the CA bundle.
    variant: 'essential',
    packages: ['nodejs', 'ca-certificates'],
    hooks: [
      'mkdir -p "$1/nodejs/bin" && ln -s /usr/bin/node "$1/nodejs/bin/node"',
      'echo "nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin" >> "$1/etc/passwd" && echo "nonroot:x:65532:" >> "$1/etc/group" && mkdir -p "$1/home/nonroot" && chown 65532:65532 "$1/home/nonroot"',
    ],
    changes: ['USER 65532:65532', 'ENV HOME=/home/nonroot', 'WORKDIR /home/nonroot', 'ENTRYPOINT ["/nodejs/bin/node"]'],
  },
};

/** tagOf names a base by its recipe. */
export function tagOf(name) {
  const hash = createHash('sha256').update(JSON.stringify({ suite: DEBIAN_SUITE, ...BASES[name] })).digest('hex').slice(0, 12);
  return `localhost/kevents-base-${name}:${DEBIAN_SUITE}-${hash}`;
}

/**
 * debianMirror is the Debian mirror apt already uses here (its sources, one-line or deb822), so
 * that the bases come from where the machine's own packages do; deb.debian.org when none is named.
 */
export function debianMirror(dir = '/etc/apt') {
  const files = [join(dir, 'sources.list')];
  const d = join(dir, 'sources.list.d');
  if (existsSync(d)) for (const f of readdirSync(d).sort()) if (f.endsWith('.list') || f.endsWith('.sources')) files.push(join(d, f));
  for (const f of files) {
    let text;
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    const uris = [...text.matchAll(/^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)/gm), ...text.matchAll(/^URIs:\s*(\S+)/gm)].map((m) => m[1]);
    const main = uris.find((u) => /^https?:\/\/.*\/debian\/?$/.test(u));
    if (main) return main.replace(/\/$/, '');
  }
  return 'http://deb.debian.org/debian';
}

function podman(args, opts = {}) {
  return spawnSync('podman', [...PODMAN_GLOBAL, ...args], { encoding: 'utf8', ...opts });
}

function firstLine(text) {
  return (text ?? '').trim().split('\n').filter(Boolean).at(-1) ?? '';
}

function makeBase(name, { cache, log, quiet }) {
  const tag = tagOf(name);
  if (podman(['image', 'exists', tag]).status === 0) return tag;
  withLock(cache, () => {
    if (podman(['image', 'exists', tag]).status === 0) return;
    const recipe = BASES[name];
    const tar = join(cache, `${name}.tar`);
    if (!quiet) process.stderr.write(`image-bases: making ${tag} from Debian ${DEBIAN_SUITE} packages (about a minute; output in ${log})\n`);
    rmSync(tar, { force: true });
    const hooks = recipe.hooks.flatMap((h) => ['--customize-hook', h]);
    runLogged('mmdebstrap', [`--variant=${recipe.variant}`, `--include=${recipe.packages.join(',')}`, ...hooks, DEBIAN_SUITE, tar, debianMirror()], { log });
    runLogged('podman', [...PODMAN_GLOBAL, 'import', ...recipe.changes.flatMap((c) => ['--change', c]), tar, tag], { log });
    rmSync(tar, { force: true });
    // The bases of an older recipe are of no use any more; one an image still uses stays (rmi refuses).
    const repo = tag.slice(0, tag.lastIndexOf(':'));
    const older = podman(['images', '--format', '{{.Repository}}:{{.Tag}}', repo]).stdout.split('\n').filter((t) => t !== '' && t !== tag);
    if (older.length > 0) podman(['rmi', ...older]);
  });
  return tag;
}

function main() {
  const argv = process.argv.slice(2);
  const json = argv.includes('--json');
  const quiet = argv.includes('--quiet');
  const cache = process.env.KEVENTS_IMAGE_CACHE ?? join(homedir(), '.cache', 'kevents-image');
  const log = logArg(argv, join(cache, 'build.log'));
  mkdirSync(cache, { recursive: true });
  const result = { podmanGlobal: PODMAN_GLOBAL, podmanRun: PODMAN_RUN };
  const info = podman(['info', '--format', '{{.Host.OCIRuntime.Name}}']);
  if (info.error || info.status !== 0) {
    result.unavailable = `podman cannot run here: ${info.error?.message ?? firstLine(info.stderr)}`;
  } else {
    try {
      result.buildImage = makeBase('build', { cache, log, quiet });
      result.runImage = makeBase('run', { cache, log, quiet });
    } catch (err) {
      process.stderr.write(`image-bases: ${err.message}\n`);
      process.exit(1);
    }
    // The run base is the smallest container there is to try: if it does not start, none will.
    const probe = podman(['run', '--rm', ...PODMAN_RUN, result.runImage, '-e', 'process.exit(0)']);
    if (probe.error || probe.status !== 0) result.unavailable = `podman cannot run a container here: ${probe.error?.message ?? firstLine(probe.stderr)}`;
  }
  if (json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else for (const [k, v] of Object.entries(result)) process.stdout.write(`${k}\t${Array.isArray(v) ? v.join(' ') : v}\n`);
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) main();
