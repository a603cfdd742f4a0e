import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import type { CoreEvent } from '../../api/index.js';
import { parseExportConfig } from '../config.js';
import { isConfigError } from '../config-reader.js';
import type { ExportFields } from '../fields.js';
import { recordOf } from '../policy.js';
import { isSinkRejected, retryAfterOf } from '../types.js';
import type { ExportRecord } from '../types.js';
import { DEFAULT_MAX_IN_FLIGHT, failureMessage, goTimeString, k8seventsLog, otlpLogsRequest, otlpRequests, otlpSinkType, partialSuccess, retryAfterMs } from './otlp-sink.js';
import type { OtlpOptions } from './otlp-sink.js';

function fields(o: Partial<ExportFields> = {}): ExportFields {
  return {
    changeId: 7,
    cluster: '',
    namespace: 'prod',
    name: 'web.1',
    uid: 'u-1',
    type: 'Warning',
    reason: 'BackOff',
    message: 'back-off restarting',
    action: '',
    regarding: { kind: 'Pod', namespace: 'prod', name: 'web-1', uid: 'p-1', apiVersion: 'v1', fieldPath: 'spec.containers{app}' },
    related: null,
    reportingController: 'kubelet',
    reportingInstance: 'node-1',
    count: 2,
    countBefore: 1,
    isNew: false,
    firstSeen: '2025-01-01T00:00:00Z',
    lastSeen: '2025-01-01T00:00:05Z',
    observedTime: '2025-01-01T00:00:05.123456Z',
    labels: {},
    annotations: {},
    ...o,
  };
}

function coreEvent(o: Partial<CoreEvent> = {}): CoreEvent {
  return {
    metadata: { name: 'web.1', namespace: 'prod', uid: 'u-1', creationTimestamp: '2025-01-01T00:00:00Z', resourceVersion: '42' },
    involvedObject: { kind: 'Pod', namespace: 'prod', name: 'web-1', uid: 'p-1', apiVersion: 'v1', fieldPath: 'spec.containers{app}', resourceVersion: '17' },
    reason: 'BackOff',
    message: 'back-off restarting',
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: '2025-01-01T00:00:00Z',
    lastTimestamp: '2025-01-01T00:00:05Z',
    count: 2,
    type: 'Warning',
    ...o,
  };
}

function record(f: Partial<ExportFields> = {}, e: CoreEvent | null = coreEvent()): ExportRecord {
  const r = recordOf('occurrences', fields(f), undefined, undefined)!;
  if (e !== null) r.event = e;
  return r;
}

function options(yaml = '', url = 'http://127.0.0.1:4318/'): OtlpOptions {
  const c = parseExportConfig(`sinks:\n  - name: otel\n    type: otlp\n    url: ${url}\n${yaml}`);
  return c.sinks[0]!.options as OtlpOptions;
}

function issues(yaml: string): string[] {
  try {
    parseExportConfig(`sinks:\n  - name: otel\n    type: otlp\n${yaml}`, 'x.yaml');
  } catch (e) {
    assert.ok(isConfigError(e), String(e));
    return e.message.split('\n');
  }
  assert.fail('the config was accepted');
}

void describe('otlp sink config', () => {
  void it('defaults: /v1/logs, protobuf, no compression, the k8sevents layout, occurrences', () => {
    const c = parseExportConfig('sinks:\n  - name: otel\n    type: otlp\n    url: http://127.0.0.1:4318/\n');
    assert.equal(c.sinks[0]!.policy, 'occurrences');
    const o = c.sinks[0]!.options as OtlpOptions;
    assert.equal(o.logsUrl, 'http://127.0.0.1:4318/v1/logs');
    assert.equal(o.encoding, 'protobuf');
    assert.equal(o.compression, 'none');
    assert.equal(o.layout, 'k8sevents');
    assert.equal(o.insecure, false);
    assert.equal(o.maxInFlight, DEFAULT_MAX_IN_FLIGHT);
    assert.equal(options('    maxInFlight: 1\n').maxInFlight, 1);
    assert.ok(issues('    url: http://127.0.0.1:4318\n    maxInFlight: 0\n').some((l) => l.includes('sinks[0].maxInFlight')));
  });

  void it('refuses upsert and alert with the line and column of the policy', () => {
    for (const policy of ['upsert', 'alert']) {
      const lines = issues(`    url: http://127.0.0.1:4318\n    policy: ${policy}\n`);
      assert.ok(lines.some((l) => l.includes('x.yaml:5:13') && l.includes('sinks[0].policy') && l.includes('occurrences (the default) or first')), lines.join('\n'));
    }
    assert.equal(parseExportConfig('sinks:\n  - name: otel\n    type: otlp\n    url: http://x:4318\n    policy: first\n').sinks[0]!.policy, 'first');
  });

  void it('checks encoding, compression, layout, auth and tls', () => {
    const lines = issues(
      '    url: http://127.0.0.1:4318\n    encoding: thrift\n    compression: zstd\n    layout: eventsv1\n    username: u\n    tls:\n      caFile: /ca.pem\n',
    );
    const text = lines.join('\n');
    for (const want of ['sinks[0].encoding', 'sinks[0].compression', 'sinks[0].layout', 'basic auth needs both username and passwordEnv', 'tls settings need an https:// url']) {
      assert.ok(text.includes(want), `${want} in\n${text}`);
    }
    const o = options('    tls:\n      caFile: /ca.pem\n      insecure: true\n    compression: gzip\n    encoding: json\n    path: /otlp/v1/logs\n', 'https://collector:4318');
    assert.deepEqual([o.logsUrl, o.caFile, o.insecure, o.compression, o.encoding], ['https://collector:4318/otlp/v1/logs', '/ca.pem', true, 'gzip', 'json']);
  });
});

