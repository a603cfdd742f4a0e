import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { CoreEvent, Occurrence } from '../api/index.js';
import { createEventsClient, loadKubeConfig } from '../client/index.js';
import { CollectingLogger, FakeClock } from '../internal/index.js';
import { createEventsServer } from '../server/index.js';
import type { KeventsServer } from '../server/index.js';
import { StorageError } from '../storage/index.js';
import type { ArchiveStore, EventStore } from '../storage/index.js';
import { MemoryEventStore } from '../storage/memory/index.js';
import { CLUSTER_LABEL } from '../api/index.js';
import { SOURCE_RESOURCE_VERSION_ANNOTATION, createMirror } from './index.js';
import type { Mirror, MirrorSource } from './index.js';

interface Source {
  url: string;
  store: MemoryEventStore;
  server: KeventsServer;
  clock: FakeClock;
}

const sources: Source[] = [];
after(async () => {
  for (const s of sources) {
    await s.server.close();
    await s.store.close();
  }
});

async function startSource(historyWindowSeconds = 3600): Promise<Source> {
  const clock = new FakeClock(Date.now());
  const store = new MemoryEventStore({ clock, historyWindowSeconds, compactIntervalMs: 1000 });
  const server = createEventsServer({ store, clock, eventTtlSeconds: 0 });
  const addr = await server.listen('127.0.0.1', 0);
  const s = { url: `http://127.0.0.1:${addr.port}`, store, server, clock };
  sources.push(s);
  return s;
}

async function clientOf(url: string): Promise<MirrorSource> {
  return createEventsClient({ kubeConfig: await loadKubeConfig({ server: url }) }).coreV1;
}

