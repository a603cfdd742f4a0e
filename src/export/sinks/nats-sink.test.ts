import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseExportConfig } from '../config.js';
import { isConfigError } from '../config-reader.js';
import { fieldsOf } from '../fields.js';
import { recordOf } from '../policy.js';
import { isSinkRejected } from '../types.js';
import type { ExportRecord } from '../types.js';
import type { ExportChange } from '../../storage/index.js';
import { classify, DEFAULT_DUPLICATE_WINDOW_MS, natsMessage, natsSinkType } from './nats-sink.js';
import type { NatsOptions } from './nats-sink.js';

function change(id: number, count: number): ExportChange {
  return {
    id,
    observedMicros: 1_700_000_000_000_000,
    occurrence: {
      metadata: { name: `web.${id}`, namespace: 'prod' },
      event: { name: 'web.1', namespace: 'prod', uid: 'u-1' },
      observedTime: '2025-01-01T00:00:00.000000Z',
      lastSeen: '2025-01-01T00:00:00Z',
      countBefore: count - 1,
      countAfter: count,
      type: 'Warning',
      reason: 'BackOff',
      message: 'back-off',
      regarding: { kind: 'Pod', namespace: 'prod', name: 'web-1' },
      reportingController: 'kubelet',
    },
    event: { metadata: { name: 'web.1', namespace: 'prod', uid: 'u-1' }, involvedObject: { kind: 'Pod', namespace: 'prod', name: 'web-1' }, count },
  };
}

function record(policy: 'upsert' | 'occurrences', id: number, topic?: string): ExportRecord {
  return recordOf(policy, fieldsOf(change(id, id)), undefined, topic)!;
}

function options(yaml: string): NatsOptions {
  return parseExportConfig(`sinks:\n  - name: n\n    type: nats\n${yaml}`).sinks[0]!.options as NatsOptions;
}

function issues(yaml: string): string[] {
  try {
    parseExportConfig(`sinks:\n  - name: n\n    type: nats\n${yaml}`, 'x.yaml');
  } catch (e) {
    assert.ok(isConfigError(e), String(e));
    return e.message.split('\n');
  }
  assert.fail('the config was accepted');
}

void describe('natsMessage', () => {
  void it('publishes to the default subject, with the record id scoped by subject as Nats-Msg-Id and its identity in headers', () => {
    const m = natsMessage(record('occurrences', 7), 'kevents.events');
    assert.equal(m.subject, 'kevents.events');
    assert.equal(m.msgID, 'kevents.events/u-1.7');
    assert.deepEqual(m.headers, { 'kevents-id': 'u-1.7', 'kevents-document-id': 'u-1.7', 'kevents-version': '7', 'kevents-policy': 'occurrences' });
    const payload = JSON.parse(m.data);
    assert.equal(payload.uid, 'u-1');
    assert.equal(payload.count, 7);
    assert.equal(payload.countBefore, 6);
  });

  void it('takes the route\'s topic as the subject; upserts carry the document and its version', () => {
    const m = natsMessage(record('upsert', 9, 'kevents.warnings'), 'kevents.events');
    assert.equal(m.subject, 'kevents.warnings');
    assert.equal(m.msgID, 'kevents.warnings/u-1@9');
    assert.equal(m.headers['kevents-document-id'], 'u-1');
    assert.equal(m.headers['kevents-version'], '9');
    assert.equal(m.headers['kevents-policy'], 'upsert');
  });

  void it('marks alerts with their state', () => {
    const r: ExportRecord = { ...record('occurrences', 3), policy: 'alert', alert: { state: 'resolved', repeats: 3, changes: 3, events: 1, objects: ['Pod prod/web-1'], since: 'a', until: 'b' } };
    assert.equal(natsMessage(r, 'k').headers['kevents-alert'], 'resolved');
  });

  void it('redelivers a record as the same message', () => {
    assert.deepEqual(natsMessage(record('occurrences', 5), 'k'), natsMessage(record('occurrences', 5), 'k'));
  });
});

void describe('nats errors', () => {
  const api = (code: number, errCode: number, description: string): Error =>
    Object.assign(new Error(description), { name: 'JetStreamApiError', apiError: () => ({ code, err_code: errCode, description }) });
  const cases: [string, Error, boolean, RegExp][] = [
    ['no stream takes the subject', Object.assign(new Error('jetstream is not enabled'), { name: 'JetStreamNotEnabled' }), false, /no JetStream stream takes subject kevents\.x/],
    ['no responders', Object.assign(new Error("no responders: 'kevents.x'"), { name: 'RequestError' }), false, /no JetStream stream/],
    ['a timeout', Object.assign(new Error('timeout'), { name: 'TimeoutError' }), false, /timeout/],
    ['a closed connection', Object.assign(new Error('closed connection'), { name: 'ClosedConnectionError' }), false, /closed/],
    ['JetStream unavailable (503)', api(503, 10008, 'JetStream system temporarily unavailable'), false, /temporarily/],
    ['a stream removed under the sink', api(404, 10059, 'stream not found'), false, /stream not found/],
    ['a message larger than the stream takes', api(400, 10054, 'message size exceeds maximum allowed'), true, /message size exceeds maximum allowed \(10054\)/],
    ['a message larger than the server takes', Object.assign(new Error("'payload' max_payload size exceeded"), { name: 'InvalidArgumentError' }), true, /max_payload/],
    ['an invalid subject', Object.assign(new Error("illegal subject: 'a b'"), { name: 'InvalidSubjectError' }), true, /illegal subject/],
  ];
  for (const [what, e, rejected, message] of cases) {
    void it(`takes ${what} as ${rejected ? 'a refusal' : 'unavailable'}`, () => {
      const got = classify(e, 'kevents.x');
      assert.equal(isSinkRejected(got), rejected);
      assert.match(got.message, message);
      assert.equal(got.cause, e);
    });
  }
});

