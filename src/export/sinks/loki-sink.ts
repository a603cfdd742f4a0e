import { setTimeout as sleep } from 'node:timers/promises';
import type { ExportRecord, ExportSink, SinkDeps, SinkType } from '../types.js';
import { authorization, readHttpAuth } from './http-auth.js';
import type { HttpAuthOptions } from './http-auth.js';
import { DEFAULT_TIMEOUT_MS, postBody, redact, sinkFetch } from './http-post.js';

/** LOKI_LABELS are the fields a stream may be labelled with: each has few values, so streams stay few. */
export const LOKI_LABELS = ['namespace', 'kind', 'reason', 'type', 'cluster'] as const;
type LokiLabel = (typeof LOKI_LABELS)[number];

/**
 * UNBOUNDED_FIELDS are fields a stream must never be labelled with: each has
 * a value per object or per event, and Loki keeps an index entry per stream.
 * They stay in the line (and the record id in structured metadata).
 */
const UNBOUNDED_FIELDS = ['name', 'uid', 'message', 'id', 'changeId', 'count', 'regarding.name', 'regarding.uid', 'object', 'note'];

/** LOKI_LABEL_NAME is Loki's (Prometheus') label name syntax. */
const LOKI_LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** ID_METADATA is the structured metadata key carrying the record id (the idempotency key). */
export const ID_METADATA = 'kevents_id';

/** LokiQuery says how delivered() asks the server which records it holds. */
export interface LokiQuery {
  /** api: `loki` (LogQL, GET query_range) or `logsql` (VictoriaLogs, POST /select/logsql/query). */
  api: 'loki' | 'logsql';
  url: string;
  /**
   * settleMs: how long after the last push a query can see everything it
   * took. Loki's ingesters answer at once; VictoriaLogs shows what it took
   * after its next in-memory flush (about a second).
   */
  settleMs: number;
}

/** DEFAULT_SETTLE_MS per query API: VictoriaLogs needs a flush (1 s or more) before a push is visible. */
const DEFAULT_SETTLE_MS = { loki: 0, logsql: 5_000 } as const;

/** LokiOptions configure a Loki sink. */
export interface LokiOptions extends HttpAuthOptions {
  /** pushUrl is the base url with the push path (default `/loki/api/v1/push`). */
  pushUrl: string;
  tenant?: string;
  labels: LokiLabel[];
  staticLabels: Record<string, string>;
  /** timestamp: the entry's time is when kevents observed the change (default), or the event's last occurrence. */
  timestamp: 'observedTime' | 'lastSeen';
  structuredMetadata: boolean;
  headers: Record<string, string>;
  timeoutMs: number;
  query?: LokiQuery;
}

/** LokiStream is one stream of a push body: its labels and its entries `[ns, line, metadata?]`. */
export interface LokiStream {
  stream: Record<string, string>;
  values: ([string, string] | [string, string, Record<string, string>])[];
}

/**
 * rfc3339Nanos turns an RFC 3339 time into Unix nanoseconds as a decimal
 * string (Loki's JSON timestamps), keeping every fraction digit the text has:
 * a Date keeps only milliseconds.
 */
