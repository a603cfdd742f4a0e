import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import type { ObjectReference } from '../src/api/index.js';
import { sinkFromKubeConfig } from '../src/client/index.js';
import { CollectingLogger, FAKE_CLOCK_START, FakeClock } from '../src/internal/index.js';
import { createEventBroadcaster, createLegacyEventBroadcaster } from '../src/recorder/index.js';
import type { EventRecorder, LegacyEventRecorder } from '../src/recorder/index.js';
import type { Timeline, TimelineRow } from '../src/timeline/index.js';
import { request } from './support/http.js';
import { startServer } from './support/server-process.js';
import type { ServerProcess } from './support/server-process.js';
import { runBuiltCli as cli } from './support/cli-process.js';

/**
 * Incidents recorded through the kevents recorder (on a fake clock, so event
 * times are exact and nothing sleeps through them) into a `kevents serve`
 * standing in for the cluster, archived by a `kevents serve --mirror` whose
 * archive starts late: after the incident began, while a series folds 30
 * minutes of repeats into each write, and across a forced 410. Each timeline
 * must name the true start of the incident in its summary.
 */

const at = (seconds: number): string => new Date(FAKE_CLOCK_START + seconds * 1000).toISOString().replace('.000Z', 'Z');

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(what: string, fn: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(150);
  }
}

function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'cluster', server }],
    users: [{ name: 'user' }],
    contexts: [{ name: 'cluster', cluster: 'cluster', user: 'user' }],
    currentContext: 'cluster',
  });
  return kc;
}

/** Recording is one recorder session into a server, on a fake clock from FAKE_CLOCK_START. */
class Recording {
  readonly clock = new FakeClock(FAKE_CLOCK_START);
  private readonly logger = new CollectingLogger();
  private readonly legacy;
  private readonly modern;
  private elapsed = 0;
  readonly kubelet: LegacyEventRecorder;
  readonly scheduler: EventRecorder;

  constructor(url: string) {
    const sink = sinkFromKubeConfig(kubeConfigFor(url));
    this.legacy = createLegacyEventBroadcaster({ sink, clock: this.clock, logger: this.logger });
    this.modern = createEventBroadcaster({ sink, clock: this.clock, logger: this.logger, hostname: 'cp-1' });
    this.kubelet = this.legacy.newRecorder({ source: { component: 'kubelet', host: 'node-1' } });
    this.scheduler = this.modern.newRecorder({ reportingController: 'default-scheduler' });
  }

  /** at waits for every write so far to land, then moves the clock to `seconds` after the start. */
  async at(seconds: number): Promise<void> {
    await this.idle();
    const target = seconds * 1000;
    if (target > this.elapsed) {
      await this.clock.advance(target - this.elapsed);
      this.elapsed = target;
    }
    await this.idle();
  }

  async idle(): Promise<void> {
    await this.legacy.idle();
    await this.modern.idle();
  }

  /** close writes the final series counts and checks that no write failed. */
  async close(): Promise<void> {
    await this.idle();
    const done = Promise.all([this.legacy.shutdown({ timeoutMs: 5000 }), this.modern.shutdown({ timeoutMs: 5000 })]);
    await this.clock.advance(0);
    await done;
    const failed = this.legacy.counters.failed + this.modern.counters.failed + this.legacy.counters.dropped + this.modern.counters.dropped;
    assert.equal(failed, 0, `writes failed or were dropped: ${JSON.stringify(this.logger.entries)}`);
  }
}

function pod(namespace: string, name: string): ObjectReference {
  return { kind: 'Pod', namespace, name, uid: `uid-${name}`, apiVersion: 'v1' };
}

async function eventCount(server: string, namespace: string, reason: string): Promise<number> {
  const r = await request(server, 'GET', `/api/v1/namespaces/${namespace}/events?fieldSelector=reason%3D${reason}`);
  if (r.status !== 200) return -1;
  const items = r.json.items as { count?: number; series?: { count: number } | null }[];
  return items.reduce((n, e) => n + (e.series?.count ?? e.count ?? 1), 0);
}

async function timeline(server: string, namespace: string, forArg: string): Promise<{ json: Timeline; table: string }> {
  const json = await cli(['timeline', '--for', forArg, '-n', namespace, '-o', 'json', '--server', server]);
  assert.equal(json.code, 0, json.stderr);
  const table = await cli(['timeline', '--for', forArg, '-n', namespace, '--expand', '--server', server]);
  assert.equal(table.code, 0, table.stderr);
  return { json: JSON.parse(json.stdout) as Timeline, table: table.stdout };
}

