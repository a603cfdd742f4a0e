import { execFileSync, execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Kubectl is one kubectl binary the tests can drive. */
export interface Kubectl {
  /** minor is the client's minor version, e.g. 33. */
  minor: number;
  path: string;
}

function clientMinor(path: string): number | undefined {
  try {
    const out = execFileSync(path, ['version', '--client', '-o', 'json'], { encoding: 'utf8', timeout: 20_000, stdio: ['ignore', 'pipe', 'ignore'] });
    const minor = (JSON.parse(out) as { clientVersion?: { minor?: string } }).clientVersion?.minor;
    return minor === undefined ? undefined : Number.parseInt(minor, 10);
  } catch {
    return undefined;
  }
}

let cached: Kubectl[] | undefined;

/**
 * findKubectls lists every kubectl on this machine: each bundled `kubectl.1.NN`
 * next to the dispatcher, or else the kubectl on PATH itself.
 */
export function findKubectls(): Kubectl[] {
  if (cached !== undefined) return cached;
  const found: Kubectl[] = [];
  let onPath: string | undefined;
  try {
    onPath = execFileSync('sh', ['-c', 'command -v kubectl'], { encoding: 'utf8' }).trim();
  } catch {
    onPath = undefined;
  }
  if (onPath !== undefined && onPath !== '') {
    const dir = dirname(realpathSync(onPath));
    for (const name of readdirSync(dir).sort()) {
      const m = /^kubectl\.1\.(\d+)$/.exec(name);
      if (m) found.push({ minor: Number(m[1]), path: join(dir, name) });
    }
    if (found.length === 0) {
      const minor = clientMinor(onPath);
      if (minor !== undefined) found.push({ minor, path: onPath });
    }
  }
  cached = found.sort((a, b) => a.minor - b.minor);
  return cached;
}

/** KubectlResult is what one kubectl run printed. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * runKubectl runs kubectl against a server with a fresh discovery cache: by URL alone, or with
 * `kubeconfig` (a file with the server's CA and a token, for a real kube-apiserver) instead.
 */
export function runKubectl(k: Kubectl, server: string, args: string[], options: { input?: string; timeoutMs?: number; kubeconfig?: string } = {}): Promise<KubectlResult> {
  const cacheDir = mkdtempSync(join(tmpdir(), 'kevents-kubectl-cache-'));
  const target = options.kubeconfig !== undefined ? ['--kubeconfig', options.kubeconfig] : ['--server', server];
  const full = [...target, '--cache-dir', cacheDir, ...args];
  return new Promise((resolve) => {
    const child = execFile(
      k.path,
      full,
      { timeout: options.timeoutMs ?? 60_000, env: { ...process.env, KUBECONFIG: '/dev/null', HOME: cacheDir }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        rmSync(cacheDir, { recursive: true, force: true });
        const code = error === null ? 0 : typeof (error as { code?: unknown }).code === 'number' ? ((error as { code: number }).code) : 1;
        resolve({ code, stdout, stderr });
      },
    );
    if (options.input !== undefined) {
      child.stdin!.end(options.input);
    } else {
      child.stdin!.end();
    }
  });
}

/** hasKubectl tells whether any kubectl is installed. */
export function hasKubectl(): boolean {
  return findKubectls().length > 0 && findKubectls().every((k) => existsSync(k.path));
}
