import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LeaseManager } from './lease-manager.js';

function manager(options: { maxObjectCount?: number } = {}) {
  let now = 1_000_000;
  const grants: number[] = [];
  const m = new LeaseManager({
    grant: (ttl) => {
      grants.push(ttl);
      return Promise.resolve(`lease-${grants.length}`);
    },
    reuseDurationSeconds: 60,
    reuseDurationPercent: 0.05,
    maxObjectCount: options.maxObjectCount ?? 1000,
    now: () => now,
  });
  return {
    m,
    grants,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

void describe('LeaseManager', () => {
  const cases: { name: string; ttl: number; after: number; reused: boolean; grantedTtl: number }[] = [
    { name: 'an hour TTL shares a lease for up to 60 s (5% would be 180 s)', ttl: 3600, after: 59_000, reused: true, grantedTtl: 3660 },
    { name: 'an hour TTL takes a new lease after 60 s', ttl: 3600, after: 60_000, reused: false, grantedTtl: 3660 },
    { name: 'a 100 s TTL shares for 5 s', ttl: 100, after: 4_900, reused: true, grantedTtl: 105 },
    { name: 'a 100 s TTL takes a new lease after 5 s', ttl: 100, after: 5_100, reused: false, grantedTtl: 105 },
    { name: 'a TTL under 20 s has no reuse window (5% rounds down to 0 s)', ttl: 10, after: 1, reused: false, grantedTtl: 10 },
  ];
  for (const c of cases) {
    void it(c.name, async () => {
      const { m, grants, advance } = manager();
      const first = await m.getLease(c.ttl);
      advance(c.after);
      const second = await m.getLease(c.ttl);
      assert.equal(second === first, c.reused);
      assert.deepEqual(grants, c.reused ? [c.grantedTtl] : [c.grantedTtl, c.grantedTtl]);
    });
  }

  void it('does not reuse a lease granted for a longer TTL than fits', async () => {
    const { m, grants } = manager();
    const long = await m.getLease(3600);
    assert.notEqual(await m.getLease(600), long, 'a lease expiring in 3660 s would keep a 600 s object far too long');
    assert.deepEqual(grants, [3660, 630]);
  });

  void it('attaches at most maxObjectCount objects to one lease', async () => {
    const { m, grants } = manager({ maxObjectCount: 3 });
    const ids = [];
    for (let i = 0; i < 7; i++) ids.push(await m.getLease(3600));
    assert.deepEqual(ids, ['lease-1', 'lease-1', 'lease-1', 'lease-2', 'lease-2', 'lease-2', 'lease-3']);
    assert.equal(grants.length, 3);
  });

  void it('makes concurrent callers wait for one grant instead of each asking', async () => {
    const { m, grants } = manager();
    const ids = await Promise.all(Array.from({ length: 50 }, () => m.getLease(3600)));
    assert.deepEqual(new Set(ids), new Set(['lease-1']));
    assert.equal(grants.length, 1);
    assert.equal(m.granted, 1);
  });

  void it('asks again after a lease is forgotten, and after a failed grant', async () => {
    let fail = true;
    let n = 0;
    const m = new LeaseManager({
      grant: () => (fail ? Promise.reject(new Error('etcd down')) : Promise.resolve(`l${++n}`)),
      reuseDurationSeconds: 60,
      reuseDurationPercent: 0.05,
      maxObjectCount: 1000,
      now: () => 0,
    });
    await assert.rejects(m.getLease(3600), /etcd down/);
    fail = false;
    assert.equal(await m.getLease(3600), 'l1');
    m.forget('other');
    assert.equal(await m.getLease(3600), 'l1');
    m.forget('l1');
    assert.equal(await m.getLease(3600), 'l2');
  });
});