void describe('nats config', () => {
  void it('reads servers, subject and the defaults', () => {
    const o = options('    servers: [127.0.0.1:4222, "nats://n2:4222"]\n    subject: kevents.events\n');
    assert.deepEqual(o.servers, ['127.0.0.1:4222', 'nats://n2:4222']);
    assert.equal(o.subject, 'kevents.events');
    assert.equal(o.stream, undefined);
    assert.equal(o.timeoutMs, 10_000);
    assert.equal(o.maxInFlight, 256);
    assert.equal(parseExportConfig('sinks:\n  - { name: n, type: nats, servers: [h:1], subject: s }\n').sinks[0]!.policy, 'occurrences');
  });

  void it('reads a stream with its defaults: the subject, file storage, a 10 minute window', () => {
    assert.deepEqual(options('    servers: [h:4222]\n    subject: kevents.events\n    stream: { name: KEVENTS }\n').stream, { name: 'KEVENTS', subjects: ['kevents.events'], storage: 'file', duplicateWindowMs: DEFAULT_DUPLICATE_WINDOW_MS });
    assert.deepEqual(options('    servers: [h:4222]\n    subject: kevents.events\n    stream: { name: K, subjects: ["kevents.>"], storage: memory, duplicateWindow: 1h }\n').stream, { name: 'K', subjects: ['kevents.>'], storage: 'memory', duplicateWindowMs: 3_600_000 });
  });

  const bad: [string, string, string][] = [
    ['no servers', '    subject: s\n', 'x.yaml:2:5: sinks[0].servers: is required'],
    ['an empty server list', '    servers: []\n    subject: s\n', 'x.yaml:4:14: sinks[0].servers: needs at least one server'],
    ['a server that is not HOST:PORT', '    servers: ["http://h:1"]\n    subject: s\n', 'x.yaml:4:15: sinks[0].servers[0]: "http://h:1" must be HOST:PORT or nats://HOST:PORT'],
    ['no subject', '    servers: [h:1]\n', 'x.yaml:2:5: sinks[0].subject: is required'],
    ['a wildcard subject', '    servers: [h:1]\n    subject: "kevents.>"\n', 'x.yaml:5:14: sinks[0].subject: "kevents.>" is not a NATS subject'],
    ['a user without password', '    servers: [h:1]\n    subject: s\n    user: u\n', 'x.yaml:6:11: sinks[0].user: give user and passwordEnv together'],
    ['a token and a creds file', '    servers: [h:1]\n    subject: s\n    tokenEnv: T\n    credentials: /x.creds\n', 'x.yaml:7:18: sinks[0].credentials: give one of tokenEnv, user with passwordEnv, or credentials'],
    ['a stream without name', '    servers: [h:1]\n    subject: s\n    stream: { storage: file }\n', 'x.yaml:6:13: sinks[0].stream.name: is required'],
    ['a stream name with a dot', '    servers: [h:1]\n    subject: s\n    stream: { name: a.b }\n', 'x.yaml:6:21: sinks[0].stream.name: "a.b" is not a stream name'],
    ['a bad stream subject', '    servers: [h:1]\n    subject: s\n    stream: { name: K, subjects: ["a.>.b"] }\n', 'x.yaml:6:35: sinks[0].stream.subjects[0]: "a.>.b" is not a subject or subject filter'],
    ['a bad storage', '    servers: [h:1]\n    subject: s\n    stream: { name: K, storage: disk }\n', 'x.yaml:6:33: sinks[0].stream.storage: must be one of file, memory'],
    ['a window under a second', '    servers: [h:1]\n    subject: s\n    stream: { name: K, duplicateWindow: 10ms }\n', 'x.yaml:6:41: sinks[0].stream.duplicateWindow: must be at least 1s'],
    ['an unknown stream field', '    servers: [h:1]\n    subject: s\n    stream: { name: K, replicas: 3 }\n', 'x.yaml:6:24: sinks[0].stream.replicas: unknown field'],
  ];
  for (const [what, yaml, want] of bad) {
    void it(`reports ${what}`, () => {
      const got = issues(yaml);
      assert.ok(got.some((l) => l.startsWith(want)), `want ${want}\ngot ${got.join('\n')}`);
    });
  }

  void it('reads credentials from the environment when the sink is built, and says which variable is missing', () => {
    const o = options('    servers: [h:1]\n    subject: s\n    user: kevents\n    passwordEnv: NATS_PASSWORD\n');
    const logger = { debug() {}, info() {}, warn() {}, error() {} } as never;
    assert.throws(() => natsSinkType.create(o, { logger, env: {} }), /the environment variable NATS_PASSWORD \(passwordEnv\) is not set/);
    void natsSinkType.create(o, { logger, env: { NATS_PASSWORD: 'p' } }).close();
    const c = options('    servers: [h:1]\n    subject: s\n    credentials: /nonexistent/k.creds\n');
    assert.throws(() => natsSinkType.create(c, { logger, env: {} }), /cannot read the NATS credentials file \/nonexistent\/k\.creds/);
  });
});
