import { readFileSync } from 'node:fs';
import { requireCjs } from '../../internal/index.js';
import type { Logger } from '../../internal/index.js';
import { SinkRejected } from '../types.js';
import type { ExportRecord, ExportSink, SinkDeps, SinkType } from '../types.js';
import type { JetStreamClient, JetStreamManager, JetStreamModule, NatsConnection, NatsModule } from './nats-driver.js';

/** NatsStreamOptions describe the JetStream stream a NATS sink creates when it is missing (or checks when it exists). */
export interface NatsStreamOptions {
  name: string;
  subjects: string[];
  storage: 'file' | 'memory';
  /** duplicateWindowMs is how long JetStream remembers a `Nats-Msg-Id` and drops a message that repeats it. */
  duplicateWindowMs: number;
}

/** NatsOptions configure a NATS JetStream sink. */
export interface NatsOptions {
  servers: string[];
  /** subject is where records go that no route gave a topic. */
  subject: string;
  tokenEnv?: string;
  user?: string;
  passwordEnv?: string;
  /** credentials is a `.creds` file (user JWT and NKey seed). */
  credentials?: string;
  stream?: NatsStreamOptions;
  /** timeoutMs bounds the wait for one publish's acknowledgement. */
  timeoutMs: number;
  /** maxInFlight bounds the publishes of a batch awaiting their acknowledgement. */
  maxInFlight: number;
}

/**
 * DEFAULT_DUPLICATE_WINDOW_MS: JetStream's own default is 2 minutes, shorter
 * than a pod being rescheduled and pulling its image; 10 minutes covers that,
 * while the server's memory for remembered ids (one entry per message within
 * the window) stays modest at a thousand events a second.
 */
export const DEFAULT_DUPLICATE_WINDOW_MS = 10 * 60_000;
/** DEFAULT_MAX_IN_FLIGHT: enough acknowledgements outstanding to keep a loopback or LAN link busy. */
const DEFAULT_MAX_IN_FLIGHT = 256;
const DEFAULT_TIMEOUT_MS = 10_000;
/** SCAN_EXTRA: `delivered` reads the stream's last (batch + this many) messages, for other writers' messages published since. */
export const SCAN_EXTRA = 1_000;

/** JetStream API error codes the sink tells apart. */
const STREAM_NOT_FOUND = 10059;

/** natsMessage is one record as a JetStream message: its subject, its `Nats-Msg-Id` (unique per subject, so two sinks sharing a stream never drop each other's records) and headers carrying the record's identity. */
export function natsMessage(r: ExportRecord, defaultSubject: string): { subject: string; msgID: string; headers: Record<string, string>; data: string } {
  const subject = r.topic ?? defaultSubject;
  const headers: Record<string, string> = { 'kevents-id': r.id, 'kevents-document-id': r.documentId, 'kevents-version': String(r.version), 'kevents-policy': r.policy };
  if (r.alert !== undefined) headers['kevents-alert'] = r.alert.state;
  return { subject, msgID: `${subject}/${r.id}`, headers, data: JSON.stringify(r.payload) };
}

/** isSubject tells a subject one can publish to: dot-separated tokens, no wildcards or white space. */
export function isSubject(s: string): boolean {
  return /^[^\s.*>]+(\.[^\s.*>]+)*$/.test(s);
}

/** isSubjectFilter tells a stream subject: a subject whose tokens may be `*`, or end with `>`. */
function isSubjectFilter(s: string): boolean {
  return /^([^\s.*>]+|\*)(\.([^\s.*>]+|\*))*(\.>)?$|^>$/.test(s);
}

function errorCode(e: unknown): { name: string; message: string; code?: number; status?: number } {
  const err = e as { name?: string; message?: string; code?: unknown; apiError?: () => { code?: number; err_code?: number } };
  const api = typeof err.apiError === 'function' ? err.apiError() : undefined;
  return { name: err.name ?? '', message: err.message ?? String(e), code: api?.err_code, status: api?.code };
}

/**
 * classify turns a publish error into the exporter's two kinds: a message the
 * server refuses for itself (too large, an invalid subject, a 4xx of the
 * JetStream API) is SinkRejected; no server, no stream taking the subject (no
 * responders), a timeout or a 503 is the sink being unavailable.
 */
