import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startControlPlane } from './support/control-plane.js';
import type { ControlPlane } from './support/control-plane.js';
import { findKubectls } from './support/kubectl.js';
import type { Kubectl, KubectlResult } from './support/kubectl.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';

/**
 * The kubectl half of the differential suite: every bundled kubectl runs the session of docs/serve.md and the
 * listings users type (`get events`, `-o wide`, `kubectl events`, the selectors `describe` sends) against
 * the real kube-apiserver and against `kevents serve`; what each prints must be the same, ages aside.
 */
const kubectls = findKubectls();

const readmeEvent = (ns: string): string => `apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: web-1.demo, namespace: ${ns}}
eventTime: "2026-01-01T00:00:00.000000Z"
reportingController: example.com/demo
reportingInstance: demo-1
action: Scheduling
reason: FailedScheduling
type: Warning
note: "0/3 nodes are available: 3 Insufficient cpu."
regarding: {kind: Pod, name: web-1, namespace: ${ns}, apiVersion: v1}
`;

const legacyEvents = (ns: string): string => `apiVersion: v1
kind: Event
metadata: {name: web-1.backoff, namespace: ${ns}}
involvedObject: {kind: Pod, name: web-1, namespace: ${ns}, apiVersion: v1, uid: 3a1f, fieldPath: "spec.containers{app}"}
reason: BackOff
message: Back-off restarting failed container app in pod web-1
type: Warning
source: {component: kubelet, host: node-1}
firstTimestamp: "2026-01-01T00:00:00Z"
lastTimestamp: "2026-01-01T00:03:00Z"
count: 12
---
apiVersion: v1
kind: Event
metadata: {name: web-2.pulled, namespace: ${ns}, labels: {app: web}}
involvedObject: {kind: Pod, name: web-2, namespace: ${ns}, apiVersion: v1}
reason: Pulled
message: Container image "nginx:1.27" already present on machine
type: Normal
source: {component: kubelet, host: node-2}
firstTimestamp: "2026-01-01T00:01:00Z"
lastTimestamp: "2026-01-01T00:01:00Z"
count: 1
`;

/** normaliseOutput hides what differs between two servers in kubectl's output: ages, uids, resourceVersions, server times. */
function normaliseOutput(text: string): string {
  return text
    .replace(/\b(\d+(?:y|d|h|m|s))+(?=\s|\)|$)/gm, '<age>')
    .replace(/(uid|resourceVersion): .*/g, '$1: <x>')
    .replace(/creationTimestamp: .*/g, 'creationTimestamp: <time>')
    .replace(/"(uid|resourceVersion|creationTimestamp)": "[^"]*"/g, '"$1": "<x>"')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uid>')
    .replace(/[ \t]+/g, ' ')
    .replace(/ +$/gm, '');
}

function run(k: Kubectl, target: { kubeconfig?: string; server?: string }, args: string[], input?: string): Promise<KubectlResult> {
  const home = mkdtempSync(join(tmpdir(), 'kevents-kubectl-home-'));
  const conn = target.kubeconfig !== undefined ? ['--kubeconfig', target.kubeconfig] : ['--server', target.server!];
  return new Promise((resolve) => {
    const child = execFile(k.path, [...conn, '--cache-dir', join(home, 'cache'), ...args], { timeout: 60_000, env: { ...process.env, KUBECONFIG: '/dev/null', HOME: home } }, (error, stdout, stderr) => {
      rmSync(home, { recursive: true, force: true });
      const code = error === null ? 0 : typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : 1;
      resolve({ code, stdout, stderr });
    });
    child.stdin!.end(input ?? '');
  });
}

