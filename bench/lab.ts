/**
 * Lab benchmark: how long `kevents lab up` takes to be ready with the peers
 * cached (target: under 30 s), and how long each `kevents lab check N` answers
 * (target: under 1 s), each beside a baseline measured in the same run:
 *
 *   - lab up against a bare control plane (etcd + kube-apiserver with
 *     scheduler and controller-manager, started by the tests' own
 *     test/support/control-plane.ts), the part of the lab that is upstream's;
 *   - a check against `kubectl get events -A` with the learner's kubeconfig,
 *     the least a learner would run to look for themselves.
 *
 * Each check runs BENCH_REPEAT (default 3) times on the fresh lab (where every
 * check fails: nothing is solved, so each reads everything it looks at); the
 * median is printed.
 *
 * Where the real node can run (root, containerd, the kubelet and its images in
 * the peers cache), `kevents lab up --kubelet` is then timed BENCH_REPEAT times,
 * each beside a `kevents lab up` without it run just before, as the baseline.
 *
 * Run: npm run build && node --import tsx bench/lab.ts
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startControlPlane } from '../test/support/control-plane.js';
import { realNodeUnavailable } from '../test/support/real-node.js';

const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);
const CLI = fileURLToPath(new URL('../dist/bin/kevents.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'kevents-bench-lab-'));

function timed(cmd: string, args: string[]): { seconds: number; code: number | null; out: string } {
  const t = performance.now();
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return { seconds: (performance.now() - t) / 1000, code: r.status, out: `${r.stdout}${r.stderr}` };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

try {
  let t = performance.now();
  const cp = await startControlPlane({ scheduler: true, controllerManager: true });
  const bare = (performance.now() - t) / 1000;
  await cp.stop();

  t = performance.now();
  const up = timed(process.execPath, [CLI, 'lab', 'up', '--dir', dir, '--no-build']);
  if (up.code !== 0) throw new Error(`lab up failed:\n${up.out}`);
  console.log(`lab up: ${up.seconds.toFixed(1)} s to ready; bare control plane ${bare.toFixed(1)} s (${(up.seconds / bare).toFixed(2)}x)`);

  const kubectl = median(Array.from({ length: REPEAT }, () => timed('kubectl', ['--kubeconfig', join(dir, 'kubeconfig'), 'get', 'events', '-A']).seconds));
  console.log(`baseline: kubectl get events -A ${kubectl.toFixed(2)} s (median of ${REPEAT})`);
  const list = timed(process.execPath, [CLI, 'lab', 'exercises']);
  const numbers = [...list.out.matchAll(/^\s*(\d+)[.)\s]/gm)].map((m) => Number(m[1]));
  for (const n of numbers.length > 0 ? numbers : [1, 2, 3, 4, 5, 6, 7]) {
    const runs = Array.from({ length: REPEAT }, () => timed(process.execPath, [CLI, 'lab', 'check', String(n), '--dir', dir]));
    const s = median(runs.map((r) => r.seconds));
    console.log(`check ${n}: ${s.toFixed(2)} s (exit ${runs[0]!.code}; ${(s / kubectl).toFixed(2)}x kubectl get events)`);
  }
  spawnSync(process.execPath, [CLI, 'lab', 'down', '--dir', dir], { stdio: 'ignore' });

  const unavailable = realNodeUnavailable();
  if (unavailable !== undefined) console.log(`lab up --kubelet: not measured, the real node cannot run here: ${unavailable}`);
  else {
    const plain: number[] = [];
    const withNode: number[] = [];
    for (let i = 0; i < REPEAT; i++) {
      for (const [flags, into] of [[[], plain], [['--kubelet'], withNode]] as const) {
        const r = timed(process.execPath, [CLI, 'lab', 'up', '--dir', dir, '--no-build', ...flags]);
        spawnSync(process.execPath, [CLI, 'lab', 'down', '--dir', dir], { stdio: 'ignore' });
        if (r.code !== 0) throw new Error(`lab up ${flags.join(' ')} failed:\n${r.out}`);
        into.push(r.seconds);
      }
    }
    const f = (xs: number[]): string => xs.map((x) => x.toFixed(1)).join(', ');
    console.log(`lab up --kubelet: ${median(withNode).toFixed(1)} s to ready (median of ${REPEAT}: ${f(withNode)}); without --kubelet ${median(plain).toFixed(1)} s (${f(plain)}), so ${(median(withNode) / median(plain)).toFixed(2)}x`);
  }
} finally {
  spawnSync(process.execPath, [CLI, 'lab', 'down', '--dir', dir], { stdio: 'ignore' });
  rmSync(dir, { recursive: true, force: true });
}
