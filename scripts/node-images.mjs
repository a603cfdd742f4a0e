// The two images the real node runs, built here once into the peers cache, since the machines
// reach no image registry: the pause image (the pod sandbox) from upstream's build/pause/linux/pause.c
// compiled statically with the Debian compiler, and a busybox image from Debian's busybox-static.
// Each is an OCI archive that `ctr -n k8s.io images import` loads into the node's own containerd.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runLogged, withLock } from './builder-io.mjs';

/** PAUSE_IMAGE is the sandbox image's name (containerd's sandbox_image and the kubelet's --pod-infra-container-image). */
export const PAUSE_IMAGE = 'kevents.local/pause:3.10';
/** BUSYBOX_IMAGE is the image the real node's test pods run (`sh`, `sleep`, `cat`…). */
export const BUSYBOX_IMAGE = 'kevents.local/busybox:1.35';

/** IMAGES_VERSION names the cache folder; bump it when the images' content changes. */
const IMAGES_VERSION = 'v1';

function goArch() {
  return { x64: 'amd64', arm64: 'arm64' }[process.arch] ?? process.arch;
}

function sha256(buf) {
  return createHash('sha256').update(buf).digest('hex');
}

function writeBlob(layout, buf) {
  const digest = sha256(buf);
  writeFileSync(join(layout, 'blobs', 'sha256', digest), buf);
  return { digest: `sha256:${digest}`, size: buf.length };
}

/**
 * ociArchive writes an OCI image layout with one uncompressed layer (the folder rootfs, owned by
 * root, dated 1970) and one manifest named `name`, and tars it into archive.
 */
function ociArchive({ rootfs, name, config, archive, work, log }) {
  const layout = join(work, 'layout');
  rmSync(layout, { recursive: true, force: true });
  mkdirSync(join(layout, 'blobs', 'sha256'), { recursive: true });
  const layerTar = join(work, 'layer.tar');
  runLogged('tar', ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '-C', rootfs, '-cf', layerTar, '.'], { log });
  const layer = { mediaType: 'application/vnd.oci.image.layer.v1.tar', ...writeBlob(layout, readFileSync(layerTar)) };
  const platform = { architecture: goArch(), os: 'linux' };
  const cfg = writeBlob(layout, Buffer.from(JSON.stringify({ ...platform, config, rootfs: { type: 'layers', diff_ids: [layer.digest] }, history: [{ created_by: 'kevents scripts/node-images.mjs' }] })));
  const manifest = writeBlob(layout, Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.manifest.v1+json', config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...cfg }, layers: [layer] })));
  const index = {
    schemaVersion: 2,
    manifests: [{ mediaType: 'application/vnd.oci.image.manifest.v1+json', ...manifest, platform, annotations: { 'io.containerd.image.name': name, 'org.opencontainers.image.ref.name': name.split(':').pop() } }],
  };
  writeFileSync(join(layout, 'index.json'), JSON.stringify(index));
  writeFileSync(join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  runLogged('tar', ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '-C', layout, '-cf', `${archive}.partial`, '.'], { log });
  renameSync(`${archive}.partial`, archive);
}

function emptyRootfs(dir) {
  rmSync(dir, { recursive: true, force: true });
  for (const d of ['bin', 'dev', 'etc', 'proc', 'sys', 'tmp']) mkdirSync(join(dir, d), { recursive: true });
}

function buildPause({ dir, log, goModDir }) {
  const work = join(dir, 'pause');
  const rootfs = join(work, 'rootfs');
  emptyRootfs(rootfs);
  const source = join(goModDir(), 'build', 'pause', 'linux', 'pause.c');
  if (!existsSync(source)) throw new Error(`upstream's pause source is not at ${source}`);
  runLogged('gcc', ['-Os', '-static', '-DVERSION=v3.10-kevents', '-o', join(rootfs, 'pause'), source], { log });
  ociArchive({ rootfs, name: PAUSE_IMAGE, config: { Entrypoint: ['/pause'] }, archive: join(dir, 'pause.tar'), work, log });
}

function buildBusybox({ dir, log }) {
  const busybox = '/bin/busybox';
  if (!existsSync(busybox)) throw new Error('/bin/busybox is missing (apt-get install busybox-static)');
  const work = join(dir, 'busybox');
  const rootfs = join(work, 'rootfs');
  emptyRootfs(rootfs);
  writeFileSync(join(rootfs, 'bin', 'busybox'), readFileSync(busybox), { mode: 0o755 });
  const list = spawnSync(busybox, ['--list'], { encoding: 'utf8' });
  if (list.status !== 0) throw new Error(`${busybox} --list failed`);
  for (const applet of list.stdout.split('\n').filter((a) => /^[\w.[-]+$/.test(a) && a !== 'busybox')) symlinkSync('busybox', join(rootfs, 'bin', applet));
  ociArchive({ rootfs, name: BUSYBOX_IMAGE, config: { Cmd: ['sh'], Env: ['PATH=/bin'] }, archive: join(dir, 'busybox.tar'), work, log });
}

/**
 * buildNodeImages builds the pause and busybox archives once into CACHE/node-images-VERSION and
 * says where they are and under which names they import.
 */
export function buildNodeImages({ cache, log, goModDir, say }) {
  const dir = join(cache, `node-images-${IMAGES_VERSION}`);
  const result = { pause: { name: PAUSE_IMAGE, archive: join(dir, 'pause.tar') }, busybox: { name: BUSYBOX_IMAGE, archive: join(dir, 'busybox.tar') } };
  if (existsSync(result.pause.archive) && existsSync(result.busybox.archive)) return result;
  withLock(dir, () => {
    if (!existsSync(result.pause.archive)) {
      say('building the pause image from upstream pause.c');
      buildPause({ dir, log, goModDir });
    }
    if (!existsSync(result.busybox.archive)) {
      say('building the busybox image from /bin/busybox');
      buildBusybox({ dir, log });
    }
    rmSync(join(dir, 'pause'), { recursive: true, force: true });
    rmSync(join(dir, 'busybox'), { recursive: true, force: true });
  });
  return result;
}
