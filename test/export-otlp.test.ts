import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { sinkFromKubeConfig } from '../src/client/index.js';
import { KEVENTS_ATTRIBUTES } from '../src/export/index.js';
import { CollectingLogger } from '../src/internal/index.js';
import { createEventBroadcaster, createLegacyEventBroadcaster } from '../src/recorder/index.js';
import { createNamespaces } from './support/cluster-setup.js';
import { startControlPlane } from './support/control-plane.js';
import type { ControlPlane } from './support/control-plane.js';
import { exportMetric, startExport, stopExport } from './support/export-process.js';
import type { ExportProcess } from './support/export-process.js';
import { findKubectls, runKubectl } from './support/kubectl.js';
import { startMirror, stopMirror } from './support/mirror-process.js';
import type { MirrorProcess } from './support/mirror-process.js';
import { attribute, startCollector } from './support/otel-collector.js';
import type { Collector, OtlpLogRecord } from './support/otel-collector.js';
import { sleep, until } from './support/wait.js';

/**
 * The otlp sink, record by record against the OpenTelemetry Collector's own k8s_events receiver.
 * One real kube-apiserver gets events through both APIs: kubectl, the recorder (an events.k8s.io
 * series and core/v1 counts), raw writes with related objects, a `Critical` type, a 4 KiB message,
 * non-ASCII text, events about cluster-scoped objects. A real collector (built by
 * scripts/peers.mjs) watches it with its k8s_events receiver into one file; `kevents mirror`
 * archives the same apiserver and `kevents export` sends OTLP/HTTP to the same collector's otlp
 * receiver, written to a second file. After what must differ is taken out (the observed time, the
 * `kevents.` attributes), the two files hold the same records, but for the differences listed in
 * KNOWN_DIFFERENCES, each of which docs/export.md lists with its reason.
 */

const kubectl = findKubectls().at(-1);
const DOCS = new URL('../docs/export.md', import.meta.url);

/**
 * KNOWN_DIFFERENCES are where kevents' records may differ from the receiver's, by attribute (or
 * record field), each with the docs/export.md sentence that gives its reason. Any other
 * difference fails the test.
 */
const KNOWN_DIFFERENCES: Record<string, string> = {};

/** NS is the namespace of the test's namespaced events; the cluster-scoped ones live in default. */
const NS = 'otlp';
/** PREFIX starts the name of every object the test's events are about, so that other events are left out of the comparison. */
const PREFIX = 'otlp-';

function second(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function micro(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '000Z');
}

/** normalised is a record without what must differ (the observed time, kevents' attributes), attributes in key order, as text. */
function normalised(r: OtlpLogRecord): string {
  const { observedTimeUnixNano: _observed, resource, attributes, ...rest } = r;
  const sorted = (kvs: OtlpLogRecord['attributes']): [string, unknown][] =>
    kvs.filter((kv) => !kv.key.startsWith('kevents.')).map((kv): [string, unknown] => [kv.key, kv.value]).sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const ordered = Object.fromEntries(Object.entries(rest).sort((a, b) => (a[0] < b[0] ? -1 : 1)));
  return JSON.stringify({ resource: sorted(resource), attributes: sorted(attributes), ...ordered });
}

/** ours keeps the records about the test's objects. */
function ours(records: OtlpLogRecord[]): OtlpLogRecord[] {
  return records.filter((r) => String(attribute(r.resource, 'k8s.object.name') ?? '').startsWith(PREFIX));
}

/** differences lists what tells two records of one change apart, as `name: ours vs theirs` per attribute or field. */
function differences(kevents: OtlpLogRecord, receiver: OtlpLogRecord): Map<string, string> {
  const a = JSON.parse(normalised(kevents)) as Record<string, unknown> & { resource: [string, unknown][]; attributes: [string, unknown][] };
  const b = JSON.parse(normalised(receiver)) as typeof a;
  const out = new Map<string, string>();
  for (const part of ['resource', 'attributes'] as const) {
    const ma = new Map(a[part].map(([k, v]) => [k, JSON.stringify(v)]));
    const mb = new Map(b[part].map(([k, v]) => [k, JSON.stringify(v)]));
    for (const k of new Set([...ma.keys(), ...mb.keys()])) if (ma.get(k) !== mb.get(k)) out.set(k, `${ma.get(k) ?? 'absent'} vs ${mb.get(k) ?? 'absent'}`);
  }
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (k === 'resource' || k === 'attributes') continue;
    const va = JSON.stringify(a[k]);
    const vb = JSON.stringify(b[k]);
    if (va !== vb) out.set(k, `${va ?? 'absent'} vs ${vb ?? 'absent'}`);
  }
  return out;
}

