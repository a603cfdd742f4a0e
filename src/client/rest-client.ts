import type { IncomingMessage } from 'node:http';
import type { Connection } from './connection.js';
import { statusErrorFromResponse } from './request-errors.js';

/** REQUEST_TIMEOUT_MS bounds one non-watch request, so a hung connection cannot stall a recorder's writer forever. */
export const REQUEST_TIMEOUT_MS = 30_000;

/** USER_AGENT names kevents to API servers (their audit logs and rate limits key on it). */
export const USER_AGENT = 'kevents-client';

/** RestRequest is one API request. */
export interface RestRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: URLSearchParams;
  body?: unknown;
  contentType?: string;
  /** accept replaces the default `application/json` Accept header (e.g. to ask for a meta.k8s.io Table). */
  accept?: string;
  signal?: AbortSignal;
  /** verb names the request in synthesized error messages (`create events`). */
  verb: string;
}

/** RestClientOptions configure a RestClient. */
export interface RestClientOptions {
  timeoutMs?: number;
  userAgent?: string;
}

/**
 * RestClient sends JSON requests with node:http(s) over a Connection and
 * turns every non-2xx answer into a StatusError. Transport failures are
 * rethrown with the request in the message and the socket error as cause.
 */
export class RestClient {
  private readonly timeoutMs: number;
  private readonly userAgent: string;

  constructor(
    private readonly connection: Connection,
    options: RestClientOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs || REQUEST_TIMEOUT_MS;
    this.userAgent = options.userAgent || USER_AGENT;
  }

  /** request sends and parses the JSON answer. */
  async request<T>(req: RestRequest): Promise<T> {
    const res = await this.open(req, this.timeoutMs);
    const text = await readBody(res);
    const code = res.statusCode ?? 0;
    if (code < 200 || code > 299) throw statusErrorFromResponse(code, text, res.headers, req.verb);
    try {
      return JSON.parse(text) as T;
    } catch (e) {
      throw new Error(`${req.method} ${req.path}: answer is not JSON`, { cause: e });
    }
  }

  /** stream sends a request and returns the open response of a 2xx answer (watch). */
  async stream(req: RestRequest): Promise<IncomingMessage> {
    const res = await this.open(req, 0);
    const code = res.statusCode ?? 0;
    if (code < 200 || code > 299) throw statusErrorFromResponse(code, await readBody(res), res.headers, req.verb);
    return res;
  }

  private async open(req: RestRequest, timeoutMs: number): Promise<IncomingMessage> {
    req.signal?.throwIfAborted();
    const { url, options, transport } = await this.connection.target(req.path, req.query);
    const payload = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body));
    const headers: Record<string, string | number | string[]> = {
      ...(options.headers as Record<string, string>),
      Accept: req.accept ?? 'application/json',
      'User-Agent': this.userAgent,
    };
    if (payload !== undefined) {
      headers['Content-Type'] = req.contentType ?? 'application/json';
      headers['Content-Length'] = payload.length;
    }
    return new Promise<IncomingMessage>((resolve, reject) => {
      const r = transport.request(url, { ...options, method: req.method, headers, signal: req.signal }, resolve);
      r.on('error', (e) => reject(new Error(`${req.method} ${url.pathname}: ${e.message}`, { cause: e })));
      if (timeoutMs > 0) r.setTimeout(timeoutMs, () => r.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      r.end(payload);
    });
  }
}

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', (e) => reject(new Error(`reading the answer: ${e.message}`, { cause: e })));
  });
}
