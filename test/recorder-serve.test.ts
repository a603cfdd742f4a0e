import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import type { CoreEvent, EventsV1Event } from '../src/api/index.js';
import { createEventsClient, sinkFromKubeConfig } from '../src/client/index.js';
import type { EventSink } from '../src/recorder/index.js';
import { createEventBroadcaster, createLegacyEventBroadcaster } from '../src/recorder/index.js';
import { CollectingLogger, FakeClock } from '../src/internal/index.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { findKubectls, runKubectl } from './support/kubectl.js';

// The events client has the recorder's EventSink shape; this line fails to compile if they drift apart.
const _sinkShape: (kc: KubeConfig) => EventSink = sinkFromKubeConfig;

function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'kevents', server }],
    users: [{ name: 'kevents' }],
    contexts: [{ name: 'kevents', cluster: 'kevents', user: 'kevents' }],
    currentContext: 'kevents',
  });
  return kc;
}

/** until waits for a condition that real I/O will make true, failing after a generous bound. */
async function until(what: string, cond: () => boolean): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > 15_000) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

interface ProxyRequest {
  method: string;
  url: string;
  body: string;
}

/**
 * FaultProxy forwards to the server, except for the faults scripted ahead:
 * `503`, `429:<seconds>`, `reset` (connection destroyed) and `hold` (no answer
 * until released).
 */
