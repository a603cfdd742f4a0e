import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { HealthSlots, tcpSocketOf } from './health-slots.js';

/**
 * ConnectionLimits bound what one client can hold of `kevents serve`: the
 * bytes of a request's head, the time to send it, the time to send a whole
 * request, and the connections open at once. Zero values mean the defaults.
 */
export interface ConnectionLimits {
  /** maxHeaderBytes caps the request line and headers (default: kube-apiserver's, Go's 1 MiB plus its 4 KiB read slack). */
  maxHeaderBytes?: number;
  /** readHeaderTimeoutMs is how long a client may take to send the request line and headers (default 32 s, kube-apiserver's ReadHeaderTimeout). */
  readHeaderTimeoutMs?: number;
  /** readTimeoutMs is how long a client may take to send a whole request, body included (default 60 s, kube-apiserver's --request-timeout); a watch, once asked for, is not cut by it. */
  readTimeoutMs?: number;
  /** maxConnections caps the connections open at once; one more may only ask for a health check (see `HealthSlots`) (default 4096). */
  maxConnections?: number;
  /**
   * maxConnectionsPerAddress caps the connections open at once from one remote address; with authentication,
   * only those no authenticated request has proved count (default: a sixteenth of maxConnections).
   */
  maxConnectionsPerAddress?: number;
}

/** DEFAULT_MAX_HEADER_BYTES is Go's http.DefaultMaxHeaderBytes (1 MiB) plus the 4096 bytes its server reads beyond it. */
export const DEFAULT_MAX_HEADER_BYTES = (1 << 20) + 4096;
/** DEFAULT_READ_HEADER_TIMEOUT_MS is kube-apiserver's ReadHeaderTimeout: a client that has not sent its headers by then is cut off. */
export const DEFAULT_READ_HEADER_TIMEOUT_MS = 32_000;
/** DEFAULT_READ_TIMEOUT_MS is kube-apiserver's default --request-timeout of one minute, applied here to receiving the request. */
export const DEFAULT_READ_TIMEOUT_MS = 60_000;
/** DEFAULT_MAX_CONNECTIONS leaves room for a thousand stalled clients and thousands of watches within a 20,000-descriptor limit. */
export const DEFAULT_MAX_CONNECTIONS = 4096;
/** PER_ADDRESS_SHARE is the default share of maxConnections one address may hold: sixteen addresses, not one, to fill the server. */
const PER_ADDRESS_SHARE = 16;
/** MAX_CHECK_INTERVAL_MS bounds how late past its timeout Node notices a stalled request (it checks on an interval, 30 s by default). */
const MAX_CHECK_INTERVAL_MS = 5_000;

/** ResolvedLimits are ConnectionLimits with every default filled in. */
export type ResolvedLimits = Required<ConnectionLimits>;

/** resolveLimits fills in the defaults of unset (or zero) limits. */
export function resolveLimits(l: ConnectionLimits = {}): ResolvedLimits {
  const pick = (v: number | undefined, d: number): number => (v !== undefined && v > 0 ? v : d);
  const readHeaderTimeoutMs = pick(l.readHeaderTimeoutMs, DEFAULT_READ_HEADER_TIMEOUT_MS);
  const maxConnections = pick(l.maxConnections, DEFAULT_MAX_CONNECTIONS);
  return {
    maxHeaderBytes: pick(l.maxHeaderBytes, DEFAULT_MAX_HEADER_BYTES),
    readHeaderTimeoutMs,
    // Node refuses a request timeout shorter than the headers timeout.
    readTimeoutMs: Math.max(pick(l.readTimeoutMs, DEFAULT_READ_TIMEOUT_MS), readHeaderTimeoutMs),
    maxConnections,
    maxConnectionsPerAddress: Math.min(maxConnections, pick(l.maxConnectionsPerAddress, Math.max(1, Math.floor(maxConnections / PER_ADDRESS_SHARE)))),
  };
}

/** serverOptionsOf are the node:http server options that carry the limits. */
export function serverOptionsOf(l: ResolvedLimits): {
  maxHeaderSize: number;
  headersTimeout: number;
  requestTimeout: number;
  connectionsCheckingInterval: number;
} {
  return {
    maxHeaderSize: l.maxHeaderBytes,
    headersTimeout: l.readHeaderTimeoutMs,
    requestTimeout: l.readTimeoutMs,
    connectionsCheckingInterval: Math.min(MAX_CHECK_INTERVAL_MS, Math.max(100, Math.floor(l.readHeaderTimeoutMs / 4))),
  };
}