/** changeKey pairs the two sides' records of one change: the event and what its count and time were. */
function changeKey(r: OtlpLogRecord): string {
  return `${String(attribute(r.attributes, 'k8s.event.uid'))}#${String(attribute(r.attributes, 'k8s.event.count') ?? '-')}#${r.timeUnixNano ?? ''}#${r.body?.stringValue?.length ?? 0}`;
}

/** writeEvents writes the test's events through every path the issue names, waiting for each write's answer. */
async function writeEvents(cp: ControlPlane): Promise<void> {
  const post = async (path: string, body: unknown): Promise<{ metadata: { name: string } }> => {
    const r = await cp.request('POST', path, body);
    assert.ok(r.status === 201, `POST ${path}: ${r.status} ${r.text}`);
    return r.json as { metadata: { name: string } };
  };
  const patch = async (path: string, body: unknown): Promise<void> => {
    const r = await cp.request('PATCH', path, body, { contentType: 'application/merge-patch+json' });
    assert.equal(r.status, 200, `PATCH ${path}: ${r.text}`);
  };
  const core = `/api/v1/namespaces/${NS}/events`;
  const v1 = `/apis/events.k8s.io/v1/namespaces/${NS}/events`;

  // kubectl, as a user would: a core/v1 event and an events.k8s.io/v1 one, then a count bump and a series.
  if (kubectl === undefined) assert.fail('no kubectl on this machine');
  const k = async (args: string[], input?: string): Promise<void> => {
    const r = await runKubectl(kubectl, cp.url, args, { kubeconfig: cp.kubeconfigFile(), ...(input !== undefined ? { input } : {}) });
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  };
  const now = Date.now();
  await k(['create', '-f', '-'], JSON.stringify({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'kubectl-core', namespace: NS },
    involvedObject: { kind: 'Pod', name: `${PREFIX}web-0`, namespace: NS, apiVersion: 'v1', uid: 'uid-web-0', resourceVersion: '4711', fieldPath: 'spec.containers{app}' },
    reason: 'Evicted',
    message: 'The node was low on resource: memory.',
    type: 'Warning',
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: second(now),
    lastTimestamp: second(now),
    count: 1,
  }));
  await k(['create', '-f', '-'], JSON.stringify({
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: 'kubectl-v1', namespace: NS },
    eventTime: micro(now),
    reportingController: 'example.com/scheduler',
    reportingInstance: 'scheduler-1',
    action: 'Scheduling',
    reason: 'FailedScheduling',
    type: 'Warning',
    regarding: { kind: 'Pod', name: `${PREFIX}web-1`, namespace: NS, apiVersion: 'v1', uid: 'uid-web-1' },
    note: '0/3 nodes are available: 3 Insufficient cpu.',
  }));
  await sleep(1100);
  await k(['patch', 'events', 'kubectl-core', '-n', NS, '--type', 'merge', '-p', JSON.stringify({ count: 2, lastTimestamp: second(Date.now()) })]);
  await k(['patch', 'events.v1.events.k8s.io', 'kubectl-v1', '-n', NS, '--type', 'merge', '-p', JSON.stringify({ series: { count: 2, lastObservedTime: micro(Date.now()) } })]);

  // The recorder: an events.k8s.io series (the same event thrice) and core/v1 counts.
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigFile());
  const logger = new CollectingLogger();
  const b = createEventBroadcaster({ sink: sinkFromKubeConfig(kc), logger, hostname: 'otlp-test', finishAfterMs: 1_000 });
  const legacy = createLegacyEventBroadcaster({ sink: sinkFromKubeConfig(kc), logger });
  const r = b.newRecorder({ reportingController: 'example.com/operator' });
  const lr = legacy.newRecorder({ source: { component: 'example-operator', host: 'node-2' } });
  for (let i = 0; i < 3; i++) {
    r.event({ regarding: { kind: 'Pod', apiVersion: 'v1', name: `${PREFIX}rec-0`, namespace: NS, uid: 'uid-rec-0' }, type: 'Warning', reason: 'ProbeFailed', action: 'Probe', note: 'readiness probe failed' });
    lr.event({ involvedObject: { kind: 'Pod', apiVersion: 'v1', name: `${PREFIX}legacy-0`, namespace: NS, uid: 'uid-legacy-0' }, type: 'Normal', reason: 'Pulled', message: 'Container image "app:1" already present on machine' });
    await sleep(700);
  }
  await Promise.all([b.shutdown({ timeoutMs: 30_000 }), legacy.shutdown({ timeoutMs: 30_000 })]);
  assert.equal(b.counters.failed + legacy.counters.failed, 0, JSON.stringify(logger.entries));

  // Raw writes: related objects, a Critical type, a 4 KiB message, non-ASCII text.
  const t = second(Date.now());
  await post(core, {
    metadata: { name: 'raw-related', namespace: NS, labels: { app: 'web' } },
    involvedObject: { kind: 'Pod', name: `${PREFIX}web-2`, namespace: NS, apiVersion: 'v1', uid: 'uid-web-2' },
    related: { kind: 'Node', name: `${PREFIX}node-9`, apiVersion: 'v1', uid: 'uid-node-9' },
    reason: 'Preempted',
    message: 'Preempted by a pod on node otlp-node-9',
    type: 'Normal',
    action: 'Preempting',
    reportingComponent: 'example.com/scheduler',
    reportingInstance: 'scheduler-1',
    eventTime: micro(Date.now()),
    source: { component: 'default-scheduler' },
    firstTimestamp: t,
    lastTimestamp: t,
    count: 1,
  });
  await post(v1, {
    metadata: { name: 'raw-v1-related', namespace: NS },
    eventTime: micro(Date.now()),
    reportingController: 'example.com/operator',
    reportingInstance: 'operator-1',
    action: 'Reconcile',
    reason: 'Degraded',
    type: 'Critical',
    regarding: { kind: 'Deployment', name: `${PREFIX}web`, namespace: NS, apiVersion: 'apps/v1', uid: 'uid-deploy' },
    related: { kind: 'ReplicaSet', name: `${PREFIX}web-5d8f`, namespace: NS, apiVersion: 'apps/v1', uid: 'uid-rs' },
    note: `Degraded: ${'x'.repeat(4096 - 10)}`,
  });
  await post(core, {
    metadata: { name: 'raw-unicode', namespace: NS },
    involvedObject: { kind: 'ConfigMap', name: `${PREFIX}config`, namespace: NS, apiVersion: 'v1' },
    reason: 'Übernommen',
    message: 'Konfiguration übernommen: 設定を適用しました 🚀 — «ok»',
    type: 'Normal',
    source: { component: 'configurator' },
    firstTimestamp: t,
    lastTimestamp: t,
    count: 1,
  });
  // Cluster-scoped objects: the events live in default, the objects have no namespace.
  await post('/api/v1/namespaces/default/events', {
    metadata: { name: 'raw-node' },
    involvedObject: { kind: 'Node', name: `${PREFIX}node-1`, apiVersion: 'v1', uid: 'uid-node-1' },
    reason: 'NodeNotReady',
    message: 'Node otlp-node-1 status is now: NodeNotReady',
    type: 'Warning',
    source: { component: 'node-controller' },
    firstTimestamp: t,
    lastTimestamp: t,
    count: 1,
  });
  await post('/apis/events.k8s.io/v1/namespaces/default/events', {
    metadata: { name: 'raw-pv' },
    eventTime: micro(Date.now()),
    reportingController: 'example.com/provisioner',
    reportingInstance: 'provisioner-1',
    action: 'Provision',
    reason: 'ProvisioningSucceeded',
    type: 'Normal',
    regarding: { kind: 'PersistentVolume', name: `${PREFIX}pv-1`, apiVersion: 'v1', uid: 'uid-pv-1' },
    note: 'Successfully provisioned volume otlp-pv-1',
  });
  await sleep(1100);
  await patch(`${core}/raw-unicode`, { count: 2, lastTimestamp: second(Date.now()), message: 'Konfiguration erneut übernommen: 設定 ✓' });
  await patch('/api/v1/namespaces/default/events/raw-node', { count: 2, lastTimestamp: second(Date.now()) });
}

