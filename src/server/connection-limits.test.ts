import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { ConnectionGate } from './connection-limits.js';

const socket = (remoteAddress: string): Socket & EventEmitter => Object.assign(new EventEmitter(), { remoteAddress, destroyed: false }) as unknown as Socket & EventEmitter;

describe('ConnectionGate', () => {
  it('without authentication, caps only the total', () => {
    const g = new ConnectionGate(32, false);
    const held = Array.from({ length: 32 }, () => socket('10.0.0.1'));
    assert.ok(held.every((s) => g.accept(s)));
    assert.equal(g.accept(socket('10.0.0.2')), false);
    held[0]!.emit('close');
    assert.equal(g.accept(socket('10.0.0.2')), true);
  });

  it('with authentication, caps unproven connections per client and in all, keeping headroom for clients that authenticated', () => {
    const g = new ConnectionGate(32, true);
    assert.deepEqual([g.perClient, g.headroom], [2, 4]);
    const a = [socket('10.0.0.1'), socket('10.0.0.1')];
    assert.ok(a.every((s) => g.accept(s)));
    assert.equal(g.accept(socket('10.0.0.1')), false, 'a third idle connection from one client');
    // 26 more idle clients: 28 unproven, the cap less the headroom.
    for (let i = 0; i < 26; i++) assert.ok(g.accept(socket(`10.1.0.${i}`)));
    assert.equal(g.accept(socket('10.2.0.1')), false, 'a new client once the unproven fill all but the headroom');
    // A client whose request was admitted uses the headroom.
    const kubectl = socket('10.3.0.1');
    assert.equal(g.accept(kubectl), false);
    a[0]!.emit('close');
    assert.ok(g.accept(kubectl));
    g.prove(kubectl);
    for (let i = 0; i < 4; i++) assert.ok(g.accept(socket('10.3.0.1')), `headroom ${i}`);
    assert.equal(g.accept(socket('10.3.0.1')), false, 'the total cap holds for everyone');
  });
});
