import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { findKubectls, runKubectl } from './support/kubectl.js';
import type { Kubectl } from './support/kubectl.js';
import { legacyEvent, newApiEvent, request } from './support/http.js';

const DAY = 86_400;
const kubectls = findKubectls();

/** tabulate lays out rows as kubectl's tabwriter does: each column padded to its widest cell plus 3. */
function tabulate(rows: string[][]): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(Math.max(widths[i]! + 3, 6)))).join('').trimEnd()).join('\n') + '\n';
}

async function seed(url: string): Promise<void> {
  const posts: [string, Record<string, unknown>][] = [
    ['/api/v1/namespaces/default/events', legacyEvent({ name: 'web-1.a1', object: 'web-1', reason: 'BackOff', message: 'Back-off restarting failed container app', type: 'Warning', count: 12, firstAgo: 6 * DAY, lastAgo: 5 * DAY, host: 'node-1' })],
    ['/apis/events.k8s.io/v1/namespaces/default/events', newApiEvent({ name: 'web-1.b2', object: 'web-1', reason: 'Scheduled', action: 'Binding', note: 'Successfully assigned default/web-1 to node-1', eventAgo: 7 * DAY })],
    ['/apis/events.k8s.io/v1/namespaces/default/events', newApiEvent({ name: 'web-2.c3', object: 'web-2', reason: 'FailedScheduling', action: 'Scheduling', note: '0/3 nodes are available: 3 Insufficient cpu.', type: 'Warning', eventAgo: 7 * DAY, series: { count: 3, lastAgo: 4 * DAY } })],
    ['/api/v1/namespaces/legacy/events', legacyEvent({ name: 'b-newer', namespace: 'legacy', object: 'db-0', reason: 'Started', message: 'Started container db', firstAgo: 3 * DAY, lastAgo: 2 * DAY })],
    ['/api/v1/namespaces/legacy/events', legacyEvent({ name: 'a-older', namespace: 'legacy', object: 'db-0', reason: 'Pulled', message: 'Container image "postgres:16" already present on machine', firstAgo: 3 * DAY, lastAgo: 3 * DAY })],
  ];
  for (const [path, body] of posts) {
    const r = await request(url, 'POST', path, body);
    assert.equal(r.status, 201, r.text);
  }
}