void describe('k8seventsLog', () => {
  void it('maps a core/v1 Event as the k8s_events receiver does, kevents facts under kevents.', () => {
    const { resource, record: lr } = k8seventsLog(record());
    assert.deepEqual(resource, {
      'k8s.node.name': 'node-1',
      'k8s.object.kind': 'Pod',
      'k8s.object.name': 'web-1',
      'k8s.object.uid': 'p-1',
      'k8s.object.fieldpath': 'spec.containers{app}',
      'k8s.object.api_version': 'v1',
      'k8s.object.resource_version': '17',
    });
    assert.deepEqual(lr.attributes, {
      'k8s.event.reason': 'BackOff',
      'k8s.event.action': '',
      'k8s.event.start_time': '2025-01-01 00:00:00 +0000 UTC',
      'k8s.event.name': 'web.1',
      'k8s.event.uid': 'u-1',
      'k8s.namespace.name': 'prod',
      'k8s.event.count': 2,
      'kevents.record.id': 'u-1.7',
      'kevents.change.id': 7,
      'kevents.count.before': 1,
    });
    assert.equal(lr.body, 'back-off restarting');
    assert.deepEqual([lr.severityNumber, lr.severityText], [13, 'Warning']);
    assert.deepEqual(lr.hrTime, [1735689605, 0]);
    assert.deepEqual(lr.hrTimeObserved, [1735689605, 123456000]);
  });

  void it('takes eventTime first, keeps Normal as INFO, gives an unknown type no severity, and leaves a zero count out', () => {
    const e = coreEvent({ type: 'Critical', eventTime: '2025-01-01T00:00:09.654321Z', count: 0 });
    const { record: lr } = k8seventsLog(record({ count: 1, countBefore: 0, cluster: 'eu-1' }, e));
    assert.deepEqual(lr.hrTime, [1735689609, 654321000]);
    assert.equal(lr.severityNumber, undefined);
    assert.equal(lr.severityText, undefined);
    assert.equal(lr.attributes['k8s.event.count'], undefined);
    assert.equal(lr.attributes['kevents.count'], 1);
    assert.equal(lr.attributes['kevents.cluster'], 'eu-1');
    const normal = k8seventsLog(record({}, coreEvent({ type: 'normal' }))).record;
    assert.deepEqual([normal.severityNumber, normal.severityText], [9, 'normal']);
  });

  void it('gives the regarding object namespace, not the event namespace (cluster-scoped objects have none)', () => {
    const e = coreEvent({ involvedObject: { kind: 'Node', name: 'node-1', uid: 'n-1', apiVersion: 'v1' } });
    const { resource, record: lr } = k8seventsLog(record({}, e));
    assert.equal(lr.attributes['k8s.namespace.name'], '');
    assert.equal(resource['k8s.object.resource_version'], '');
    assert.equal(resource['k8s.object.fieldpath'], '');
  });

  void it('falls back on the field set when the archive kept no event version', () => {
    const { resource, record: lr } = k8seventsLog(record({}, null));
    assert.equal(resource['k8s.object.name'], 'web-1');
    assert.equal(resource['k8s.node.name'], '');
    assert.equal(lr.attributes['k8s.event.count'], 2);
    assert.deepEqual(lr.hrTime, [1735689605, 0]);
  });
});

void describe('goTimeString and retryAfterMs', () => {
  void it('prints times as Go does', () => {
    assert.equal(goTimeString('2025-03-04T05:06:07Z'), '2025-03-04 05:06:07 +0000 UTC');
    assert.equal(goTimeString('2025-03-04T05:06:07.120000Z'), '2025-03-04 05:06:07.12 +0000 UTC');
    assert.equal(goTimeString('2025-03-04T06:06:07+01:00'), '2025-03-04 05:06:07 +0000 UTC');
    assert.equal(goTimeString(undefined), '0001-01-01 00:00:00 +0000 UTC');
  });
  void it('reads seconds and HTTP dates, bounded', () => {
    assert.equal(retryAfterMs('3'), 3000);
    assert.equal(retryAfterMs(new Date(10_000).toUTCString(), 4_000), 6000);
    assert.equal(retryAfterMs('soon'), 0);
    assert.equal(retryAfterMs(undefined), 0);
    assert.equal(retryAfterMs('999999'), 600_000);
  });
});

