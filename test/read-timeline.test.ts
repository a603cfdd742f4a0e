import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { keventsCli } from '../src/cli/kevents-cli.js';
import { runCli } from '../src/cli/run.js';
import type { Timeline } from '../src/timeline/index.js';
import { recordScenarios, SCENARIOS } from './golden/scenarios.js';
import { request } from './support/http.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';

const GOLDEN = fileURLToPath(new URL('./golden/', import.meta.url));
const UPDATE = process.env.UPDATE_GOLDEN === '1';

/** kevents runs the CLI in this process with captured streams, as a terminal-less user would. */
async function kevents(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const sink = (append: (s: string) => void): Writable =>
    new Writable({
      write(chunk: Buffer | string, _enc, cb) {
        append(chunk.toString());
        cb();
      },
    });
  const code = await runCli(args, { stdout: sink((s) => (stdout += s)), stderr: sink((s) => (stderr += s)), env: { ...env } }, keventsCli);
  return { code, stdout, stderr };
}

/** golden compares output with a stored file, or rewrites the file with UPDATE_GOLDEN=1. */
function golden(file: string, actual: string): void {
  const path = `${GOLDEN}${file}`;
  if (UPDATE) {
    writeFileSync(path, actual);
    return;
  }
  assert.ok(existsSync(path), `golden file ${file} is missing: run with UPDATE_GOLDEN=1 to write it, then review it`);
  assert.equal(actual, readFileSync(path, 'utf8'), `output differs from test/golden/${file} (UPDATE_GOLDEN=1 rewrites it)`);
}