export function classify(e: unknown, subject: string): Error {
  const { name, message, code, status } = errorCode(e);
  if (name === 'JetStreamNotEnabled' || /no responders/i.test(message)) {
    return new Error(`nats: no JetStream stream takes subject ${subject} (no responders): create one or give the sink a stream`, { cause: e });
  }
  if (name === 'InvalidSubjectError' || (name === 'InvalidArgumentError' && /max_payload|subject/i.test(message))) return new SinkRejected(`nats: ${message}`, { cause: e });
  if (name === 'JetStreamApiError' && status !== undefined && status >= 400 && status < 500 && code !== STREAM_NOT_FOUND) return new SinkRejected(`nats: ${message} (${code ?? status})`, { cause: e });
  return new Error(`nats: ${message}`, { cause: e });
}

interface Connected {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

class NatsSink implements ExportSink {
  private connecting: Promise<Connected> | undefined;
  private conn: Connected | undefined;
  private streamReady = false;

  constructor(
    private readonly o: NatsOptions,
    private readonly auth: { token?: string; user?: string; pass?: string; creds?: Uint8Array },
    private readonly logger: Logger,
  ) {}

  private driver(): { nats: NatsModule; jetstream: JetStreamModule } {
    return { nats: requireCjs('@nats-io/transport-node') as NatsModule, jetstream: requireCjs('@nats-io/jetstream') as JetStreamModule };
  }

  private connect(): Promise<Connected> {
    this.connecting ??= (async () => {
      const { nats, jetstream } = this.driver();
      try {
        const nc = await nats.connect({
          servers: this.o.servers,
          name: 'kevents-export',
          ...(this.auth.token !== undefined ? { token: this.auth.token } : {}),
          ...(this.auth.user !== undefined ? { user: this.auth.user, pass: this.auth.pass } : {}),
          ...(this.auth.creds !== undefined ? { authenticator: nats.credsAuthenticator(this.auth.creds) } : {}),
          // Once connected, the client reconnects by itself for as long as it takes; the exporter's retries cover the gap.
          reconnect: true,
          maxReconnectAttempts: -1,
          reconnectTimeWait: 1_000,
          timeout: 5_000,
        });
        void nc.closed().then(() => {
          if (this.conn?.nc === nc) this.conn = undefined;
          if (this.conn === undefined) this.connecting = undefined;
        });
        const c = { nc, js: jetstream.jetstream(nc, { timeout: this.o.timeoutMs }), jsm: await jetstream.jetstreamManager(nc, { timeout: this.o.timeoutMs, checkAPI: false }) };
        this.conn = c;
        return c;
      } catch (e) {
        this.connecting = undefined;
        throw new Error(`nats: cannot connect to ${this.o.servers.join(', ')}: ${(e as Error).message}`, { cause: e });
      }
    })();
    return this.connecting;
  }

  /** ensureStream creates the configured stream when it is missing, and says what differs in one that exists. */
  private async ensureStream(c: Connected): Promise<void> {
    const s = this.o.stream;
    if (s === undefined || this.streamReady) return;
    const window = Math.round(s.duplicateWindowMs * 1e6);
    try {
      const info = await c.jsm.streams.info(s.name);
      const missing = s.subjects.filter((x) => !info.config.subjects?.includes(x));
      if (missing.length > 0) this.logger.warn('export: the NATS stream exists without some configured subjects; kevents leaves it as it is', { stream: s.name, missing: missing.join(', ') });
      if ((info.config.duplicate_window ?? 0) < window) {
        this.logger.warn('export: the NATS stream remembers message ids for less than the configured duplicateWindow; kevents leaves it as it is', { stream: s.name, duplicateWindow: `${Math.round((info.config.duplicate_window ?? 0) / 1e9)}s` });
      }
    } catch (e) {
      if (errorCode(e).code !== STREAM_NOT_FOUND) throw new Error(`nats: cannot read stream ${s.name}: ${(e as Error).message}`, { cause: e });
      try {
        await c.jsm.streams.add({ name: s.name, subjects: s.subjects, storage: s.storage, duplicate_window: window });
      } catch (e2) {
        throw new Error(`nats: cannot create stream ${s.name}: ${(e2 as Error).message}`, { cause: e2 });
      }
      this.logger.info('export: created the NATS stream', { stream: s.name, subjects: s.subjects.join(', ') });
    }
    this.streamReady = true;
  }

