import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { kubeconfigWithCert, startAggregatedArchive } from './support/aggregated-archive.js';
import type { AggregatedArchive } from './support/aggregated-archive.js';
import { findPeers } from './support/control-plane.js';
import { run } from './support/run.js';
import type { Run } from './support/run.js';

/**
 * The kubectl plugin as krew installs it: scripts/plugin-release.mjs makes the archives and the manifest, the real
 * krew (built by scripts/peers.mjs) installs the manifest with this platform's archive into a KREW_ROOT of its own,
 * and the installed `kubectl kevents` (kubectl on PATH, KREW_ROOT/bin beside it, no node_modules anywhere above the
 * installed files) reads the archive through a real kube-apiserver's aggregation layer, under its RBAC. Where krew
 * could not be built the cases skip with the reason, never pass.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BASE_URL = 'https://downloads.kevents.example/v0.1.0';
const PACKAGE_VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

function krewUnavailable(): string | undefined {
  const peers = findPeers();
  if (peers.krewUnavailable !== undefined) return peers.krewUnavailable;
  if (peers.krew === undefined || peers.krewValidateManifest === undefined) return 'scripts/peers.mjs built no krew (KEVENTS_PEERS names none)';
  return undefined;
}

const UNAVAILABLE = krewUnavailable();
if (UNAVAILABLE !== undefined) process.stdout.write(`# krew-plugin: skipped: ${UNAVAILABLE}\n`);

/** release runs scripts/plugin-release.mjs into `out` (archives and manifest) and gives the manifest's path. */
function release(out: string, baseUrl = BASE_URL): string {
  const manifest = join(out, 'kevents.yaml');
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'plugin-release.mjs'), '--base-url', baseUrl, '--out', out, '--manifest', manifest], { stdio: ['ignore', 'ignore', 'pipe'] });
  return manifest;
}

