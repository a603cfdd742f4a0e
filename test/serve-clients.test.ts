import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as k8s from '@kubernetes/client-node';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { microSecondsAgo } from './support/http.js';

function kubeConfigFor(url: string): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'kevents', server: url, skipTLSVerify: true }],
    users: [{ name: 'kevents' }],
    contexts: [{ name: 'kevents', cluster: 'kevents', user: 'kevents', namespace: 'default' }],
    currentContext: 'kevents',
  });
  return kc;
}

function waitUntil(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const start = Date.now();
  return new Promise((resolve, reject) => {
    const tick = (): void => {
      if (check()) return resolve();
      if (Date.now() - start > ms) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(tick, 25);
    };
    tick();
  });
}

describe('@kubernetes/client-node 1.4 against kevents serve', () => {
  let srv: ServerProcess;
  let kc: k8s.KubeConfig;
  before(async () => {
    srv = await startServer();
    kc = kubeConfigFor(srv.url);
  });
  after(async () => {
    await srv.stop();
  });

  it('creates, lists and watches core/v1 events, and runs an informer', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const seen: string[] = [];
    const watch = new k8s.Watch(kc);
    const controller = await watch.watch('/api/v1/namespaces/node/events', { allowWatchBookmarks: true }, (phase, obj: k8s.CoreV1Event) => {
      seen.push(`${phase}:${obj.metadata?.name ?? ''}`);
    }, () => {});
    const informer = k8s.makeInformer(kc, '/api/v1/namespaces/node/events', () => core.listNamespacedEvent({ namespace: 'node' }));
    const informed: string[] = [];
    informer.on('add', (e: k8s.CoreV1Event) => informed.push(`add:${e.metadata?.name ?? ''}`));
    informer.on('update', (e: k8s.CoreV1Event) => informed.push(`update:${e.metadata?.name ?? ''}:${e.count ?? 0}`));
    await informer.start();

    const created = await core.createNamespacedEvent({
      namespace: 'node',
      body: {
        metadata: { name: 'from-node.1' },
        involvedObject: { kind: 'Pod', name: 'p', namespace: 'node', apiVersion: 'v1' },
        reason: 'Pulled',
        message: 'pulled image',
        type: 'Normal',
        count: 1,
        firstTimestamp: new Date(),
        lastTimestamp: new Date(),
        source: { component: 'client-node' },
      },
    });
    assert.equal(created.metadata?.name, 'from-node.1');
    assert.ok(created.lastTimestamp instanceof Date);
    const list = await core.listNamespacedEvent({ namespace: 'node' });
    assert.deepEqual(list.items.map((e) => e.metadata?.name), ['from-node.1']);
    const all = await core.listEventForAllNamespaces({});
    assert.ok(all.items.some((e) => e.metadata?.name === 'from-node.1'));
    await core.patchNamespacedEvent({ name: 'from-node.1', namespace: 'node', body: { count: 2 } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    await waitUntil(() => seen.includes('ADDED:from-node.1') && seen.includes('MODIFIED:from-node.1'), 'watch frames');
    await waitUntil(() => informed.includes('add:from-node.1') && informed.includes('update:from-node.1:2'), 'informer callbacks');
    controller.abort();
    await informer.stop();
  });

  it('creates, lists and watches events.k8s.io/v1 events', async () => {
    const ev = kc.makeApiClient(k8s.EventsV1Api);
    const seen: string[] = [];
    const watch = new k8s.Watch(kc);
    const controller = await watch.watch('/apis/events.k8s.io/v1/namespaces/node2/events', {}, (phase, obj: k8s.EventsV1Event) => {
      seen.push(`${phase}:${obj.metadata?.name ?? ''}:${obj.series?.count ?? 1}`);
    }, () => {});
    const informer = k8s.makeInformer(kc, '/apis/events.k8s.io/v1/namespaces/node2/events', () => ev.listNamespacedEvent({ namespace: 'node2' }));
    const informed: string[] = [];
    informer.on('add', (e: k8s.EventsV1Event) => informed.push(`add:${e.metadata?.name ?? ''}`));
    await informer.start();
    const body: k8s.EventsV1Event = {
      metadata: { name: 'op.1' },
      eventTime: new k8s.V1MicroTime(microSecondsAgo(5)),
      reportingController: 'example.com/op',
      reportingInstance: 'op-0',
      action: 'Reconcile',
      reason: 'Synced',
      note: 'synced',
      type: 'Normal',
      regarding: { kind: 'Pod', name: 'p', namespace: 'node2', apiVersion: 'v1' },
    };
    const created = await ev.createNamespacedEvent({ namespace: 'node2', body });
    assert.equal(created.reportingController, 'example.com/op');
    const list = await ev.listNamespacedEvent({ namespace: 'node2' });
    assert.equal(list.items[0]?.note, 'synced');
    await ev.patchNamespacedEvent(
      { name: 'op.1', namespace: 'node2', body: { series: { count: 2, lastObservedTime: new Date().toISOString().replace(/Z$/, '000Z') } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch),
    );
    await waitUntil(() => seen.includes('ADDED:op.1:1') && seen.includes('MODIFIED:op.1:2'), 'watch frames');
    await waitUntil(() => informed.includes('add:op.1'), 'informer callbacks');
    await assert.rejects(
      ev.createNamespacedEvent({ namespace: 'node2', body: { ...body, metadata: { name: 'bad' }, type: 'Critical' } }),
      (e: unknown) => (e as { code?: number }).code === 422,
    );
    controller.abort();
    await informer.stop();
  });
});

const PYTHON = '/usr/bin/python3';

function python(script: string, url: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(PYTHON, ['-c', script, url], { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : 1, stdout, stderr });
    });
  });
}

