import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { ConnectionGate, resolveLimits } from './connection-limits.js';

const socket = (remoteAddress: string): Socket & EventEmitter => Object.assign(new EventEmitter(), { remoteAddress, destroyed: false }) as unknown as Socket & EventEmitter;

describe('resolveLimits', () => {
  it('defaults the per-address cap to a sixteenth of the total, never above it', () => {
    assert.equal(resolveLimits().maxConnectionsPerAddress, 256);
    assert.equal(resolveLimits({ maxConnections: 20 }).maxConnectionsPerAddress, 1);
    assert.equal(resolveLimits({ maxConnections: 20, maxConnectionsPerAddress: 50 }).maxConnectionsPerAddress, 20);
    assert.equal(resolveLimits({ maxConnections: 20, maxConnectionsPerAddress: 5 }).maxConnectionsPerAddress, 5);
  });
});

describe('ConnectionGate', () => {
  it('without authentication, caps the total and every connection of one address', () => {
    const g = new ConnectionGate({ maxConnections: 32, maxConnectionsPerAddress: 8, authenticated: false });
    const held = Array.from({ length: 8 }, () => socket('10.0.0.1'));
    assert.ok(held.every((s) => g.accept(s)));
    assert.equal(g.accept(socket('10.0.0.1')), false, 'a ninth connection from one address');
    // An admitted request proves nothing without authentication: the address stays capped.
    g.prove(held[0]!);
    assert.equal(g.accept(socket('10.0.0.1')), false);
    held[0]!.emit('close');
    assert.equal(g.accept(socket('10.0.0.1')), true, 'a slot of its address is free again');
    for (let i = 0; i < 24; i++) assert.ok(g.accept(socket(`10.1.0.${i}`)));
    assert.equal(g.accept(socket('10.2.0.1')), false, 'the total cap');
  });

  it('with authentication, caps unproven connections per client and in all, keeping headroom for clients that authenticated', () => {
    const g = new ConnectionGate({ maxConnections: 32, maxConnectionsPerAddress: 2, authenticated: true });
    assert.deepEqual([g.perAddress, g.headroom], [2, 4]);
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

  it('under TLS, proves the TCP connection it counted, so a closed one is not counted off twice', () => {
    const g = new ConnectionGate({ maxConnections: 4, maxConnectionsPerAddress: 1, authenticated: true });
    for (let round = 0; round < 3; round++) {
      const tcp = socket('10.0.0.1');
      assert.ok(g.accept(tcp), `round ${round}`);
      // The request's socket is the TLS socket over it.
      g.prove(Object.assign(socket('10.0.0.1'), { _parent: tcp }));
      tcp.emit('close');
    }
    // Had the proof gone to the TLS socket, the address would count as proven forever and the unproven below zero.
    const idle = [socket('10.0.0.1'), socket('10.0.0.1')];
    assert.equal(g.accept(idle[0]!), true);
    assert.equal(g.accept(idle[1]!), false, 'a second unproven connection from one address');
  });
});