/** serveFiles answers GET /NAME with the file NAME of `dir` on 127.0.0.1, as a release's download site would. */
async function serveFiles(dir: string): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const name = basename(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
    try {
      const body = readFileSync(join(dir, name));
      res.writeHead(200, { 'Content-Type': 'application/gzip', 'Content-Length': body.length }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** platform names this machine as krew's selectors do. */
function platform(): string {
  const arch = ({ x64: 'amd64', arm64: 'arm64' } as Record<string, string>)[process.arch] ?? process.arch;
  return `${process.platform}-${arch}`;
}

describe('kubectl kevents installed by krew', { timeout: 900_000, skip: UNAVAILABLE ?? false }, () => {
  let dir: string;
  let manifest: string;
  let archiveFile: string;
  let aggregated: AggregatedArchive | undefined;
  /** kubectl runs the kubectl on PATH with krew's bin folder and kubectl-krew before it, KREW_ROOT in dir. */
  let kubectl: (args: string[], env?: NodeJS.ProcessEnv) => Promise<Run>;
  let krewRoot: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kevents-krew-'));
    manifest = release(join(dir, 'release'));
    archiveFile = join(dir, 'release', `kubectl-kevents-v${PACKAGE_VERSION}-${platform()}.tar.gz`);
    const tools = join(dir, 'tools');
    mkdirSync(tools);
    // krew checks GitHub for a newer release now and then; validate-krew-manifest runs it with an environment of its
    // own, so the switch that stops it is set here, where every kubectl krew starts. Nothing leaves 127.0.0.1.
    writeFileSync(join(tools, 'kubectl-krew'), `#!/bin/sh\nKREW_NO_UPGRADE_CHECK=1 exec "${findPeers().krew!}" "$@"\n`, { mode: 0o755 });
    krewRoot = join(dir, 'krew-root');
    kubectl = (args, env = {}) =>
      run('kubectl', args, {
        env: { KREW_ROOT: krewRoot, KREW_NO_UPGRADE_CHECK: '1', HOME: dir, PATH: `${tools}:${join(krewRoot, 'bin')}:${process.env.PATH ?? ''}`, ...env },
        timeoutMs: 60_000,
      });
    aggregated = await startAggregatedArchive();
  });

  after(async () => {
    await aggregated?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('makes reproducible archives of the launcher, one bundle and the licence, and a manifest like the committed one', () => {
    const listing = execFileSync('tar', ['-tzf', archiveFile], { encoding: 'utf8' }).trim().split('\n').sort();
    assert.deepEqual(listing, ['LICENSE', 'kubectl-kevents', 'kubectl-kevents.mjs']);
    const again = release(join(dir, 'again'));
    assert.equal(readFileSync(again, 'utf8'), readFileSync(manifest, 'utf8'));
    // The committed manifest is the generated one at the package's version; only the archives' sums move with the code.
    const shape = (text: string): string => text.replace(/sha256: [0-9a-f]{64}/g, 'sha256: SUM');
    assert.equal(shape(readFileSync(join(ROOT, 'deploy', 'krew', 'kevents.yaml'), 'utf8')), shape(readFileSync(manifest, 'utf8')));
    assert.match(readFileSync(manifest, 'utf8'), new RegExp(`version: v${PACKAGE_VERSION.replace(/\./g, '\\.')}\\n`));
  });

  it('refuses an archive whose sha256 is not the manifest\'s, and installs the one that is', async () => {
    const tampered = join(dir, 'tampered.tar.gz');
    const bytes = readFileSync(archiveFile);
    writeFileSync(tampered, Buffer.concat([bytes, Buffer.from([0])]));
    const refused = await kubectl(['krew', 'install', `--manifest=${manifest}`, `--archive=${tampered}`], { KREW_ROOT: join(dir, 'refused-root') });
    assert.notEqual(refused.code, 0, refused.stdout);
    assert.match(refused.stderr, /checksum|sha256/i);

    const installed = await kubectl(['krew', 'install', `--manifest=${manifest}`, `--archive=${archiveFile}`]);
    assert.equal(installed.code, 0, installed.stderr);
    assert.match(installed.stderr, /Installed plugin: kevents/);
    // krew's receipt (`krew list` wants a plugin index, which a manifest install does not need).
    const receipt = readFileSync(join(krewRoot, 'receipts', 'kevents.yaml'), 'utf8');
    assert.match(receipt, new RegExp(`^  version: v${PACKAGE_VERSION.replace(/\./g, '\\.')}$`, 'm'));
    // kubectl finds the plugin where krew linked it, and nowhere else (not in a node_modules/.bin on PATH).
    const plugins = await kubectl(['plugin', 'list', '--name-only']);
    assert.deepEqual(plugins.stdout.split('\n').filter((l) => l.includes('kevents')), ['kubectl-kevents']);
    const where = await kubectl(['plugin', 'list']);
    assert.ok(where.stdout.includes(join(krewRoot, 'bin', 'kubectl-kevents')), where.stdout);
    // The read commands, and nothing of kevents' server side.
    const help = await kubectl(['kevents', '--help']);
    assert.equal(help.code, 0, help.stderr);
    const commands = [...help.stdout.matchAll(/^ {2}(\w+) /gm)].map((m) => m[1]);
    assert.deepEqual(commands, ['version', 'get', 'events', 'timeline', 'incidents', 'search', 'lint', 'help']);
  });

  it('reads the incidents of every namespace through the aggregated API (kubectl kevents incidents -A), under the cluster\'s RBAC', async () => {
    const cp = aggregated!.cp;
    const as = (kubeconfig: string, args: string[]): Promise<Run> => kubectl(['kevents', ...args], { KUBECONFIG: kubeconfig });
    const all = await as(cp.kubeconfigFile(), ['incidents', '-A']);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stdout, /shop\s.*ReplicaSet\/web-7d4b9c8f5/);
    assert.match(all.stdout, /ResourceQuota "compute" would be exceeded/);
    const alice = kubeconfigWithCert(cp, 'alice', aggregated!.dir);
    const timeline = await as(alice, ['timeline', '--for', 'replicaset/web-7d4b9c8f5', '-n', 'shop']);
    assert.equal(timeline.code, 0, timeline.stderr);
    assert.match(timeline.stdout, /FailedCreate/);
    const search = await as(alice, ['search', 'quota', '-n', 'shop']);
    assert.equal(search.code, 0, search.stderr);
    assert.match(search.stdout, /FailedCreate/);
    const refused = await as(alice, ['incidents', '-n', 'pay']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /Forbidden/);
  });

  it("passes krew-index's validate-krew-manifest, which downloads and installs every platform's archive (from 127.0.0.1)", async () => {
    const out = join(dir, 'served');
    mkdirSync(out);
    const site = await serveFiles(out);
    try {
      const served = release(out, site.url);
      const r = await run(findPeers().krewValidateManifest!, ['-manifest', served], { env: { PATH: `${join(dir, 'tools')}:${process.env.PATH ?? ''}`, KREW_NO_UPGRADE_CHECK: '1' }, timeoutMs: 120_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /all 4 spec\.platforms installed fine/);
    } finally {
      await new Promise<void>((r) => site.server.close(() => r()));
    }
  });

  it('says in one line that it needs a newer Node when the node on PATH is older', async () => {
    // A `node` on PATH that reports 18: the launcher's check, reached through kubectl and krew's link as a user would.
    const old = join(dir, 'old-node');
    mkdirSync(old);
    writeFileSync(join(old, 'pretend-18.cjs'), "Object.defineProperty(process.versions, 'node', { value: '18.20.4' });\n");
    writeFileSync(join(old, 'node'), `#!/bin/sh\nexec "${process.execPath}" --require "${join(old, 'pretend-18.cjs')}" "$@"\n`);
    chmodSync(join(old, 'node'), 0o755);
    const r = await kubectl(['kevents', 'version'], { PATH: `${old}:${join(krewRoot, 'bin')}:${process.env.PATH ?? ''}` });
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'kubectl-kevents needs Node.js 20 or newer as node on PATH; found Node.js 18.20.4\n');
    const current = await kubectl(['kevents', 'version']);
    assert.equal(current.code, 0, current.stderr);
    assert.equal(current.stdout, `kevents ${PACKAGE_VERSION}\n`);
  });
});
