import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import type { CoreEvent, EventsV1Event } from '../src/api/index.js';
import { createEventsClient, sinkFromKubeConfig } from '../src/client/index.js';
import type { EventsClient } from '../src/client/index.js';
import { CollectingLogger, FakeClock } from '../src/internal/index.js';
import { createEventBroadcaster, createLegacyEventBroadcaster } from '../src/recorder/index.js';
import type { RecorderCounters } from '../src/recorder/index.js';
import { startControlPlane } from './support/control-plane.js';
import type { ControlPlane } from './support/control-plane.js';
import { findKubectls, runKubectl } from './support/kubectl.js';
import { createNamespaces, serviceAccountToken } from './support/cluster-setup.js';
import { sleep, until } from './support/wait.js';

/**
 * The recorder against a real kube-apiserver: core/v1 count PATCHes, events.k8s.io/v1 series
 * PATCHes, the create that follows a PATCH answered 404 (the event expired under --event-ttl), and
 * the 429s kube-apiserver answers when more requests than --max-mutating-requests-inflight arrive
 * at once. What the server stores is the proof: its uid says whether a write patched or created,
 * its resourceVersion whether a write happened at all.
 */

// Max-in-flight only limits requests with priority and fairness off; system:masters is exempt, so
// the pressure test writes as a service account.
const INFLIGHT = ['--enable-priority-and-fairness=false', '--max-requests-inflight=1', '--max-mutating-requests-inflight=1'];

function kubeConfigFile(path: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

/** terminated429 is kube-apiserver's count of requests it answered 429 (its own metric). */
async function terminated429(cp: ControlPlane): Promise<number> {
  const r = await cp.request('GET', '/metrics');
  assert.equal(r.status, 200);
  return r.text
    .split('\n')
    .filter((l) => l.startsWith('apiserver_request_terminations_total{') && l.includes('code="429"') && l.includes('resource="events"'))
    .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
}

/**
 * holdMutatingSlot sends a POST whose body it withholds: kube-apiserver counts the request in flight
 * from its headers until its handler has read the body, so with one mutating slot every other
 * client's write is answered 429 until `release`.
 */
async function holdMutatingSlot(cp: ControlPlane, token: string, namespace: string): Promise<{ release(): Promise<number> }> {
  const body = JSON.stringify({ metadata: { name: 'slot-holder' }, involvedObject: { kind: 'Pod', name: 'holder', namespace }, reason: 'Held', message: 'held', type: 'Normal' });
  let answered: (code: number) => void = () => undefined;
  const done = new Promise<number>((resolve) => (answered = resolve));
  const req = httpsRequest(
    new URL(`/api/v1/namespaces/${namespace}/events`, cp.url),
    { method: 'POST', ca: readFileSync(cp.caFile), headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } },
    (res) => {
      res.resume();
      res.on('end', () => answered(res.statusCode ?? 0));
    },
  );
  req.on('error', () => answered(0));
  req.write(body.slice(0, 1));
  // The slot is taken once another write is refused.
  const probe = { metadata: { name: 'slot-probe' }, involvedObject: { kind: 'Pod', name: 'holder', namespace }, reason: 'Probe', message: 'probe', type: 'Normal' };
  await until('the withheld POST holds the mutating slot', async () => (await cp.request('POST', `/api/v1/namespaces/${namespace}/events?dryRun=All`, probe, { token })).status === 429, 10_000, 50);
  return {
    release() {
      req.end(body.slice(1));
      return done;
    },
  };
}