describe('kevents timeline over recorded incidents', () => {
  let srv: ServerProcess;
  const dir = mkdtempSync(join(tmpdir(), 'kevents-read-'));
  before(async () => {
    srv = await startServer(['--event-ttl', '0', '--storage', `sqlite:${join(dir, 'events.db')}`]);
    await recordScenarios(srv.url);
    // The archive keeps an occurrence of every event written through the REST API: the archive mode reads them.
    const probe = await request(srv.url, 'GET', '/apis/archive.kevents.io/v1alpha1/occurrences?limit=1');
    assert.equal(probe.status, 200, probe.text);
    assert.equal((probe.json as { items?: unknown[] }).items?.length, 1, probe.text);
  });
  after(async () => {
    await srv.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  // Each incident twice: from the archive's occurrences, and with --no-archive from event counts alone.
  for (const mode of ['archive', 'counts'] as const) {
    const extra = mode === 'counts' ? ['--no-archive'] : [];
    const suffix = (): string => (mode === 'archive' ? 'occurrences' : 'events');
    for (const s of SCENARIOS) {
      describe(`${s.name} (${mode})`, () => {
        it('puts the causing event in the summary and offers the matching next step', async () => {
          const r = await kevents(['timeline', '--for', s.for, '-n', s.namespace, '-o', 'json', ...extra, '--server', srv.url]);
          assert.equal(r.code, 0, r.stderr);
          const t = JSON.parse(r.stdout) as Timeline;
          assert.equal(t.summary.firstWarning?.reason, s.cause, JSON.stringify(t.summary, null, 2));
          assert.ok(
            t.hints.some((h) => h.reason === s.hint && h.command.includes(s.hintCommand)),
            `no ${s.hint} hint with ${s.hintCommand} in ${JSON.stringify(t.hints, null, 2)}`,
          );
          // The causing event's steps come first.
          assert.equal(t.hints[0]!.reason, s.hint);
          assert.equal(t.summary.history, suffix());
        });
        it('prints the golden table and JSON', async () => {
          const table = await kevents(['timeline', '--for', s.for, '-n', s.namespace, ...extra, '--server', srv.url]);
          assert.equal(table.code, 0, table.stderr);
          assert.equal(table.stderr, '');
          golden(`${s.name}.${suffix()}.txt`, table.stdout);
          const json = await kevents(['timeline', '--for', s.for, '-n', s.namespace, '-o', 'json', ...extra, '--server', srv.url]);
          golden(`${s.name}.${suffix()}.json`, json.stdout);
        });
      });
    }

    it(`prints markdown and CSV of a namespace, cut to a window and to Warnings (${mode})`, async () => {
      const args = ['timeline', '-n', 'store', '--since-time', '2025-01-01T00:00:10Z', '--until', '2025-01-01T00:01:00Z', '--types', 'Warning', ...extra, '--server', srv.url];
      golden(`store-window.${suffix()}.md`, (await kevents([...args, '-o', 'markdown'])).stdout);
      golden(`store-window.${suffix()}.csv`, (await kevents([...args, '-o', 'csv'])).stdout);
    });
  }

  it('reads a Node with its own events only, across namespaces', async () => {
    const r = await kevents(['timeline', '--for', 'node/node-e', '-o', 'json', '--server', srv.url]);
    const t = JSON.parse(r.stdout) as Timeline;
    assert.deepEqual([...new Set(t.rows.map((x) => x.object))], ['Node/node-e']);
    assert.deepEqual(t.rows.map((x) => x.reason), ['EvictionThresholdMet', 'NodeHasInsufficientMemory', 'NodeHasSufficientMemory']);
  });

  it('never colours output that is not a terminal, and shows no progress there', async () => {
    const r = await kevents(['timeline', '--for', 'deployment/frontend', '-n', 'store', '--server', srv.url], { FORCE_COLOR: '1' });
    assert.doesNotMatch(r.stdout + r.stderr, /\x1b/);
  });

  it('reports usage errors with exit 2 and server trouble with exit 1, on one line', async () => {
    const usage = await kevents(['timeline', '--for', 'web', '--server', srv.url]);
    assert.equal(usage.code, 2);
    assert.equal(usage.stderr, 'error: --for must be in resource/name form\n(run with --help for usage)\n');
    const window = await kevents(['timeline', '--since', '2h', '--since-time', '2025-01-01T00:00:00Z', '--server', srv.url]);
    assert.equal(window.code, 2);
    const down = await kevents(['timeline', '--server', 'http://127.0.0.1:1']);
    assert.equal(down.code, 1);
    assert.equal(
      down.stderr,
      'error: The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port? Nothing listens there: start "kevents serve --listen 127.0.0.1:1", or fix --server (kevents serve listens on http://127.0.0.1:8080 by default)\n',
    );
  });

  it('uses the archive\'s occurrences when the server has them', async () => {
    const probe = await request(srv.url, 'GET', '/apis/archive.kevents.io/v1alpha1/namespaces/store/occurrences');
    assert.equal(probe.status, 200, probe.text);
    const r = await kevents(['timeline', '--for', 'pod/frontend-7d9f8c6b5-4xk2p', '-n', 'store', '-o', 'json', '--server', srv.url]);
    const tl = JSON.parse(r.stdout) as Timeline;
    assert.equal(tl.summary.history, 'occurrences');
    assert.equal(tl.summary.estimatedRows, 0);
    const unhealthy = tl.rows.filter((x) => x.reason === 'Unhealthy');
    assert.deepEqual(
      unhealthy.map((x) => x.time),
      [0, 1, 2, 3, 4, 5, 6, 7].map((i) => new Date(Date.UTC(2025, 0, 1, 0, 0, 15 + i * 30)).toISOString().replace('.000Z', 'Z')),
    );
  });
});

describe('kevents lint', () => {
  let srv: ServerProcess;
  before(async () => {
    srv = await startServer();
    const bad = (name: string, patch: Record<string, unknown>) => ({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace: 'default' },
      involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-1', apiVersion: 'v1' },
      reason: 'Started',
      message: 'Started container web-1',
      type: 'Normal',
      source: { component: 'my-operator' },
      count: 1,
      ...patch,
    });
    for (const body of [
      bad('a', { reason: 'pod_started', count: 3 }),
      bad('b', { reason: 'pod_started' }),
      bad('c', { type: 'Info' }),
      bad('d', { message: 'Something failed' }),
      bad('e', { source: {} }),
      bad('f', {}),
    ]) {
      const r = await request(srv.url, 'POST', '/api/v1/namespaces/default/events', body);
      assert.equal(r.status, 201, r.text);
    }
  });
  after(async () => {
    await srv.stop();
  });

  it('counts the events that break each convention', async () => {
    const r = await kevents(['lint', '--server', srv.url]);
    assert.equal(r.code, 0, r.stderr);
    golden('lint.txt', r.stdout);
    const json = JSON.parse((await kevents(['lint', '-o', 'json', '--server', srv.url])).stdout) as { broken: number; byCheck: { check: string; description: string; events: number; occurrences: number }[] };
    assert.equal(json.broken, 5);
    assert.deepEqual(json.byCheck.find((c) => c.check === 'reason-not-UpperCamelCase'), { check: 'reason-not-UpperCamelCase', description: json.byCheck[0]!.description, events: 2, occurrences: 4 });
    const strict = await kevents(['lint', '--fail-on-findings', '--server', srv.url]);
    assert.equal(strict.code, 1);
    assert.equal(strict.stderr, 'error: 5 of 6 events break a convention\n');
  });
});
