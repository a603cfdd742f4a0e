import assert from 'node:assert/strict';
import { Agent, createServer, request } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { createHandshakeRenewal } from './handshake-renewal.js';

/** get sends GET `path` on `agent` and resolves with the answer's text and the client's end of its connection. */
function get(port: number, path: string, agent: Agent): Promise<{ text: string; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ text, socket: req.socket! }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('createHandshakeRenewal', () => {
  it('closes an idle connection at once and a busy one only after its answer', async () => {
    let release: () => void = () => {};
    const entered: (() => void)[] = [];
    const server = createServer({ keepAliveTimeout: 60_000 }, (req: IncomingMessage, res: ServerResponse) => {
      renewal.track(req, res);
      if (req.url === '/slow') {
        entered.shift()?.();
        release = () => res.end('slow');
      } else res.end('fast');
    });
    const renewal = createHandshakeRenewal(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const idle = new Agent({ keepAlive: true, maxSockets: 1 });
    const busy = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await get(port, '/fast', idle);
      const slowEntered = new Promise<void>((r) => entered.push(r));
      const slow = get(port, '/slow', busy);
      await slowEntered;
      renewal.renew();
      // The idle connection is closed by the server while the busy one stays open.
      await once(first.socket, 'close');
      const second = await get(port, '/fast', idle);
      assert.notEqual(second.socket, first.socket);
      // The busy one answers in full, then is closed.
      release();
      const answer = await slow;
      assert.equal(answer.text, 'slow');
      await once(answer.socket, 'close');
    } finally {
      idle.destroy();
      busy.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('leaves connections alone until renew is called', async () => {
    const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
      renewal.track(req, res);
      res.end('ok');
    });
    const renewal = createHandshakeRenewal(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const a = await get(port, '/', agent);
      const b = await get(port, '/', agent);
      assert.equal(b.socket, a.socket);
      assert.equal(a.socket.destroyed, false);
    } finally {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
