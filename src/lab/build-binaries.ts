import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KUBERNETES_VERSION, KWOK_VERSION, isExecutable, kubeBuildDir, kwokBuildDir } from './binaries.js';
import type { LabBinary } from './binaries.js';
import { LabError } from './lab-error.js';

/** findGo returns a working `go` command, or undefined. */
export function findGo(env: NodeJS.ProcessEnv): string | undefined {
  for (const candidate of [env.GO, 'go', '/usr/local/go/bin/go', '/usr/lib/go/bin/go']) {
    if (candidate === undefined || candidate === '') continue;
    const r = spawnSync(candidate, ['version'], { encoding: 'utf8', env });
    if (r.status === 0) return candidate;
  }
  return undefined;
}

/**
 * wrapperGoMod is the go.mod of a throw-away module that builds k8s.io/kubernetes
 * commands: upstream's go.mod requires its staging modules at v0.0.0 (served
 * from ./staging in its repository), so each is replaced by its published twin.
 * The staging list is read from upstream's go.mod, never written down here.
 */
export function wrapperGoMod(upstreamGoMod: string, version = KUBERNETES_VERSION): string {
  const staging = [...upstreamGoMod.matchAll(/^\s*(k8s\.io\/[\w.\-/]+)\s+v0\.0\.0\s*$/gm)].map((m) => m[1]!);
  if (staging.length === 0) throw new LabError('the go.mod of k8s.io/kubernetes lists no staging modules: the build layout changed');
  const goVersion = /^go\s+(\S+)/m.exec(upstreamGoMod)?.[1] ?? '1.24';
  const twin = `v0.${version.slice(3)}`;
  return ['module kevents.local/peers', '', `go ${goVersion}`, '', `require k8s.io/kubernetes ${version}`, '', 'replace (', ...[...new Set(staging)].map((m) => `\t${m} => ${m} ${twin}`), ')', ''].join('\n');
}

/** versionLdflags stamps the version as upstream's release build does, so /version and kubectl's version skew logic see v1.33. */
export function versionLdflags(version = KUBERNETES_VERSION): string {
  const [major, minor] = version.slice(1).split('.');
  const vars: Record<string, string> = { gitVersion: version, gitMajor: major ?? '', gitMinor: minor ?? '', gitTreeState: 'clean', buildDate: '1970-01-01T00:00:00Z' };
  const flags = ['-s', '-w'];
  for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) for (const [k, v] of Object.entries(vars)) flags.push(`-X ${pkg}.${k}=${v}`);
  return flags.join(' ');
}

function run(go: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): void {
  const r = spawnSync(go, args, { cwd, env: { ...env, GOTOOLCHAIN: 'local' }, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new LabError(`go ${args.join(' ')} failed in ${cwd} (exit ${r.status ?? r.signal})`);
}

/**
 * buildBinaries builds the missing Kubernetes commands and kwok from their Go
 * modules into the cache, in the layout findBinaries searches. It takes many
 * minutes cold; later runs find the binaries and never call it.
 */
export function buildBinaries(missing: readonly LabBinary[], options: { go: string; cacheDir: string; env: NodeJS.ProcessEnv; log: (line: string) => void }): void {
  const kube = missing.filter((n) => n.startsWith('kube-'));
  if (kube.length > 0) {
    const dir = kubeBuildDir(options.cacheDir);
    const wrapper = join(dir, 'wrapper');
    mkdirSync(wrapper, { recursive: true });
    mkdirSync(join(dir, 'bin'), { recursive: true });
    const info = JSON.parse(execFileSync(options.go, ['mod', 'download', '-json', `k8s.io/kubernetes@${KUBERNETES_VERSION}`], { encoding: 'utf8', env: { ...options.env, GOTOOLCHAIN: 'local' } })) as { GoMod?: string };
    if (info.GoMod === undefined) throw new LabError(`go mod download k8s.io/kubernetes@${KUBERNETES_VERSION} gave no go.mod`);
    writeFileSync(join(wrapper, 'go.mod'), wrapperGoMod(readFileSync(info.GoMod, 'utf8')));
    writeFileSync(join(wrapper, 'peers.go'), '// Package peers only anchors the build of upstream commands.\npackage peers\n');
    for (const name of kube) {
      const target = join(dir, 'bin', name);
      if (isExecutable(target)) continue;
      options.log(`building ${name} ${KUBERNETES_VERSION} with ${options.go} (a cold build takes many minutes)`);
      run(options.go, ['build', '-trimpath', `-ldflags=${versionLdflags()}`, '-o', `${target}.partial`, `k8s.io/kubernetes/cmd/${name}`], wrapper, { ...options.env, GOFLAGS: '-mod=mod', CGO_ENABLED: '0' });
      renameSync(`${target}.partial`, target);
    }
  }
  if (missing.includes('kwok')) {
    const dir = kwokBuildDir(options.cacheDir);
    mkdirSync(dir, { recursive: true });
    options.log(`building kwok ${KWOK_VERSION} with ${options.go}`);
    run(options.go, ['install', '-trimpath', '-ldflags=-s -w', `sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}`], dir, { ...options.env, GOBIN: join(dir, 'bin'), CGO_ENABLED: '0', GOFLAGS: '' });
  }
}
