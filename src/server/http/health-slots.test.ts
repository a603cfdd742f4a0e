import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { HEALTH_SLOTS, HEALTH_SLOTS_PER_ADDRESS, HealthSlots, isHealthRequest } from './health-slots.js';

/** FakeSocket is what HealthSlots uses of a socket; like a real one, it reports 'close' after destroy, not during it. */
type FakeSocket = Socket & EventEmitter & { timeoutMs?: number };

const socket = (remoteAddress: string): FakeSocket => {
  const s = Object.assign(new EventEmitter(), {
    remoteAddress,
    destroyed: false,
    timeoutMs: undefined as number | undefined,
    destroy() {
      s.destroyed = true;
      setImmediate(() => s.emit('close'));
      return s;
    },
    setTimeout(ms: number) {
      s.timeoutMs = ms;
      return s;
    },
  });
  return s as unknown as FakeSocket;
};

describe('HealthSlots', () => {
  it('holds a few connections per address, closing the oldest of that address for a newcomer', () => {
    const h = new HealthSlots();
    const mine = Array.from({ length: HEALTH_SLOTS_PER_ADDRESS + 1 }, () => socket('10.0.0.1'));
    for (const s of mine) h.hold(s);
    assert.equal(h.size, HEALTH_SLOTS_PER_ADDRESS);
    assert.deepEqual(mine.map((s) => s.destroyed), [true, ...mine.slice(1).map(() => false)]);
    assert.deepEqual(mine.map((s) => h.holds(s)), [false, ...mine.slice(1).map(() => true)]);
    assert.ok(mine.at(-1)!.timeoutMs! > 1_000, 'a held connection has a deadline past a probe timeout');
    // Another address still finds a slot.
    const probe = socket('192.168.0.10');
    h.hold(probe);
    assert.ok(h.holds(probe) && mine.slice(1).every((s) => h.holds(s)));
  });

  it('closes the oldest held connection when every slot is taken', () => {
    const h = new HealthSlots();
    const idle = Array.from({ length: HEALTH_SLOTS }, (_, i) => socket(`10.0.${i}.1`));
    for (const s of idle) h.hold(s);
    const probe = socket('192.168.0.10');
    h.hold(probe);
    assert.equal(h.size, HEALTH_SLOTS);
    assert.ok(idle[0]!.destroyed);
    assert.ok(idle.slice(1).every((s) => !s.destroyed && h.holds(s)));
    assert.ok(h.holds(probe));
  });

  it('frees a slot when its connection closes, and knows a TLS socket by its TCP socket', async () => {
    const h = new HealthSlots();
    const tcp = socket('10.0.0.1');
    h.hold(tcp);
    assert.ok(h.holds(Object.assign(socket('10.0.0.1'), { _parent: tcp })));
    assert.equal(h.holds(socket('10.0.0.1')), false);
    tcp.destroy();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(h.size, 0);
  });
});

describe('isHealthRequest', () => {
  const cases: [string, boolean][] = [
    ['/healthz', true],
    ['/livez', true],
    ['/readyz', true],
    ['/readyz?verbose', true],
    ['/healthz/', true],
    ['/healthz/ping', false],
    ['/version', false],
    ['/api/v1/events', false],
    ['/api/v1/namespaces/default/events?x=/healthz', false],
    ['/', false],
    ['*', false],
  ];
  for (const [url, want] of cases) {
    it(`${url}: ${want}`, () => assert.equal(isHealthRequest({ url } as IncomingMessage), want));
  }
});
