import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** HEALTH_SLOTS are the connections kept beyond every cap for health probes: a kubelet probes each container at most three ways (startup, liveness, readiness), each on a connection of its own. */
export const HEALTH_SLOTS = 8;
/** HEALTH_SLOTS_PER_ADDRESS keeps one address from taking every health slot while the kubelet's three probes, all from the node's address, may coincide. */
export const HEALTH_SLOTS_PER_ADDRESS = 3;
/** HEALTH_HEAD_TIMEOUT_MS is how long a connection in a health slot may take to be answered: past the kubelet's default probe timeout of 1 s, with room for a TLS handshake. */
export const HEALTH_HEAD_TIMEOUT_MS = 5_000;
/** HEALTH_PATHS are the requests a connection in a health slot may make. */
export const HEALTH_PATHS: ReadonlySet<string> = new Set(['/healthz', '/livez', '/readyz']);

/**
 * HealthSlots hold, for a few seconds each, connections the connection caps
 * would close, so that a health probe is answered while idle clients fill every
 * other slot; a request on such a connection other than a health check is
 * refused. When every slot is taken the oldest connection in one is closed (of
 * the newcomer's address, if that address has its share): a probe asks as soon
 * as it connects, so the oldest is one that holds a slot without asking.
 */
export class HealthSlots {
  /** held maps each held connection to its address, in arrival order: its first entry is the oldest. */
  private readonly held = new Map<Socket, string>();

  /** hold takes a connection the caps refused into a health slot, closing another if every slot is taken. */
  hold(socket: Socket): void {
    const address = socket.remoteAddress ?? '';
    const evicted = this.countOf(address) >= HEALTH_SLOTS_PER_ADDRESS ? this.oldest(address) : this.held.size >= HEALTH_SLOTS ? this.oldest() : undefined;
    if (evicted !== undefined) {
      evicted.destroy();
      // Its 'close' comes later: the slot is free now.
      this.held.delete(evicted);
    }
    this.held.set(socket, address);
    socket.setTimeout(HEALTH_HEAD_TIMEOUT_MS, () => socket.destroy());
    socket.once('close', () => this.held.delete(socket));
  }

  /** size is the number of connections held. */
  get size(): number {
    return this.held.size;
  }

  /** holds says whether a request's connection is in a health slot (its TCP socket, under TLS). */
  holds(socket: Socket): boolean {
    return this.held.size > 0 && this.held.has(tcpSocketOf(socket));
  }

  private countOf(address: string): number {
    let n = 0;
    for (const a of this.held.values()) if (a === address) n++;
    return n;
  }

  private oldest(address?: string): Socket | undefined {
    for (const [s, a] of this.held) if (address === undefined || a === address) return s;
    return undefined;
  }
}

/** isHealthRequest says whether a request asks for a health check (with any query: `/readyz?verbose`). */
export function isHealthRequest(req: IncomingMessage): boolean {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  return HEALTH_PATHS.has(path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);
}

/**
 * tcpSocketOf is the TCP socket a request's socket runs over: the socket itself
 * over plain HTTP; over HTTPS, the TLS socket's parent, which is the one the
 * server's 'connection' event counted (Node keeps it in `_parent`).
 */
export function tcpSocketOf(socket: Socket): Socket {
  return (socket as Socket & { _parent?: Socket | null })._parent ?? socket;
}