void describe('kevents export to the OpenTelemetry Collector', { timeout: 600_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-export-otlp-'));
  const cleanups: (() => Promise<unknown>)[] = [];
  let cp: ControlPlane;
  before(async () => {
    cp = await startControlPlane();
    cleanups.push(() => cp.stop());
    await createNamespaces(cp, [NS]);
  });
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  void it('writes what the k8s_events receiver writes for the same events, record by record', async () => {
    const collector: Collector = await startCollector({ kubeconfig: cp.kubeconfigFile() });
    cleanups.push(() => collector.stop());
    const archive = `sqlite:${join(dir, 'mirror.db')}`;
    const mirror: MirrorProcess = await startMirror({ kubeconfig: cp.kubeconfigFile(cp.readToken) }, archive);
    cleanups.push(() => stopMirror(mirror, 'SIGKILL'));
    const config = join(dir, 'export.yaml');
    writeFileSync(config, `sinks:\n  - name: otel\n    type: otlp\n    url: ${collector.otlpUrl}\n    batchSize: 20\n    retry: { initialBackoff: 100ms, maxBackoff: 2s }\n`);
    // The receiver drops events older than its start: the first event is written a second after it.
    await sleep(1500);
    await writeEvents(cp);

    let exporter: ExportProcess | undefined;
    const detail = (): string => `kevents ${ours(collector.received()).length}, receiver ${ours(collector.watched()).length}; exporter: ${exporter?.output().slice(-2000) ?? ''}; collector: ${collector.output().slice(-2000)}`;
    // The mirror has archived everything once the receiver has seen it all and the archive stops growing.
    await until('the receiver has written every change', () => ours(collector.watched()).length >= 20, 60_000).catch((e: Error) => assert.fail(`${e.message}: ${detail()}`));
    exporter = await startExport(config, archive);
    cleanups.push(() => stopExport(exporter!, 'SIGKILL'));
    let last = -1;
    await until(
      'kevents has sent as many records as the receiver wrote, and both stopped growing',
      async () => {
        const n = ours(collector.received()).length;
        const settled = n === last && n >= ours(collector.watched()).length && (await exportMetric(exporter!, 'kevents_export_queue_depth', 'otel')) === 0;
        last = n;
        return settled;
      },
      90_000,
      1_000,
    ).catch((e: Error) => assert.fail(`${e.message}: ${detail()}`));

    const kevents = ours(collector.received());
    const receiver = ours(collector.watched());
    // Every kevents record carries its record id (the event's uid and the change id) and what only kevents knows.
    const ids = kevents.map((r) => String(attribute(r.attributes, KEVENTS_ATTRIBUTES.recordId)));
    assert.equal(new Set(ids).size, ids.length, 'each record id once');
    for (const r of kevents) {
      const id = String(attribute(r.attributes, KEVENTS_ATTRIBUTES.recordId));
      assert.equal(id, `${String(attribute(r.attributes, 'k8s.event.uid'))}.${String(attribute(r.attributes, KEVENTS_ATTRIBUTES.changeId))}`, 'the record id is the event uid and the change id');
      assert.equal(attribute(r.attributes, KEVENTS_ATTRIBUTES.cluster), 'lab');
      assert.equal(typeof attribute(r.attributes, KEVENTS_ATTRIBUTES.countBefore), 'number');
      assert.ok(r.observedTimeUnixNano !== undefined && r.observedTimeUnixNano !== '0', 'kevents sets the observed time');
    }
    // The cases the issue names are all there.
    const bodies = receiver.map((r) => r.body?.stringValue ?? '');
    assert.ok(bodies.some((b) => b.length >= 4000), 'the 4 KiB message');
    assert.ok(bodies.some((b) => b.includes('設定を適用しました 🚀')), 'non-ASCII text');
    assert.ok(receiver.some((r) => attribute(r.resource, 'k8s.object.kind') === 'Node' && attribute(r.attributes, 'k8s.namespace.name') === ''), 'a cluster-scoped object');
    assert.ok(receiver.some((r) => r.severityNumber === undefined && attribute(r.attributes, 'k8s.event.reason') === 'Degraded'), 'the Critical type, without a severity');

    // Record by record: the same multiset after normalising; what differs must be a known difference.
    const unmatched = new Map<string, number>();
    for (const r of receiver) unmatched.set(normalised(r), (unmatched.get(normalised(r)) ?? 0) + 1);
    const extra: OtlpLogRecord[] = [];
    for (const r of kevents) {
      const n = unmatched.get(normalised(r)) ?? 0;
      if (n > 0) unmatched.set(normalised(r), n - 1);
      else extra.push(r);
    }
    const missing = receiver.filter((r) => {
      const n = unmatched.get(normalised(r)) ?? 0;
      if (n === 0) return false;
      unmatched.set(normalised(r), n - 1);
      return true;
    });
    const byKey = new Map(missing.map((r) => [changeKey(r), r]));
    const unknown: string[] = [];
    const known = new Set<string>();
    for (const r of extra) {
      const theirs = byKey.get(changeKey(r));
      if (theirs === undefined) {
        unknown.push(`kevents sent a record the receiver did not write: ${normalised(r)}`);
        continue;
      }
      byKey.delete(changeKey(r));
      for (const [name, what] of differences(r, theirs)) {
        if (KNOWN_DIFFERENCES[name] !== undefined) known.add(name);
        else unknown.push(`${name} differs: ${what} (${changeKey(r)})`);
      }
    }
    for (const r of byKey.values()) unknown.push(`the receiver wrote a record kevents did not send: ${normalised(r)}`);
    assert.deepEqual(unknown, [], `differences not listed in KNOWN_DIFFERENCES (and docs/export.md):\n${unknown.join('\n')}`);
    assert.equal(kevents.length, receiver.length);
    // Each listed difference is in docs/export.md, with its reason.
    const docs = readFileSync(DOCS, 'utf8');
    for (const [name, reason] of Object.entries(KNOWN_DIFFERENCES)) assert.ok(docs.includes(`\`${name}\``) && docs.includes(reason), `docs/export.md lists ${name}: ${reason}`);
    process.stdout.write(`# ${kevents.length} records compared with the receiver's; known differences seen: ${[...known].join(', ') || 'none'}\n`);
    await stopExport(exporter, 'SIGTERM');
  });
});