void describe('otlpLogsRequest', () => {
  void it('serialises a batch as OTLP/JSON, records about one object under one resource', async () => {
    const a = record({ changeId: 1 });
    const b = record({ changeId: 2 });
    const c = record({ changeId: 3 }, coreEvent({ involvedObject: { kind: 'Node', name: 'n', uid: 'n-1' } }));
    const req = JSON.parse(Buffer.from(await otlpLogsRequest([a, b, c], 'json')).toString('utf8')) as {
      resourceLogs: { resource: { attributes: { key: string; value: Record<string, unknown> }[] }; scopeLogs: { logRecords: { attributes: { key: string; value: Record<string, unknown> }[]; timeUnixNano: unknown }[] }[] }[];
    };
    assert.equal(req.resourceLogs.length, 2);
    assert.equal(req.resourceLogs[0]!.scopeLogs[0]!.logRecords.length, 2);
    const attrs = req.resourceLogs[0]!.scopeLogs[0]!.logRecords[0]!.attributes;
    assert.deepEqual(attrs.find((x) => x.key === 'k8s.event.count')?.value, { intValue: 2 });
    assert.deepEqual(attrs.find((x) => x.key === 'kevents.record.id')?.value, { stringValue: 'u-1.1' });
    assert.deepEqual(req.resourceLogs[1]!.resource.attributes.find((x) => x.key === 'k8s.node.name')?.value, { stringValue: 'node-1' });
    const proto = await otlpLogsRequest([a, b, c], 'protobuf');
    assert.ok(proto.length > 100 && proto[0] === 0x0a, 'a protobuf ExportLogsServiceRequest starts with field 1, length-delimited');
  });
});

void describe('otlpRequests', () => {
  void it('splits a batch into up to maxInFlight requests of 100 records or more, in order', () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => i);
    const sizes = (n: number, inFlight: number) => otlpRequests(ids(n), inFlight).map((p) => p.length);
    assert.deepEqual(sizes(1000, 4), [250, 250, 250, 250]);
    assert.deepEqual(sizes(1001, 4), [251, 251, 251, 248]);
    assert.deepEqual(sizes(250, 4), [125, 125]);
    assert.deepEqual(sizes(150, 4), [150]);
    assert.deepEqual(sizes(1, 4), [1]);
    assert.deepEqual(sizes(1000, 1), [1000]);
    assert.deepEqual(otlpRequests(ids(1001), 4).flat(), ids(1001));
  });
});

void describe('answers', () => {
  void it('reads a partial success and a failure Status in either encoding', async () => {
    assert.deepEqual(await partialSuccess(Buffer.from(JSON.stringify({ partialSuccess: { rejectedLogRecords: '2', errorMessage: 'too big' } })), 'json'), { rejected: 2, message: 'too big' });
    // ExportLogsServiceResponse{partial_success{rejected_log_records: 3, error_message: "x"}}
    assert.deepEqual(await partialSuccess(Buffer.from([0x0a, 0x05, 0x08, 0x03, 0x12, 0x01, 0x78]), 'protobuf'), { rejected: 3, message: 'x' });
    assert.deepEqual(await partialSuccess(Buffer.alloc(0), 'protobuf'), { rejected: 0, message: '' });
    // google.rpc.Status{code: 3, message: "bad"}
    assert.equal(await failureMessage(Buffer.from([0x08, 0x03, 0x12, 0x03, 0x62, 0x61, 0x64]), 'application/x-protobuf'), 'bad');
    assert.equal(await failureMessage(Buffer.from('{"code":3,"message":"bad json"}'), 'application/json'), 'bad json');
    assert.equal(await failureMessage(Buffer.from('plain\ntext'), 'text/plain'), 'plain text');
  });
});

