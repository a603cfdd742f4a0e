import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { builtinModules } from 'node:module';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The packed tarball, installed as a user installs it: `npm pack`, then
 * `npm install -g` into a temporary prefix, then the kevents on that PATH.
 * It runs the build already in dist/ (npm test builds first), so the pack
 * skips its prepack build.
 *
 * better-sqlite3 compiles from source when no prebuilt binary can be fetched
 * (about two minutes here). Its installer takes a local prebuild
 * (npm_config_better_sqlite3_local_prebuilds, prebuild-install's documented
 * offline path), so this test hands it the binary this checkout already built
 * for the same Node; KEVENTS_PACK_FROM_SOURCE=1 compiles instead.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies?: Record<string, string>;
};

function run(file: string, args: string[], o: { cwd: string; env?: NodeJS.ProcessEnv; timeout?: number }): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: o.cwd, env: o.env ?? process.env, timeout: o.timeout ?? 60_000, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : ((error as { code?: number }).code ?? 1), stdout, stderr });
    });
  });
}

/** localPrebuild writes better-sqlite3's prebuild tarball from the checkout's own binary, named as prebuild-install looks for it. */
async function localPrebuild(dir: string): Promise<string | undefined> {
  const mod = join(ROOT, 'node_modules', 'better-sqlite3');
  const binary = join(mod, 'build', 'Release', 'better_sqlite3.node');
  if (!existsSync(binary)) return undefined;
  const version = (JSON.parse(readFileSync(join(mod, 'package.json'), 'utf8')) as { version: string }).version;
  const stage = join(dir, 'stage');
  mkdirSync(join(stage, 'build', 'Release'), { recursive: true });
  copyFileSync(binary, join(stage, 'build', 'Release', 'better_sqlite3.node'));
  const out = join(dir, 'prebuilds');
  mkdirSync(out);
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  const tar = await run('tar', ['-czf', join(out, name), '-C', stage, 'build'], { cwd: dir });
  assert.equal(tar.code, 0, tar.stderr);
  return out;
}

