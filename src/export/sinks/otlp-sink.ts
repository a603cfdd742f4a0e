import { readFileSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type * as OtlpTransformer from '@opentelemetry/otlp-transformer';
import type * as OtelResources from '@opentelemetry/resources';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { CoreEvent } from '../../api/index.js';
import { isSinkRejected, SinkRejected, SinkUnavailable } from '../types.js';
import type { ExportRecord, ExportSink, SinkDeps, SinkType } from '../types.js';
import { authorization, HTTP_AUTH_FIELDS, readHttpAuth } from './http-auth.js';
import type { HttpAuthOptions } from './http-auth.js';
import { DEFAULT_TIMEOUT_MS, redact } from './http-post.js';

const gzipAsync = promisify(gzip);

/**
 * OtlpLayout names the mapping of a change onto an OTLP log record. `k8sevents` is what the
 * OpenTelemetry Collector's k8s_events receiver writes for a core/v1 Event (docs/export.md has the
 * table, taken from running that receiver); the name leaves room for an events.k8s.io/v1 layout.
 */
export type OtlpLayout = 'k8sevents';

/** OtlpOptions configure an `otlp` sink (OTLP/HTTP logs). */
export interface OtlpOptions extends HttpAuthOptions {
  /** logsUrl is the base url with the logs path (default `/v1/logs`). */
  logsUrl: string;
  encoding: 'protobuf' | 'json';
  compression: 'none' | 'gzip';
  layout: OtlpLayout;
  headers: Record<string, string>;
  /** caFile is a PEM file of the CAs to trust for https (instead of the system's). */
  caFile?: string;
  /** insecure skips verifying the server's certificate. */
  insecure: boolean;
  timeoutMs: number;
  /** maxInFlight is how many requests a batch may be split into, sent at once (1: one request a batch, in the archive's order). */
  maxInFlight: number;
}

/**
 * DEFAULT_MAX_IN_FLIGHT: a batch goes as up to 4 requests at once, so the server reads one while
 * kevents serialises the next (bench/export-otlp.ts: 2 and more overlap; past 4 nothing is gained).
 */
export const DEFAULT_MAX_IN_FLIGHT = 4;

/** MIN_REQUEST_RECORDS: a batch is split no finer than this, since a request's own cost (headers, an answer) outweighs what a smaller one overlaps. */
const MIN_REQUEST_RECORDS = 100;

/**
 * otlpRequests splits a batch into the records of each request the sink sends at once: at most
 * `maxInFlight` of them, none smaller than MIN_REQUEST_RECORDS but the last, in the batch's order.
 */
export function otlpRequests<T>(records: T[], maxInFlight: number): T[][] {
  const n = Math.max(1, Math.min(maxInFlight, Math.floor(records.length / MIN_REQUEST_RECORDS)));
  const size = Math.ceil(records.length / n);
  const parts: T[][] = [];
  for (let i = 0; i < records.length; i += size) parts.push(records.slice(i, i + size));
  return parts;
}

/** KEVENTS_ATTRIBUTES are the log attributes kevents adds, where the receiver has no equivalent. */
export const KEVENTS_ATTRIBUTES = {
  /** recordId is the record's idempotency key: a redelivered record has the same one. */
  recordId: 'kevents.record.id',
  changeId: 'kevents.change.id',
  countBefore: 'kevents.count.before',
  /** count is kevents' count after the change, only where `k8s.event.count` is absent or says otherwise (an events.k8s.io series). */
  count: 'kevents.count',
  cluster: 'kevents.cluster',
} as const;

/** SEVERITY is the receiver's severity table: Normal is INFO (9), Warning WARN (13), matched without case; any other type has none. */
const SEVERITY: Record<string, number> = { normal: 9, warning: 13 };

/** RETRYABLE are the answers the OTLP/HTTP specification says to retry; every other failure is final. */
const RETRYABLE = new Set([429, 502, 503, 504]);

/** MAX_RETRY_AFTER_MS bounds a server's Retry-After, so a broken header cannot stall a sink for days. */
const MAX_RETRY_AFTER_MS = 600_000;

/** RFC3339 is an RFC 3339 time: the date and time, the fraction, the zone. */
const RFC3339 = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/i;

/** lastSecond and lastSecondMs keep the second last read: a batch's times mostly share a few seconds, and Date.parse is the dear part. */
let lastSecond = '';
let lastSecondMs = NaN;

/** hrTime is an RFC 3339 time as OpenTelemetry's [seconds, nanoseconds], or undefined when it does not parse. */
function hrTime(text: string | null | undefined): [number, number] | undefined {
  if (text === undefined || text === null || text === '') return undefined;
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const second = `${m[1]!}T${m[2]!}${m[4]!.toUpperCase()}`;
  if (second !== lastSecond) {
    lastSecond = second;
    lastSecondMs = Date.parse(second);
  }
  // Numbers, not BigInt: seconds and nanoseconds each fit, and this runs for every record.
  return Number.isNaN(lastSecondMs) ? undefined : [lastSecondMs / 1000, Number((m[3] ?? '').padEnd(9, '0'))];
}

/**
 * goTimeString is how Go prints a time (`time.Time.String()`, what the receiver writes for
 * `k8s.event.start_time`): `2006-01-02 15:04:05.999999999 -0700 MST`, here always in UTC; an
 * absent time is Go's zero time.
 */
export function goTimeString(rfc3339: string | null | undefined): string {
  const m = rfc3339 === undefined || rfc3339 === null ? null : RFC3339.exec(rfc3339);
  if (m === null) return '0001-01-01 00:00:00 +0000 UTC';
  const fraction = (m[3] ?? '').replace(/0+$/, '');
  // A UTC time (what the API server writes) is printed from its text, without a Date.
  let date = m[1]!;
  let time = m[2]!;
  if (m[4]!.toUpperCase() !== 'Z') {
    const iso = new Date(Date.parse(`${date}T${time}${m[4]!}`)).toISOString();
    date = iso.slice(0, 10);
    time = iso.slice(11, 19);
  }
  return `${date} ${time}${fraction === '' ? '' : `.${fraction}`} +0000 UTC`;
}

/**
 * k8seventsView is what the k8sevents layout reads of a record: the stored core/v1 Event where
 * the record has it, else the same facts from the field set (an archive that kept no version).
 */
function k8seventsView(r: ExportRecord): CoreEvent {
  if (r.event !== undefined) return r.event;
  const f = r.fields;
  return {
    metadata: { name: f.name, namespace: f.namespace, uid: f.uid, creationTimestamp: f.firstSeen },
    involvedObject: f.regarding,
    reason: f.reason,
    message: f.message,
    type: f.type,
    action: f.action,
    count: f.count,
    lastTimestamp: f.lastSeen,
    firstTimestamp: f.firstSeen,
  };
}

/** LogParts are a log record's parts before they are tied to a resource object. */
export interface LogParts {
  resource: Record<string, string>;
  record: Omit<ReadableLogRecord, 'resource' | 'instrumentationScope'>;
}

/**
 * k8seventsLog maps one record as the k8s_events receiver does: the regarding object and the
 * node (source.host) are the resource; reason, action, creation time, name, uid, the regarding
 * object's namespace and the count are attributes; the message is the body; the time is the
 * event's eventTime, else lastTimestamp, else firstTimestamp. kevents' own facts follow under
 * `kevents.` (KEVENTS_ATTRIBUTES), and the observed time is when kevents saw the change (the
 * receiver sets none).
 */
export function k8seventsLog(r: ExportRecord): LogParts {
  const e = k8seventsView(r);
  const f = r.fields;
  const io = e.involvedObject;
  const resource: Record<string, string> = {
    'k8s.node.name': e.source?.host ?? '',
    'k8s.object.kind': io.kind ?? '',
    'k8s.object.name': io.name ?? '',
    'k8s.object.uid': io.uid ?? '',
    'k8s.object.fieldpath': io.fieldPath ?? '',
    'k8s.object.api_version': io.apiVersion ?? '',
    'k8s.object.resource_version': io.resourceVersion ?? '',
  };
  const attributes: Record<string, string | number> = {
    'k8s.event.reason': e.reason ?? '',
    'k8s.event.action': e.action ?? '',
    'k8s.event.start_time': goTimeString(e.metadata.creationTimestamp),
    'k8s.event.name': e.metadata.name ?? '',
    'k8s.event.uid': e.metadata.uid ?? '',
    'k8s.namespace.name': io.namespace ?? '',
  };
  // The receiver leaves the count out when it is 0 (an events.k8s.io event without a series).
  const count = e.count ?? 0;
  if (count !== 0) attributes['k8s.event.count'] = count;
  attributes[KEVENTS_ATTRIBUTES.recordId] = r.id;
  attributes[KEVENTS_ATTRIBUTES.changeId] = f.changeId;
  attributes[KEVENTS_ATTRIBUTES.countBefore] = f.countBefore;
  if (count !== f.count) attributes[KEVENTS_ATTRIBUTES.count] = f.count;
  if (f.cluster !== '') attributes[KEVENTS_ATTRIBUTES.cluster] = f.cluster;
  const time = hrTime(e.eventTime) ?? hrTime(e.lastTimestamp) ?? hrTime(e.firstTimestamp) ?? hrTime(f.lastSeen) ?? [0, 0];
  const record: LogParts['record'] = {
    hrTime: time,
    hrTimeObserved: hrTime(f.observedTime) ?? time,
    body: e.message ?? '',
    attributes,
    droppedAttributesCount: 0,
  };
  const severity = SEVERITY[(e.type ?? '').toLowerCase()];
  if (severity !== undefined) {
    Object.assign(record, { severityNumber: severity, severityText: e.type });
  }
  return { resource, record };
}

/** OtelModules are the OpenTelemetry packages the sink serialises with, loaded on the first delivery (not at every kevents start). */
interface OtelModules {
  transformer: typeof OtlpTransformer;
  resources: typeof OtelResources;
}

let otel: Promise<OtelModules> | undefined;
function loadOtel(): Promise<OtelModules> {
  otel ??= Promise.all([import('@opentelemetry/otlp-transformer'), import('@opentelemetry/resources')]).then(([transformer, resources]) => ({ transformer, resources }));
  return otel;
}

/** SCOPE is the instrumentation scope of every record: empty, as the receiver's. */
const SCOPE = { name: '' };

/**
 * resourceCache keeps the resources of recent batches (an object's events come in many batches), by
 * their values; a resource is immutable, so sharing one across requests is safe.
 */
const resourceCache = new Map<string, Resource>();
/** RESOURCE_CACHE_SIZE bounds the cache: it starts over past this many objects. */
const RESOURCE_CACHE_SIZE = 20_000;

/**
 * otlpLogsRequest is a batch as an ExportLogsServiceRequest in the chosen encoding, serialised by
 * OpenTelemetry's own otlp-transformer: records about the same object share one ResourceLogs.
 */
export async function otlpLogsRequest(records: ExportRecord[], encoding: OtlpOptions['encoding']): Promise<Uint8Array> {
  const { transformer, resources } = await loadOtel();
  if (resourceCache.size > RESOURCE_CACHE_SIZE) resourceCache.clear();
  const byResource = resourceCache;
  const logs: ReadableLogRecord[] = records.map((r) => {
    const parts = k8seventsLog(r);
    // The values in their fixed order tell resources apart (a NUL is in no Kubernetes name).
    const key = Object.values(parts.resource).join('\u0000');
    let resource = byResource.get(key);
    if (resource === undefined) byResource.set(key, (resource = resources.resourceFromAttributes(parts.resource)));
    const log = parts.record as ReadableLogRecord & { resource: Resource; instrumentationScope: typeof SCOPE };
    log.resource = resource;
    log.instrumentationScope = SCOPE;
    return log;
  });
  const serializer = encoding === 'json' ? transformer.JsonLogsSerializer : transformer.ProtobufLogsSerializer;
  const body = serializer.serializeRequest(logs);
  if (body === undefined) throw new Error('the OTLP serializer produced no request');
  return body;
}

/** PartialSuccess is what a 2xx answer may say of records the server did not take. */
export interface PartialSuccess {
  rejected: number;
  message: string;
}

/** partialSuccess reads an ExportLogsServiceResponse (an empty body is full success). */
export async function partialSuccess(body: Uint8Array, encoding: OtlpOptions['encoding']): Promise<PartialSuccess> {
  if (body.length === 0) return { rejected: 0, message: '' };
  const { transformer } = await loadOtel();
  const serializer = encoding === 'json' ? transformer.JsonLogsSerializer : transformer.ProtobufLogsSerializer;
  const res = serializer.deserializeResponse(body);
  const p = res.partialSuccess;
  // int64 comes as a number from protobuf and as a string in OTLP/JSON.
  return { rejected: Number(p?.rejectedLogRecords ?? 0) || 0, message: p?.errorMessage ?? '' };
}

let statusType: Promise<{ decode(b: Uint8Array): unknown }> | undefined;
/** STATUS is google.rpc.Status (code 1, message 2), the body of an OTLP/HTTP failure in protobuf. */
function status(): Promise<{ decode(b: Uint8Array): unknown }> {
  statusType ??= import('protobufjs').then(({ default: pb }) => new pb.Type('Status').add(new pb.Field('code', 1, 'int32')).add(new pb.Field('message', 2, 'string')));
  return statusType;
}

/** failureMessage is the message of a failed answer's body: a google.rpc.Status in protobuf or JSON, else its text. */
export async function failureMessage(body: Buffer, contentType: string): Promise<string> {
  if (body.length === 0) return '';
  try {
    if (contentType.includes('protobuf')) return String(((await status()).decode(body) as { message?: string }).message ?? '');
    if (contentType.includes('json')) {
      const j = JSON.parse(body.toString('utf8')) as { message?: unknown };
      if (typeof j.message === 'string') return j.message;
    }
  } catch {
    // Not a Status after all: show what it says as text.
  }
  return body.toString('utf8').replace(/\s+/g, ' ').trim();
}

/** retryAfterMs reads a Retry-After header: seconds, or an HTTP date; 0 when absent or unreadable. */
export function retryAfterMs(header: string | undefined, now = Date.now()): number {
  if (header === undefined || header.trim() === '') return 0;
  const seconds = /^\s*\d+\s*$/.test(header) ? Number(header) * 1000 : Date.parse(header) - now;
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, MAX_RETRY_AFTER_MS) : 0;
}

