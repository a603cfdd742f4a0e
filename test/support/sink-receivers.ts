import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Local receivers for the HTTP sinks, started by the tests on free loopback
 * ports. Each checks what a real far end checks (the webhook its signature and
 * CloudEvents attributes, Slack its documented Block Kit rules) and answers as
 * it would; each can be taken down and brought back on the same port.
 */

/** Receiver is a local HTTP endpoint the tests can take down and bring back. */
export interface Receiver {
  url: string;
  /** down closes the listener (connections are refused) until `up`. */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
  /** problems are the requests it refused, with why. */
  problems: string[];
}

async function listen(handler: (req: IncomingMessage, body: string, res: ServerResponse) => void, port = 0): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => handler(req, body, res));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}

async function receiver(path: string, handler: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<Receiver> {
  let { server, port } = await listen(handler);
  let isUp = true;
  const close = (): Promise<void> =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return {
    url: `http://127.0.0.1:${port}${path}`,
    problems: [],
    async down() {
      if (!isUp) return;
      isUp = false;
      await close();
    },
    async up() {
      if (isUp) return;
      ({ server, port } = await listen(handler, port));
      isUp = true;
    },
    async close() {
      if (isUp) await close();
      isUp = false;
    },
  };
}

/** WebhookDelivery is one record as a webhook receiver got it. */
export interface WebhookDelivery {
  id: string;
  documentId: string;
  version: number;
  policy: string;
  record: any;
  alert?: any;
}

/** WebhookReceiver keeps what it received: every delivery, and the documents an upserting store would hold. */
export interface WebhookReceiver extends Receiver {
  /** deliveries counts the deliveries of each record id (above 1: a redelivery). */
  deliveries: Map<string, number>;
  /** byId is the first content received under each id (a redelivery must carry the same). */
  byId: Map<string, WebhookDelivery>;
  /** documents holds, per documentId, the record of the highest version received (an upsert with external versions). */
  documents: Map<string, WebhookDelivery>;
  /** mismatches lists ids redelivered with a different content. */
  mismatches: string[];
}

/** startWebhookReceiver accepts `json` or `cloudevents` bodies; with a secret, a body without its valid signature is a 401. */
export async function startWebhookReceiver(options: { secret?: string; format: 'json' | 'cloudevents' }): Promise<WebhookReceiver> {
  const deliveries = new Map<string, number>();
  const byId = new Map<string, WebhookDelivery>();
  const documents = new Map<string, WebhookDelivery>();
  const mismatches: string[] = [];
  const problems: string[] = [];
  const refuse = (res: ServerResponse, status: number, why: string): void => {
    problems.push(why);
    res.writeHead(status, { 'Content-Type': 'text/plain' });
    res.end(why);
  };
  const r = await receiver('/hook', (req, body, res) => {
    if (req.method !== 'POST') return refuse(res, 405, `method ${req.method}`);
    if (options.secret !== undefined) {
      const want = `sha256=${createHmac('sha256', options.secret).update(body).digest('hex')}`;
      const got = String(req.headers['x-kevents-signature-256'] ?? '');
      if (got.length !== want.length || !timingSafeEqual(Buffer.from(got), Buffer.from(want))) return refuse(res, 401, 'bad signature');
    }
    let items: WebhookDelivery[];
    try {
      if (options.format === 'cloudevents') {
        if (req.headers['content-type'] !== 'application/cloudevents-batch+json') return refuse(res, 415, `content type ${req.headers['content-type']}`);
        const events = JSON.parse(body) as any[];
        if (!Array.isArray(events)) return refuse(res, 400, 'a CloudEvents batch is an array');
        items = events.map((e) => {
          for (const k of ['specversion', 'id', 'source', 'type']) if (typeof e[k] !== 'string' || e[k] === '') throw new Error(`CloudEvent without ${k}`);
          if (e.specversion !== '1.0') throw new Error(`specversion ${e.specversion}`);
          return { id: e.id, documentId: e.keventsdocumentid, version: Number(e.keventsversion), policy: e.type, record: e.data };
        });
      } else {
        if (req.headers['content-type'] !== 'application/json') return refuse(res, 415, `content type ${req.headers['content-type']}`);
        items = (JSON.parse(body) as { records: WebhookDelivery[] }).records;
      }
    } catch (e) {
      return refuse(res, 400, (e as Error).message);
    }
    for (const item of items) {
      deliveries.set(item.id, (deliveries.get(item.id) ?? 0) + 1);
      const first = byId.get(item.id);
      if (first === undefined) byId.set(item.id, item);
      else if (JSON.stringify(first) !== JSON.stringify(item)) mismatches.push(item.id);
      const doc = documents.get(item.documentId);
      if (doc === undefined || doc.version < item.version) documents.set(item.documentId, item);
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{"ok":true}');
  });
  r.problems = problems;
  return Object.assign(r, { deliveries, byId, documents, mismatches });
}

/** SlackReceiver keeps the messages an incoming webhook accepted. */
export interface SlackReceiver extends Receiver {
  messages: { text: string; blocks: any[] }[];
}

/**
 * checkSlackMessage applies Slack's documented rules for a message posted to
 * an incoming webhook (Block Kit reference: blocks, composition objects) and
 * returns the first broken one, as Slack answers `invalid_blocks` for it.
 */
export function checkSlackMessage(m: any): string | undefined {
  if (m === null || typeof m !== 'object') return 'invalid_payload: not a JSON object';
  if (typeof m.text !== 'string' && !Array.isArray(m.blocks)) return 'no_text: a message needs text or blocks';
  if (m.text !== undefined && typeof m.text !== 'string') return 'invalid_payload: text must be a string';
  if (typeof m.text === 'string' && m.text.length > 40_000) return 'msg_too_long: text over 40,000 characters';
  if (m.blocks === undefined) return undefined;
  if (!Array.isArray(m.blocks)) return 'invalid_blocks: blocks must be an array';
  if (m.blocks.length > 50) return `invalid_blocks: ${m.blocks.length} blocks (at most 50)`;
  const textObject = (t: any, where: string, max: number, plainOnly = false): string | undefined => {
    if (t === null || typeof t !== 'object') return `invalid_blocks: ${where} must be a text object`;
    if (t.type !== 'plain_text' && t.type !== 'mrkdwn') return `invalid_blocks: ${where}.type ${t.type}`;
    if (plainOnly && t.type !== 'plain_text') return `invalid_blocks: ${where} must be plain_text`;
    if (typeof t.text !== 'string' || t.text.length < 1) return `invalid_blocks: ${where}.text must be 1 character or more`;
    if (t.text.length > max) return `invalid_blocks: ${where}.text is ${t.text.length} characters (at most ${max})`;
    if (t.emoji !== undefined && t.type !== 'plain_text') return `invalid_blocks: ${where}.emoji is only for plain_text`;
    return undefined;
  };
  for (const [i, b] of (m.blocks as any[]).entries()) {
    const at = `blocks[${i}]`;
    if (b.block_id !== undefined && (typeof b.block_id !== 'string' || b.block_id.length > 255)) return `invalid_blocks: ${at}.block_id over 255 characters`;
    switch (b.type) {
      case 'header': {
        const p = textObject(b.text, `${at}.text`, 150, true);
        if (p !== undefined) return p;
        break;
      }
      case 'section': {
        if (b.text === undefined && b.fields === undefined) return `invalid_blocks: ${at} needs text or fields`;
        if (b.text !== undefined) {
          const p = textObject(b.text, `${at}.text`, 3000);
          if (p !== undefined) return p;
        }
        if (b.fields !== undefined) {
          if (!Array.isArray(b.fields) || b.fields.length > 10) return `invalid_blocks: ${at}.fields: at most 10`;
          for (const [j, f] of (b.fields as any[]).entries()) {
            const p = textObject(f, `${at}.fields[${j}]`, 2000);
            if (p !== undefined) return p;
          }
        }
        break;
      }
      case 'context': {
        if (!Array.isArray(b.elements) || b.elements.length < 1 || b.elements.length > 10) return `invalid_blocks: ${at}.elements: 1 to 10`;
        for (const [j, e] of (b.elements as any[]).entries()) {
          const p = textObject(e, `${at}.elements[${j}]`, 3000);
          if (p !== undefined) return p;
        }
        break;
      }
      case 'divider':
        break;
      default:
        return `invalid_blocks: ${at}.type ${String(b.type)} is not a block this receiver knows`;
    }
  }
  return undefined;
}

/** startSlackReceiver answers as Slack's incoming webhooks do: 200 `ok`, or 400 with the error code. */
export async function startSlackReceiver(): Promise<SlackReceiver> {
  const messages: { text: string; blocks: any[] }[] = [];
  const problems: string[] = [];
  const r = await receiver('/services/T000/B000/XXXX', (req, body, res) => {
    let m: any;
    try {
      if (!String(req.headers['content-type']).startsWith('application/json')) throw new Error('invalid_payload: content type');
      m = JSON.parse(body);
    } catch (e) {
      problems.push((e as Error).message);
      res.writeHead(400, { 'Content-Type': 'text/plain' });
      res.end('invalid_payload');
      return;
    }
    const p = checkSlackMessage(m);
    if (p !== undefined) {
      problems.push(p);
      res.writeHead(400, { 'Content-Type': 'text/plain' });
      res.end(p.split(':')[0]);
      return;
    }
    messages.push(m);
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('ok');
  });
  r.problems = problems;
  return Object.assign(r, { messages });
}

/** AlertmanagerNotification is the body Alertmanager's webhook_config posts (version 4). */
export interface AlertmanagerNotification {
  status: 'firing' | 'resolved';
  groupLabels: Record<string, string>;
  commonLabels: Record<string, string>;
  alerts: { status: 'firing' | 'resolved'; labels: Record<string, string>; annotations: Record<string, string>; startsAt: string; endsAt: string; generatorURL: string }[];
}

/** AlertmanagerReceiver keeps the notifications an Alertmanager sent to its webhook. */
export interface AlertmanagerReceiver extends Receiver {
  notifications: AlertmanagerNotification[];
}

/** startAlertmanagerReceiver is the webhook an Alertmanager notifies: it checks the payload's version and keeps each notification. */
export async function startAlertmanagerReceiver(): Promise<AlertmanagerReceiver> {
  const notifications: AlertmanagerNotification[] = [];
  const problems: string[] = [];
  const r = await receiver('/alertmanager', (req, body, res) => {
    const n = JSON.parse(body) as AlertmanagerNotification & { version?: string };
    if (req.method !== 'POST' || n.version !== '4') problems.push(`${req.method} version ${n.version}`);
    else notifications.push(n);
    res.writeHead(200);
    res.end();
  });
  r.problems = problems;
  return Object.assign(r, { notifications });
}