void describe('recorder against kube-apiserver', { timeout: 300_000 }, () => {
  let cp: ControlPlane;
  let admin: KubeConfig;
  let client: EventsClient;
  let operatorToken: string;
  const kubectl = findKubectls().at(-1);
  // The first occurrences of the NotFound scenario, recorded first so that the TTL runs out meanwhile.
  const expiring: { core?: CoreEvent; v1?: EventsV1Event; finish?: () => Promise<RecorderCounters> } = {};

  before(async () => {
    cp = await startControlPlane({ eventTtl: '1m', extraArgs: INFLIGHT });
    admin = kubeConfigFile(cp.kubeconfigFile());
    client = createEventsClient({ kubeConfig: admin });
    await createNamespaces(cp, ['e2e-expire', 'e2e-count', 'e2e-series']);
    operatorToken = await serviceAccountToken(cp, {
      namespace: 'e2e-pressure',
      name: 'operator',
      rules: [{ apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update', 'get', 'list'] }],
    });
    await startExpiring();
  });
  after(async () => {
    await cp?.stop();
  });

  /** startExpiring records a core/v1 event and a two-occurrence series, then leaves them to --event-ttl. */
  async function startExpiring(): Promise<void> {
    const logger = new CollectingLogger();
    const legacy = createLegacyEventBroadcaster({ sink: sinkFromKubeConfig(admin), logger });
    const lr = legacy.newRecorder({ source: { component: 'example-operator', host: 'node-1' } });
    lr.event({ involvedObject: { kind: 'Pod', apiVersion: 'v1', name: 'web-0', namespace: 'e2e-expire', uid: 'uid-web-0' }, type: 'Warning', reason: 'BackOff', message: 'Back-off restarting failed container' });
    await legacy.idle();
    const b = createEventBroadcaster({ sink: sinkFromKubeConfig(admin), logger, hostname: 'e2e' });
    const r = b.newRecorder({ reportingController: 'example.com/e2e' });
    const emit = (): void => r.event({ regarding: { kind: 'Pod', apiVersion: 'v1', name: 'db-0', namespace: 'e2e-expire', uid: 'uid-db-0' }, type: 'Warning', reason: 'ProbeFailed', action: 'Probe', note: 'readiness probe failed' });
    emit();
    await b.idle();
    emit();
    await b.idle();
    expiring.core = (await client.coreV1.list({ namespace: 'e2e-expire', fieldSelector: 'reason=BackOff' })).items[0];
    expiring.v1 = (await client.eventsV1.list({ namespace: 'e2e-expire', fieldSelector: 'reason=ProbeFailed' })).items[0];
    assert.equal(expiring.v1?.series?.count, 2);
    expiring.finish = async () => {
      // The series goes on in memory; the repeat after expiry is the legacy recorder's PATCH of count 2.
      emit();
      emit();
      lr.event({ involvedObject: { kind: 'Pod', apiVersion: 'v1', name: 'web-0', namespace: 'e2e-expire', uid: 'uid-web-0' }, type: 'Warning', reason: 'BackOff', message: 'Back-off restarting failed container' });
      await legacy.shutdown();
      // shutdown writes the series' latest count: a PATCH that finds nothing, then a create.
      await b.shutdown();
      return { ...legacy.counters, written: legacy.counters.written + b.counters.written, failed: legacy.counters.failed + b.counters.failed };
    };
  }

  void it('core/v1: 12 identical events PATCH one stored event to count 12, shown by kubectl events as (x12 over …)', async () => {
    const start = Math.floor(Date.now() / 1000) * 1000 - 60_000;
    const clock = new FakeClock(start);
    const b = createLegacyEventBroadcaster({ sink: sinkFromKubeConfig(admin), clock, logger: new CollectingLogger() });
    const r = b.newRecorder({ source: { component: 'example-operator', host: 'node-1' } });
    const pod = { kind: 'Pod', apiVersion: 'v1', name: 'web-1', namespace: 'e2e-count', uid: 'uid-web-1' };
    const emit = (): void => r.event({ involvedObject: pod, type: 'Warning', reason: 'BackOff', message: 'Back-off restarting failed container app' });
    emit();
    await b.idle();
    const first = (await client.coreV1.list({ namespace: 'e2e-count' })).items;
    assert.equal(first.length, 1);
    for (let i = 1; i < 12; i++) {
      await clock.advance(1000);
      emit();
    }
    await b.shutdown();
    const list = (await client.coreV1.list({ namespace: 'e2e-count' })).items;
    assert.equal(list.length, 1);
    const ev = list[0]!;
    assert.equal(ev.metadata.uid, first[0]!.metadata.uid, 'the repeats patched the event the first occurrence created');
    assert.equal(ev.count, 12);
    assert.equal(ev.firstTimestamp, new Date(start).toISOString().replace('.000Z', 'Z'));
    assert.equal(ev.lastTimestamp, new Date(start + 11_000).toISOString().replace('.000Z', 'Z'));
    assert.deepEqual(ev.source, { component: 'example-operator', host: 'node-1' });
    assert.deepEqual([b.counters.written, b.counters.failed, b.counters.retried], [12, 0, 0]);
    if (kubectl === undefined) assert.fail('no kubectl on this machine');
    const out = await runKubectl(kubectl, cp.url, ['events', '-n', 'e2e-count'], { kubeconfig: cp.kubeconfigFile() });
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /\(x12 over \d+s\)\s+Warning\s+BackOff\s+Pod\/web-1\s+Back-off restarting failed container app/);
  });

  void it('events.k8s.io/v1: the 2nd occurrence PATCHes series.count 2, later ones only at the 30-minute refresh and the finish 6 minutes after the last', async () => {
    const clock = new FakeClock(Date.now());
    const b = createEventBroadcaster({ sink: sinkFromKubeConfig(admin), clock, logger: new CollectingLogger(), hostname: 'e2e' });
    const r = b.newRecorder({ reportingController: 'example.com/e2e' });
    const regarding = { kind: 'Pod', apiVersion: 'v1', name: 'db-0', namespace: 'e2e-series', uid: 'uid-db-0' };
    let emitted = 0;
    const emit = (): void => {
      emitted++;
      r.event({ regarding, type: 'Warning', reason: 'ProbeFailed', action: 'Probe', note: `readiness probe failed (${emitted})` });
    };
    const stored = async (): Promise<EventsV1Event> => {
      const l = await client.eventsV1.list({ namespace: 'e2e-series' });
      assert.equal(l.items.length, 1);
      return l.items[0]!;
    };
    emit();
    await b.idle();
    const created = await stored();
    assert.equal(created.series, undefined);
    await clock.advance(1000);
    emit();
    await b.idle();
    const second = await stored();
    assert.equal(second.metadata.uid, created.metadata.uid);
    assert.equal(second.series?.count, 2);
    assert.notEqual(second.metadata.resourceVersion, created.metadata.resourceVersion);
    let refreshed: EventsV1Event | undefined;
    for (let minute = 1; minute <= 35; minute++) {
      const before = emitted;
      await clock.advance(60_000);
      await b.idle();
      if (minute === 29) assert.equal((await stored()).metadata.resourceVersion, second.metadata.resourceVersion, 'repeats are only counted in memory');
      if (minute === 30) {
        refreshed = await stored();
        assert.equal(refreshed.series?.count, before, 'the refresh wrote the count');
      }
      emit();
    }
    await b.idle();
    assert.equal((await stored()).metadata.resourceVersion, refreshed?.metadata.resourceVersion);
    // The finish check at 42 minutes is the first more than 6 minutes after the last repeat (35m01s).
    await clock.advance(6 * 60_000 - 1_000);
    await b.idle();
    assert.equal((await stored()).metadata.resourceVersion, refreshed?.metadata.resourceVersion);
    await clock.advance(60_000);
    await b.idle();
    const final = await stored();
    assert.equal(final.metadata.uid, created.metadata.uid);
    assert.equal(final.series?.count, emitted);
    assert.equal(final.note, 'readiness probe failed (1)');
    assert.equal(final.reportingInstance, 'example.com/e2e-e2e');
    assert.deepEqual([b.counters.written, b.counters.failed], [4, 0]);
    await b.shutdown();
  });

  void it('429s from --max-mutating-requests-inflight: a burst from four broadcasters is retried until every event is written', async () => {
    const operator = kubeConfigFile(cp.kubeconfigFile(operatorToken));
    const refusedBefore = await terminated429(cp);
    const logger = new CollectingLogger();
    const v1 = Array.from({ length: 3 }, () => createEventBroadcaster({ sink: sinkFromKubeConfig(operator), logger, hostname: 'burst' }));
    const legacy = createLegacyEventBroadcaster({ sink: sinkFromKubeConfig(operator), logger });
    v1.forEach((b, j) => {
      const r = b.newRecorder({ reportingController: `example.com/burst-${j}` });
      for (let i = 0; i < 60; i++) r.event({ regarding: { kind: 'Pod', apiVersion: 'v1', name: `pod-${j}-${i}`, namespace: 'e2e-pressure' }, type: 'Normal', reason: 'Started', action: 'Start', note: `started ${i}` });
    });
    const lr = legacy.newRecorder({ source: { component: 'burst-legacy' } });
    for (let i = 0; i < 60; i++) {
      // Every third object repeats: a create and then a count PATCH, both under pressure.
      const obj = { kind: 'Pod', apiVersion: 'v1', name: `legacy-${i}`, namespace: 'e2e-pressure' };
      lr.event({ involvedObject: obj, type: 'Normal', reason: 'Pulled', message: 'image pulled' });
      if (i % 3 === 0) lr.event({ involvedObject: obj, type: 'Normal', reason: 'Pulled', message: 'image pulled' });
    }
    await Promise.all([...v1.map((b) => b.shutdown({ timeoutMs: 120_000 })), legacy.shutdown({ timeoutMs: 120_000 })]);
    const counters = [...v1, legacy].map((b) => b.counters);
    const refused = (await terminated429(cp)) - refusedBefore;
    assert.ok(refused > 0, 'kube-apiserver answered 429s');
    assert.ok(counters.reduce((s, c) => s + c.retried, 0) > 0, `the recorders retried: ${JSON.stringify(counters)}`);
    assert.deepEqual(counters.map((c) => [c.written, c.failed, c.dropped]), [[60, 0, 0], [60, 0, 0], [60, 0, 0], [80, 0, 0]]);
    const items = (await client.coreV1.list({ namespace: 'e2e-pressure' })).items;
    for (let j = 0; j < 3; j++) {
      for (let i = 0; i < 60; i++) assert.equal(items.filter((e) => e.involvedObject.name === `pod-${j}-${i}`).length, 1, `pod-${j}-${i}`);
    }
    for (let i = 0; i < 60; i++) {
      const e = items.filter((x) => x.involvedObject.name === `legacy-${i}`);
      assert.equal(e.length, 1, `legacy-${i}`);
      assert.equal(e[0]!.count, i % 3 === 0 ? 2 : 1, `count of legacy-${i}`);
    }
  });

  void it('429s for longer than twelve Retry-After waits: the writes wait as client-go does and are written once the server has room', async () => {
    const operator = kubeConfigFile(cp.kubeconfigFile(operatorToken));
    const logger = new CollectingLogger();
    const b = createEventBroadcaster({ sink: sinkFromKubeConfig(operator), logger, hostname: 'held', retrySleepMs: 2_000 });
    const legacy = createLegacyEventBroadcaster({ sink: sinkFromKubeConfig(operator), logger, retrySleepMs: 2_000 });
    const holder = await holdMutatingSlot(cp, operatorToken, 'e2e-pressure');
    const refusedBefore = await terminated429(cp);
    const r = b.newRecorder({ reportingController: 'example.com/held' });
    const lr = legacy.newRecorder({ source: { component: 'held-legacy' } });
    for (let i = 0; i < 5; i++) {
      r.event({ regarding: { kind: 'Pod', apiVersion: 'v1', name: `held-${i}`, namespace: 'e2e-pressure' }, type: 'Normal', reason: 'Started', action: 'Start', note: 'started' });
      lr.event({ involvedObject: { kind: 'Pod', apiVersion: 'v1', name: `held-legacy-${i}`, namespace: 'e2e-pressure' }, type: 'Normal', reason: 'Started', message: 'started' });
    }
    // Each write is refused with Retry-After: 1 for 15 s: more than twelve tries of one second each.
    await sleep(15_000);
    assert.ok((await terminated429(cp)) - refusedBefore >= 12, 'the writes were refused again and again');
    assert.equal(b.counters.written + legacy.counters.written, 0);
    assert.equal(await holder.release(), 201);
    await Promise.all([b.shutdown({ timeoutMs: 60_000 }), legacy.shutdown({ timeoutMs: 60_000 })]);
    assert.deepEqual([b.counters.written, b.counters.failed, legacy.counters.written, legacy.counters.failed], [5, 0, 5, 0], logger.messages('error').slice(-5).join('\n'));
    const names = new Set((await client.coreV1.list({ namespace: 'e2e-pressure' })).items.map((e) => e.involvedObject.name));
    for (let i = 0; i < 5; i++) {
      assert.ok(names.has(`held-${i}`) && names.has(`held-legacy-${i}`), `held-${i} and held-legacy-${i} are stored`);
    }
  });

  void it('NotFound: a repeat after --event-ttl deleted the event PATCHes, finds nothing and creates it again with the full count', async () => {
    const core = expiring.core!;
    const v1 = expiring.v1!;
    await until('kube-apiserver expired both events', async () => {
      const a = await cp.request('GET', `/api/v1/namespaces/e2e-expire/events/${core.metadata.name}`);
      const b = await cp.request('GET', `/apis/events.k8s.io/v1/namespaces/e2e-expire/events/${v1.metadata.name}`);
      return a.status === 404 && b.status === 404;
    }, 120_000, 1000);
    const counters = await expiring.finish!();
    // core/v1: the create, then the repeat's PATCH (404) and create; the series: create, PATCH, final PATCH (404) and create.
    assert.deepEqual([counters.written, counters.failed], [2 + 3, 0]);
    const again = (await client.coreV1.list({ namespace: 'e2e-expire', fieldSelector: `metadata.name=${core.metadata.name}` })).items[0];
    assert.ok(again !== undefined, 'the core/v1 event is created again under its name');
    assert.notEqual(again.metadata.uid, core.metadata.uid);
    assert.equal(again.count, 2);
    assert.equal(again.firstTimestamp, core.firstTimestamp);
    const series = (await client.eventsV1.list({ namespace: 'e2e-expire', fieldSelector: `metadata.name=${v1.metadata.name}` })).items[0];
    assert.ok(series !== undefined, 'the series is created again under its name');
    assert.notEqual(series.metadata.uid, v1.metadata.uid);
    assert.equal(series.series?.count, 4);
    assert.equal(series.note, 'readiness probe failed');
    assert.equal(series.eventTime, v1.eventTime);
  });
});
