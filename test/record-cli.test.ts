import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { CLI, startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { request } from './support/http.js';

function kevents(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : ((error as { code?: number }).code ?? 1), stdout, stderr });
    });
  });
}

describe('kevents record', () => {
  let srv: ServerProcess;
  before(async () => {
    srv = await startServer();
  });
  after(async () => {
    await srv.stop();
  });

  it('records an events.k8s.io/v1 event about a built-in kind', async () => {
    const r = await kevents(['record', '--server', srv.url, '-n', 'ci', '--for', 'deploy/web', '--type', 'Warning', '--reason', 'RolloutStuck', '--action', 'Rollout', '--message', 'web has 0/3 available replicas', '--reporting-controller', 'example.com/ci']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'event recorded for Deployment/web\n');
    const list = await request(srv.url, 'GET', '/apis/events.k8s.io/v1/namespaces/ci/events');
    assert.equal(list.json.items.length, 1);
    const ev = list.json.items[0];
    assert.deepEqual(ev.regarding, { kind: 'Deployment', namespace: 'ci', name: 'web', apiVersion: 'apps/v1' });
    assert.equal(ev.reason, 'RolloutStuck');
    assert.equal(ev.action, 'Rollout');
    assert.equal(ev.note, 'web has 0/3 available replicas');
    assert.equal(ev.type, 'Warning');
    assert.equal(ev.reportingController, 'example.com/ci');
    assert.match(ev.reportingInstance, /^example\.com\/ci-/);
    assert.match(ev.eventTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it('records a core/v1 event with a source, and a custom kind', async () => {
    const r = await kevents(['record', '--server', srv.url, '-n', 'ci', '--api', 'v1', '--for', 'Backup/nightly', '--object-api-version', 'example.com/v1', '--reason', 'BackupFailed', '--type', 'Warning', '--message', 'bucket not reachable']);
    assert.equal(r.code, 0, r.stderr);
    const list = await request(srv.url, 'GET', '/api/v1/namespaces/ci/events?fieldSelector=involvedObject.kind%3DBackup');
    assert.equal(list.json.items.length, 1);
    const ev = list.json.items[0];
    assert.deepEqual(ev.involvedObject, { kind: 'Backup', namespace: 'ci', name: 'nightly', apiVersion: 'example.com/v1' });
    assert.equal(ev.source.component, 'kevents-record');
    assert.equal(ev.count, 1);
    assert.equal(ev.message, 'bucket not reachable');
  });

  it('refuses bad usage with exit 2 and an unreachable server with exit 1', async () => {
    const noAction = await kevents(['record', '--server', srv.url, '--for', 'pod/x', '--reason', 'R']);
    assert.equal(noAction.code, 2);
    assert.match(noAction.stderr, /--action is required/);
    const badFor = await kevents(['record', '--server', srv.url, '--for', 'x', '--reason', 'R', '--action', 'A']);
    assert.equal(badFor.code, 2);
    assert.match(badFor.stderr, /--for must be in resource\/name form/);
    const badType = await kevents(['record', '--server', srv.url, '--for', 'pod/x', '--reason', 'R', '--action', 'A', '--type', 'Critical']);
    assert.equal(badType.code, 2);
    const down = await kevents(['record', '--server', 'http://127.0.0.1:9', '--api', 'v1', '--for', 'pod/x', '--reason', 'R']);
    assert.equal(down.code, 1);
    assert.match(down.stderr, /^error: The connection to the server 127\.0\.0\.1:9 was refused - did you specify the right host or port\? Nothing listens there: start "node \S*kevents\.js serve --listen 127\.0\.0\.1:9", or fix --server/);
    assert.equal(down.stderr.split('\n').length, 2, 'one line, not the recorder\'s retries');
  });
});
