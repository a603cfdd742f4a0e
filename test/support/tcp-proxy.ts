import { connect, createServer } from 'node:net';
import type { Socket } from 'node:net';

/** TcpProxy forwards loopback TCP connections to a target and can fail them the ways a network does. */
export interface TcpProxy {
  /** port is where the proxy listens on 127.0.0.1. */
  port: number;
  /** silence stops forwarding in both directions without closing anything (a black hole: new connections are accepted and go nowhere). */
  silence(): void;
  /** resume forwards again: what was held back on open connections is dropped, as a network that lost it. */
  resume(): void;
  /** cutAll destroys every open connection (both sides see a reset). */
  cutAll(): number;
  /** connections counts the connections accepted so far. */
  readonly connections: number;
  close(): Promise<void>;
}

/** startTcpProxy listens on a free loopback port and forwards each connection to 127.0.0.1:targetPort. */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let silent = false;
  let accepted = 0;
  const open = new Set<{ client: Socket; upstream: Socket }>();
  const server = createServer((client) => {
    accepted++;
    const upstream = connect(targetPort, '127.0.0.1');
    const pair = { client, upstream };
    open.add(pair);
    const forward = (from: Socket, to: Socket): void => {
      from.on('data', (d: Buffer) => {
        if (!silent) to.write(d);
      });
    };
    forward(client, upstream);
    forward(upstream, client);
    const end = (): void => {
      open.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
  return {
    port: address.port,
    get connections() {
      return accepted;
    },
    silence() {
      silent = true;
    },
    resume() {
      silent = false;
    },
    cutAll() {
      const n = open.size;
      for (const p of [...open]) {
        p.client.resetAndDestroy();
        p.upstream.resetAndDestroy();
      }
      return n;
    },
    async close() {
      for (const p of [...open]) {
        p.client.destroy();
        p.upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