  async send(records: ExportRecord[], signal: AbortSignal): Promise<void> {
    const c = await this.connect();
    await this.ensureStream(c);
    const { nats } = this.driver();
    let failure: Error | undefined;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < records.length && failure === undefined && !signal.aborted) {
        const m = natsMessage(records[next++]!, this.o.subject);
        const h = nats.headers();
        for (const [k, v] of Object.entries(m.headers)) h.set(k, v);
        try {
          await c.js.publish(m.subject, m.data, { msgID: m.msgID, headers: h, timeout: this.o.timeoutMs });
        } catch (e) {
          // A refusal of one message outranks an outage seen by another: the runner then tries them one by one.
          const err = classify(e, m.subject);
          if (failure === undefined || err instanceof SinkRejected) failure = err;
        }
      }
    };
    // Publishes go out in the batch's order on one connection, so the stream stores them in that order.
    await Promise.all(Array.from({ length: Math.min(this.o.maxInFlight, records.length) }, worker));
    if (failure !== undefined) throw failure;
    if (signal.aborted) throw new Error('nats: delivery stopped', { cause: signal.reason });
  }

  /**
   * delivered reads the `Nats-Msg-Id` of the last messages of each stream the
   * batch goes to (headers only), and returns the records found there. A batch
   * is only sent once the one before it was acknowledged, so what a crash left
   * of it is at the stream's end, behind at most what other writers published
   * since: the last batch + SCAN_EXTRA messages.
   */
  async delivered(records: ExportRecord[], signal: AbortSignal): Promise<Set<string>> {
    const c = await this.connect();
    await this.ensureStream(c);
    const { jetstream } = this.driver();
    const bySubject = new Map<string, Map<string, string>>();
    for (const r of records) {
      const m = natsMessage(r, this.o.subject);
      const ids = bySubject.get(m.subject) ?? new Map<string, string>();
      ids.set(m.msgID, r.id);
      bySubject.set(m.subject, ids);
    }
    const streams = new Map<string, Map<string, string>>();
    for (const [subject, ids] of bySubject) {
      let stream: string;
      try {
        stream = await c.jsm.streams.find(subject);
      } catch (e) {
        if (errorCode(e).code === STREAM_NOT_FOUND || /no stream matches/i.test((e as Error).message)) continue;
        throw new Error(`nats: cannot find the stream of ${subject}: ${(e as Error).message}`, { cause: e });
      }
      const all = streams.get(stream) ?? new Map<string, string>();
      for (const [k, v] of ids) all.set(k, v);
      streams.set(stream, all);
    }
    const held = new Set<string>();
    for (const [stream, ids] of streams) {
      const { state } = await c.jsm.streams.info(stream);
      if (state.messages === 0) continue;
      const start = Math.max(state.first_seq, state.last_seq - (records.length + SCAN_EXTRA) + 1);
      const consumer = await c.js.consumers.get(stream, { deliver_policy: jetstream.DeliverPolicy.StartSequence, opt_start_seq: start, headers_only: true });
      try {
        let seq = start - 1;
        while (seq < state.last_seq && !signal.aborted) {
          const batch = await consumer.fetch({ max_messages: Math.min(1_000, state.last_seq - seq), expires: this.o.timeoutMs });
          let got = 0;
          for await (const m of batch) {
            got++;
            seq = m.seq;
            const id = ids.get(m.headers?.get('Nats-Msg-Id') ?? '');
            if (id !== undefined) held.add(id);
            if (seq >= state.last_seq) break;
          }
          // Messages removed since the stream's info was read (limits, purges) end the scan early.
          if (got === 0) break;
        }
      } finally {
        await consumer.delete().catch(() => undefined);
      }
    }
    return held;
  }

  async close(): Promise<void> {
    const c = this.conn;
    this.conn = undefined;
    this.connecting = undefined;
    await c?.nc.close().catch(() => undefined);
  }
}

const STREAM_FIELDS = ['name', 'subjects', 'storage', 'duplicateWindow'];

