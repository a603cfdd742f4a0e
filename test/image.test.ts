import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { parseAllDocuments } from 'yaml';
import { allOccurrences, expectedHistories, histories, historyDiffs } from './support/archive-check.js';
import { kubeconfigYaml, startControlPlane } from './support/control-plane.js';
import type { ControlPlane } from './support/control-plane.js';
import { legacyEvent, request } from './support/http.js';
import { findKubectls, runKubectl } from './support/kubectl.js';
import { freePorts } from './support/ports.js';
import { makeCertificates } from './support/tls.js';
import { until } from './support/wait.js';
import type { CoreEvent } from '../src/api/index.js';

/**
 * The image deploy/Dockerfile builds, built with podman from the local bases setup makes out of
 * Debian's packages (scripts/image-bases.mjs), and run as the manifests in deploy/ run it: as the
 * user 65532, on a read-only root file system with the archive on a mounted volume, no
 * capabilities. `kevents serve` answers kubectl 1.33; `kevents mirror` finds the real
 * kube-apiserver from a mounted service account of the deploy/ RBAC, as in a pod, archives its
 * events, and loses and repeats none when its container is killed with SIGKILL and started again.
 * The image's size and the mirror's time from `podman run` to a ready /readyz are reported (see
 * docs/deploy.md).
 */

interface ImageBases {
  podmanGlobal: string[];
  podmanRun: string[];
  buildImage?: string;
  runImage?: string;
  unavailable?: string;
}

const root = new URL('..', import.meta.url).pathname;
const DEPLOY = join(root, 'deploy/kustomize');
const POSTGRES_URL = process.env.KEVENTS_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:55432/test';
const VERSION = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
/** The user the runtime stage runs as (distroless' nonroot), and the manifests' runAsUser. */
const NONROOT = 65532;