/** bareImports are the package names the bundled CLI imports (static, dynamic and through require). */
function bareImports(dir: string): Set<string> {
  const names = new Set<string>();
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.js'))) {
    const text = readFileSync(join(dir, f), 'utf8');
    for (const m of text.matchAll(/(?:(?<![-\w$.])from\s*|\bimport\s*\(\s*|\brequireCjs\(\s*|\brequire\(\s*)["']([^"'./][^"']*)["']/g)) {
      const spec = m[1]!;
      if (spec.startsWith('node:') || builtinModules.includes(spec)) continue;
      names.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  }
  return names;
}

describe('the packed tarball installs a working kevents', () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'kevents-packed-')));
  const prefix = join(dir, 'prefix');
  const work = join(dir, 'work');
  const home = join(dir, 'home');
  mkdirSync(work);
  mkdirSync(home);
  let env: NodeJS.ProcessEnv;
  let packed: { filename: string; files: { path: string }[] };
  let kevents: string;

  before(async () => {
    const pack = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT, timeout: 120_000 });
    assert.equal(pack.code, 0, pack.stderr);
    packed = (JSON.parse(pack.stdout) as (typeof packed)[])[0]!;
    const prebuilds = process.env.KEVENTS_PACK_FROM_SOURCE === '1' ? undefined : await localPrebuild(dir);
    const installEnv: NodeJS.ProcessEnv = { ...process.env, ...(prebuilds !== undefined ? { npm_config_better_sqlite3_local_prebuilds: prebuilds } : {}) };
    // Global installs run no dependency's install script unless allowed: better-sqlite3 needs its own.
    const install = await run(
      'npm',
      ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--allow-scripts=better-sqlite3', join(dir, packed.filename)],
      { cwd: dir, env: installEnv, timeout: 600_000 },
    );
    assert.equal(install.code, 0, `${install.stdout}\n${install.stderr}`);
    kevents = join(prefix, 'bin', 'kevents');
    env = { ...process.env, HOME: home, PATH: `${join(prefix, 'bin')}:${process.env.PATH ?? ''}` };
    delete env.KUBECONFIG;
    delete env.KEVENTS_SERVER;
    delete env.INIT_CWD;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('packs the built CLI and the web UI, and no sources or tests', () => {
    const paths = packed.files.map((f) => f.path);
    for (const p of ['dist/bin/kevents.js', 'dist/ui/index.html', 'package.json', 'README.md', 'LICENSE']) assert.ok(paths.includes(p), `${p} is not packed`);
    assert.ok(paths.some((p) => /^dist\/ui\/assets\/.*\.js$/.test(p)), 'the UI bundle is not packed');
    assert.deepEqual(paths.filter((p) => /^(src|test|bench|scripts|node_modules)\//.test(p)), []);
  });

  it('needs at run time only what package.json lists as dependencies (or optional peers)', () => {
    const runtime = new Set([...Object.keys(PKG.dependencies), ...Object.keys(PKG.peerDependencies ?? {})]);
    const imported = [...bareImports(join(ROOT, 'dist', 'bin'))].sort();
    assert.ok(imported.includes('better-sqlite3') && imported.includes('commander'), imported.join(', '));
    assert.deepEqual(imported.filter((n) => !runtime.has(n)), [], 'imported by the CLI but not a dependency');
    const installed = new Set(readdirSync(join(prefix, 'lib', 'node_modules', 'kevents', 'node_modules')));
    for (const dev of Object.keys(PKG.devDependencies)) {
      if (runtime.has(dev)) continue;
      assert.ok(!installed.has(dev.split('/')[0]!) || dev.startsWith('@types/') || dev.startsWith('@eslint/'), `${dev} (a devDependency) was installed`);
    }
  });

  it('kevents --help', async () => {
    const r = await run('kevents', ['--help'], { cwd: work, env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Usage: kevents \[options\] \[command\]/);
    assert.match(r.stdout, /serve /);
  });

  it('kevents serve (SQLite by default) with its web UI, then kevents record and kevents timeline from its banner', async () => {
    const child = spawn(kevents, ['serve', '--listen', '127.0.0.1:0'], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      let out = '';
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no banner:\n${out}\n${err}`)), 30_000);
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (/ kubeconfig --server .*\n/.test(out)) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.once('exit', (code) => reject(new Error(`kevents serve exited with ${code}: ${err}`)));
      });
      const url = /listening on (http:\/\/\S+)/.exec(out)![1]!;
      assert.match(out, /storage: +sqlite:\.kevents\/events\.db/);
      assert.ok(existsSync(join(work, '.kevents', 'events.db')), 'the SQLite store was created where the user stands');
      assert.match(out, new RegExp(`web UI: +${url}/\n`));
      const page = await fetch(`${url}/`);
      assert.equal(page.status, 200);
      const html = await page.text();
      const script = /src="(\/assets\/[^"]+\.js)"/.exec(html);
      assert.ok(script, html);
      assert.equal((await fetch(`${url}${script[1]}`)).status, 200);

      // kevents is on this PATH, so the banner names it bare; its commands run as printed.
      const commands = out.split('\n').filter((l) => /^ {2}kevents /.test(l)).map((l) => l.trim());
      const record = commands.find((c) => c.startsWith('kevents record '));
      const timeline = commands.find((c) => c.startsWith('kevents timeline '));
      assert.ok(record !== undefined && timeline !== undefined, out);
      const rec = await run('sh', ['-c', record], { cwd: work, env });
      assert.equal(rec.code, 0, rec.stderr);
      const tl = await run('sh', ['-c', timeline], { cwd: work, env });
      assert.equal(tl.code, 0, tl.stderr);
      assert.match(tl.stdout, /Warning\s+BackOff/);
      assert.match(tl.stdout, /Pod\/web-1/);
    } finally {
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    }
  });
});