/** natsSinkType publishes records to NATS JetStream, acknowledged, one subject per route, deduplicated by `Nats-Msg-Id`. */
export const natsSinkType: SinkType<NatsOptions> = {
  fields: ['servers', 'subject', 'tokenEnv', 'user', 'passwordEnv', 'credentials', 'stream', 'timeout', 'maxInFlight'],
  defaultPolicy: 'occurrences',
  read(r, path, raw) {
    const servers = r.list([...path, 'servers'], raw.servers, true).flatMap((s, i) => {
      const v = r.string([...path, 'servers', i], s, { required: true, pattern: /^((nats|tls):\/\/)?[^\s:/]+(:\d+)?$/, hint: 'must be HOST:PORT or nats://HOST:PORT' });
      return v === undefined ? [] : [v];
    });
    if (Array.isArray(raw.servers) && raw.servers.length === 0) r.fail([...path, 'servers'], 'needs at least one server');
    const subject = r.string([...path, 'subject'], raw.subject, { required: true, pattern: /^[^\s.*>]+(\.[^\s.*>]+)*$/, hint: 'is not a NATS subject (dot-separated tokens, no wildcards)' }) ?? '';
    const o: NatsOptions = {
      servers,
      subject,
      timeoutMs: r.duration([...path, 'timeout'], raw.timeout) ?? DEFAULT_TIMEOUT_MS,
      maxInFlight: r.integer([...path, 'maxInFlight'], raw.maxInFlight, { min: 1, max: 10_000 }) ?? DEFAULT_MAX_IN_FLIGHT,
    };
    const tokenEnv = r.string([...path, 'tokenEnv'], raw.tokenEnv);
    const user = r.string([...path, 'user'], raw.user);
    const passwordEnv = r.string([...path, 'passwordEnv'], raw.passwordEnv);
    const credentials = r.string([...path, 'credentials'], raw.credentials);
    if (tokenEnv !== undefined) o.tokenEnv = tokenEnv;
    if (user !== undefined) o.user = user;
    if (passwordEnv !== undefined) o.passwordEnv = passwordEnv;
    if (credentials !== undefined) o.credentials = credentials;
    if ((user === undefined) !== (passwordEnv === undefined)) r.fail([...path, user === undefined ? 'passwordEnv' : 'user'], 'give user and passwordEnv together');
    if ([tokenEnv, user, credentials].filter((x) => x !== undefined).length > 1) r.fail([...path, 'credentials'], 'give one of tokenEnv, user with passwordEnv, or credentials');
    const s = r.object([...path, 'stream'], raw.stream, STREAM_FIELDS);
    if (s !== undefined) {
      const sp = [...path, 'stream'];
      const name = r.string([...sp, 'name'], s.name, { required: true, pattern: /^[^\s.*>/\\]{1,255}$/, hint: 'is not a stream name (no spaces, dots, *, >, / or \\)' }) ?? '';
      const subjects =
        s.subjects === undefined
          ? [subject]
          : r.list([...sp, 'subjects'], s.subjects).flatMap((x, i) => {
              const v = r.string([...sp, 'subjects', i], x, { required: true });
              if (v !== undefined && !isSubjectFilter(v)) r.fail([...sp, 'subjects', i], `${JSON.stringify(v)} is not a subject or subject filter`);
              return v === undefined ? [] : [v];
            });
      const window = r.duration([...sp, 'duplicateWindow'], s.duplicateWindow);
      if (window !== undefined && window < 1_000) r.fail([...sp, 'duplicateWindow'], 'must be at least 1s');
      o.stream = {
        name,
        subjects,
        storage: (r.string([...sp, 'storage'], s.storage, { oneOf: ['file', 'memory'] }) as 'file' | 'memory' | undefined) ?? 'file',
        duplicateWindowMs: window ?? DEFAULT_DUPLICATE_WINDOW_MS,
      };
    }
    return o;
  },
  create(o, deps: SinkDeps) {
    try {
      requireCjs('@nats-io/transport-node');
      requireCjs('@nats-io/jetstream');
    } catch (e) {
      throw new Error('a nats sink needs the packages @nats-io/transport-node and @nats-io/jetstream: npm install @nats-io/transport-node @nats-io/jetstream', { cause: e });
    }
    const fromEnv = (name: string, field: string): string => {
      const v = deps.env[name];
      if (v === undefined || v === '') throw new Error(`the environment variable ${name} (${field}) is not set`);
      return v;
    };
    const auth: { token?: string; user?: string; pass?: string; creds?: Uint8Array } = {};
    if (o.tokenEnv !== undefined) auth.token = fromEnv(o.tokenEnv, 'tokenEnv');
    if (o.user !== undefined && o.passwordEnv !== undefined) {
      auth.user = o.user;
      auth.pass = fromEnv(o.passwordEnv, 'passwordEnv');
    }
    if (o.credentials !== undefined) {
      try {
        auth.creds = readFileSync(o.credentials);
      } catch (e) {
        throw new Error(`cannot read the NATS credentials file ${o.credentials}: ${(e as Error).message}`, { cause: e });
      }
    }
    return new NatsSink(o, auth, deps.logger);
  },
};
