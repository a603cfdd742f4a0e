import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  MAX_REQUEST_BODY_BYTES,
  isStatusError,
  newInternalError,
  newNotAcceptable,
  newRouteNotAcceptable,
  newRequestEntityTooLarge,
  newBadRequest,
} from '../../api/index.js';
import type { Status } from '../../api/index.js';
import type * as Yaml from 'yaml';
import { requireCjs } from '../../internal/index.js';
import type { Logger } from '../../internal/index.js';

// YAML is rare on the wire (kubectl sends JSON), so its parser loads on first use
// rather than slowing every start.
let yamlModule: typeof Yaml | undefined;
function yaml(): typeof Yaml {
  yamlModule ??= requireCjs('yaml') as typeof Yaml;
  return yamlModule;
}

/**
 * YAML_OUT writes YAML as kube-apiserver's Go encoder does where it matters to a
 * reader: YAML 1.1, which Go's YAML readers speak, so a string such as `yes`, `on`,
 * `n` or a time is quoted and read back as a string, not a boolean or a timestamp;
 * keys sorted, sequences under their key, text of several lines as a literal block.
 */
const YAML_OUT = { version: '1.1', sortMapEntries: true, indentSeq: false, blockQuote: 'literal', customTags: goYamlTags } as const;

/**
 * goYamlTags reads numbers in exponent form as Go's YAML 1.1 does: a digit comes
 * before the exponent, so `e1` (a name, say) is a string, not a float.
 */
export function goYamlTags(tags: Yaml.Tags): Yaml.Tags {
  return tags.map((t) =>
    typeof t === 'object' && t.collection === undefined && t.tag === 'tag:yaml.org,2002:float' && t.format === 'EXP'
      ? { ...t, test: /^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$/ }
      : t,
  );
}

/**
 * goYamlBodyTags are goYamlTags without timestamps and base-60 numbers: Go's YAML
 * reader leaves an unquoted time, and `1:20`, as text.
 */
function goYamlBodyTags(tags: Yaml.Tags): Yaml.Tags {
  return goYamlTags(tags).filter((t) => typeof t !== 'object' || (t.tag !== 'tag:yaml.org,2002:timestamp' && t.format !== 'TIME'));
}

/** sortedKeys is a JSON.stringify replacer that writes each object's keys in sorted order. */
function sortedKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value).sort()) out[k] = (value as Record<string, unknown>)[k];
  return out;
}

/** MediaRange is one entry of an Accept header. */
export interface MediaRange {
  type: string;
  subtype: string;
  params: Record<string, string>;
  q: number;
}

/** parseAccept splits an Accept header into media ranges, best first (stable for ties). */
export function parseAccept(header: string | undefined): MediaRange[] {
  if (header === undefined || header.trim() === '') return [{ type: '*', subtype: '*', params: {}, q: 1 }];
  const out: (MediaRange & { i: number })[] = [];
  header.split(',').forEach((part, i) => {
    const [mime = '', ...rest] = part.split(';').map((s) => s.trim());
    const [type = '', subtype = ''] = mime.toLowerCase().split('/');
    if (type === '') return;
    const params: Record<string, string> = {};
    let q = 1;
    for (const p of rest) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const k = p.slice(0, eq).trim();
      const v = p.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
      if (k === 'q') q = Number(v);
      else params[k] = v;
    }
    out.push({ type, subtype: subtype || '*', params, q: Number.isFinite(q) ? q : 0, i });
  });
  return out.filter((m) => m.q > 0).sort((a, b) => b.q - a.q || a.i - b.i);
}

/** OutputFormat is what a response body is rendered as. */
export type OutputFormat = { kind: 'json' } | { kind: 'yaml' } | { kind: 'table'; version: 'v1' | 'v1beta1' };

const JSON_LIKE = new Set(['json', '*']);
/** JSON_OUTPUT is the JSON format, one shared object (a format is only read). */
const JSON_OUTPUT: OutputFormat = Object.freeze({ kind: 'json' });

/**
 * negotiateOutput picks the response format from Accept, as the API server does:
 * a Table when asked for `as=Table;g=meta.k8s.io`, YAML when asked for, otherwise
 * JSON (protobuf is never served: a client that accepts only protobuf gets 406).
 */