class OtlpSink implements ExportSink {
  private readonly url: URL;
  private readonly agent: HttpAgent;

  constructor(
    private readonly o: OtlpOptions,
    private readonly headers: OutgoingHttpHeaders,
    ca: Buffer | undefined,
    private readonly deps: SinkDeps,
  ) {
    this.url = new URL(o.logsUrl);
    // One connection per request in flight, kept alive: that saves the handshake of each batch.
    const sockets = { keepAlive: true, maxSockets: o.maxInFlight };
    this.agent =
      this.url.protocol === 'https:'
        ? new HttpsAgent({ ...sockets, rejectUnauthorized: !o.insecure, ...(ca !== undefined ? { ca } : {}) })
        : new HttpAgent(sockets);
  }

  /**
   * send posts the batch as up to maxInFlight requests at once and resolves when every one was
   * taken. Each is serialised only after the one before it reached the socket, so the server reads
   * one while this process writes the next. The first failure is the batch's once all have
   * answered (none is left in flight for a retry to overtake); an unavailable server wins over a
   * refusal, since the runner then sends the whole batch again rather than record by record.
   */
  async send(records: ExportRecord[], signal: AbortSignal): Promise<void> {
    const parts = otlpRequests(records, this.o.maxInFlight);
    if (parts.length === 1) return this.sendRequest(records, signal);
    const sent: Promise<void>[] = [];
    for (const part of parts) {
      if (signal.aborted) break;
      const request = this.sendRequest(part, signal);
      // Settled below; caught here so a request failing while the next is written is not unhandled.
      request.catch(() => undefined);
      sent.push(request);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const failures = (await Promise.allSettled(sent)).flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    if (failures.length > 0) throw failures.find((e) => !isSinkRejected(e)) ?? failures[0];
  }

  private async sendRequest(records: ExportRecord[], signal: AbortSignal): Promise<void> {
    let body = await otlpLogsRequest(records, this.o.encoding);
    const headers: OutgoingHttpHeaders = { ...this.headers };
    if (this.o.compression === 'gzip') {
      body = await gzipAsync(body);
      headers['Content-Encoding'] = 'gzip';
    }
    headers['Content-Length'] = body.length;
    const res = await this.post(body, headers, signal);
    const where = `POST ${redact(this.o.logsUrl)}`;
    if (res.status >= 200 && res.status < 300) {
      const p = await partialSuccess(res.body, this.o.encoding).catch(() => ({ rejected: 0, message: '' }));
      if (p.rejected > 0) {
        // OTLP does not say which records were refused: the runner finds them by sending one at a time.
        throw new SinkRejected(`${where}: partial success, ${p.rejected} of ${records.length} log records rejected${p.message !== '' ? `: ${p.message}` : ''}`);
      }
      if (p.message !== '') this.deps.logger.warn('export: the OTLP server accepted every record with a warning', { url: redact(this.o.logsUrl), message: p.message });
      return;
    }
    const detail = await failureMessage(res.body, res.contentType);
    const message = `${where}: ${res.status}${detail !== '' ? `: ${detail.slice(0, 300)}` : ''}`;
    if (RETRYABLE.has(res.status)) throw new SinkUnavailable(message, retryAfterMs(res.retryAfter));
    throw new SinkRejected(message);
  }

  private post(body: Uint8Array, headers: OutgoingHttpHeaders, signal: AbortSignal): Promise<{ status: number; body: Buffer; contentType: string; retryAfter: string | undefined }> {
    const where = `POST ${redact(this.o.logsUrl)}`;
    return new Promise((resolve, reject) => {
      const both = AbortSignal.any([signal, AbortSignal.timeout(this.o.timeoutMs)]);
      const send = this.url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(this.url, { method: 'POST', headers, agent: this.agent, signal: both }, (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e) => reject(new Error(`${where}: ${e.message}`, { cause: e })));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks),
            contentType: String(res.headers['content-type'] ?? ''),
            retryAfter: typeof res.headers['retry-after'] === 'string' ? res.headers['retry-after'] : undefined,
          }),
        );
      });
      req.on('error', (e: NodeJS.ErrnoException) => {
        // The code alone (ECONNREFUSED) or the message alone (a TLS failure's) may not say enough.
        const text = e.code !== undefined && !e.message.includes(e.code) ? `${e.code}: ${e.message}` : e.message;
        const why = both.aborted && !signal.aborted ? `no answer in ${this.o.timeoutMs} ms` : text;
        reject(new Error(`${where}: ${why}`, { cause: e }));
      });
      req.end(body);
    });
  }

  close(): Promise<void> {
    this.agent.destroy();
    return Promise.resolve();
  }
}