async function startProxy(target: string) {
  const seen: ProxyRequest[] = [];
  const script: string[] = [];
  const held: (() => void)[] = [];
  const to = new URL(target);
  const forward = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): void => {
    const out = http.request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    out.on('error', () => res.destroy());
    out.end(body);
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method ?? '', url: req.url ?? '', body: body.toString('utf8') });
      const fault = script.shift();
      if (fault === undefined) return forward(req, res, body);
      if (fault === '503') {
        res.writeHead(503, { 'Content-Type': 'text/plain' });
        res.end('upstream unavailable');
      } else if (fault.startsWith('429:')) {
        const seconds = fault.slice(4);
        res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': seconds });
        res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'TooManyRequests', message: 'slow down', code: 429 }));
      } else if (fault === 'reset') {
        req.socket.destroy();
      } else if (fault === 'hold') {
        held.push(() => forward(req, res, body));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    script,
    held,
    releaseAll(): void {
      for (const f of held.splice(0)) f();
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const kubectls = findKubectls();

void describe('recorder against kevents serve', () => {
  let srv: ServerProcess;
  let client: ReturnType<typeof createEventsClient>;
  before(async () => {
    srv = await startServer();
    client = createEventsClient({ kubeConfig: kubeConfigFor(srv.url) });
  });
  after(async () => {
    await srv.stop();
  });

  void it('12 identical core/v1 events become one stored event with count 12, shown by kubectl events as (x12 over …)', async () => {
    const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000 - 60_000);
    const b = createLegacyEventBroadcaster({ sink: sinkFromKubeConfig(kubeConfigFor(srv.url)), clock, logger: new CollectingLogger() });
    const r = b.newRecorder({ source: { component: 'example-operator', host: 'node-1' } });
    const pod = { kind: 'Pod', apiVersion: 'v1', name: 'web-1', namespace: 'e2e-count', uid: 'uid-web-1' };
    for (let i = 0; i < 12; i++) {
      r.event({ involvedObject: pod, type: 'Warning', reason: 'BackOff', message: 'Back-off restarting failed container app' });
      await clock.advance(1000);
    }
    await b.shutdown();
    const list = await client.coreV1.list({ namespace: 'e2e-count' });
    assert.equal(list.items.length, 1);
    const ev = list.items[0]!;
    assert.equal(ev.count, 12);
    assert.equal(ev.source?.component, 'example-operator');
    assert.equal(b.counters.written, 12);
    const kubectl = kubectls.at(-1);
    if (kubectl === undefined) assert.fail('no kubectl on this machine');
    const out = await runKubectl(kubectl, srv.url, ['events', '-n', 'e2e-count']);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /\(x12 over \d+s\)\s+Warning\s+BackOff\s+Pod\/web-1\s+Back-off restarting failed container app/);
  });

  void it('events.k8s.io/v1 series: create, PATCH series.count 2, refresh at 30 minutes, final count 6 minutes after the last repeat', async () => {
    const proxy = await startProxy(srv.url);
    try {
      const clock = new FakeClock(Date.now());
      const b = createEventBroadcaster({ sink: sinkFromKubeConfig(kubeConfigFor(proxy.url)), clock, logger: new CollectingLogger(), hostname: 'e2e' });
      const r = b.newRecorder({ reportingController: 'example.com/e2e' });
      const regarding = { kind: 'Pod', apiVersion: 'v1', name: 'db-0', namespace: 'e2e-series', uid: 'uid-db-0' };
      let emitted = 0;
      const emit = (): void => {
        emitted++;
        r.event({ regarding, type: 'Warning', reason: 'ProbeFailed', action: 'Probe', note: `readiness probe failed (${emitted})` });
      };
      const server = async (): Promise<EventsV1Event> => {
        const l = await client.eventsV1.list({ namespace: 'e2e-series' });
        assert.equal(l.items.length, 1);
        return l.items[0]!;
      };
      emit();
      await b.idle();
      assert.equal((await server()).series ?? undefined, undefined);
      await clock.advance(1000);
      emit();
      await b.idle();
      assert.deepEqual(
        proxy.seen.map((s) => s.method),
        ['POST', 'PATCH'],
      );
      assert.equal(JSON.parse(proxy.seen[1]!.body).series.count, 2);
      assert.equal((await server()).series?.count, 2);
      // A repeat a minute for 35 minutes: memory only, except for the refresh at 30 minutes.
      for (let minute = 1; minute <= 35; minute++) {
        const before = emitted;
        await clock.advance(60_000);
        await b.idle();
        if (minute === 30) {
          assert.equal(proxy.seen.length, 3, 'the refresh wrote once');
          assert.equal((await server()).series?.count, before);
        }
        emit();
      }
      await b.idle();
      assert.equal(proxy.seen.length, 3);
      // Finish checks run every 6 minutes; the one at 42 minutes is the first more than 6 minutes after the last repeat (35m01s).
      await clock.advance(6 * 60_000 - 1_000);
      await b.idle();
      assert.equal(proxy.seen.length, 3);
      await clock.advance(60_000);
      await b.idle();
      assert.equal(proxy.seen.length, 4);
      const final = await server();
      assert.equal(final.series?.count, emitted);
      assert.equal(final.note, 'readiness probe failed (1)');
      assert.equal(final.reportingInstance, 'example.com/e2e-e2e');
      assert.deepEqual(
        proxy.seen.map((s) => s.method),
        ['POST', 'PATCH', 'PATCH', 'PATCH'],
      );
      await b.shutdown();
    } finally {
      await proxy.close();
    }
  });

  void it('aggregation: the 10th distinct message becomes a combined event that later messages update', async () => {
    const clock = new FakeClock(Date.now());
    const b = createLegacyEventBroadcaster({ sink: sinkFromKubeConfig(kubeConfigFor(srv.url)), clock, logger: new CollectingLogger() });
    const r = b.newRecorder({ source: { component: 'example-operator' } });
    const obj = { kind: 'Deployment', apiVersion: 'apps/v1', name: 'api', namespace: 'e2e-aggregate', uid: 'uid-api' };
    for (let i = 1; i <= 11; i++) {
      r.event({ involvedObject: obj, type: 'Warning', reason: 'FailedCreate', message: `quota exceeded for replica ${i}` });
      await clock.advance(5_000);
    }
    await b.shutdown();
    const items = (await client.coreV1.list({ namespace: 'e2e-aggregate' })).items;
    assert.equal(items.length, 10);
    const combined = items.filter((e: CoreEvent) => e.message?.startsWith('(combined from similar events): '));
    assert.equal(combined.length, 1);
    assert.equal(combined[0]!.message, '(combined from similar events): quota exceeded for replica 11');
    assert.equal(combined[0]!.count, 2);
  });

  void it('spam filter: the 26th event of a burst is held back and the count catches up later', async () => {
    const clock = new FakeClock(Date.now());
    const b = createLegacyEventBroadcaster({ sink: sinkFromKubeConfig(kubeConfigFor(srv.url)), clock, logger: new CollectingLogger() });
    const r = b.newRecorder({ source: { component: 'example-operator' } });
    const obj = { kind: 'Pod', apiVersion: 'v1', name: 'flappy', namespace: 'e2e-spam', uid: 'uid-flappy' };
    const emit = (): void => r.event({ involvedObject: obj, type: 'Normal', reason: 'Pulled', message: 'image already present' });
    for (let i = 0; i < 30; i++) emit();
    await b.idle();
    const stored = async (): Promise<number | undefined> => (await client.coreV1.list({ namespace: 'e2e-spam' })).items[0]?.count;
    assert.equal(await stored(), 25);
    assert.equal(b.counters.filtered, 5);
    await clock.advance(300_000);
    emit();
    await b.shutdown();
    assert.equal(await stored(), 31);
  });

  void it('retries through a fault-injecting proxy: 503, 429 with Retry-After, connection reset; a final Status is not retried', async () => {
    const proxy = await startProxy(srv.url);
    try {
      const clock = new FakeClock(Date.now());
      const b = createEventBroadcaster({ sink: sinkFromKubeConfig(kubeConfigFor(proxy.url)), clock, logger: new CollectingLogger(), random: () => 0 });
      const r = b.newRecorder({ reportingController: 'example.com/e2e' });
      const regarding = { kind: 'Pod', apiVersion: 'v1', name: 'job-1', namespace: 'e2e-retry' };
      proxy.script.push('503', '429:3', 'reset');
      r.event({ regarding, type: 'Normal', reason: 'Completed', action: 'Run', note: 'done' });
      // Each failure is followed by a sleep on the injected clock: jittered 10 s, then the server's 3 s, then 10 s.
      for (const [attempt, sleepMs] of [
        [1, 10_000],
        [2, 3_000],
        [3, 10_000],
      ] as const) {
        await until(`attempt ${attempt} and its sleep`, () => proxy.seen.length === attempt && (clock.nextDue() ?? Infinity) <= clock.now() + 10_000);
        assert.equal(clock.nextDue()! - clock.now(), sleepMs, `sleep after attempt ${attempt}`);
        await clock.advance(sleepMs);
      }
      await b.idle();
      assert.equal(proxy.seen.length, 4);
      assert.deepEqual(
        proxy.seen.map((s) => s.method),
        ['POST', 'POST', 'POST', 'POST'],
      );
      assert.equal((await client.eventsV1.list({ namespace: 'e2e-retry' })).items.length, 1);
      assert.deepEqual([b.counters.retried, b.counters.written, b.counters.failed], [3, 1, 0]);
      // The server rejects an events.k8s.io/v1 event without a reason (422): one attempt, no retry.
      r.event({ regarding, type: 'Normal', reason: '', action: 'Run' });
      await b.idle();
      assert.equal(proxy.seen.length, 5);
      assert.equal(b.counters.failed, 1);
      await b.shutdown();
    } finally {
      await proxy.close();
    }
  });

  void it('a full queue drops and counts while event() returns at once', async () => {
    const proxy = await startProxy(srv.url);
    try {
      const b = createLegacyEventBroadcaster({ sink: sinkFromKubeConfig(kubeConfigFor(proxy.url)), clock: new FakeClock(Date.now()), logger: new CollectingLogger() });
      const r = b.newRecorder({ source: { component: 'example-operator' } });
      proxy.script.push('hold');
      for (let i = 0; i < 1010; i++) {
        r.event({ involvedObject: { kind: 'Pod', apiVersion: 'v1', name: `p-${i}`, namespace: 'e2e-queue' }, type: 'Normal', reason: 'Created', message: 'created' });
      }
      // Every call has returned while the server has not answered even the first write.
      assert.equal(proxy.held.length + proxy.seen.length <= 1, true);
      assert.equal(b.counters.recorded, 1010);
      assert.equal(b.counters.dropped, 9, 'one write in flight, 1000 queued, 9 dropped');
      await until('the first write to reach the proxy', () => proxy.held.length === 1);
      proxy.releaseAll();
      await b.shutdown({ timeoutMs: 60_000 });
      const list = await client.coreV1.list({ namespace: 'e2e-queue' });
      assert.equal(list.items.length, 1001);
      assert.equal(b.counters.written, 1001);
    } finally {
      await proxy.close();
    }
  });
});