export function negotiateOutput(accept: string | undefined, allowTable: boolean): OutputFormat {
  // What client-go and kubectl send for an object: decided without parsing the header (every write asks it).
  if (accept === undefined || accept === 'application/json' || accept === '*/*') return JSON_OUTPUT;
  for (const m of parseAccept(accept)) {
    const as = m.params.as;
    if (as !== undefined) {
      if (as === 'Table' && allowTable && (m.params.g === 'meta.k8s.io' || m.params.g === undefined)) {
        if (m.params.v === 'v1' || m.params.v === undefined) return { kind: 'table', version: 'v1' };
        if (m.params.v === 'v1beta1') return { kind: 'table', version: 'v1beta1' };
      }
      continue;
    }
    if ((m.type === 'application' || m.type === '*') && JSON_LIKE.has(m.subtype)) return JSON_OUTPUT;
    if (m.type === 'application' && m.subtype === 'yaml') return { kind: 'yaml' };
  }
  throw newNotAcceptable(['application/json', 'application/yaml', 'application/json;as=Table;v=v1;g=meta.k8s.io']);
}

/**
 * OBJECT_PRODUCES are the representations of the events routes of one event, of a
 * create and of a deletecollection. kube-apiserver's also name protobuf, which
 * kevents does not encode (clients fall back to JSON), so it does not claim it.
 */
export const OBJECT_PRODUCES = ['application/json', 'application/yaml'] as const;
/** LIST_PRODUCES are those of the list and watch routes. */
export const LIST_PRODUCES = [...OBJECT_PRODUCES, 'application/json;stream=watch'] as const;

/**
 * checkRouteAccept is the check kube-apiserver's router makes of Accept before a
 * route's handler runs (so before anything is written): one of the header's media
 * types, its parameters cut and spaces trimmed, must be the full wildcard or one
 * the route produces, exactly (a wildcard subtype is not); no header accepts anything.
 */
export function checkRouteAccept(accept: string | undefined, produces: readonly string[]): void {
  // A header of one type the route produces, the usual one, needs no splitting.
  if (accept === undefined || accept === '' || accept === '*/*' || produces.includes(accept)) return;
  for (const part of accept.split(',')) {
    const semi = part.indexOf(';');
    const type = (semi === -1 ? part : part.slice(0, semi)).replace(/^ +| +$/g, '');
    if (type === '*/*' || produces.includes(type)) return;
  }
  throw newRouteNotAcceptable(produces);
}