/** rowsOf are the rows of one reason. */
function rowsOf(t: Timeline, reason: string): TimelineRow[] {
  return t.rows.filter((r) => r.reason === reason);
}

describe('timelines of incidents whose archive starts late', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-late-'));
  const servers: ServerProcess[] = [];
  after(async () => {
    for (const s of servers) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const serve = async (args: string[]): Promise<ServerProcess> => {
    const s = await startServer(['--event-ttl', '0', '--log-level', 'info', ...args]);
    servers.push(s);
    return s;
  };

  it('a mirror started 15 minutes into a crash loop: the timeline starts at the first BackOff', async () => {
    const cluster = await serve(['--storage', 'memory:']);
    const rec = new Recording(cluster.url);
    const ref = pod('shop', 'web-0');
    await rec.at(0);
    rec.kubelet.event({ involvedObject: ref, type: 'Normal', reason: 'Started', message: 'Started container web' });
    // A BackOff a minute from minute 1: the correlator folds the repeats into one event's count.
    for (let minute = 1; minute <= 15; minute++) {
      await rec.at(minute * 60);
      rec.kubelet.event({ involvedObject: ref, type: 'Warning', reason: 'BackOff', message: 'Back-off restarting failed container web in pod web-0_shop(uid-web-0)' });
    }
    await rec.idle();
    const archive = await serve(['--storage', `sqlite:${join(dir, 'late.db')}`, '--mirror', cluster.url]);
    await until('the archive holds the 15 BackOffs', async () => (await eventCount(archive.url, 'shop', 'BackOff')) === 15);
    for (let minute = 16; minute <= 20; minute++) {
      await rec.at(minute * 60);
      rec.kubelet.event({ involvedObject: ref, type: 'Warning', reason: 'BackOff', message: 'Back-off restarting failed container web in pod web-0_shop(uid-web-0)' });
    }
    await rec.close();
    await until('the archive holds the 20 BackOffs', async () => (await eventCount(archive.url, 'shop', 'BackOff')) === 20);

    const { json: t, table } = await timeline(archive.url, 'shop', 'pod/web-0');
    assert.equal(t.summary.history, 'occurrences');
    assert.equal(t.summary.firstWarning?.time, at(60));
    assert.equal(t.summary.firstWarning?.estimated, false);
    assert.match(table, new RegExp(`^First Warning: ${at(60)} Pod/web-0 BackOff`, 'm'));
    const backoffs = rowsOf(t, 'BackOff');
    assert.equal(backoffs.reduce((n, r) => n + r.count, 0), 20);
    // Known: the first BackOff, the state the mirror first listed (minute 15), and each change it watched.
    assert.deepEqual(backoffs.filter((r) => !r.estimated).map((r) => r.time), [1, 15, 16, 17, 18, 19, 20].map((m) => at(m * 60)));
    // The 13 repeats before the mirror started are estimated, between the first BackOff and minute 15.
    const before = backoffs.filter((r) => r.estimated);
    assert.equal(before.reduce((n, r) => n + r.count, 0), 13);
    assert.ok(before.every((r) => r.earliest === at(60) && r.latest === at(15 * 60) && r.time > at(60) && r.time < at(15 * 60)));
  });

  it('a series refreshed every 30 minutes, archived from minute 45: the timeline starts at its eventTime', async () => {
    const cluster = await serve(['--storage', 'memory:']);
    const rec = new Recording(cluster.url);
    const note = '0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.';
    const emit = (): void => rec.scheduler.event({ regarding: pod('batch', 'trainer-0'), type: 'Warning', reason: 'FailedScheduling', action: 'Scheduling', note });
    await rec.at(0);
    emit();
    for (let minute = 1; minute <= 45; minute++) {
      await rec.at(minute * 60);
      emit();
    }
    await rec.idle();
    // The series as written so far: the second occurrence, then the 30-minute refresh.
    const written = await eventCount(cluster.url, 'batch', 'FailedScheduling');
    assert.ok(written >= 30 && written < 46, `the cluster holds a series count of ${written}`);
    const archive = await serve(['--storage', `sqlite:${join(dir, 'series.db')}`, '--mirror', cluster.url]);
    await until('the archive holds the series', async () => (await eventCount(archive.url, 'batch', 'FailedScheduling')) === written);
    for (let minute = 46; minute <= 120; minute++) {
      await rec.at(minute * 60);
      emit();
    }
    // Silence: the series finishes with a final write of its count.
    await rec.at(130 * 60);
    await rec.close();
    await until('the archive holds the whole series', async () => (await eventCount(archive.url, 'batch', 'FailedScheduling')) === 121);

    const { json: t, table } = await timeline(archive.url, 'batch', 'pod/trainer-0');
    assert.equal(t.summary.firstWarning?.time, at(0));
    assert.equal(t.summary.firstWarning?.estimated, false);
    assert.match(table, new RegExp(`^First Warning: ${at(0)} Pod/trainer-0 FailedScheduling`, 'm'));
    assert.equal(t.summary.window.since, at(0));
    assert.equal(t.summary.window.until, at(120 * 60));
    const rows = rowsOf(t, 'FailedScheduling');
    assert.equal(rows.reduce((n, r) => n + r.count, 0), 121);
    assert.ok(rows.every((r) => r.time >= at(0) && r.time <= at(120 * 60)));
    // Every write after the archive started is a known row at its series.lastObservedTime, on a whole minute.
    const known = rows.filter((r) => !r.estimated).map((r) => r.time);
    assert.equal(known[0], at(0));
    assert.ok(known.includes(at(120 * 60)), `known rows ${known.join(', ')}`);
    assert.ok(known.every((time) => time.endsWith(':00Z')), `known rows ${known.join(', ')}`);
    // What each write folded is estimated within the 30 minutes before it, never outside.
    for (const r of rows.filter((x) => x.estimated)) assert.ok(r.earliest !== null && r.latest !== null && r.earliest! <= r.time && r.time <= r.latest!);
    assert.match(table, /^~\S+ +Warning +FailedScheduling /m);
  });

  it('a crash that began while the mirror was down and the cluster forgot its watch history (410): the timeline starts at its first Unhealthy', async () => {
    const cluster = await serve(['--storage', 'memory:', '--history-window', '1s']);
    const db = join(dir, 'gap.db');
    const rec = new Recording(cluster.url);
    const ref = pod('pay', 'db-0');
    await rec.at(0);
    rec.kubelet.event({ involvedObject: ref, type: 'Normal', reason: 'Started', message: 'Started container db' });
    await rec.idle();
    let archive = await serve(['--storage', `sqlite:${db}`, '--mirror', cluster.url]);
    await until('the archive holds the Started event', async () => (await eventCount(archive.url, 'pay', 'Started')) === 1);
    await archive.stop();
    // While the archive is down: a probe failing every 30 seconds from minute 2, folded into one event.
    for (let i = 0; i < 8; i++) {
      await rec.at(120 + i * 30);
      rec.kubelet.event({ involvedObject: ref, type: 'Warning', reason: 'Unhealthy', message: 'Readiness probe failed: Get "http://10.0.0.7:5432/": connection refused' });
    }
    await rec.close();
    // Let the cluster's watch history pass the archive's checkpoint, so that resuming is a 410.
    await sleep(2500);
    archive = await serve(['--storage', `sqlite:${db}`, '--mirror', cluster.url]);
    const a = archive;
    await until('the archive relisted and holds the 8 Unhealthy', async () => (await eventCount(a.url, 'pay', 'Unhealthy')) === 8);
    assert.match(archive.stderr(), /relisting/);

    const { json: t, table } = await timeline(archive.url, 'pay', 'pod/db-0');
    assert.equal(t.summary.firstWarning?.time, at(120));
    assert.equal(t.summary.firstWarning?.estimated, false);
    assert.match(table, new RegExp(`^First Warning: ${at(120)} Pod/db-0 Unhealthy`, 'm'));
    const rows = rowsOf(t, 'Unhealthy');
    assert.equal(rows.reduce((n, r) => n + r.count, 0), 8);
    assert.deepEqual(rows.filter((r) => !r.estimated).map((r) => r.time), [at(120), at(330)]);
    assert.ok(rows.filter((r) => r.estimated).every((r) => r.earliest === at(120) && r.latest === at(330)));
  });
});
