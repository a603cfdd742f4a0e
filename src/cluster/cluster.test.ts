import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { StatusError, failureStatus } from '../api/index.js';
import { FakeClock, flushMicrotasks } from '../internal/index.js';
import { createLeaderElector, inClusterConfig, InClusterConnection, NotInClusterError, validateLeaderElection } from './index.js';
import type { Lease, LeaseClient } from './index.js';

/** MemoryLeases is a LeaseClient over a map, with the API server's compare-and-swap on resourceVersion. */
class MemoryLeases implements LeaseClient {
  leases = new Map<string, Lease>();
  rv = 0;
  failing = false;
  writes = 0;
  get(namespace: string, name: string): Promise<Lease | undefined> {
    if (this.failing) return Promise.reject(new Error('connection refused'));
    const l = this.leases.get(`${namespace}/${name}`);
    return Promise.resolve(l === undefined ? undefined : structuredClone(l));
  }
  create(lease: Lease): Promise<Lease> {
    if (this.failing) return Promise.reject(new Error('connection refused'));
    const key = `${lease.metadata.namespace}/${lease.metadata.name}`;
    if (this.leases.has(key)) return Promise.reject(new StatusError(failureStatus(409, 'AlreadyExists', 'exists')));
    return Promise.resolve(this.put(key, lease));
  }
  update(lease: Lease): Promise<Lease> {
    if (this.failing) return Promise.reject(new Error('connection refused'));
    const key = `${lease.metadata.namespace}/${lease.metadata.name}`;
    if (this.leases.get(key)?.metadata.resourceVersion !== lease.metadata.resourceVersion) {
      return Promise.reject(new StatusError(failureStatus(409, 'Conflict', 'the object has been modified')));
    }
    return Promise.resolve(this.put(key, lease));
  }
  private put(key: string, lease: Lease): Lease {
    this.writes++;
    const stored = structuredClone({ ...lease, metadata: { ...lease.metadata, resourceVersion: String(++this.rv) } });
    this.leases.set(key, stored);
    return structuredClone(stored);
  }
}

const timing = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

function candidate(client: LeaseClient, clock: FakeClock, identity: string, log: string[]) {
  return createLeaderElector(
    { client, namespace: 'kevents', name: 'kevents-mirror', identity, ...timing, clock, random: () => 0, releaseOnCancel: true },
    {
      onStartedLeading: (leading) => {
        log.push(`${identity} started`);
        leading.addEventListener('abort', () => log.push(`${identity} leading ended`));
      },
      onStoppedLeading: () => log.push(`${identity} stopped`),
    },
  );
}

void describe('validateLeaderElection', () => {
  void it('holds client-go\'s rules', () => {
    validateLeaderElection(timing);
    assert.throws(() => validateLeaderElection({ ...timing, renewDeadlineMs: 15_000 }), /leaseDuration must be greater than renewDeadline/);
    assert.throws(() => validateLeaderElection({ ...timing, retryPeriodMs: 9_000 }), /renewDeadline must be greater than retryPeriod\*JitterFactor\(1\.2\)/);
  });
});

