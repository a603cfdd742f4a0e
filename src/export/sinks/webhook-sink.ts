import { createHmac } from 'node:crypto';
import type { ExportRecord, ExportSink, SinkDeps, SinkType } from '../types.js';
import { DEFAULT_TIMEOUT_MS, postBody } from './http-post.js';

/** WebhookOptions configure a webhook sink. */
export interface WebhookOptions {
  url: string;
  /** format: `json` posts `{ records: [...] }`; `cloudevents` posts a CloudEvents 1.0 batch (`application/cloudevents-batch+json`). */
  format: 'json' | 'cloudevents';
  /** secret (or the environment variable secretEnv names) signs each body: `X-Kevents-Signature-256: sha256=<hex HMAC-SHA256>`. */
  secret?: string;
  secretEnv?: string;
  headers: Record<string, string>;
  timeoutMs: number;
  /** source is the CloudEvents `source` (default `kevents`; a cluster name reads well). */
  source: string;
}

/** SIGNATURE_HEADER carries the body's HMAC, GitHub's layout: `sha256=` and the hex digest. */
export const SIGNATURE_HEADER = 'X-Kevents-Signature-256';

/** CLOUDEVENT_TYPE prefixes the CloudEvents `type` of each record, followed by its policy (`io.kevents.event.upsert`). */
export const CLOUDEVENT_TYPE = 'io.kevents.event';

/** signBody is the value of SIGNATURE_HEADER for a body. */
export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** cloudEvent is one record as a CloudEvent (structured mode, JSON data). */
export function cloudEvent(r: ExportRecord, source: string): Record<string, unknown> {
  const f = r.fields;
  return {
    specversion: '1.0',
    id: r.id,
    source,
    type: `${CLOUDEVENT_TYPE}.${r.alert !== undefined ? `alert.${r.alert.state}` : r.policy}`,
    subject: `${f.regarding.kind.toLowerCase()}/${f.regarding.namespace !== '' ? `${f.regarding.namespace}/` : ''}${f.regarding.name}`,
    time: f.lastSeen,
    datacontenttype: 'application/json',
    keventsdocumentid: r.documentId,
    keventsversion: String(r.version),
    data: r.alert !== undefined ? { alert: r.alert, record: r.payload } : r.payload,
  };
}

/** webhookBody is the body a batch is posted as, with its content type. */
export function webhookBody(records: ExportRecord[], o: Pick<WebhookOptions, 'format' | 'source'>): { body: string; contentType: string } {
  if (o.format === 'cloudevents') {
    return { body: JSON.stringify(records.map((r) => cloudEvent(r, o.source))), contentType: 'application/cloudevents-batch+json' };
  }
  const items = records.map((r) => {
    const item: Record<string, unknown> = { id: r.id, documentId: r.documentId, version: r.version, policy: r.policy, record: r.payload };
    if (r.topic !== undefined) item.topic = r.topic;
    if (r.alert !== undefined) item.alert = r.alert;
    return item;
  });
  return { body: JSON.stringify({ records: items }), contentType: 'application/json' };
}

class WebhookSink implements ExportSink {
  constructor(
    private readonly o: WebhookOptions,
    private readonly secret: string | undefined,
  ) {}

  async send(records: ExportRecord[], signal: AbortSignal): Promise<void> {
    const { body, contentType } = webhookBody(records, this.o);
    const headers: Record<string, string> = { ...this.o.headers, 'Content-Type': contentType, 'User-Agent': 'kevents-export' };
    if (this.secret !== undefined) headers[SIGNATURE_HEADER] = signBody(this.secret, body);
    await postBody(this.o.url, body, { headers, signal, timeoutMs: this.o.timeoutMs });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** webhookSinkType posts batches of records to an HTTP endpoint. */
export const webhookSinkType: SinkType<WebhookOptions> = {
  fields: ['url', 'format', 'secret', 'secretEnv', 'headers', 'timeout', 'source'],
  defaultPolicy: 'upsert',
  read(r, path, raw) {
    const url = r.string([...path, 'url'], raw.url, { required: true, pattern: /^https?:\/\/\S+$/, hint: 'must be an http:// or https:// URL' }) ?? '';
    const o: WebhookOptions = {
      url,
      format: (r.string([...path, 'format'], raw.format, { oneOf: ['json', 'cloudevents'] }) as 'json' | 'cloudevents' | undefined) ?? 'json',
      headers: r.stringMap([...path, 'headers'], raw.headers) ?? {},
      timeoutMs: r.duration([...path, 'timeout'], raw.timeout) ?? DEFAULT_TIMEOUT_MS,
      source: r.string([...path, 'source'], raw.source) ?? 'kevents',
    };
    const secret = r.string([...path, 'secret'], raw.secret);
    const secretEnv = r.string([...path, 'secretEnv'], raw.secretEnv);
    if (secret !== undefined && secretEnv !== undefined) r.fail([...path, 'secretEnv'], 'give secret or secretEnv, not both');
    if (secret !== undefined) o.secret = secret;
    if (secretEnv !== undefined) o.secretEnv = secretEnv;
    return o;
  },
  create(o, deps: SinkDeps) {
    let secret = o.secret;
    if (o.secretEnv !== undefined) {
      secret = deps.env[o.secretEnv];
      if (secret === undefined || secret === '') throw new Error(`the environment variable ${o.secretEnv} (secretEnv) is not set`);
    }
    return new WebhookSink(o, secret);
  },
};
