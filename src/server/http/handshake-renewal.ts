import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';

/**
 * HandshakeRenewal ends the connections whose TLS handshake verified a client certificate against a CA that is no
 * longer the server's. A verified front-proxy certificate is worth its headers for as long as its connection
 * lives, and a rotated CA (k8s.io/apiserver's dynamic CA content) must stop trusting the old one: idle connections
 * are closed at once, busy ones when their answer is done, and the next request shakes hands with the new CA.
 */
export interface HandshakeRenewal {
  /** track notes the request in progress on its connection (one per connection: HTTP/1.1 answers in order). */
  track(req: IncomingMessage, res: ServerResponse): void;
  /** renew closes every connection open now: idle ones at once, busy ones after their answer. */
  renew(): void;
}

/** createHandshakeRenewal tracks the requests in progress on `server`'s connections. */
export function createHandshakeRenewal(server: Pick<Server | HttpsServer, 'closeIdleConnections'>): HandshakeRenewal {
  const busy = new Map<Socket, ServerResponse>();
  return {
    track(req, res) {
      const socket = req.socket;
      busy.set(socket, res);
      res.once('close', () => {
        if (busy.get(socket) === res) busy.delete(socket);
      });
    },
    renew() {
      for (const [socket, res] of busy) res.once('close', () => socket.destroy());
      busy.clear();
      server.closeIdleConnections();
    },
  };
}