/** otlpSinkType sends records as OTLP/HTTP logs (an OpenTelemetry Collector's otlp receiver, or any OTLP backend). */
export const otlpSinkType: SinkType<OtlpOptions> = {
  fields: ['url', 'path', 'encoding', 'compression', 'layout', 'headers', ...HTTP_AUTH_FIELDS, 'tls', 'timeout', 'maxInFlight'],
  defaultPolicy: 'occurrences',
  read(r, path, raw) {
    const p = (...k: (string | number)[]): (string | number)[] => [...path, ...k];
    if (raw.policy === 'upsert' || raw.policy === 'alert') {
      r.fail(p('policy'), `an otlp sink takes policy occurrences (the default) or first, not ${String(raw.policy)}: OTLP appends log records and cannot replace one`);
    }
    const url = (r.string(p('url'), raw.url, { required: true, pattern: /^https?:\/\/[^\s?#]+$/, hint: 'must be an http:// or https:// base URL (the logs path /v1/logs is added)' }) ?? '').replace(/\/+$/, '');
    const logsPath = r.string(p('path'), raw.path, { pattern: /^\/\S*$/, hint: 'must start with /' }) ?? '/v1/logs';
    const o: OtlpOptions = {
      logsUrl: `${url}${logsPath}`,
      encoding: (r.string(p('encoding'), raw.encoding, { oneOf: ['protobuf', 'json'] }) as OtlpOptions['encoding'] | undefined) ?? 'protobuf',
      compression: (r.string(p('compression'), raw.compression, { oneOf: ['none', 'gzip'] }) as OtlpOptions['compression'] | undefined) ?? 'none',
      layout: (r.string(p('layout'), raw.layout, { oneOf: ['k8sevents'] }) as OtlpLayout | undefined) ?? 'k8sevents',
      headers: r.stringMap(p('headers'), raw.headers) ?? {},
      insecure: false,
      timeoutMs: r.duration(p('timeout'), raw.timeout) ?? DEFAULT_TIMEOUT_MS,
      maxInFlight: r.integer(p('maxInFlight'), raw.maxInFlight, { min: 1, max: 64 }) ?? DEFAULT_MAX_IN_FLIGHT,
    };
    readHttpAuth(r, path, raw, o);
    const tls = r.object(p('tls'), raw.tls, ['caFile', 'insecure']);
    if (tls !== undefined) {
      const caFile = r.string(p('tls', 'caFile'), tls.caFile);
      if (caFile !== undefined) o.caFile = caFile;
      o.insecure = r.boolean(p('tls', 'insecure'), tls.insecure) ?? false;
      if (!url.startsWith('https://')) r.fail(p('tls'), 'tls settings need an https:// url');
    }
    return o;
  },
  create(o, deps) {
    const headers: OutgoingHttpHeaders = {
      ...o.headers,
      'User-Agent': 'kevents-export',
      'Content-Type': o.encoding === 'json' ? 'application/json' : 'application/x-protobuf',
    };
    const auth = authorization(o, deps.env);
    if (auth !== undefined) headers.Authorization = auth;
    let ca: Buffer | undefined;
    if (o.caFile !== undefined) {
      try {
        ca = readFileSync(o.caFile);
      } catch (e) {
        throw new Error(`cannot read the CA file ${o.caFile}: ${(e as Error).message}`, { cause: e });
      }
    }
    return new OtlpSink(o, headers, ca, deps);
  },
};