/** readBody reads a request body, refusing more than the upstream limit of 3 MiB. */
export async function readBody(req: IncomingMessage, limit = MAX_REQUEST_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw newRequestEntityTooLarge(limit);
  }
  if (req.readableEnded) return Buffer.alloc(0);
  // Plain listeners rather than an async iterator: this runs for every write, and the iterator costs more than the copy.
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        done();
        req.resume();
        reject(newRequestEntityTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      done();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (e: Error): void => {
      done();
      reject(e);
    };
    const onClose = (): void => {
      if (!req.complete) onError(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    };
    const done = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** mediaTypeOf returns the bare, lower-cased media type of a Content-Type header. */
export function mediaTypeOf(contentType: string | undefined): string {
  // What every API client sends with a write, read twice per write (the guard and the handler): nothing to cut.
  if (contentType === 'application/json') return contentType;
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** bodyText decodes a JSON or YAML request body to JSON text. */
export function bodyText(body: Buffer, contentType: string | undefined): string {
  const type = mediaTypeOf(contentType);
  const text = body.toString('utf8');
  if (type === 'application/yaml' || type === 'application/apply-patch+yaml' || type === 'text/yaml') {
    return yamlToJsonText(text);
  }
  return text;
}

function yamlToJsonText(text: string): string {
  try {
    // Warnings (an unknown directive or tag) would go to the process's stderr: any client could fill the server's log.
    // Read as kube-apiserver reads it: YAML 1.1 (`yes` and `on` are booleans, a field of text refuses
    // them) with times left as text, turned into JSON with each object's keys sorted, as Go's maps are
    // (so a decoding error names the field kube-apiserver names).
    return JSON.stringify(yaml().parse(text, { logLevel: 'error', version: '1.1', customTags: goYamlBodyTags }), sortedKeys);
  } catch (e) {
    throw newBadRequest(`error converting YAML to JSON: ${(e as Error).message.split('\n')[0]}`);
  }
}


/**
 * warningHeader is one `Warning: 299 - "text"` value in ASCII alone: a header takes no
 * character above U+00FF (Node throws, after the write it reports was committed) and
 * a terminal should get no raw control or bidi character, so each is written as `\uXXXX`.
 */
export function warningHeader(text: string): string {
  const quoted = JSON.stringify(text).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `299 - ${quoted}`;
}

/** sendObject writes a 2xx answer in the negotiated format (JSON or YAML). */
export function sendObject(res: ServerResponse, code: number, body: unknown, format: OutputFormat = { kind: 'json' }, warnings: string[] = []): void {
  if (warnings.length > 0) res.setHeader('Warning', warnings.map(warningHeader));
  if (format.kind === 'yaml') {
    const text = yaml().stringify(body, YAML_OUT);
    res.writeHead(code, { 'Content-Type': 'application/yaml', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
    return;
  }
  // Written as text: node:http joins the head and a text body into one chunk, which TLS encrypts as it is. Bytes
  // would be a copy of the text first, and a second chunk that TLS copies again to join it to the head.
  const text = JSON.stringify(body);
  // kube-apiserver answers a Table as plain application/json: the body's kind says what it is.
  const type = 'application/json';
  res.writeHead(code, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-cache, private' });
  res.end(text);
}

/**
 * sendJsonText writes a pre-rendered JSON text (or its bytes, or its bytes in parts, written
 * without joining them first), with the headers of `sendObject`.
 */
export function sendJsonText(res: ServerResponse, code: number, text: string | Buffer | readonly Buffer[], contentType = 'application/json'): void {
  const parts = typeof text === 'string' || Buffer.isBuffer(text) ? undefined : text;
  const length = parts === undefined ? Buffer.byteLength(text as string | Buffer) : parts.reduce((n, p) => n + p.length, 0);
  res.writeHead(code, { 'Content-Type': contentType, 'Content-Length': length, 'Cache-Control': 'no-cache, private' });
  if (parts === undefined) return void res.end(text);
  for (const p of parts) res.write(p);
  res.end();
}

/** sendStatus writes a `Status` with its code. */
export function sendStatus(res: ServerResponse, status: Status): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const headers: Record<string, string | number> = { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' };
  const retry = status.details?.retryAfterSeconds;
  const code = status.code ?? 500;
  if (retry !== undefined && retry > 0 && (code === 429 || code >= 500)) headers['Retry-After'] = String(retry);
  const text = JSON.stringify(status);
  headers['Content-Length'] = Buffer.byteLength(text);
  res.writeHead(code, headers);
  res.end(text);
}

/**
 * sendError is the one final writer of errors: a `StatusError` is sent as is;
 * anything else is a bug, logged with its stack and answered as a 500.
 */
/** sendPlainNotFound is Go's http.NotFound, which kube-apiserver answers for paths under an API group it does not serve. */
export function sendPlainNotFound(res: ServerResponse): void {
  res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
  res.end('404 page not found\n');
}

export function sendError(res: ServerResponse, err: unknown, logger: Logger, context: string): void {
  if (isStatusError(err)) {
    sendStatus(res, err.status);
    return;
  }
  logger.error('unexpected error (bug)', { context, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  sendStatus(res, newInternalError(err).status);
}

/**
 * sendJsonStream writes a 2xx JSON answer as it is produced: `doc`'s fields in
 * their order, the array at `key` one item at a time, each written when the
 * socket has taken the one before (no Content-Length: chunked). Peak memory is
 * one item, not the answer; a client gone away stops the writing.
 */
export async function sendJsonStream(res: ServerResponse, code: number, doc: object, key: string): Promise<void> {
  res.writeHead(code, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  const write = async (text: string): Promise<boolean> => {
    if (res.destroyed) return false;
    if (!res.write(text)) await new Promise<void>((resolve) => {
      const done = (): void => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
    return !res.destroyed;
  };
  let first = true;
  let head = '{';
  for (const [k, v] of Object.entries(doc)) {
    if (v === undefined) continue;
    const name = `${first ? '' : ','}${JSON.stringify(k)}:`;
    first = false;
    if (k !== key || !Array.isArray(v)) {
      head += `${name}${JSON.stringify(v)}`;
      continue;
    }
    if (!(await write(`${head}${name}[`))) return;
    head = '';
    for (let i = 0; i < v.length; i++) {
      if (!(await write(`${i === 0 ? '' : ','}${JSON.stringify(v[i])}`))) return;
    }
    head = ']';
  }
  res.end(`${head}}`);
}
