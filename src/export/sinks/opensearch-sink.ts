import { SinkRejected } from '../types.js';
import type { ExportRecord, ExportSink, SinkDeps, SinkType } from '../types.js';
import { postBody } from './http-post.js';

/** OpenSearchOptions configure an `opensearch` (or `elasticsearch`) sink: the bulk API is the same. */
export interface OpenSearchOptions {
  /** flavour is the config `type`, for messages. */
  flavour: 'opensearch' | 'elasticsearch';
  url: string;
  /** index is the index name pattern: `{yyyy.MM.dd}`-style parts are filled from the record's time (see indexName). */
  index: string;
  /** template: install an index template for the pattern before the first write (default true). */
  template: boolean;
  username?: string;
  passwordEnv?: string;
  apiKeyEnv?: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

/** DEFAULT_INDEX: one index a day, named from the event's time (upsert: its first occurrence). */
export const DEFAULT_INDEX = 'kevents-events-{yyyy.MM.dd}';

/** TEMPLATE_PRIORITY is above the built-in templates of Elasticsearch (100), so ours applies to our indices. */
const TEMPLATE_PRIORITY = 200;

const DATE_PART = /\{([^{}]*)\}/g;
const DATE_TOKENS = /yyyy|MM|dd|HH/g;
/** INDEX_NAME is what both servers accept as an index name (lower case, no leading `_`, `-` or `+`). */
const INDEX_NAME = /^[a-z0-9][a-z0-9._+-]{0,254}$/;

/** checkIndexPattern returns why an index pattern cannot name indices, or undefined when it can. */
export function checkIndexPattern(pattern: string): string | undefined {
  for (const m of pattern.matchAll(DATE_PART)) {
    if (!/^(?:yyyy|MM|dd|HH|[._-])+$/.test(m[1] ?? '')) return `has {${m[1]}}: a time part holds yyyy, MM, dd, HH and . - _`;
  }
  const sample = indexName(pattern, '2024-01-02T03:04:05Z');
  if (!INDEX_NAME.test(sample) || sample === '.' || sample === '..') return 'is not an index name once its time parts are filled (lower case letters, digits, . _ - +; not starting with _ - +)';
  return undefined;
}

/** indexName fills a pattern's time parts (`{yyyy.MM.dd}`, `{yyyy-MM}`, `{HH}`) from an RFC 3339 time, in UTC. */
export function indexName(pattern: string, time: string): string {
  let t = Date.parse(time);
  if (Number.isNaN(t)) t = 0;
  const d = new Date(t);
  const pad = (n: number): string => String(n).padStart(2, '0');
  const tokens: Record<string, string> = {
    yyyy: String(d.getUTCFullYear()),
    MM: pad(d.getUTCMonth() + 1),
    dd: pad(d.getUTCDate()),
    HH: pad(d.getUTCHours()),
  };
  return pattern.replace(DATE_PART, (_, inner: string) => inner.replace(DATE_TOKENS, (tok) => tokens[tok] ?? tok));
}

/**
 * recordTime is the time that names a record's index. An upserted document
 * must stay in one index for its whole life (a bulk `index` into another day's
 * index would make a second document, the first one frozen at an old count),
 * so it is the event's first occurrence, which never changes; an occurrence
 * (a change, written once) goes to the day it happened.
 */
export function recordTime(r: ExportRecord): string {
  const f = r.fields;
  if (r.policy === 'upsert') return f.firstSeen !== '' ? f.firstSeen : f.lastSeen;
  return f.lastSeen !== '' ? f.lastSeen : f.observedTime;
}

/** indexTemplate is the `_index_template` body for a pattern: its time parts become `*`, events' fields get their types. */
export function indexTemplate(pattern: string): { name: string; body: Record<string, unknown> } {
  const glob = pattern.replace(DATE_PART, '*');
  const stem = glob.replace(/\*/g, '').replace(/[^a-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '') || 'events';
  const name = stem.startsWith('kevents') ? stem : `kevents-${stem}`;
  const keyword = { type: 'keyword' };
  const date = { type: 'date' };
  const long = { type: 'long' };
  return {
    name,
    body: {
      index_patterns: [glob],
      priority: TEMPLATE_PRIORITY,
      template: {
        mappings: {
          // Strings an operator filters on (namespace, kind, reason, labels) are exact values, not analysed text.
          dynamic_templates: [{ strings_as_keywords: { match_mapping_type: 'string', mapping: { type: 'keyword', ignore_above: 1024 } } }],
          properties: {
            changeId: long,
            cluster: keyword,
            namespace: keyword,
            name: keyword,
            uid: keyword,
            type: keyword,
            reason: keyword,
            action: keyword,
            message: { type: 'text', fields: { keyword: { type: 'keyword', ignore_above: 1024 } } },
            regarding: { properties: { kind: keyword, namespace: keyword, name: keyword, uid: keyword, apiVersion: keyword, fieldPath: keyword } },
            reportingController: keyword,
            reportingInstance: keyword,
            count: long,
            countBefore: long,
            isNew: { type: 'boolean' },
            firstSeen: date,
            lastSeen: date,
            observedTime: date,
          },
        },
      },
    },
  };
}

/** bulkAction is one record's action line: upsert = `index` at its version (external), the others `create` (written once). */
export function bulkAction(r: ExportRecord, index: string): Record<string, unknown> {
  if (r.policy === 'upsert') return { index: { _index: index, _id: r.documentId, version: r.version, version_type: 'external' } };
  return { create: { _index: index, _id: r.id } };
}

/** bulkBody is a batch as a `_bulk` NDJSON body (action line, document line, each ending in a newline). */
export function bulkBody(records: ExportRecord[], pattern: (r: ExportRecord) => string): string {
  let body = '';
  for (const r of records) {
    body += `${JSON.stringify(bulkAction(r, indexName(pattern(r), recordTime(r))))}\n${JSON.stringify(r.payload)}\n`;
  }
  return body;
}

/** BulkItem is one item of a `_bulk` answer (filtered to what the sink reads). */
interface BulkItem {
  status?: number;
  error?: { type?: string; reason?: string };
}

/** BulkOutcome sorts a `_bulk` answer's items: unavailable ones are retried, refused ones reported. */
export interface BulkOutcome {
  /** unavailable are the records the server could not take now (429, 5xx): the batch is sent again. */
  unavailable: { record: ExportRecord; status: number; error: string }[];
  /** refused are the records the server refused for good (a mapping error, a bad document). */
  refused: { record: ExportRecord; status: number; error: string }[];
}

/**
 * bulkOutcome reads a `_bulk` answer against its records (items come in the
 * request's order). A 409 version conflict is success: for `index` at an
 * external version, the server holds this or a later version of the document;
 * for `create`, the record is already there (a redelivery).
 */
export function bulkOutcome(records: ExportRecord[], text: string): BulkOutcome {
  let answer: { errors?: boolean; items?: Record<string, BulkItem>[] };
  try {
    answer = JSON.parse(text) as typeof answer;
  } catch {
    throw new Error(`the bulk answer is not JSON: ${text.slice(0, 200)}`);
  }
  const out: BulkOutcome = { unavailable: [], refused: [] };
  if (answer.errors === false) return out;
  const items = answer.items ?? [];
  if (items.length !== records.length) throw new Error(`the bulk answer has ${items.length} items for ${records.length} records`);
  items.forEach((entry, i) => {
    const item = Object.values(entry)[0] ?? {};
    const status = item.status ?? 0;
    if (status >= 200 && status < 300) return;
    if (status === 409 && item.error?.type === 'version_conflict_engine_exception') return;
    const record = records[i]!;
    const error = `${status} ${item.error?.type ?? 'error'}: ${item.error?.reason ?? ''}`.trim();
    if (status === 429 || status >= 500 || status === 0) out.unavailable.push({ record, status, error });
    else out.refused.push({ record, status, error });
  });
  return out;
}

/** describeItems names up to three failed records and their errors. */
function describeItems(items: BulkOutcome['refused'], total: number): string {
  const shown = items.slice(0, 3).map((f) => `${f.record.id}: ${f.error.slice(0, 200)}`);
  return `${items.length} of ${total} records: ${shown.join('; ')}${items.length > 3 ? '; …' : ''}`;
}

/** BULK_FILTER keeps a bulk answer to what bulkOutcome reads: a batch of 500 answers in a few kilobytes. */
const BULK_FILTER = 'filter_path=errors,items.*.status,items.*.error.type,items.*.error.reason';

class OpenSearchSink implements ExportSink {
  private readonly base: string;
  /** templates holds the index templates installed (or being installed) by pattern. */
  private readonly templates = new Map<string, Promise<void>>();

  constructor(
    private readonly o: OpenSearchOptions,
    private readonly headers: Record<string, string>,
  ) {
    this.base = o.url.replace(/\/+$/, '');
  }

  private pattern = (r: ExportRecord): string => r.topic ?? this.o.index;

  private template(pattern: string, signal: AbortSignal): Promise<void> {
    let done = this.templates.get(pattern);
    if (done === undefined) {
      const { name, body } = indexTemplate(pattern);
      done = postBody(`${this.base}/_index_template/${name}`, JSON.stringify(body), {
        method: 'PUT',
        headers: { ...this.headers, 'Content-Type': 'application/json' },
        signal,
        timeoutMs: this.o.timeoutMs,
      }).then(
        () => undefined,
        (e: unknown) => {
          this.templates.delete(pattern);
          // A refused template is a config matter (a clashing template, no privilege): retried and reported, not a reason to drop records.
          throw new Error(`${this.o.flavour}: cannot install the index template ${name}: ${(e as Error).message}`, { cause: e });
        },
      );
      this.templates.set(pattern, done);
    }
    return done;
  }

  async send(records: ExportRecord[], signal: AbortSignal): Promise<void> {
    const patterns = new Set<string>();
    for (const r of records) {
      const p = this.pattern(r);
      if (!patterns.has(p)) {
        const why = checkIndexPattern(p);
        if (why !== undefined) throw new SinkRejected(`${this.o.flavour}: the index ${JSON.stringify(p)} of record ${r.id} ${why}`);
        patterns.add(p);
      }
    }
    if (this.o.template) await Promise.all([...patterns].map((p) => this.template(p, signal)));
    const text = await postBody(`${this.base}/_bulk?${BULK_FILTER}`, bulkBody(records, this.pattern), {
      headers: { ...this.headers, 'Content-Type': 'application/x-ndjson' },
      signal,
      timeoutMs: this.o.timeoutMs,
    }).catch((e: unknown) => {
      throw rename(e, this.o.flavour);
    });
    const outcome = bulkOutcome(records, text);
    // Unavailable items first: the whole batch is sent again (what was written answers 409, a success).
    if (outcome.unavailable.length > 0) throw new Error(`${this.o.flavour}: bulk: ${describeItems(outcome.unavailable, records.length)}`);
    // Refused items: the runner retries a refused batch one record at a time, so only these are dead-lettered.
    if (outcome.refused.length > 0) throw new SinkRejected(`${this.o.flavour}: bulk refused ${describeItems(outcome.refused, records.length)}`);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** rename prefixes an error's message with the sink's flavour, keeping its kind (SinkRejected stays one). */
function rename(e: unknown, flavour: string): Error {
  const err = e as Error;
  return err.name === 'SinkRejected' ? new SinkRejected(`${flavour}: ${err.message}`, { cause: e }) : new Error(`${flavour}: ${err.message}`, { cause: e });
}

/** authHeaders builds the Authorization header from the options' environment variables. */
function authHeaders(o: OpenSearchOptions, env: Record<string, string | undefined>): Record<string, string> {
  const need = (name: string, what: string): string => {
    const v = env[name];
    if (v === undefined || v === '') throw new Error(`the environment variable ${name} (${what}) is not set`);
    return v;
  };
  if (o.apiKeyEnv !== undefined) return { Authorization: `ApiKey ${need(o.apiKeyEnv, 'apiKeyEnv')}` };
  if (o.username !== undefined) {
    const password = o.passwordEnv !== undefined ? need(o.passwordEnv, 'passwordEnv') : '';
    return { Authorization: `Basic ${Buffer.from(`${o.username}:${password}`).toString('base64')}` };
  }
  return {};
}

function searchSinkType(flavour: OpenSearchOptions['flavour']): SinkType<OpenSearchOptions> {
  return {
    fields: ['url', 'index', 'indexTemplate', 'username', 'passwordEnv', 'apiKeyEnv', 'headers', 'timeout'],
    defaultPolicy: 'upsert',
    read(r, path, raw) {
      const url = r.string([...path, 'url'], raw.url, { required: true, pattern: /^https?:\/\/\S+$/, hint: 'must be an http:// or https:// URL' }) ?? '';
      const index = r.string([...path, 'index'], raw.index) ?? DEFAULT_INDEX;
      const why = checkIndexPattern(index);
      if (why !== undefined) r.fail([...path, 'index'], `${JSON.stringify(index)} ${why}`);
      const o: OpenSearchOptions = {
        flavour,
        url,
        index,
        template: r.boolean([...path, 'indexTemplate'], raw.indexTemplate) ?? true,
        headers: r.stringMap([...path, 'headers'], raw.headers) ?? {},
        timeoutMs: r.duration([...path, 'timeout'], raw.timeout) ?? 30_000,
      };
      const username = r.string([...path, 'username'], raw.username);
      const passwordEnv = r.string([...path, 'passwordEnv'], raw.passwordEnv);
      const apiKeyEnv = r.string([...path, 'apiKeyEnv'], raw.apiKeyEnv);
      if (apiKeyEnv !== undefined && username !== undefined) r.fail([...path, 'apiKeyEnv'], 'give username (and passwordEnv) or apiKeyEnv, not both');
      if (passwordEnv !== undefined && username === undefined) r.fail([...path, 'passwordEnv'], 'needs username');
      if (username !== undefined) o.username = username;
      if (passwordEnv !== undefined) o.passwordEnv = passwordEnv;
      if (apiKeyEnv !== undefined) o.apiKeyEnv = apiKeyEnv;
      return o;
    },
    create(o, deps: SinkDeps) {
      const headers = { ...o.headers, ...authHeaders(o, deps.env), 'User-Agent': 'kevents-export' };
      return new OpenSearchSink(o, headers);
    },
  };
}

/** opensearchSinkType writes records to OpenSearch through the bulk API (upsert: one document per event at its latest version). */
export const opensearchSinkType = searchSinkType('opensearch');

/** elasticsearchSinkType is the same sink for Elasticsearch (7.8 and later: `_index_template`, external versions in `_bulk`). */
export const elasticsearchSinkType = searchSinkType('elasticsearch');