void describe('createLeaderElector', () => {
  void it('one of two candidates leads; the other takes over a lease duration after the last renewal it observed, with leaseTransitions counted', async () => {
    const clock = new FakeClock();
    const leases = new MemoryLeases();
    const log: string[] = [];
    const a = candidate(leases, clock, 'a', log);
    const b = candidate(leases, clock, 'b', log);
    const stopA = new AbortController();
    const stopB = new AbortController();
    const runA = a.run(stopA.signal);
    await flushMicrotasks();
    const runB = b.run(stopB.signal);
    await clock.advance(10);
    assert.deepEqual(log, ['a started']);
    assert.equal(a.isLeader(), true);
    assert.equal(b.isLeader(), false);
    assert.equal(b.leader(), 'a');
    const first = leases.leases.get('kevents/kevents-mirror')!.spec;
    assert.equal(first.holderIdentity, 'a');
    assert.equal(first.leaseDurationSeconds, 15);
    assert.equal(first.leaseTransitions, 0);
    assert.match(first.renewTime!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    // a renews every retry period; b keeps observing renewals, so it never takes over.
    await clock.advance(60_000);
    assert.equal(leases.leases.get('kevents/kevents-mirror')!.spec.holderIdentity, 'a');
    assert.ok(leases.writes >= 30, `renewed every 2 s (${leases.writes} writes)`);
    // a's API server goes away: after the renew deadline it stops leading, before b may take over.
    const renewedAt = Date.parse(leases.leases.get('kevents/kevents-mirror')!.spec.renewTime!);
    leases.failing = true;
    await clock.advance(12_500);
    assert.deepEqual(log.slice(1), ['a leading ended', 'a stopped']);
    await runA;
    leases.failing = false;
    await clock.advance(6_000);
    assert.equal(b.isLeader(), true);
    const taken = leases.leases.get('kevents/kevents-mirror')!.spec;
    assert.equal(taken.holderIdentity, 'b');
    assert.equal(taken.leaseTransitions, 1);
    assert.ok(Date.parse(taken.acquireTime!) - renewedAt >= 15_000, 'not before the lease expired');
    assert.deepEqual(log.slice(3), ['b started']);
    // Stopping the leader releases the Lease: the holder is emptied.
    stopB.abort();
    await clock.advance(10);
    await runB;
    assert.equal(leases.leases.get('kevents/kevents-mirror')!.spec.holderIdentity, '');
    assert.equal(leases.leases.get('kevents/kevents-mirror')!.spec.leaseDurationSeconds, 1);
    assert.deepEqual(log.slice(4), ['b leading ended', 'b stopped']);
  });

  void it('a candidate takes a released Lease at its next retry, without waiting out the lease duration', async () => {
    const clock = new FakeClock();
    const leases = new MemoryLeases();
    const log: string[] = [];
    const stopA = new AbortController();
    const runA = candidate(leases, clock, 'a', log).run(stopA.signal);
    await clock.advance(10);
    const b = candidate(leases, clock, 'b', log);
    const stopB = new AbortController();
    const runB = b.run(stopB.signal);
    await clock.advance(3_000);
    stopA.abort();
    await runA;
    await clock.advance(2_100);
    assert.equal(b.isLeader(), true);
    stopB.abort();
    await clock.advance(10);
    await runB;
  });
});

void describe('inClusterConfig and InClusterConnection', () => {
  const mount = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'kevents-sa-unit-'));
    writeFileSync(join(dir, 'token'), 'first-token\n');
    writeFileSync(join(dir, 'ca.crt'), '');
    writeFileSync(join(dir, 'namespace'), 'kevents');
    return dir;
  };
  void it('reads the server from the environment and the namespace from the mount; says why outside a pod', () => {
    const dir = mount();
    const c = inClusterConfig({ env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, dir });
    assert.equal(c.server.href, 'https://[fd00::1]/');
    assert.equal(c.namespace, 'kevents');
    assert.throws(() => inClusterConfig({ env: {}, dir }), (e: Error) => e instanceof NotInClusterError && /KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined/.test(e.message));
    assert.throws(() => inClusterConfig({ env: { KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '1' }, dir: join(dir, 'nope') }), /token/);
  });
  void it('sends the rotated token once the file changes (checked at most once a second)', async () => {
    const dir = mount();
    let now = 0;
    const c = new InClusterConnection(inClusterConfig({ env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: '6443' }, dir }), () => now);
    const auth = async (): Promise<unknown> => ((await c.target('/api')).options.headers as Record<string, string>).Authorization;
    assert.equal(await auth(), 'Bearer first-token');
    writeFileSync(join(dir, 'token.new'), 'second-token');
    renameSync(join(dir, 'token.new'), join(dir, 'token'));
    now = 500;
    assert.equal(await auth(), 'Bearer first-token', 'not re-checked within a second');
    now = 1_500;
    assert.equal(await auth(), 'Bearer second-token');
  });
});