describe('differential: every kubectl prints the same against kube-apiserver and kevents serve', { skip: kubectls.length === 0 ? 'no kubectl on this machine' : false, concurrency: false }, () => {
  let cp: ControlPlane;
  let server: ServerProcess;
  let realTarget: { kubeconfig: string };
  let ourTarget: { server: string };

  before(async () => {
    [cp, server] = await Promise.all([startControlPlane(), startServer(['--storage', 'memory:', '--event-ttl', '0'])]);
    realTarget = { kubeconfig: cp.kubeconfigFile() };
    ourTarget = { server: server.url };
  });
  after(async () => {
    await Promise.all([cp?.stop(), server?.stop()]);
  });

  for (const k of kubectls) {
    const ns = `kubectl-1-${k.minor}`;
    const validate: string[] = [];
    const commands: { name: string; args: string[]; input?: string }[] = [
      { name: 'create the README event', args: ['create', ...validate, '-f', '-'], input: readmeEvent(ns) },
      { name: 'create core/v1 events with counts', args: ['create', ...validate, '-f', '-'], input: legacyEvents(ns) },
      { name: 'get events', args: ['get', 'events', '-n', ns] },
      { name: 'get events -o wide', args: ['get', 'events', '-n', ns, '-o', 'wide'] },
      { name: 'get ev (short name)', args: ['get', 'ev', '-n', ns] },
      { name: 'get events --sort-by=.lastTimestamp', args: ['get', 'events', '-n', ns, '--sort-by=.lastTimestamp'] },
      { name: 'get events.events.k8s.io', args: ['get', 'events.events.k8s.io', '-n', ns] },
      { name: 'get one events.v1.events.k8s.io -o yaml', args: ['get', 'events.v1.events.k8s.io', 'web-1.demo', '-n', ns, '-o', 'yaml'] },
      { name: 'get one core event -o json', args: ['get', 'event', 'web-1.backoff', '-n', ns, '-o', 'json'] },
      { name: 'events', args: ['events', '-n', ns] },
      { name: 'events --for pod/web-1', args: ['events', '-n', ns, '--for', 'pod/web-1'] },
      { name: 'events --types=Warning', args: ['events', '-n', ns, '--types=Warning'] },
      { name: 'events -o yaml', args: ['events', '-n', ns, '-o', 'yaml'] },
      { name: 'describe-style selector', args: ['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=web-1,involvedObject.namespace=${ns}`] },
      { name: 'field selector reason', args: ['get', 'events', '-n', ns, '--field-selector', 'reason=Pulled', '-o', 'name'] },
      { name: 'label selector', args: ['get', 'events', '-n', ns, '-l', 'app=web'] },
      { name: 'jsonpath', args: ['get', 'events', '-n', ns, '-o', 'jsonpath={range .items[*]}{.reason}{" "}{.count}{"\\n"}{end}'] },
      { name: 'custom columns', args: ['get', 'events', '-n', ns, '-o', 'custom-columns=REASON:.reason,OBJECT:.involvedObject.name,COUNT:.count'] },
      { name: 'missing event', args: ['get', 'event', 'nope', '-n', ns] },
      { name: 'bad field selector', args: ['get', 'events', '-n', ns, '--field-selector', 'message=x'] },
      { name: 'events.k8s.io field selector on regarding', args: ['get', 'events.v1.events.k8s.io', '-n', ns, '--field-selector', 'regarding.name=web-1'] },
      { name: 'delete one', args: ['delete', 'event', 'web-2.pulled', '-n', ns] },
      { name: 'get events after the delete', args: ['get', 'events', '-n', ns] },
    ];
    it(`kubectl 1.${k.minor}: ${commands.length} commands print the same`, async () => {
      const r = await cp.request('POST', '/api/v1/namespaces', { metadata: { name: ns } });
      assert.ok(r.status === 201 || r.status === 409, r.text);
      const diffs: string[] = [];
      for (const c of commands) {
        const [a, b] = await Promise.all([run(k, realTarget, c.args, c.input), run(k, ourTarget, c.args, c.input)]);
        const [x, y] = [a, b].map((o) => ({ code: o.code, stdout: normaliseOutput(o.stdout), stderr: normaliseOutput(o.stderr) }));
        if (JSON.stringify(x) !== JSON.stringify(y)) diffs.push(`${c.name} (kubectl ${c.args.join(' ')}):\n  kube-apiserver: ${JSON.stringify(x)}\n  kevents:        ${JSON.stringify(y)}`);
      }
      assert.deepEqual(diffs, []);
    });
  }
});

