// Whether a real node can run here, and with which kubelet and images: each missing piece named in one line.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { isExecutable, kubeBuildDir } from './binaries.js';
import type { FindBinariesOptions } from './binaries.js';

/** NodeImage is one image the node's containerd imports: its name and its OCI archive. */
export interface NodeImage {
  name: string;
  archive: string;
}

/** NodeImages are the sandbox (pause) image and the one image the node's pods run (busybox). */
export interface NodeImages {
  pause: NodeImage;
  busybox: NodeImage;
}

/** RealNodeBinaries are the programs and images a real node runs. */
export interface RealNodeBinaries {
  kubelet: string;
  containerd: string;
  ctr: string;
  images: NodeImages;
}

/** NODE_IMAGES_DIR is the cache folder the repository's scripts/node-images.mjs builds the images into (its version with it). */
const NODE_IMAGES_DIR = 'node-images-v1';

/** CNI_LOOPBACK is the one CNI plugin the node's network uses (Debian's containernetworking-plugins). */
const CNI_LOOPBACK = '/usr/lib/cni/loopback';

/** findOnPath is the first executable of that name in a PATH. */
export function findOnPath(name: string, path: string | undefined): string | undefined {
  for (const d of (path ?? '').split(delimiter)) if (d !== '' && isExecutable(join(d, name))) return join(d, name);
  return undefined;
}

/**
 * realNodeHostUnavailable says in one line why this host cannot run a real node (not root, no containerd, runc or
 * CNI loopback plugin), or undefined when it can.
 */
export function realNodeHostUnavailable(path: string | undefined, uid = process.getuid?.()): string | undefined {
  if (uid !== 0) return 'the kubelet and containerd need root (mounts, cgroups, namespaces)';
  for (const cmd of ['containerd', 'ctr', 'runc']) if (findOnPath(cmd, path) === undefined) return `${cmd} is not installed (apt-get install containerd)`;
  if (!existsSync(CNI_LOOPBACK)) return 'the CNI loopback plugin is missing (apt-get install containernetworking-plugins)';
  return undefined;
}

/** imageName reads the name an OCI archive imports under (its index's io.containerd.image.name). */
export function imageName(archive: string): string | undefined {
  try {
    const index = JSON.parse(execFileSync('tar', ['-xOf', archive, './index.json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })) as { manifests?: { annotations?: Record<string, string> }[] };
    return index.manifests?.[0]?.annotations?.['io.containerd.image.name'];
  } catch {
    return undefined;
  }
}

/**
 * findRealNode looks for what a real node needs: root, containerd, runc and the CNI loopback plugin on this host, a
 * kubelet in `--bin-dir`, on PATH or in the build cache, and the pause and busybox archives in the cache. It answers
 * with them, or with the first thing missing in one line.
 */
export function findRealNode(options: FindBinariesOptions): { found: RealNodeBinaries } | { unavailable: string } {
  const host = realNodeHostUnavailable(options.path);
  if (host !== undefined) return { unavailable: host };
  const dirs = [options.binDir, ...(options.path ?? '').split(delimiter), join(kubeBuildDir(options.cacheDir), 'bin')].filter((d): d is string => d !== undefined && d !== '');
  const kubelet = dirs.map((d) => join(d, 'kubelet')).find(isExecutable);
  if (kubelet === undefined) return { unavailable: `no kubelet found in --bin-dir, on PATH or in ${kubeBuildDir(options.cacheDir)}/bin (npm run peers in the kevents repository builds it there)` };
  const images: Partial<NodeImages> = {};
  for (const which of ['pause', 'busybox'] as const) {
    const archive = join(options.cacheDir, NODE_IMAGES_DIR, `${which}.tar`);
    const name = existsSync(archive) ? imageName(archive) : undefined;
    if (name === undefined) return { unavailable: `no ${which} image archive in ${join(options.cacheDir, NODE_IMAGES_DIR)} (npm run peers in the kevents repository builds it there)` };
    images[which] = { name, archive };
  }
  return { found: { kubelet, containerd: findOnPath('containerd', options.path)!, ctr: findOnPath('ctr', options.path)!, images: images as NodeImages } };
}