/**
 * GO_ANSWERS are what Go's net/http server (so kube-apiserver) writes before
 * closing a connection whose request it could not parse: Node's own answers
 * carry no body and no Content-Type.
 */
const GO_ANSWERS = {
  tooLarge: goAnswer('431 Request Header Fields Too Large'),
  badRequest: goAnswer('400 Bad Request'),
};

function goAnswer(status: string): string {
  return `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n${status}`;
}

/**
 * ConnectionGate counts open connections and says which to accept. Every
 * connection counts against `maxConnections`, and against `perAddress` from its
 * remote address. With authentication, a connection is unproven until a request
 * on it is admitted, and only unproven ones count per address; unproven ones
 * may hold at most `maxConnections - headroom` in all, so clients that never
 * authenticate (idle keep-alives, say) cannot take every slot: an address with
 * an admitted connection open may still use the headroom. Without
 * authentication nothing proves a client, so every connection stays unproven.
 * A connection refused goes to the health slots (`health`).
 */
export class ConnectionGate {
  private open = 0;
  private unproven = 0;
  private readonly unprovenBy = new Map<string, number>();
  private readonly provenBy = new Map<string, number>();
  private readonly proven = new WeakSet<Socket>();
  readonly headroom: number;
  readonly perAddress: number;
  readonly health = new HealthSlots();
  private readonly maxConnections: number;
  private readonly authenticated: boolean;

  constructor(options: { maxConnections: number; maxConnectionsPerAddress: number; authenticated: boolean }) {
    this.maxConnections = options.maxConnections;
    this.authenticated = options.authenticated;
    this.headroom = options.authenticated ? Math.max(1, Math.floor(options.maxConnections / 8)) : 0;
    this.perAddress = options.maxConnectionsPerAddress;
  }

  /** accept counts a new connection, or answers false when it is over a cap. */
  accept(socket: Socket): boolean {
    if (this.open >= this.maxConnections) return false;
    const client = socket.remoteAddress ?? '';
    if (!this.provenBy.has(client)) {
      if (this.unproven >= this.maxConnections - this.headroom) return false;
      if ((this.unprovenBy.get(client) ?? 0) >= this.perAddress) return false;
    }
    this.open++;
    this.unproven++;
    add(this.unprovenBy, client, 1);
    socket.once('close', () => {
      this.open--;
      if (this.proven.has(socket)) add(this.provenBy, client, -1);
      else {
        this.unproven--;
        add(this.unprovenBy, client, -1);
      }
    });
    return true;
  }

  /** prove marks a connection whose request was admitted: it no longer counts as unproven (with authentication; without, nothing proves a client). */
  prove(socket: Socket): void {
    if (!this.authenticated) return;
    // Counted by its TCP socket, the one 'connection' gave to accept.
    const tcp = tcpSocketOf(socket);
    if (this.proven.has(tcp) || tcp.destroyed || this.health.holds(tcp)) return;
    this.proven.add(tcp);
    const client = tcp.remoteAddress ?? '';
    this.unproven--;
    add(this.unprovenBy, client, -1);
    add(this.provenBy, client, 1);
  }
}

function add(counts: Map<string, number>, key: string, n: number): void {
  const v = (counts.get(key) ?? 0) + n;
  if (v <= 0) counts.delete(key);
  else counts.set(key, v);
}

/**
 * applyLimits sets the connection caps, holds a connection over them in a
 * health slot, and answers requests that cannot be parsed as kube-apiserver does. A request that ran out of time gets Node's 408
 * (kube-apiserver closes such a connection without an answer).
 */
export function applyLimits(server: Server, l: ResolvedLimits, options: { authenticated: boolean }): ConnectionGate {
  // Counted here rather than with net.Server's maxConnections: in a worker of `serve --workers`,
  // node:cluster hands a connection that maxConnections refuses to another worker, and one over
  // every worker's cap would wait unanswered instead of being closed.
  const gate = new ConnectionGate({ ...l, authenticated: options.authenticated });
  server.on('connection', (socket: Socket) => {
    if (!gate.accept(socket)) gate.health.hold(socket);
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || socket.bytesWritten > 0) {
      socket.destroy();
      return;
    }
    const answer =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n'
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? GO_ANSWERS.tooLarge
          : GO_ANSWERS.badRequest;
    socket.end(answer);
  });
  return gate;
}