const PY_SCRIPT = String.raw`
import sys, json, threading, datetime
from kubernetes import client, watch
cfg = client.Configuration()
cfg.host = sys.argv[1]
api = client.ApiClient(cfg)
core = client.CoreV1Api(api)
events = client.EventsV1Api(api)
now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
body = client.CoreV1Event(
    metadata=client.V1ObjectMeta(name="from-python.1"),
    involved_object=client.V1ObjectReference(kind="Pod", name="py", namespace="python", api_version="v1"),
    reason="Killing", message="Stopping container py", type="Normal", count=1,
    first_timestamp=now, last_timestamp=now, source=client.V1EventSource(component="python"))
created = core.create_namespaced_event("python", body)
out = {"created": created.metadata.name, "rv": created.metadata.resource_version}
lst = core.list_namespaced_event("python")
out["listed"] = [e.metadata.name for e in lst.items]
out["listRv"] = lst.metadata.resource_version
w = watch.Watch()
seen = []
for ev in w.stream(core.list_namespaced_event, "python", timeout_seconds=2):
    seen.append(ev["type"] + ":" + ev["object"].metadata.name)
out["watched"] = seen
new = client.EventsV1Event(
    metadata=client.V1ObjectMeta(name="from-python.2"),
    event_time=datetime.datetime.now(datetime.timezone.utc),
    reporting_controller="example.com/py", reporting_instance="py-0", action="Reconcile",
    reason="Synced", note="synced from python", type="Normal",
    regarding=client.V1ObjectReference(kind="Pod", name="py", namespace="python", api_version="v1"))
made = events.create_namespaced_event("python", new)
out["createdNew"] = made.metadata.name
got = core.read_namespaced_event("from-python.2", "python")
out["coreMessage"] = got.message
try:
    core.create_namespaced_event("python", client.CoreV1Event(metadata=client.V1ObjectMeta(name="bad", namespace="other"), involved_object=client.V1ObjectReference(kind="Pod", name="py")))
    out["mismatch"] = "accepted"
except client.exceptions.ApiException as e:
    out["mismatch"] = e.status
print(json.dumps(out))
`;

describe('Python kubernetes client against kevents serve', { skip: existsSync(PYTHON) ? false : 'no /usr/bin/python3' }, () => {
  let srv: ServerProcess;
  before(async () => {
    srv = await startServer();
  });
  after(async () => {
    await srv.stop();
  });

  it('creates, lists and watches core/v1 events and creates events.k8s.io/v1 events', async () => {
    const r = await python(PY_SCRIPT, srv.url);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    assert.equal(out.created, 'from-python.1');
    assert.deepEqual(out.listed, ['from-python.1']);
    assert.deepEqual(out.watched, ['ADDED:from-python.1']);
    assert.equal(out.createdNew, 'from-python.2');
    assert.equal(out.coreMessage, 'synced from python');
    assert.equal(out.mismatch, 400);
  });
});