void describe('otlp sink delivery', () => {
  let answer: (req: IncomingMessage, body: Buffer, res: ServerResponse) => void = (_q, _b, res) => res.end();
  const seen: { headers: IncomingMessage['headers']; body: Buffer }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ headers: req.headers, body });
      answer(req, body, res);
    });
  });
  let base = '';
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const logger = { debug() {}, info() {}, warn() {}, error() {} };
  const sink = (yaml: string, env: Record<string, string> = {}) => otlpSinkType.create(options(yaml, base), { logger, env });

  void it('posts gzip-compressed OTLP/JSON with the headers and the bearer token', async () => {
    seen.length = 0;
    answer = (_q, _b, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    const s = sink('    encoding: json\n    compression: gzip\n    tokenEnv: OTLP_TOKEN\n    headers:\n      X-Tenant: t1\n', { OTLP_TOKEN: 's3cret' });
    await s.send([record()], AbortSignal.timeout(5000));
    await s.close();
    const { headers, body } = seen[0]!;
    assert.equal(headers['content-encoding'], 'gzip');
    assert.equal(headers['content-type'], 'application/json');
    assert.equal(headers.authorization, 'Bearer s3cret');
    assert.equal(headers['x-tenant'], 't1');
    const req = JSON.parse(gunzipSync(body).toString('utf8')) as { resourceLogs: unknown[] };
    assert.equal(req.resourceLogs.length, 1);
  });

  void it('takes a partial success as a refusal, so the records are tried one at a time and the rejected one dead-lettered', async () => {
    answer = (_q, _b, res) => res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end(Buffer.from([0x0a, 0x05, 0x08, 0x01, 0x12, 0x01, 0x78]));
    const s = sink('');
    await assert.rejects(s.send([record(), record({ changeId: 8 })], AbortSignal.timeout(5000)), (e: Error) => isSinkRejected(e) && /partial success, 1 of 2 log records rejected: x/.test(e.message));
    await s.close();
  });

  void it('retries 429/502/503/504 after Retry-After, refuses other answers with the server message', async () => {
    const s = sink('    encoding: json\n');
    for (const status of [429, 502, 503, 504]) {
      answer = (_q, _b, res) => res.writeHead(status, { 'Retry-After': '7' }).end();
      await assert.rejects(s.send([record()], AbortSignal.timeout(5000)), (e: Error) => !isSinkRejected(e) && retryAfterOf(e) === 7000 && e.message.includes(String(status)));
    }
    for (const status of [400, 413, 500]) {
      answer = (_q, _b, res) => res.writeHead(status, { 'Content-Type': 'application/json' }).end('{"code":3,"message":"unknown field xyz"}');
      await assert.rejects(s.send([record()], AbortSignal.timeout(5000)), (e: Error) => isSinkRejected(e) && e.message.endsWith(`${status}: unknown field xyz`));
    }
    await s.close();
  });

  void it('sends the requests of a batch at once and resolves once each was taken', async () => {
    seen.length = 0;
    // No answer until all three requests are in: sent one after the other, the send would time out.
    const held: ServerResponse[] = [];
    answer = (_q, _b, res) => {
      held.push(res);
      if (held.length === 3) for (const r of held.splice(0)) r.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    };
    const s = sink('    encoding: json\n    maxInFlight: 3\n');
    const batch = Array.from({ length: 300 }, (_, i) => record({ changeId: i + 1 }));
    await s.send(batch, AbortSignal.timeout(5000));
    await s.close();
    assert.equal(seen.length, 3);
    const ids = seen.flatMap(({ body }) => {
      const req = JSON.parse(body.toString('utf8')) as { resourceLogs: { scopeLogs: { logRecords: { attributes: { key: string; value: { stringValue?: string } }[] }[] }[] }[] };
      return req.resourceLogs.flatMap((rl) => rl.scopeLogs.flatMap((sl) => sl.logRecords.map((lr) => lr.attributes.find((a) => a.key === 'kevents.record.id')?.value.stringValue)));
    });
    assert.deepEqual(ids.sort(), batch.map((r) => r.id).sort());
  });

  void it('fails a batch whose requests did not all succeed once all answered, unavailable over refused', async () => {
    let n = 0;
    answer = (_q, _b, res) => {
      const status = [400, 503, 200][n++ % 3]!;
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(status === 200 ? '{}' : '{"message":"no"}');
    };
    const s = sink('    encoding: json\n    maxInFlight: 3\n');
    const batch = Array.from({ length: 300 }, (_, i) => record({ changeId: i + 1 }));
    await assert.rejects(s.send(batch, AbortSignal.timeout(5000)), (e: Error) => !isSinkRejected(e) && e.message.includes('503'));
    // The requests after the refused one were sent all the same, and answered before the batch failed.
    assert.equal(n, 3);
    answer = (_q, _b, res) => res.writeHead(n++ % 3 === 0 ? 400 : 200, { 'Content-Type': 'application/json' }).end('{}');
    n = 0;
    await assert.rejects(s.send(batch, AbortSignal.timeout(5000)), (e: Error) => isSinkRejected(e) && e.message.includes('400'));
    await s.close();
  });

  void it('says why when there is no answer', async () => {
    const s = otlpSinkType.create(options('', 'http://127.0.0.1:1'), { logger, env: {} });
    await assert.rejects(s.send([record()], AbortSignal.timeout(5000)), (e: Error) => !isSinkRejected(e) && /ECONNREFUSED/.test(e.message));
    await s.close();
  });
});