export function rfc3339Nanos(text: string): string | undefined {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/i.exec(text);
  if (m === null) return undefined;
  const seconds = Date.parse(`${m[1]!}${m[3]!.toUpperCase()}`);
  if (Number.isNaN(seconds)) return undefined;
  return (BigInt(seconds / 1000) * 1_000_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'))).toString();
}

/** entryTime is a record's entry time in nanoseconds: the chosen field, else the other, else now. */
function entryTime(r: ExportRecord, o: Pick<LokiOptions, 'timestamp'>): string {
  const f = r.fields;
  const [first, second] = o.timestamp === 'lastSeen' ? [f.lastSeen, f.observedTime] : [f.observedTime, f.lastSeen];
  return rfc3339Nanos(first) ?? rfc3339Nanos(second) ?? (BigInt(Date.now()) * 1_000_000n).toString();
}

const LABEL_VALUE: Record<LokiLabel, (r: ExportRecord) => string> = {
  namespace: (r) => r.fields.namespace,
  kind: (r) => r.fields.regarding.kind,
  reason: (r) => r.fields.reason,
  type: (r) => r.fields.type,
  cluster: (r) => r.fields.cluster,
};

/** streamLabels are a record's stream labels: the static ones and the chosen fields (an empty value is no label, as in Loki). */
export function streamLabels(r: ExportRecord, o: Pick<LokiOptions, 'labels' | 'staticLabels'>): Record<string, string> {
  const labels: Record<string, string> = { ...o.staticLabels };
  for (const name of o.labels) {
    const v = LABEL_VALUE[name](r);
    if (v !== '') labels[name] = v;
  }
  return labels;
}

/**
 * lokiStreams groups a batch into streams by their labels, each stream's
 * entries in time order (Loki with `unordered_writes: false`, and Loki before
 * 2.4, refuse an entry older than the stream's last). The line is the
 * record's payload as JSON; the record id rides in structured metadata, so a
 * template that leaves it out of the line still lets it be found.
 */
export function lokiStreams(records: ExportRecord[], o: Pick<LokiOptions, 'labels' | 'staticLabels' | 'timestamp' | 'structuredMetadata'>): LokiStream[] {
  const streams = new Map<string, { stream: Record<string, string>; entries: { ts: string; line: string; id: string; order: number }[] }>();
  records.forEach((r, order) => {
    // The static labels are the same for every record: the chosen fields' values alone tell streams apart.
    const key = o.labels.map((name) => LABEL_VALUE[name](r)).join('\u0000');
    let s = streams.get(key);
    if (s === undefined) streams.set(key, (s = { stream: streamLabels(r, o), entries: [] }));
    s.entries.push({ ts: entryTime(r, o), line: JSON.stringify(r.payload), id: r.id, order });
  });
  return [...streams.values()].map((s) => ({
    stream: s.stream,
    values: s.entries
      .sort((a, b) => compareNanos(a.ts, b.ts) || a.order - b.order)
      .map((e) => (o.structuredMetadata ? [e.ts, e.line, { [ID_METADATA]: e.id }] : [e.ts, e.line])),
  }));
}

function compareNanos(a: string, b: string): number {
  return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
}

/** lokiPushBody is a batch as the push API's JSON body. */
export function lokiPushBody(records: ExportRecord[], o: Parameters<typeof lokiStreams>[1]): string {
  return JSON.stringify({ streams: lokiStreams(records, o) });
}

/** logqlString quotes a value for LogQL (a Go string literal). */
function logqlString(s: string): string {
  return JSON.stringify(s);
}

/** regexQuote escapes a value for an RE2 alternation. */
function regexQuote(s: string): string {
  return s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
}

/**
 * lokiHeldQuery is the LogQL query_range request that finds which of one
 * stream's records Loki holds: the stream's exact selector (an absent label
 * as `=""`), the ids as a structured-metadata filter, the batch's time span.
 */
export function lokiHeldQuery(stream: LokiStream, labelNames: readonly string[], ids: string[]): URLSearchParams {
  const matchers = [...new Set([...Object.keys(stream.stream), ...labelNames])].sort().map((k) => `${k}=${logqlString(stream.stream[k] ?? '')}`);
  const times = stream.values.map((v) => v[0]).sort(compareNanos);
  return new URLSearchParams({
    query: `{${matchers.join(', ')}} | ${ID_METADATA}=~${logqlString(ids.map(regexQuote).join('|'))}`,
    start: times[0]!,
    // end is exclusive in Loki.
    end: (BigInt(times.at(-1)!) + 1n).toString(),
    limit: String(ids.length * 2),
    direction: 'forward',
  });
}

/** logsqlHeldQuery is the LogsQL request that finds which records VictoriaLogs holds: the ids as a field filter over the batch's time span. */
export function logsqlHeldQuery(ids: string[], fromNs: string, toNs: string): URLSearchParams {
  const seconds = (ns: string, round: bigint): string => ((BigInt(ns) + round) / 1_000_000_000n).toString();
  return new URLSearchParams({
    query: `${ID_METADATA}:in(${ids.map((id) => JSON.stringify(id)).join(',')}) | fields ${ID_METADATA}`,
    start: seconds(fromNs, -1_000_000_000n),
    end: seconds(toNs, 2_000_000_000n),
    limit: String(ids.length * 2),
  });
}

/** HELD_QUERY_CHUNK bounds the ids of one held-query, keeping its URL and regex small. */
const HELD_QUERY_CHUNK = 200;

class LokiSink implements ExportSink {
  /** lastPush is when a push last started (or the sink was made: a previous process may have pushed just before it crashed). */
  private lastPush = Date.now();

  constructor(
    private readonly o: LokiOptions,
    private readonly headers: Record<string, string>,
  ) {}

  async send(records: ExportRecord[], signal: AbortSignal): Promise<void> {
    const body = lokiPushBody(records, this.o);
    this.lastPush = Date.now();
    await postBody(this.o.pushUrl, body, { headers: { ...this.headers, 'Content-Type': 'application/json' }, signal, timeoutMs: this.o.timeoutMs });
  }

  async delivered(records: ExportRecord[], signal: AbortSignal): Promise<Set<string>> {
    const held = new Set<string>();
    const q = this.o.query;
    if (q === undefined || !this.o.structuredMetadata || records.length === 0) return held;
    const wait = this.lastPush + q.settleMs - Date.now();
    if (wait > 0) await sleep(wait, undefined, { signal });
    for (let i = 0; i < records.length; i += HELD_QUERY_CHUNK) {
      const chunk = records.slice(i, i + HELD_QUERY_CHUNK);
      if (q.api === 'logsql') {
        const times = chunk.map((r) => entryTime(r, this.o)).sort(compareNanos);
        const text = await this.query(q.url, 'POST', logsqlHeldQuery(chunk.map((r) => r.id), times[0]!, times.at(-1)!), signal);
        for (const line of text.split('\n')) {
          if (line.trim() === '') continue;
          const id = (JSON.parse(line) as Record<string, unknown>)[ID_METADATA];
          if (typeof id === 'string') held.add(id);
        }
        continue;
      }
      for (const stream of lokiStreams(chunk, this.o)) {
        const ids = stream.values.map((v) => (v[2] as Record<string, string>)[ID_METADATA]!);
        const text = await this.query(q.url, 'GET', lokiHeldQuery(stream, this.o.labels, ids), signal);
        for (const id of heldIds(text)) held.add(id);
      }
    }
    return held;
  }

  private async query(url: string, method: 'GET' | 'POST', params: URLSearchParams, signal: AbortSignal): Promise<string> {
    const headers = { ...this.headers };
    if (this.o.query?.api === 'logsql' && this.o.tenant !== undefined) {
      // VictoriaLogs reads the tenant of a query from AccountID/ProjectID, of a push from X-Scope-OrgID.
      const [account, project] = this.o.tenant.split(':');
      headers.AccountID = account ?? '0';
      headers.ProjectID = project ?? '0';
    }
    const target = method === 'GET' ? `${url}?${params.toString()}` : url;
    const init: RequestInit = { method, headers, signal: AbortSignal.any([signal, AbortSignal.timeout(this.o.timeoutMs)]) };
    if (method === 'POST') {
      init.body = params.toString();
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
    }
    const res = await sinkFetch(target, { ...init, method });
    const text = await res.text();
    // A query that fails leaves the records' fate unknown: the delivery is retried, asking again.
    if (!res.ok) throw new Error(`${method} ${redact(url)}: ${res.status} ${res.statusText}: ${text.slice(0, 300)}`);
    return text;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * heldIds reads the record ids out of a Loki query_range answer: structured
 * metadata come back among the stream's labels, or (with the
 * `categorize-labels` encoding) as each value's third element.
 */
export function heldIds(text: string): string[] {
  const body = JSON.parse(text) as { data?: { result?: { stream?: Record<string, string>; values?: unknown[][] }[] } };
  const ids: string[] = [];
  for (const s of body.data?.result ?? []) {
    const id = s.stream?.[ID_METADATA];
    if (id !== undefined) ids.push(id);
    for (const v of s.values ?? []) {
      const meta = (v[2] as { structuredMetadata?: Record<string, string> } | undefined)?.structuredMetadata;
      if (meta?.[ID_METADATA] !== undefined) ids.push(meta[ID_METADATA]);
    }
  }
  return ids;
}

/** lokiSinkType pushes records to Loki's push API (or a server that speaks it, such as VictoriaLogs). */
export const lokiSinkType: SinkType<LokiOptions> = {
  fields: ['url', 'path', 'tenant', 'labels', 'staticLabels', 'timestamp', 'structuredMetadata', 'headers', 'username', 'passwordEnv', 'tokenEnv', 'timeout', 'query'],
  defaultPolicy: 'occurrences',
  read(r, path, raw) {
    const p = (...k: (string | number)[]): (string | number)[] => [...path, ...k];
    if (raw.policy === 'upsert' || raw.policy === 'alert') {
      r.fail(p('policy'), `a loki sink takes policy occurrences (the default) or first, not ${String(raw.policy)}: a log store appends entries and cannot replace one`);
    }
    const url = (r.string(p('url'), raw.url, { required: true, pattern: /^https?:\/\/[^\s?#]+$/, hint: 'must be an http:// or https:// base URL (the push path is added)' }) ?? '').replace(/\/+$/, '');
    const pushPath = r.string(p('path'), raw.path, { pattern: /^\/\S*$/, hint: 'must start with /' }) ?? '/loki/api/v1/push';
    const labels: LokiLabel[] = [];
    if (raw.labels !== undefined) {
      r.list(p('labels'), raw.labels).forEach((v, i) => {
        const name = r.string(p('labels', i), v, { required: true });
        if (name === undefined) return;
        if (UNBOUNDED_FIELDS.includes(name)) {
          r.fail(p('labels', i), `${JSON.stringify(name)} has a value per object or event and would make a Loki stream per value; it stays in the line (labels are any of ${LOKI_LABELS.join(', ')})`);
        } else if (!(LOKI_LABELS as readonly string[]).includes(name)) {
          r.fail(p('labels', i), `must be one of ${LOKI_LABELS.join(', ')}, not ${JSON.stringify(name)}`);
        } else if (!labels.includes(name as LokiLabel)) labels.push(name as LokiLabel);
      });
    } else labels.push(...LOKI_LABELS);
    const staticLabels = r.stringMap(p('staticLabels'), raw.staticLabels) ?? {};
    for (const k of Object.keys(staticLabels)) {
      if (!LOKI_LABEL_NAME.test(k) || k.startsWith('__')) r.fail(p('staticLabels', k), `${JSON.stringify(k)} is not a Loki label name (letters, digits and _, not starting with a digit or __)`);
      else if ((LOKI_LABELS as readonly string[]).includes(k) && labels.includes(k as LokiLabel)) r.fail(p('staticLabels', k), `${k} is already a label taken from each event (drop it from labels to set it here)`);
      else if (UNBOUNDED_FIELDS.includes(k)) r.fail(p('staticLabels', k), `${k} names a field with a value per object or event; choose another label name`);
      else if (k === ID_METADATA) r.fail(p('staticLabels', k), `${ID_METADATA} is the structured metadata of the record id`);
    }
    if (labels.length === 0 && Object.keys(staticLabels).length === 0) r.fail(p('labels'), 'a Loki stream needs at least one label: keep one of labels, or give staticLabels');
    const o: LokiOptions = {
      pushUrl: `${url}${pushPath}`,
      labels,
      staticLabels,
      timestamp: (r.string(p('timestamp'), raw.timestamp, { oneOf: ['observedTime', 'lastSeen'] }) as LokiOptions['timestamp'] | undefined) ?? 'observedTime',
      structuredMetadata: r.boolean(p('structuredMetadata'), raw.structuredMetadata) ?? true,
      headers: r.stringMap(p('headers'), raw.headers) ?? {},
      timeoutMs: r.duration(p('timeout'), raw.timeout) ?? DEFAULT_TIMEOUT_MS,
    };
    const tenant = r.string(p('tenant'), raw.tenant, { pattern: /^[^\s|]+$/, hint: 'is not a tenant id (X-Scope-OrgID)' });
    if (tenant !== undefined) o.tenant = tenant;
    readHttpAuth(r, path, raw, o);
    const q = r.object(p('query'), raw.query, ['api', 'url', 'path', 'settle']);
    if (q !== undefined) {
      const api = (r.string(p('query', 'api'), q.api, { required: true, oneOf: ['loki', 'logsql'] }) as LokiQuery['api'] | undefined) ?? 'loki';
      const base = (r.string(p('query', 'url'), q.url, { pattern: /^https?:\/\/[^\s?#]+$/, hint: 'must be an http:// or https:// base URL' }) ?? url).replace(/\/+$/, '');
      const queryPath = r.string(p('query', 'path'), q.path, { pattern: /^\/[^\s?#]*$/, hint: 'must start with /' }) ?? (api === 'loki' ? '/loki/api/v1/query_range' : '/select/logsql/query');
      o.query = { api, url: `${base}${queryPath}`, settleMs: r.duration(p('query', 'settle'), q.settle) ?? DEFAULT_SETTLE_MS[api] };
      if (!o.structuredMetadata) r.fail(p('query'), 'finding held records needs structuredMetadata (the record id is looked up there)');
    }
    return o;
  },
  create(o, deps: SinkDeps) {
    const headers: Record<string, string> = { ...o.headers, 'User-Agent': 'kevents-export' };
    if (o.tenant !== undefined) headers['X-Scope-OrgID'] = o.tenant;
    const auth = authorization(o, deps.env);
    if (auth !== undefined) headers.Authorization = auth;
    return new LokiSink(o, headers);
  },
};