async function send(url: string, method: string, path: string, body: unknown, contentType = 'application/json'): Promise<any> {
  const res = await fetch(url + path, { method, body: JSON.stringify(body), headers: { 'Content-Type': contentType } });
  const json = await res.json();
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

function coreEvent(name: string, count = 1): CoreEvent {
  return {
    metadata: { name, namespace: 'default' },
    involvedObject: { kind: 'Pod', namespace: 'default', name: `pod-${name}` },
    reason: 'BackOff',
    message: `back-off ${name}`,
    type: 'Warning',
    count,
    firstTimestamp: '2025-01-01T00:00:00Z',
    lastTimestamp: '2025-01-01T00:00:00Z',
  };
}

async function bump(url: string, name: string, count: number): Promise<void> {
  await send(url, 'PATCH', `/api/v1/namespaces/default/events/${name}`, { count, lastTimestamp: `2025-01-01T00:00:${String(count).padStart(2, '0')}Z` }, 'application/merge-patch+json');
}

/** until polls a condition: the mirror works in the background, so the test waits for its effect (with a deadline). */
async function until(what: string, fn: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function occurrencesOf(store: ArchiveStore): Promise<Occurrence[]> {
  return (await store.listOccurrences({})).items;
}

function history(os: Occurrence[]): string[] {
  return os.map((o) => `${o.event.name} ${o.countBefore}->${o.countAfter}`).sort();
}

async function archived(store: EventStore): Promise<CoreEvent[]> {
  return (await store.list({})).items;
}

void describe('mirror (in process, against kevents serve)', () => {
  void it('archives events older than its start and every later change, and resumes from its checkpoint', async () => {
    const src = await startSource();
    await send(src.url, 'POST', '/api/v1/namespaces/default/events', coreEvent('a'));
    await send(src.url, 'POST', '/api/v1/namespaces/default/events', coreEvent('b', 4));
    await send(src.url, 'POST', '/apis/events.k8s.io/v1/namespaces/default/events', {
      metadata: { name: 'c', namespace: 'default' },
      eventTime: '2025-01-01T00:00:00.000000Z',
      reportingController: 'kevents.io/test',
      reportingInstance: 'test-1',
      action: 'Pulling',
      reason: 'Pulling',
      regarding: { kind: 'Pod', namespace: 'default', name: 'pod-c' },
      note: 'pulling image',
      type: 'Normal',
    });
    const archive = new MemoryEventStore();
    let mirror: Mirror = createMirror({ source: await clientOf(src.url), sourceId: 'test', store: archive, cluster: 'lab' });
    void mirror.run();
    await until('the three events are archived', async () => (await archived(archive)).length === 3);
    await until('the mirror is ready', () => Promise.resolve(mirror.readiness().ready));

    await bump(src.url, 'a', 2);
    await send(src.url, 'POST', '/api/v1/namespaces/default/events', coreEvent('d'));
    await until('the bump and the new event are archived', async () => (await occurrencesOf(archive)).length === 5);
    await mirror.stop();

    // Changes while the mirror is down are picked up from the checkpoint, once each.
    await bump(src.url, 'a', 3);
    await bump(src.url, 'b', 5);
    await send(src.url, 'DELETE', '/api/v1/namespaces/default/events/d', {});
    mirror = createMirror({ source: await clientOf(src.url), sourceId: 'test', store: archive, cluster: 'lab' });
    void mirror.run();
    await until('the changes made while stopped are archived', async () => (await occurrencesOf(archive)).length === 7);
    await mirror.stop();

    assert.deepEqual(history(await occurrencesOf(archive)), ['a 0->1', 'a 1->2', 'a 2->3', 'b 0->4', 'b 4->5', 'c 0->1', 'd 0->1']);
    const events = await archived(archive);
    assert.deepEqual(events.map((e) => e.metadata.name), ['a', 'b', 'c', 'd'], 'the event the source deleted stays');
    const a = events[0]!;
    const sourceA = await src.store.get('default', 'a');
    assert.equal(a.metadata.uid, sourceA.metadata.uid);
    assert.equal(a.metadata.annotations?.[SOURCE_RESOURCE_VERSION_ANNOTATION], sourceA.metadata.resourceVersion);
    assert.equal(a.metadata.labels?.[CLUSTER_LABEL], 'lab');
    assert.equal(a.count, 3);
    assert.equal(events[2]!.eventTime, '2025-01-01T00:00:00.000000Z', 'events.k8s.io events keep their own fields');
  });

  void it('relists after 410 Expired and archives each change once', async () => {
    const src = await startSource(1);
    for (const n of ['a', 'b']) await send(src.url, 'POST', '/api/v1/namespaces/default/events', coreEvent(n));
    const archive = new MemoryEventStore();
    const told: string[] = [];
    const onArchived = (changes: { occurrence: Occurrence }[]): void => {
      for (const c of changes) told.push(`${c.occurrence.event.name} ${c.occurrence.countBefore}->${c.occurrence.countAfter}`);
    };
    let mirror = createMirror({ source: await clientOf(src.url), sourceId: 'test', store: archive, onArchived });
    void mirror.run();
    await until('both events are archived', async () => (await archived(archive)).length === 2);
    await mirror.stop();

    await bump(src.url, 'a', 2);
    await send(src.url, 'POST', '/api/v1/namespaces/default/events', coreEvent('c'));
    // Move the source's history window past the checkpoint: resuming from it is now 410 Expired.
    await src.clock.advance(5_000);
    const checkpoint = await archive.getCheckpoint('test');
    assert.ok(Number(checkpoint?.resourceVersion) < (await src.store.oldestResourceVersion()));

    mirror = createMirror({ source: await clientOf(src.url), sourceId: 'test', store: archive, onArchived });
    void mirror.run();
    await until('the relist archived the new event', async () => (await archived(archive)).length === 3);
    await until('the checkpoint moved to the relist', async () => (await archive.getCheckpoint('test'))?.resourceVersion !== checkpoint?.resourceVersion);
    const metrics = await mirror.metrics.registry.getSingleMetricAsString('kevents_mirror_relists_total');
    await mirror.stop();
    assert.match(metrics, /kevents_mirror_relists_total 1$/m, 'one relist, after the 410');
    assert.deepEqual(history(await occurrencesOf(archive)), ['a 0->1', 'a 1->2', 'b 0->1', 'c 0->1']);
    assert.deepEqual(told.sort(), ['a 0->1', 'a 1->2', 'b 0->1', 'c 0->1'], 'onArchived is told each appended occurrence once, none of what the relist found archived');
  });

  void it('resumes from its checkpoint, without relisting, when the source ends a running watch with 410', async () => {
    const calls: string[] = [];
    const ev = (name: string, rv: string): CoreEvent => ({ ...coreEvent(name), metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion: rv } });
    const expired = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too slow', reason: 'Expired', code: 410 } as const;
    const source: MirrorSource = {
      list: () => {
        calls.push('list');
        return Promise.resolve({ metadata: { resourceVersion: '1' }, items: [] });
      },
      async *watch(options) {
        calls.push(`watch ${options.resourceVersion}`);
        if (options.resourceVersion === '1') {
          yield { type: 'ADDED', object: ev('a', '2') };
          await new Promise((r) => setTimeout(r, 50));
          yield { type: 'ERROR', object: expired };
        } else {
          yield { type: 'ADDED', object: ev('b', '3') };
          await new Promise<void>((resolve) => options.signal?.addEventListener('abort', () => resolve(), { once: true }));
        }
      },
    };
    const archive = new MemoryEventStore();
    const mirror = createMirror({ source, sourceId: 's', store: archive });
    void mirror.run();
    await until('b is archived', async () => (await archived(archive)).length === 2);
    await mirror.stop();
    assert.deepEqual(calls, ['list', 'watch 1', 'watch 2']);
  });

  void it('loses no change when it dies after any commit: between its list and its watch, in the replay, on the live stream', async () => {
    const v1Path = '/apis/events.k8s.io/v1/namespaces/default/events';
    const v1Event = {
      metadata: { name: 'v', namespace: 'default' },
      eventTime: '2025-01-01T00:00:00.000000Z',
      reportingController: 'kevents.io/test',
      reportingInstance: 'test-1',
      action: 'Pulling',
      reason: 'Pulling',
      regarding: { kind: 'Pod', namespace: 'default', name: 'pod-v' },
      note: 'pulling',
      type: 'Normal',
    };
    const corePath = '/api/v1/namespaces/default/events';
    const merge = 'application/merge-patch+json';
    /**
     * run mirrors a new source into a new archive with a mirror that dies after `dieAfter` commits
     * (every later write fails before reaching the archive, as after kill -9), then with a second
     * mirror that resumes from the archive's checkpoint. The source changes between the first list
     * and its watch (the watch replays those from history), then after the first watched change
     * (the watch gets those live).
     */
    const run = async (dieAfter: number): Promise<{ commits: number; want: string[]; have: string[] }> => {
      const src = await startSource();
      for (const n of ['a', 'b']) await send(src.url, 'POST', corePath, coreEvent(n));
      await send(src.url, 'POST', v1Path, v1Event);
      const client = await clientOf(src.url);
      const afterList = async (): Promise<void> => {
        await bump(src.url, 'a', 2);
        await bump(src.url, 'a', 3);
        await send(src.url, 'POST', corePath, coreEvent('c'));
        await send(src.url, 'PATCH', `${v1Path}/v`, { series: { count: 2, lastObservedTime: '2025-01-01T00:00:09.000000Z' } }, merge);
      };
      const live = async (): Promise<void> => {
        await bump(src.url, 'b', 2);
        await send(src.url, 'PATCH', `${corePath}/b`, { message: 'back-off b again' }, merge);
        await send(src.url, 'PATCH', `${corePath}/b`, { metadata: { labels: { touched: 'yes' } } }, merge);
        await send(src.url, 'DELETE', `${corePath}/c`, {});
        await bump(src.url, 'a', 4);
      };
      let listed: Promise<void> | undefined;
      let watched: Promise<void> | undefined;
      const racing: MirrorSource = {
        async list(options) {
          const page = await client.list(options);
          await (listed ??= afterList());
          return page;
        },
        async *watch(options) {
          for await (const frame of client.watch(options)) {
            yield frame;
            await (watched ??= live());
          }
        },
      };
      const archive = new MemoryEventStore();
      let commits = 0;
      const dying = new Proxy(archive, {
        get(target, p) {
          if (p === 'applyArchiveBatch') {
            return (batch: Parameters<ArchiveStore['applyArchiveBatch']>[0]) => {
              if (commits >= dieAfter) return Promise.reject(new Error('killed'));
              commits++;
              return target.applyArchiveBatch(batch);
            };
          }
          const v = Reflect.get(target, p) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
      const complete = async (): Promise<boolean> => (await archive.getCheckpoint('test'))?.resourceVersion === String(await src.store.currentResourceVersion());
      const first = createMirror({ source: racing, sourceId: 'test', store: dying, maxBatch: 1 });
      void first.run();
      await until('the first mirror died or archived everything', async () => commits >= dieAfter || (watched !== undefined && (await watched.then(complete))));
      await first.stop();
      const made = commits;
      // The source changes on while no mirror runs.
      await (listed ??= afterList());
      await (watched ??= live());
      const second = createMirror({ source: client, sourceId: 'test', store: archive, maxBatch: 1 });
      void second.run();
      await until('the second mirror archived everything', complete);
      await second.stop();
      return { commits: made, want: history((await src.store.listOccurrences({})).items), have: history(await occurrencesOf(archive)) };
    };
    const whole = await run(Number.MAX_SAFE_INTEGER);
    assert.deepEqual(whole.want, ['a 0->1', 'a 1->2', 'a 2->3', 'a 3->4', 'b 0->1', 'b 1->2', 'b 2->2', 'c 0->1', 'v 0->1', 'v 1->2']);
    assert.deepEqual(whole.have, whole.want);
    // From its first commit (the first list) on: what happens before a mirror's first list is committed it cannot see.
    for (let k = 1; k < whole.commits; k++) {
      const r = await run(k);
      assert.deepEqual(r.have, r.want, `the first mirror died after ${k} of ${whole.commits} commits`);
    }
  });

  void it('is not ready until synced, and stops being ready when the watch stalls', async () => {
    const clock = new FakeClock();
    let release: (() => void) | undefined;
    const hanging: MirrorSource = {
      list: () => Promise.resolve({ metadata: { resourceVersion: '10' }, items: [] }),
      async *watch(options) {
        await new Promise<void>((resolve) => {
          release = resolve;
          options.signal?.addEventListener('abort', () => resolve(), { once: true });
        });
        yield* [];
      },
    };
    const archive = new MemoryEventStore();
    const mirror = createMirror({ source: hanging, sourceId: 's', store: archive, clock, watchTimeoutSeconds: 60, stallSeconds: 90 });
    assert.equal(mirror.readiness().ready, false);
    void mirror.run();
    await until('the empty list is checkpointed', async () => (await archive.getCheckpoint('s'))?.resourceVersion === '10');
    await until('the mirror is ready', () => Promise.resolve(mirror.readiness().ready));
    clock.set(clock.now() + 91_000);
    const r = mirror.readiness();
    assert.equal(r.ready, false);
    assert.match(r.message, /no progress from the source watch for 91s/);
    release?.();
    await mirror.stop();
  });
});

void describe('mirror retries of a failing archive', () => {
  void it('retries an archive that refuses its writes at most every 5 s, however long it lasts, and resumes once it takes them', async () => {
    const clock = new FakeClock();
    const source: MirrorSource = {
      list: () => Promise.resolve({ metadata: { resourceVersion: '10' }, items: [coreEvent('a')] }),
      async *watch(options) {
        await new Promise<void>((resolve) => options.signal?.addEventListener('abort', () => resolve(), { once: true }));
        yield* [];
      },
    };
    const archive = new MemoryEventStore();
    let down = true;
    /** The archive's database gone: every batch is refused as a lost connection is, until `down` is cleared. */
    const failing = new Proxy(archive, {
      get(target, prop, receiver) {
        if (prop === 'applyArchiveBatch' && down) return () => Promise.reject(new StorageError('Unreachable', 'postgres: connect ECONNREFUSED 127.0.0.1:5432'));
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const logger = new CollectingLogger();
    const mirror = createMirror({ source, sourceId: 's', store: failing, clock, logger });
    void mirror.run();
    const delays = (): number[] => logger.entries.filter((e) => e.msg === 'mirror: retrying after a failure').map((e) => Number(e.fields.retryInMs));
    // Two minutes of refusals: the wait grows from half a second and stops at 5 s. Each step moves the clock past the
    // longest wait (5 s and its 20% jitter), so the retry pending falls due whatever the jitter drew.
    const longestWait = 6_000;
    for (let i = 0; i < 20; i++) {
      await until(`retry ${i + 1}`, () => Promise.resolve(delays().length > i));
      await clock.advance(longestWait);
    }
    assert.ok(Math.max(...delays()) <= 5_000 * 1.2, delays().join(', '));
    assert.ok(delays().filter((d) => d >= 4_000).length >= 10, delays().join(', '));
    assert.match(mirror.readiness().message, /^writes to the archive fail \(for \d+s; the checkpoint stays where it is\): postgres: connect ECONNREFUSED/);
    down = false;
    await clock.advance(longestWait);
    await until('the list is archived', async () => (await archive.getCheckpoint('s'))?.resourceVersion === '10');
    assert.equal((await archived(archive)).length, 1);
    await mirror.stop();
  });
});
