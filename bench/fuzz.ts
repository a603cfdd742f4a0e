/**
 * bench/fuzz.ts runs the fuzz properties of test/support/fuzz-properties.ts
 * with the long budget: a million generated and mutated inputs in all (by
 * default), shared among the targets, against an in-process server on a
 * loopback port. It prints inputs per second per target; a failure prints
 * fast-check's counterexample and seed (add the input to
 * test/support/fuzz-regressions.ts once fixed).
 *
 *   node --import tsx bench/fuzz.ts [TOTAL_INPUTS] [SEED]
 *
 * FUZZ_TARGETS (comma-separated substrings of target names) runs only those
 * targets, each with the share it has in a run of all of them.
 */
import { exportConfigTarget, kubeconfigTarget, runTarget, serverTargets, startFuzzServer } from '../test/support/fuzz-properties.js';

const total = Number(process.argv[2] ?? 1_000_000);
const seed = process.argv[3] === undefined ? Date.now() % 2 ** 31 : Number(process.argv[3]);
const server = await startFuzzServer();
const kubeconfig = kubeconfigTarget();
const all = [...serverTargets(server), exportConfigTarget(), kubeconfig];
const each = Math.ceil(total / all.length);
const only = (process.env.FUZZ_TARGETS ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
const targets = only.length === 0 ? all : all.filter((t) => only.some((o) => t.name.includes(o)));
console.log(`fuzz: ${each} inputs for each of ${targets.length} targets, seed ${seed}`);
let failed = false;
try {
  for (const t of targets) {
    const started = performance.now();
    try {
      await runTarget(t, each, seed);
      const s = (performance.now() - started) / 1000;
      console.log(`${t.name}: ${each} inputs in ${s.toFixed(1)} s (${Math.round(each / s)}/s), no failure`);
    } catch (e) {
      failed = true;
      console.log(`${t.name}: FAILED\n${e instanceof Error ? e.message : String(e)}`);
    }
  }
} finally {
  kubeconfig.dispose();
  await server.close();
}
process.exitCode = failed ? 1 : 0;