function imageBases(): ImageBases {
  const given = process.env.KEVENTS_IMAGE_BASES;
  if (given !== undefined && given !== '') return JSON.parse(given) as ImageBases;
  // Run outside scripts/run-tests.mjs: ask the builder itself (quick once the bases exist).
  const out = execFileSync(process.execPath, [join(root, 'scripts/image-bases.mjs'), '--json', '--quiet'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(out) as ImageBases;
}

const bases = imageBases();
const kubectl = findKubectls().find((k) => k.minor === 33);
// The image is tagged per checkout, so that worktrees side by side do not rebuild each other's.
const TAG = `localhost/kevents-test:${createHash('sha256').update(root).digest('hex').slice(0, 12)}`;

function podman(args: string[], input?: string): string {
  return execFileSync('podman', [...bases.podmanGlobal, ...args], { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
}

/** podmanRun runs a container of the image detached, as the manifests' securityContext does. */
function podmanRun(name: string, options: string[], args: string[]): void {
  podman(['run', '-d', '--name', name, ...bases.podmanRun, '--read-only', '--tmpfs', '/tmp', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges', ...options, TAG, ...args]);
}

function removeContainer(name: string): void {
  spawnSync('podman', [...bases.podmanGlobal, 'rm', '-f', '-t', '0', name], { stdio: 'ignore' });
}

function logsOf(name: string): string {
  const r = spawnSync('podman', [...bases.podmanGlobal, 'logs', name], { encoding: 'utf8' });
  return `${r.stdout}${r.stderr}`.slice(-4000);
}

/** volume makes a folder for a mount, owned by the container's user as fsGroup makes a pod's volume. */
function volume(parent: string, name: string): string {
  const dir = join(parent, name);
  mkdirSync(dir, { mode: 0o700 });
  chownSync(dir, NONROOT, NONROOT);
  return dir;
}

/** secretVolume makes a folder of files readable by anyone, as a Secret's volume is mounted (defaultMode 0644). */
function secretVolume(parent: string, name: string, files: Record<string, string>): string {
  const dir = join(parent, name);
  mkdirSync(dir, { mode: 0o755 });
  for (const [file, from] of Object.entries(files)) {
    copyFileSync(from, join(dir, file));
    chmodSync(join(dir, file), 0o644);
  }
  return dir;
}

function occurrencesIn(file: string): number {
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      return (db.prepare('SELECT count(*) AS n FROM occurrences').get() as { n: number }).n;
    } finally {
      db.close();
    }
  } catch {
    // Not created yet, or its schema not yet written.
    return -1;
  }
}

/** untilIn waits for a condition on a container, failing with what the container printed. */
async function untilIn(name: string, what: string, fn: () => boolean | Promise<boolean>): Promise<void> {
  try {
    await until(what, fn, 120_000, 25);
  } catch (err) {
    throw new Error(`${(err as Error).message}; the container ${name} printed:\n${logsOf(name)}`);
  }
}

async function readyz(port: number): Promise<{ status: number; text: string }> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/readyz`);
    return { status: r.status, text: await r.text() };
  } catch (err) {
    return { status: 0, text: (err as Error).message };
  }
}

void describe('the image deploy/Dockerfile builds', { skip: bases.unavailable ?? false, timeout: 45 * 60_000 }, () => {
  let work: string;
  const containers: string[] = [];

  before(() => {
    work = mkdtempSync(join(tmpdir(), 'kevents-image-'));
    chmodSync(work, 0o755);
    // The build stage is tagged as well: its cache (the `npm ci` layer above all) is then what the next
    // build reuses, and what an older build left behind can be removed by its tag's old ID, down to
    // the layers nothing else uses, instead of piling up run after run.
    const stages: [string, string[]][] = [
      [`${TAG}-build`, ['--target', 'build']],
      [TAG, []],
    ];
    const previous = stages.map(([tag]) => spawnSync('podman', [...bases.podmanGlobal, 'image', 'inspect', '--format', '{{.Id}}', tag], { encoding: 'utf8' }).stdout.trim());
    for (const [tag, target] of stages) {
      const r = spawnSync(
        'podman',
        [...bases.podmanGlobal, 'build', ...bases.podmanRun, ...target, '--build-arg', `BUILD_IMAGE=${bases.buildImage!}`, '--build-arg', `RUN_IMAGE=${bases.runImage!}`, '-f', 'deploy/Dockerfile', '-t', tag, '.'],
        { cwd: root, encoding: 'utf8', maxBuffer: 256 << 20 },
      );
      if (r.status !== 0) throw new Error(`podman build of deploy/Dockerfile failed (${r.error?.message ?? `exit ${r.status}`}): ${`${r.stdout}\n${r.stderr}`.trim().split('\n').slice(-20).join('\n')}`);
    }
    stages.forEach(([tag], i) => {
      const now = podman(['image', 'inspect', '--format', '{{.Id}}', tag]).trim();
      if (previous[i] !== '' && previous[i] !== now) spawnSync('podman', [...bases.podmanGlobal, 'rmi', previous[i]!], { stdio: 'ignore' });
    });
  });

  after(() => {
    for (const name of containers) removeContainer(name);
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  void it('holds Node, the built CLI, its production modules and the native SQLite driver, and no compiler or npm; runs as 65532', (t) => {
    const config = JSON.parse(podman(['image', 'inspect', TAG])) as { Size: number; Config: { User: string; Entrypoint: string[] } }[];
    assert.equal(config[0]!.Config.User, `${NONROOT}:${NONROOT}`);
    assert.deepEqual(config[0]!.Config.Entrypoint, ['/nodejs/bin/node', '/app/dist/bin/kevents.js']);
    const id = podman(['create', TAG]).trim();
    const tar = join(work, 'image.tar');
    try {
      podman(['export', '-o', tar, id]);
    } finally {
      podman(['rm', id]);
    }
    const files = new Set(execFileSync('tar', ['-tf', tar], { encoding: 'utf8', maxBuffer: 256 << 20 }).split('\n').map((f) => f.replace(/^\.?\//, '').replace(/\/$/, '')));
    rmSync(tar);
    for (const want of ['nodejs/bin/node', 'app/dist/bin/kevents.js', 'app/node_modules/better-sqlite3/build/Release/better_sqlite3.node', 'app/node_modules/pg/package.json', 'app/node_modules/@kubernetes/client-node/package.json']) {
      assert.ok(files.has(want), `${want} is not in the image`);
    }
    const tools = [...files].filter((f) => /(^|\/)s?bin\/(npm|npx|node-gyp|gcc|g\+\+|cc|c\+\+|cpp|make|python3?|ld|as|apt-get)(-[\d.]+)?$/.test(f) || /(^|\/)node_modules\/npm(\/|$)/.test(f));
    assert.deepEqual(tools, [], 'a compiler, npm or a package manager is in the runtime image');
    for (const dev of ['typescript', 'vite', 'eslint', 'tsx', 'esbuild', 'fast-check']) assert.ok(!files.has(`app/node_modules/${dev}`), `the development dependency ${dev} is in the image`);
    const mb = config[0]!.Size / 1e6;
    t.diagnostic(`image size ${mb.toFixed(0)} MB (${files.size} files)`);
  });

  void it('kevents --version', () => {
    assert.equal(podman(['run', '--rm', ...bases.podmanRun, '--read-only', TAG, '--version']).trim(), VERSION);
  });

  void it('kevents serve, as the manifests run it, answers kubectl 1.33 from the archive on a volume', { skip: kubectl === undefined ? 'no kubectl 1.33 on this machine' : false }, async () => {
    const dir = mkdtempSync(join(work, 'serve-'));
    const certs = makeCertificates({ dir: mkdtempSync(join(work, 'certs-')) });
    const token = createHash('sha256').update(`${dir}writer`).digest('hex').slice(0, 32);
    writeFileSync(join(dir, 'tokens.csv'), `${token},ci,1002,"kevents:writers"\n`);
    const tls = secretVolume(dir, 'tls', { 'tls.crt': certs.certFile, 'tls.key': certs.keyFile });
    const auth = secretVolume(dir, 'auth', { 'tokens.csv': join(dir, 'tokens.csv') });
    const data = volume(dir, 'data');
    // The sqlite overlay's arguments, but for the loopback port and without its mirror (no cluster here).
    const deployment = parseAllDocuments(execFileSync(kubectl!.path, ['kustomize', join(DEPLOY, 'overlays/sqlite')], { encoding: 'utf8' }))
      .map((d) => d.toJS() as { kind: string; spec?: any })
      .find((d) => d.kind === 'Deployment')!;
    const serve = (deployment.spec.template.spec.containers as { name: string; args: string[] }[]).find((c) => c.name === 'serve')!;
    const [port] = await freePorts(1);
    const args = serve.args.filter((a) => a !== '--mirror=in-cluster').map((a) => (a.startsWith('--listen=') ? `--listen=127.0.0.1:${port}` : a));
    assert.ok(args.includes('--storage=sqlite:/data/archive.db'), args.join(' '));
    const name = `kevents-test-serve-${process.pid}`;
    containers.push(name);
    podmanRun(name, ['-v', `${tls}:/etc/kevents/tls:ro`, '-v', `${auth}:/etc/kevents/auth:ro`, '-v', `${data}:/data`], args);
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, kubeconfigYaml(`https://127.0.0.1:${port}`, certs.caFile, token, 'ci'));
    const k = kubectl!;
    await untilIn(name, 'kevents serve in the container answers kubectl', async () => (await runKubectl(k, '', ['get', 'events', '-A'], { kubeconfig })).code === 0);
    const event = legacyEvent({ name: 'from-kubectl.1', object: 'web-0', reason: 'Pulled', message: 'image pulled by the test', firstAgo: 5, lastAgo: 5 });
    const created = await runKubectl(k, '', ['create', '-f', '-'], { kubeconfig, input: JSON.stringify(event) });
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /event\/from-kubectl\.1 created/);
    const listed = await runKubectl(k, '', ['get', 'events', '-A'], { kubeconfig });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^default\s+\S+\s+Normal\s+Pulled\s+pod\/web-0\s+image pulled by the test$/m, listed.stdout);
    // Written by the container's user, not root, into the volume.
    assert.equal(statSync(join(data, 'archive.db')).uid, NONROOT);
    removeContainer(name);
  });

  void it("kevents serve over PostgreSQL, the postgres overlay's archive: the pg driver is in the image", async () => {
    const schema = `kevents_image_${process.pid}`;
    const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
    const [port] = await freePorts(1);
    const name = `kevents-test-postgres-${process.pid}`;
    containers.push(name);
    try {
      podmanRun(name, [], ['serve', `--listen=127.0.0.1:${port}`, `--storage=${POSTGRES_URL}?schema=${schema}`, '--event-ttl=0']);
      const base = `http://127.0.0.1:${port}`;
      await untilIn(name, 'kevents serve over PostgreSQL answers', async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200);
      const event = legacyEvent({ name: 'in-postgres.1', object: 'db-0', reason: 'Started', message: 'kept in PostgreSQL', firstAgo: 5, lastAgo: 5 });
      const created = await request(base, 'POST', '/api/v1/namespaces/default/events', event);
      assert.equal(created.status, 201, created.text);
      const rows = await admin.query(`SELECT count(*)::int AS n FROM ${schema}.occurrences`);
      assert.equal(rows.rows[0].n, 1);
    } finally {
      removeContainer(name);
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
  });

  void describe('kevents mirror, as in a pod, on the real kube-apiserver', () => {
    let cp: ControlPlane;
    before(async () => {
      cp = await startControlPlane();
    });
    after(async () => {
      await cp?.stop();
    });

    void it('archives the events through the mounted service account and loses and repeats none over a kill -9 and a restart', async (t) => {
      const dir = mkdtempSync(join(work, 'mirror-'));
      const kube = (args: string[]): string => execFileSync(kubectl?.path ?? 'kubectl', ['--kubeconfig', cp.kubeconfigFile(), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      // The RBAC as a user applies it (the sqlite overlay: the namespace, the ServiceAccount, its roles),
      // and a token of that ServiceAccount from the TokenRequest API, as the kubelet projects it.
      kube(['apply', '-k', join(DEPLOY, 'overlays/sqlite')]);
      writeFileSync(join(dir, 'token'), kube(['create', 'token', 'kevents', '-n', 'kevents', '--duration', '2h']).trim());
      writeFileSync(join(dir, 'namespace'), 'kevents');
      const sa = secretVolume(dir, 'serviceaccount', { token: join(dir, 'token'), 'ca.crt': cp.caFile, namespace: join(dir, 'namespace') });
      const data = volume(dir, 'data');
      const archive = join(data, 'archive.db');
      const [metricsPort] = await freePorts(1);
      const api = new URL(cp.url);
      const name = `kevents-test-mirror-${process.pid}`;
      containers.push(name);

      const versions: CoreEvent[] = [];
      let n = 0;
      const create = async (): Promise<void> => {
        n += 1;
        const body = legacyEvent({ name: `image-${n}.1`, object: `pod-${n}`, reason: 'Scheduled', message: `event ${n}`, firstAgo: 30, lastAgo: 30 });
        const r = await cp.request('POST', '/api/v1/namespaces/default/events', body);
        assert.equal(r.status, 201, r.text);
        versions.push(r.json as CoreEvent);
      };
      const repeat = async (i: number): Promise<void> => {
        const last = [...versions].reverse().find((v) => v.metadata.name === `image-${i}.1`)!;
        const r = await cp.request('PATCH', `/api/v1/namespaces/default/events/image-${i}.1`, { count: (last.count ?? 1) + 1, lastTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), message: `event ${i} again` }, { contentType: 'application/merge-patch+json' });
        assert.equal(r.status, 200, r.text);
        versions.push(r.json as CoreEvent);
      };
      const expected = (): number => [...expectedHistories(versions).values()].reduce((s, h) => s + h.length, 0);
      const untilArchived = async (what: string): Promise<void> => {
        let seen = -1;
        try {
          await untilIn(name, what, () => (seen = occurrencesIn(archive)) === expected());
        } catch (err) {
          // The counts tell a mirror that fell behind (fewer) from one that archived what the test did not expect (more).
          throw new Error(`${(err as Error).message}\n(the archive held ${seen} occurrences, the test expected ${expected()})`);
        }
      };

      for (let i = 0; i < 10; i++) await create();
      const started = performance.now();
      podmanRun(
        name,
        ['-v', `${sa}:/var/run/secrets/kubernetes.io/serviceaccount:ro`, '-v', `${data}:/data`, '-e', `KUBERNETES_SERVICE_HOST=${api.hostname}`, '-e', `KUBERNETES_SERVICE_PORT=${api.port}`],
        ['mirror', '--in-cluster', '--cluster=local', '--to=sqlite:/data/archive.db', `--listen=127.0.0.1:${metricsPort}`],
      );
      await untilIn(name, "the mirror's /readyz is ok", async () => (await readyz(metricsPort!)).status === 200);
      const toReady = performance.now() - started;
      const ready = await readyz(metricsPort!);
      assert.match(ready.text, /ok/);
      await untilArchived('the first events are archived');
      const before = occurrencesIn(archive);

      // Changes go on while the container is killed, and while it is down.
      for (let i = 0; i < 20; i++) {
        if (i === 8) podman(['kill', '--signal', 'KILL', name]);
        if (i % 3 === 0) await repeat(1 + (i % 10));
        else await create();
      }
      const killed = JSON.parse(podman(['inspect', name]))[0].State as { Running: boolean; ExitCode: number };
      assert.equal(killed.Running, false);
      assert.equal(killed.ExitCode, 137, 'the container ended by SIGKILL');
      const afterKill = occurrencesIn(archive);
      podman(['start', name]);
      await untilIn(name, "the restarted mirror's /readyz is ok", async () => (await readyz(metricsPort!)).status === 200);
      for (let i = 0; i < 5; i++) await create();
      await untilArchived('every change is archived after the restart');

      // The file as the archive reads it (kevents serve of the same image over the volume): each
      // event's changes, exactly once each.
      podman(['stop', '-t', '10', name]);
      const [readerPort] = await freePorts(1);
      const reader = `kevents-test-reader-${process.pid}`;
      containers.push(reader);
      podmanRun(reader, ['-v', `${data}:/data`], ['serve', `--listen=127.0.0.1:${readerPort}`, '--storage=sqlite:/data/archive.db', '--event-ttl=0']);
      const base = `http://127.0.0.1:${readerPort}`;
      await untilIn(reader, 'kevents serve over the archive answers', async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200);
      const want = expectedHistories(versions);
      const have = histories(await allOccurrences(base));
      const ours = new Map([...have].filter(([uid]) => want.has(uid)));
      assert.deepEqual(ours, want, historyDiffs(want, ours));
      t.diagnostic(`podman run to a ready /readyz: ${toReady.toFixed(0)} ms; archive: ${before} occurrences before the kill, ${afterKill} at it, ${expected()} after the restart`);
    });
  });
});