/** runFor runs a long-lived kubectl (a watch) for a while, doing `during` in the middle, and returns its output. */
function runFor(k: Kubectl, server: string, args: string[], during: () => Promise<void>): Promise<string> {
  const cacheDir = mkdtempSync(join(tmpdir(), 'kevents-kubectl-cache-'));
  const child = spawn(k.path, ['--server', server, '--cache-dir', cacheDir, ...args], { env: { ...process.env, KUBECONFIG: '/dev/null', HOME: cacheDir } });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    const waitFor = async (re: RegExp, ms: number): Promise<void> => {
      const start = Date.now();
      while (!re.test(out)) {
        if (Date.now() - start > ms) throw new Error(`timed out waiting for ${re} in ${JSON.stringify(out)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    (async () => {
      // An empty namespace prints nothing until the first event; wait until the watch is open.
      const start = Date.now();
      while (!/^kevents_watchers [1-9]/m.test((await request(server, 'GET', '/metrics')).text)) {
        if (Date.now() - start > 20_000) throw new Error(`kubectl never opened a watch: ${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      await during();
      await waitFor(/LiveEvent/, 10_000);
    })().then(
      () => {
        child.kill('SIGINT');
        child.once('exit', () => {
          rmSync(cacheDir, { recursive: true, force: true });
          resolve(out);
        });
      },
      (e: unknown) => {
        child.kill('SIGKILL');
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

describe('kubectl against kevents serve', { skip: kubectls.length === 0 ? 'no kubectl on this machine' : false }, () => {
  let srv: ServerProcess;
  before(async () => {
    srv = await startServer();
    await seed(srv.url);
  });
  after(async () => {
    await srv.stop();
  });

  it('finds at least one kubectl to judge with', () => {
    assert.ok(kubectls.length > 0);
  });

  for (const k of kubectls) {
    describe(`kubectl 1.${k.minor}`, () => {
      const kc = (args: string[], input?: string) => runKubectl(k, srv.url, args, input === undefined ? {} : { input });

      it('get events prints the server table', async () => {
        const r = await kc(['get', 'events', '-n', 'default']);
        assert.equal(r.code, 0, r.stderr);
        assert.equal(
          r.stdout,
          tabulate([
            ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'],
            ['5d', 'Warning', 'BackOff', 'pod/web-1', 'Back-off restarting failed container app'],
            ['7d', 'Normal', 'Scheduled', 'pod/web-1', 'Successfully assigned default/web-1 to node-1'],
            ['4d', 'Warning', 'FailedScheduling', 'pod/web-2', '0/3 nodes are available: 3 Insufficient cpu.'],
          ]),
        );
        const ev = await kc(['get', 'ev', '-n', 'default']);
        assert.equal(ev.stdout, r.stdout);
        const group = await kc(['get', 'events.events.k8s.io', '-n', 'default']);
        assert.equal(group.code, 0, group.stderr);
        assert.equal(group.stdout, r.stdout);
      });

      it('get events -A -o wide shows every column and namespace', async () => {
        const r = await kc(['get', 'events', '-A', '-o', 'wide', '--field-selector', 'metadata.namespace!=watched']);
        assert.equal(r.code, 0, r.stderr);
        assert.equal(
          r.stdout,
          tabulate([
            ['NAMESPACE', 'LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'SUBOBJECT', 'SOURCE', 'MESSAGE', 'FIRST SEEN', 'COUNT', 'NAME'],
            ['default', '5d', 'Warning', 'BackOff', 'pod/web-1', '', 'kubelet, node-1', 'Back-off restarting failed container app', '6d', '12', 'web-1.a1'],
            ['default', '7d', 'Normal', 'Scheduled', 'pod/web-1', '', 'default-scheduler, default-scheduler-node-1', 'Successfully assigned default/web-1 to node-1', '7d', '1', 'web-1.b2'],
            ['default', '4d', 'Warning', 'FailedScheduling', 'pod/web-2', '', 'default-scheduler, default-scheduler-node-1', '0/3 nodes are available: 3 Insufficient cpu.', '7d', '3', 'web-2.c3'],
            ['legacy', '3d', 'Normal', 'Pulled', 'pod/db-0', '', 'kubelet', 'Container image "postgres:16" already present on machine', '3d', '1', 'a-older'],
            ['legacy', '2d', 'Normal', 'Started', 'pod/db-0', '', 'kubelet', 'Started container db', '3d', '1', 'b-newer'],
          ]),
        );
      });

      it('get events --field-selector, --sort-by and -o json', async () => {
        const fs = await kc(['get', 'events', '-n', 'default', '--field-selector', 'involvedObject.name=web-2', '--no-headers']);
        assert.equal(fs.code, 0, fs.stderr);
        assert.match(fs.stdout, /^4d\s+Warning\s+FailedScheduling\s+pod\/web-2\s+0\/3 nodes/);
        assert.equal(fs.stdout.trim().split('\n').length, 1);
        const bad = await kc(['get', 'events', '--field-selector', 'bogus=1']);
        assert.notEqual(bad.code, 0);
        assert.match(bad.stderr, /field label not supported: bogus/);
        const sorted = await kc(['get', 'events', '-n', 'legacy', '--sort-by=.lastTimestamp', '--no-headers']);
        assert.equal(sorted.code, 0, sorted.stderr);
        assert.deepEqual(sorted.stdout.trim().split('\n').map((l) => l.split(/\s+/)[2]), ['Pulled', 'Started']);
        const json = await kc(['get', 'events', '-n', 'default', '-o', 'json']);
        assert.equal(json.code, 0, json.stderr);
        const doc = JSON.parse(json.stdout);
        assert.deepEqual(doc.items.map((e: any) => e.metadata.name), ['web-1.a1', 'web-1.b2', 'web-2.c3']);
        assert.equal(doc.items[2].series.count, 3);
      });

      it('kubectl events sorts by time and prints intervals', async () => {
        const r = await kc(['events', '-n', 'default']);
        assert.equal(r.code, 0, r.stderr);
        assert.equal(
          r.stdout,
          tabulate([
            ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'],
            ['7d', 'Normal', 'Scheduled', 'Pod/web-1', 'Successfully assigned default/web-1 to node-1'],
            ['5d (x12 over 6d)', 'Warning', 'BackOff', 'Pod/web-1', 'Back-off restarting failed container app'],
            ['4d (x3 over 7d)', 'Warning', 'FailedScheduling', 'Pod/web-2', '0/3 nodes are available: 3 Insufficient cpu.'],
          ]),
        );
        const warn = await kc(['events', '-A', '--types=Warning']); // the watch tests add only Normal events
        assert.equal(warn.code, 0, warn.stderr);
        assert.deepEqual(warn.stdout.trim().split('\n').slice(1).map((l) => l.split(/\s{3,}/)[3]), ['BackOff', 'FailedScheduling']);
        const forPod = await kc(['events', '-n', 'default', '--for', 'pod/web-2']);
        assert.equal(forPod.code, 0, forPod.stderr);
        assert.equal(forPod.stdout.trim().split('\n').length, 2);
        assert.match(forPod.stdout, /FailedScheduling/);
        const none = await kc(['events', '-n', 'empty']);
        assert.equal(none.code, 0);
        assert.match(none.stderr, /No events found in empty namespace/);
      });

      it('get events -w and kubectl events -w show a new event', async () => {
        const name = `live-${k.minor}`;
        const make = (suffix: string) => async () => {
          const r = await request(srv.url, 'POST', '/api/v1/namespaces/watched/events', legacyEvent({ name: name + suffix, namespace: 'watched', object: 'w', reason: 'LiveEvent', message: 'arrived during the watch', firstAgo: 1, lastAgo: 1 }));
          assert.equal(r.status, 201, r.text);
        };
        const got = await runFor(k, srv.url, ['get', 'events', '-n', 'watched', '-w'], async () => {
          await make('-a')();
        });
        assert.match(got, /LiveEvent\s+pod\/w\s+arrived during the watch/);
        const evw = await runFor(k, srv.url, ['events', '-n', 'watched', '-w'], make('-b'));
        assert.match(evw, /LiveEvent\s+Pod\/w\s+arrived during the watch/);
      });

      it('create -f (both APIs) with default validation, then delete', async () => {
        const core = [
          'apiVersion: v1', 'kind: Event', 'metadata:', `  name: created-core-${k.minor}`, '  namespace: default',
          'involvedObject:', '  kind: Pod', '  name: web-9', '  namespace: default',
          'reason: Created', 'message: created by kubectl', 'type: Normal', '',
        ].join('\n');
        const r1 = await kc(['create', '-f', '-'], core);
        assert.equal(r1.code, 0, r1.stderr);
        assert.match(r1.stdout, new RegExp(`event/created-core-${k.minor} created`));
        const modern = [
          'apiVersion: events.k8s.io/v1', 'kind: Event', 'metadata:', `  name: created-new-${k.minor}`, '  namespace: default',
          'eventTime: "2026-01-01T00:00:00.000000Z"', 'reportingController: example.com/op', 'reportingInstance: op-1',
          'action: Reconcile', 'reason: Synced', 'note: synced by kubectl', 'type: Normal',
          'regarding:', '  kind: Pod', '  name: web-9', '  namespace: default', '',
        ].join('\n');
        const r2 = await kc(['create', '-f', '-'], modern);
        assert.equal(r2.code, 0, r2.stderr);
        assert.match(r2.stdout, new RegExp(`event.events.k8s.io/created-new-${k.minor} created`));
        const invalid = modern.replace(`created-new-${k.minor}`, `invalid-${k.minor}`).replace('type: Normal', 'type: Critical');
        const r3 = await kc(['create', '-f', '-'], invalid);
        assert.notEqual(r3.code, 0);
        assert.match(r3.stderr, /is invalid: type: Invalid value: "": has invalid value: Critical/);
        if (k.minor >= 29) {
          const unknown = core.replace(`created-core-${k.minor}`, `unknown-${k.minor}`) + 'bogusField: 1\n';
          const r4 = await kc(['create', '-f', '-'], unknown);
          assert.notEqual(r4.code, 0);
          assert.match(r4.stderr, /unknown field "bogusField"/);
        }
        const d = await kc(['delete', 'event', `created-core-${k.minor}`, '-n', 'default']);
        assert.equal(d.code, 0, d.stderr);
        assert.match(d.stdout, new RegExp(`event "created-core-${k.minor}" deleted`));
        const d2 = await kc(['delete', 'events.events.k8s.io', `created-new-${k.minor}`, '-n', 'default']);
        assert.equal(d2.code, 0, d2.stderr);
        const gone = await kc(['get', 'event', `created-core-${k.minor}`, '-n', 'default']);
        assert.notEqual(gone.code, 0);
        assert.match(gone.stderr, new RegExp(`Error from server \\(NotFound\\): events "created-core-${k.minor}" not found`));
      });
    });
  }
});
