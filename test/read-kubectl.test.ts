import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { recordScenarios } from './golden/scenarios.js';
import { findKubectls, runKubectl } from './support/kubectl.js';
import type { KubectlResult } from './support/kubectl.js';
import { legacyEvent, request } from './support/http.js';
import { CLI, startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';

const kubectls = findKubectls();

/** runKevents runs the built kevents CLI, with no kubeconfig, as kubectl is run. */
function runKevents(server: string, args: string[]): Promise<KubectlResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args, '--server', server],
      { env: { ...process.env, KUBECONFIG: '/dev/null', NO_COLOR: '' }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** CASES are the invocations compared byte for byte, output streams and exit code. */
const CASES: string[][] = [
  ['get', 'events'],
  ['get', 'events', '-A'],
  ['get', 'events', '-n', 'store', '-o', 'wide'],
  ['get', 'events', '-A', '-o', 'wide', '--no-headers'],
  ['get', 'events', '-n', 'shop', '-o', 'json'],
  ['get', 'events', '-n', 'shop', '-o', 'yaml'],
  ['get', 'events', '-n', 'default', '-o', 'yaml'],
  ['get', 'events', '-A', '--field-selector', 'type=Warning'],
  ['get', 'events', '-n', 'store', '--field-selector', 'involvedObject.name=frontend-7d9f8c6b5-4xk2p,reason=Unhealthy'],
  ['get', 'events', '-n', 'empty'],
  ['get', 'events', '-n', 'empty', '-o', 'json'],
  ['get', 'events', 'no-such-event'],
  ['get', 'events', '-n', 'default', 'odd.1'],
  ['events'],
  ['events', '-A'],
  ['events', '-n', 'store'],
  ['events', '-n', 'analytics', '--for', 'pod/ingest-7b6c5d4f8-q8w2z'],
  ['events', '-n', 'store', '--for', 'deployment/frontend'],
  ['events', '-A', '--types', 'Warning'],
  ['events', '-n', 'shop', '--types', 'warning,Normal', '--no-headers'],
  ['events', '-n', 'payments', '-o', 'json'],
  ['events', '-n', 'default', '-o', 'yaml'],
  ['events', '-n', 'empty'],
  ['events', '-A', '--types', 'Critical'],
  ['events', '--for', 'web-1'],
  ['events', '--for', 'pod/a/b'],
];

describe('kevents get events and kevents events print what kubectl prints', { skip: kubectls.length === 0 ? 'no kubectl on this machine' : false }, () => {
  let srv: ServerProcess;
  before(async () => {
    srv = await startServer(['--event-ttl', '0']);
    await recordScenarios(srv.url);
    // Text that tests the printers' edges: terminal escapes, line breaks, YAML-ambiguous strings, HTML characters.
    const odd = legacyEvent({ name: 'odd.1', object: 'web-1', reason: 'Odd', message: 'yes', firstAgo: 9 * 86400, lastAgo: 8 * 86400, count: 3, type: 'Warning' });
    const odder = legacyEvent({ name: 'odd.2', object: 'web-1', reason: 'Odd', message: 'line one\nline two <b>&</b>: \x1b[31mred\x1b[0m', firstAgo: 9 * 86400, lastAgo: 9 * 86400 });
    const numeric = legacyEvent({ name: 'odd.3', object: 'web-1', reason: 'Odd', message: '12:30', firstAgo: 9 * 86400, lastAgo: 9 * 86400 });
    for (const body of [odd, odder, numeric]) {
      const r = await request(srv.url, 'POST', '/api/v1/namespaces/default/events', body);
      assert.equal(r.status, 201, r.text);
    }
  });
  after(async () => {
    await srv.stop();
  });

  for (const args of CASES) {
    it(args.join(' '), async () => {
      const ours = await runKevents(srv.url, args);
      for (const k of kubectls) {
        // Ages are whole days here (the events are from 2025), so two runs a moment apart agree.
        const theirs = await runKubectl(k, srv.url, args);
        assert.equal(ours.stdout, theirs.stdout, `stdout differs from kubectl 1.${k.minor}`);
        assert.equal(ours.stderr, theirs.stderr, `stderr differs from kubectl 1.${k.minor}`);
        assert.equal(ours.code, theirs.code, `exit code differs from kubectl 1.${k.minor}`);
      }
    });
  }
});
