import { connect as netConnect } from 'node:net';
import type { Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/** RawAnswer is an HTTP/1.1 answer read off the socket as the server wrote it. */
export interface RawAnswer {
  status: number;
  /** statusLine is the first line, e.g. `HTTP/1.1 431 Request Header Fields Too Large`. */
  statusLine: string;
  headers: Record<string, string>;
  body: string;
  /** closed is true when the server closed the connection after its answer. */
  closed: boolean;
}

/** WRITE_PIECE is how much of a raw request goes out before the client looks for an answer again. */
const WRITE_PIECE = 64 * 1024;

/** RawTarget is a server reached by raw bytes: plain TCP for http URLs, TLS (with its CA) for https. */
export interface RawTarget {
  url: string;
  ca?: Buffer;
  /** localAddress is the address the client connects from (any of 127.0.0.0/8 reaches a loopback server on Linux). */
  localAddress?: string;
}

/** openSocket connects to a target's host and port, through TLS for an https URL. */
export function openSocket(target: RawTarget): Socket {
  const u = new URL(target.url);
  const port = Number(u.port);
  const from = target.localAddress !== undefined ? { localAddress: target.localAddress } : {};
  return u.protocol === 'https:'
    ? tlsConnect({ host: u.hostname, port, servername: 'localhost', ...from, ...(target.ca !== undefined ? { ca: target.ca } : {}) })
    : netConnect({ port, host: u.hostname, ...from });
}

/**
 * rawExchange writes bytes exactly as given (no client library would send an
 * oversized head) and reads one answer: until the server closes, or until a
 * Content-Length body is complete.
 */
export function rawExchange(target: RawTarget, request: Buffer | string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = openSocket(target);
    let data = Buffer.alloc(0);
    let settled = false;
    const finish = (closed: boolean): void => {
      if (settled) return;
      const answer = parseAnswer(data, closed);
      if (answer === undefined) {
        if (closed) {
          settled = true;
          reject(new Error(`the server closed without a complete answer: ${JSON.stringify(data.toString('latin1').slice(0, 200))}`));
        }
        return;
      }
      settled = true;
      socket.destroy();
      resolve(answer);
    };
    socket.on('data', (d: Buffer) => {
      data = Buffer.concat([data, d]);
      finish(false);
    });
    // A server that answers before reading all of an oversized request resets the connection; what it wrote first still counts.
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    // Written a piece at a time, and no more once the server has begun to answer (as HTTP clients do):
    // a server that answered without reading it all resets a connection that keeps sending.
    const bytes = typeof request === 'string' ? Buffer.from(request, 'latin1') : request;
    let at = 0;
    const writeMore = (): void => {
      while (at < bytes.length && data.length === 0 && !socket.destroyed) {
        const piece = bytes.subarray(at, at + WRITE_PIECE);
        at += piece.length;
        if (!socket.write(piece)) {
          socket.once('drain', writeMore);
          return;
        }
      }
    };
    writeMore();
  });
}

function parseAnswer(data: Buffer, closed: boolean): RawAnswer | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine = '', ...lines] = data.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let body = data.subarray(end + 4);
  const length = headers['content-length'];
  if (length !== undefined) {
    if (body.length < Number(length)) return undefined;
    body = body.subarray(0, Number(length));
  } else if (headers['transfer-encoding'] === 'chunked') {
    const decoded = dechunk(body);
    if (decoded === undefined) return closed ? { status: statusOf(statusLine), statusLine, headers, body: body.toString('utf8'), closed } : undefined;
    body = decoded;
  } else if (!closed) {
    return undefined;
  }
  return { status: statusOf(statusLine), statusLine, headers, body: body.toString('utf8'), closed };
}

function statusOf(line: string): number {
  return Number(/^HTTP\/1\.[01] (\d{3})/.exec(line)?.[1] ?? NaN);
}

function dechunk(body: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    if (eol < 0) return undefined;
    const size = parseInt(body.subarray(at, eol).toString('latin1'), 16);
    if (Number.isNaN(size)) return undefined;
    if (size === 0) return Buffer.concat(parts);
    if (body.length < eol + 2 + size + 2) return undefined;
    parts.push(body.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/** SlowClient is a connection sending its request one byte at a time. */
export interface SlowClient {
  /** connected resolves once the connection is open (for TLS, once the handshake is done). */
  connected: Promise<void>;
  /** ended resolves with what the server wrote once it closed the connection. */
  ended: Promise<string>;
  stop(): void;
}

/** slowClient opens a connection and sends `text` one byte every `intervalMs`, as a slowloris attack does. */
export function slowClient(target: RawTarget, text: string, intervalMs: number): SlowClient {
  const socket = openSocket(target);
  const connected = new Promise<void>((resolve) => socket.once(new URL(target.url).protocol === 'https:' ? 'secureConnect' : 'connect', () => resolve()));
  let written = 0;
  let answer = '';
  const timer = setInterval(() => {
    if (written < text.length && socket.writable) socket.write(text[written++]!);
  }, intervalMs);
  socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
  const ended = new Promise<string>((resolve) => {
    socket.on('close', () => {
      clearInterval(timer);
      resolve(answer);
    });
  });
  socket.on('error', () => undefined);
  return {
    connected,
    ended,
    stop() {
      clearInterval(timer);
      socket.destroy();
    },
  };
}
