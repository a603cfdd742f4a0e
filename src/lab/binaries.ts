import { readdirSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** KUBERNETES_VERSION is the control plane the lab is written against (the newest bundled kubectl minor is 1.33). */
export const KUBERNETES_VERSION = 'v1.33.13';
/** KWOK_VERSION is a kwok release built against Kubernetes 1.33 libraries. */
export const KWOK_VERSION = 'v0.7.0';

/** LAB_BINARIES are the upstream programs a lab runs. */
export const LAB_BINARIES = ['etcd', 'kube-apiserver', 'kube-scheduler', 'kube-controller-manager', 'kwok'] as const;

/** LabBinary names one of them. */
export type LabBinary = (typeof LAB_BINARIES)[number];

/** LabBinaries are their absolute paths. */
export type LabBinaries = Record<LabBinary, string>;

/** FindBinariesOptions say where to look, in this order. */
export interface FindBinariesOptions {
  /** binDir is `--bin-dir`: looked at first. */
  binDir?: string | undefined;
  /** path is the PATH to search. */
  path?: string | undefined;
  /** cacheDir holds builds keyed by version (`~/.cache/kevents-peers`, shared with the repository's peers script). */
  cacheDir: string;
  /** kwokCacheDir is kwokctl's download cache (`~/.kwok/cache`), searched last. */
  kwokCacheDir?: string | undefined;
}

/** FoundBinaries is what was found and what is missing. */
export interface FoundBinaries {
  found: Partial<LabBinaries>;
  missing: LabBinary[];
}

/** kubeBuildDir is where a build of the Kubernetes commands goes in the cache (stamped with their version). */
export function kubeBuildDir(cacheDir: string): string {
  return join(cacheDir, `kubernetes-${KUBERNETES_VERSION}-stamped`);
}

/** kwokBuildDir is where a build of kwok goes in the cache. */
export function kwokBuildDir(cacheDir: string): string {
  return join(cacheDir, `kwok-${KWOK_VERSION}`);
}

/** isExecutable tells whether path is an executable file. */
export function isExecutable(path: string): boolean {
  try {
    const s = statSync(path);
    return s.isFile() && (s.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** KWOK_CACHE_DEPTH bounds the walk of kwokctl's cache, whose layout mirrors download URLs (…/v1.33.0/bin/linux/amd64/kube-apiserver). */
const KWOK_CACHE_DEPTH = 9;

function walkFor(dir: string, names: ReadonlySet<string>, depth: number, out: Map<string, string>): void {
  if (depth < 0) return;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => b.name.localeCompare(a.name));
  } catch {
    return;
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) walkFor(path, names, depth - 1, out);
    else if (names.has(e.name) && !out.has(e.name) && isExecutable(path)) out.set(e.name, path);
  }
}

/**
 * findBinaries looks for each upstream program in `--bin-dir`, on PATH, in the
 * build cache (a stamped build first), then in kwokctl's download cache.
 */
export function findBinaries(options: FindBinariesOptions): FoundBinaries {
  const dirs: string[] = [];
  if (options.binDir !== undefined && options.binDir !== '') dirs.push(options.binDir);
  for (const d of (options.path ?? '').split(delimiter)) if (d !== '') dirs.push(d);
  dirs.push(join(kubeBuildDir(options.cacheDir), 'bin'), join(options.cacheDir, `kubernetes-${KUBERNETES_VERSION}`, 'bin'), join(kwokBuildDir(options.cacheDir), 'bin'));
  const found: Partial<LabBinaries> = {};
  for (const name of LAB_BINARIES) {
    for (const dir of dirs) {
      const candidate = join(dir, name);
      if (isExecutable(candidate)) {
        found[name] = candidate;
        break;
      }
    }
  }
  let missing = LAB_BINARIES.filter((n) => found[n] === undefined);
  if (missing.length > 0 && options.kwokCacheDir !== undefined) {
    const fromKwok = new Map<string, string>();
    walkFor(options.kwokCacheDir, new Set(missing), KWOK_CACHE_DEPTH, fromKwok);
    for (const [name, path] of fromKwok) found[name as LabBinary] = path;
    missing = LAB_BINARIES.filter((n) => found[n] === undefined);
  }
  return { found, missing };
}

/** missingBinariesMessage is the one message that says how to get what is missing. */
export function missingBinariesMessage(missing: readonly LabBinary[], context: { goFound: boolean; kwokctlFound: boolean; cacheDir: string }): string {
  const kube = missing.filter((n) => n.startsWith('kube-'));
  const lines = [`kevents lab runs real upstream programs; not found: ${missing.join(', ')}.`, 'Get them one of these ways, then run kevents lab up again:'];
  if (kube.length > 0 || missing.includes('kwok')) {
    lines.push(`  - put kube-apiserver, kube-scheduler, kube-controller-manager (${KUBERNETES_VERSION.replace(/\.\d+$/, '')}) and kwok (${KWOK_VERSION}) in a folder and pass --bin-dir DIR, or on PATH;`);
    lines.push(
      context.goFound
        ? `  - or run kevents lab up --build: it builds them once with go into ${context.cacheDir} (a cold build takes many minutes);`
        : `  - or install Go 1.24+ (go.dev/dl, or apt-get install golang-go) and run kevents lab up --build: it builds them once into ${context.cacheDir};`,
    );
    lines.push(
      context.kwokctlFound
        ? '  - or, with kwokctl: kwokctl create cluster --name kevents-fetch --runtime binary && kwokctl delete cluster --name kevents-fetch downloads them into ~/.kwok/cache, where kevents lab looks;'
        : '  - or, if you use kwokctl: a cluster made with kwokctl create cluster --runtime binary leaves them in ~/.kwok/cache, where kevents lab looks;',
    );
  }
  if (missing.includes('etcd')) lines.push('  - etcd: apt-get install etcd-server (Debian, Ubuntu), brew install etcd, or a release from github.com/etcd-io/etcd, on PATH or in --bin-dir.');
  return lines.join('\n');
}
