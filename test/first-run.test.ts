import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selfCommand } from '../src/cli/self-command.js';
import { findKubectls } from './support/kubectl.js';
import { CLI } from './support/server-process.js';

/** A newcomer's shell: no kubeconfig, no $KEVENTS_SERVER, an empty home. */
function newcomerEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
  delete env.KUBECONFIG;
  delete env.KEVENTS_SERVER;
  delete env.KUBERNETES_SERVICE_HOST;
  delete env.INIT_CWD;
  return env;
}

function run(file: string, args: string[], o: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: o.cwd, env: o.env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : ((error as { code?: number }).code ?? 1), stdout, stderr });
    });
  });
}

/** freePort is a loopback port nothing listens on (bound, then released). */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
    s.connect(port, '127.0.0.1');
  });
}

/** Banner is a started `kevents serve` and what it printed before its first request. */
interface Banner {
  url: string;
  text: string;
  stop(): Promise<void>;
}

async function serveBannerOf(cwd: string, env: NodeJS.ProcessEnv, args: string[]): Promise<Banner> {
  const child = spawn(process.execPath, [CLI, 'serve', '--listen', '127.0.0.1:0', ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kevents serve printed no whole banner:\n${out}\n${err}`)), 30_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      // The banner's last line writes a kubeconfig.
      if (/ kubeconfig --server .*\n/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`kevents serve exited with ${code}: ${err}`));
    });
  });
  const url = /listening on (http:\/\/\S+)/.exec(out)![1]!;
  return {
    url,
    text: out,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** bannerCommands are the banner's indented command lines. */
function bannerCommands(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => /^ {2}(node|kevents|npx|kubectl) /.test(l))
    .map((l) => l.trim());
}

describe('first run: what kevents serve prints runs as printed', () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'kevents-first-run-')));
  const home = join(dir, 'home');
  const cwd = join(dir, 'work');
  mkdirSync(home);
  mkdirSync(cwd);
  const env = newcomerEnv(home);
  let banner: Banner;
  before(async () => {
    banner = await serveBannerOf(cwd, env, ['--storage', 'memory:']);
  });
  after(async () => {
    await banner?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('names the web UI, and the UI answers there', async () => {
    const ui = /^ {2}web UI: +(\S+)$/m.exec(banner.text);
    assert.ok(ui, banner.text);
    assert.equal(ui[1], `${banner.url}/`);
    const res = await fetch(ui[1]);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /<div id="app"/);
  });

  it('names kevents as it was started: the built bin by its path, never a bare kevents that is not on the PATH', () => {
    const cmds = bannerCommands(banner.text);
    const own = cmds.filter((c) => !c.startsWith('kubectl '));
    assert.ok(own.length >= 5, banner.text);
    for (const command of ['record', 'timeline', 'incidents', 'search']) assert.ok(own.some((c) => c.includes(` ${command} `)), `${command}: ${banner.text}`);
    for (const c of own) assert.ok(c.startsWith(`node ${CLI} `), c);
    assert.ok(cmds.some((c) => c.startsWith('kubectl ')), banner.text);
  });

  it('runs every command it prints, in that directory, with no kubeconfig', async () => {
    const kubectl = findKubectls().length > 0;
    for (const c of bannerCommands(banner.text)) {
      if (c.startsWith('kubectl ') && !kubectl) continue;
      const r = await run('sh', ['-c', c], { cwd, env });
      assert.equal(r.code, 0, `${c}\n${r.stderr}`);
      if (/ timeline /.test(c)) assert.match(r.stdout, /BackOff/, r.stdout);
      // The recorded back-off is an incident of its pod, and the archive's search finds it.
      if (/ incidents /.test(c)) assert.match(r.stdout, /Pod\/web-1 +.*crash-looping/, r.stdout);
      if (/ search /.test(c)) assert.match(r.stdout, /BackOff/, r.stdout);
      if (c.startsWith('kubectl ')) assert.match(r.stdout, /BackOff/, r.stdout);
    }
    // The kubeconfig it wrote points kubectl (and kevents) at the server.
    const read = await run('sh', ['-c', `KUBECONFIG=$PWD/kevents.kubeconfig node ${CLI} get events -A`], { cwd, env });
    assert.equal(read.code, 0, read.stderr);
    assert.match(read.stdout, /BackOff/);
  });
});

describe('selfCommand: how to run kevents again from where the user stands', () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'kevents-self-')));
  const bin = join(dir, 'checkout', 'dist', 'bin', 'kevents.js');
  const project = join(dir, 'project');
  const installed = join(project, 'node_modules', 'kevents', 'dist', 'bin', 'kevents.js');
  const pathDir = join(dir, 'prefix', 'bin');
  before(() => {
    for (const f of [bin, installed]) {
      mkdirSync(join(f, '..'), { recursive: true });
      writeFileSync(f, '#!/usr/bin/env node\n');
      chmodSync(f, 0o755);
    }
    mkdirSync(pathDir, { recursive: true });
    symlinkSync(bin, join(pathDir, 'kevents'));
    mkdirSync(join(project, 'src'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const cases: [string, () => { script: string; cwd: string; PATH: string }, string | (() => string)][] = [
    ['the kevents on the PATH is this one', () => ({ script: bin, cwd: project, PATH: `/usr/bin:${pathDir}` }), 'kevents'],
    ['inside the checkout, the built bin by its relative path', () => ({ script: bin, cwd: join(dir, 'checkout'), PATH: '/usr/bin' }), 'node dist/bin/kevents.js'],
    ['elsewhere, the built bin by its absolute path', () => ({ script: bin, cwd: project, PATH: '/usr/bin' }), () => `node ${bin}`],
    ['installed in a project, from anywhere inside it', () => ({ script: installed, cwd: join(project, 'src'), PATH: '/usr/bin' }), 'npx kevents'],
    ['installed in a project, from outside it', () => ({ script: installed, cwd: join(dir, 'checkout'), PATH: '/usr/bin' }), () => `node ${installed}`],
    ['run by another program (a test), kevents', () => ({ script: join(dir, 'some-test.ts'), cwd: dir, PATH: '/usr/bin' }), 'kevents'],
  ];
  for (const [name, ctx, want] of cases) {
    it(name, () => {
      const c = ctx();
      assert.equal(selfCommand({ env: { PATH: c.PATH }, script: c.script, cwd: c.cwd }), typeof want === 'string' ? want : want());
    });
  }
});

describe('first run: the errors a newcomer meets first are one line that names the fix', () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'kevents-first-errors-')));
  const env = newcomerEnv(dir);
  let closed: number;
  before(async () => {
    closed = await freePort();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const kevents = (args: string[]) => run(process.execPath, [CLI, ...args], { cwd: dir, env });
  const oneLine = (r: { code: number; stderr: string }, pattern: RegExp): void => {
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stderr.split('\n').length, 2, `one line:\n${r.stderr}`);
    assert.match(r.stderr, pattern);
  };

  it('no server running, no kubeconfig: start kevents serve, or say where to read', async (t) => {
    if (await listening(8080)) return t.skip('something listens on 127.0.0.1:8080 here');
    const start = `start one with "node ${CLI} serve" in another terminal, or pass --server URL or --kubeconfig PATH`;
    for (const args of [['get', 'events'], ['events', '-A'], ['timeline', '-A'], ['lint'], ['record', '--for', 'pod/web-1', '--reason', 'BackOff', '--action', 'Restarting']]) {
      const r = await kevents(args);
      oneLine(r, new RegExp(`^error: no kevents server is running at http://127\\.0\\.0\\.1:8080 and no kubeconfig was found: ${start.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n$`));
    }
    oneLine(await kevents(['kubeconfig']), /^error: no kevents server answers at http:\/\/127\.0\.0\.1:8080 \(connection refused\): start one with "node \S+kevents\.js serve" in another terminal, or pass --no-check\n$/);
  });

  it('a wrong port: kubectl\'s words, then the serve command for that port', async () => {
    const fix = `Nothing listens there: start "node ${CLI} serve --listen 127.0.0.1:${closed}", or fix --server (kevents serve listens on http://127.0.0.1:8080 by default)`;
    for (const args of [['get', 'events'], ['timeline', '-A'], ['record', '--for', 'pod/web-1', '--reason', 'BackOff', '--action', 'Restarting']]) {
      const r = await kevents([...args, '--server', `http://127.0.0.1:${closed}`]);
      assert.equal(r.stderr, `error: The connection to the server 127.0.0.1:${closed} was refused - did you specify the right host or port? ${fix}\n`);
      assert.equal(r.code, 1);
    }
    const env2 = await run(process.execPath, [CLI, 'events', '-A'], { cwd: dir, env: { ...env, KEVENTS_SERVER: `http://127.0.0.1:${closed}` } });
    oneLine(env2, /or fix \$KEVENTS_SERVER /);
  });

  it('a kubeconfig that is not there: pass one that is, or --server', async () => {
    oneLine(
      await kevents(['get', 'events', '--kubeconfig', join(dir, 'missing.yaml')]),
      new RegExp(`^error: kubeconfig ${join(dir, 'missing.yaml')} does not exist: pass an existing file with --kubeconfig PATH, or --server URL to read a kevents server without one\n$`),
    );
    oneLine(await kevents(['timeline', '--context', 'prod']), /^error: --context prod needs a kubeconfig, and none was found \(\$KUBECONFIG is unset, ~\/\.kube\/config is missing\): pass --kubeconfig PATH, or --server URL\n$/);
    const kubeconfig = join(dir, 'kubeconfig.yaml');
    writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:9"}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: dev, context: {cluster: c, user: u}}]\ncurrent-context: dev\n');
    oneLine(await kevents(['get', 'events', '--kubeconfig', kubeconfig, '--context', 'prod']), /^error: context "prod" does not exist in the kubeconfig: use one of dev \("kubectl config get-contexts" lists them\)\n$/);
    oneLine(
      await kevents(['get', 'events', '--kubeconfig', kubeconfig]),
      /^error: The connection to the server 127\.0\.0\.1:9 was refused - did you specify the right host or port\? Check the cluster's server with "kubectl config view --minify", or pass --server URL\n$/,
    );
  });

  it('an unknown resource: kevents reads events, kubectl the rest', async () => {
    const r = await kevents(['get', 'pods', '--server', `http://127.0.0.1:${closed}`]);
    oneLine(r, new RegExp(`^error: the server doesn't have a resource type "pods": kevents reads events only, so run "node ${CLI} get events" \\(or "kubectl get pods" for other resources\\)\n$`));
  });
});
