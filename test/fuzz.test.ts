import { after, before, describe, it } from 'node:test';
import { exportConfigTarget, kubeconfigTarget, runTarget, serverTargets, startFuzzServer } from './support/fuzz-properties.js';
import type { FuzzServer } from './support/fuzz-properties.js';

/**
 * A short fuzzing budget for every run of the suite (`bench/fuzz.ts` runs the
 * million): generated and mutated request bodies, patches, selectors, continue
 * tokens and query parameters against a real HTTP server, export configs and
 * kubeconfigs. See test/support/fuzz-properties.ts for what must hold.
 */

const RUNS = Number(process.env.KEVENTS_FUZZ_RUNS ?? 300);

void describe('fuzzing', () => {
  let server: FuzzServer;
  before(async () => {
    server = await startFuzzServer();
  });
  after(async () => {
    await server?.close();
  });

  void it('request decoders answer every input below 500, each refusal a Status', { timeout: 300_000 }, async () => {
    for (const target of serverTargets(server)) await runTarget(target, RUNS);
  });

  void it('the export config reader reads or refuses with a ConfigError', { timeout: 120_000 }, async () => {
    await runTarget(exportConfigTarget(), RUNS * 3);
  });

  void it('the kubeconfig loader loads or refuses in one user-facing line', { timeout: 120_000 }, async () => {
    const target = kubeconfigTarget();
    try {
      await runTarget(target, RUNS);
    } finally {
      target.dispose();
    }
  });
});
