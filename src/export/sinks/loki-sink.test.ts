import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { after, describe, it } from 'node:test';
import { parseExportConfig } from '../config.js';
import { isConfigError } from '../config-reader.js';
import type { ExportFields } from '../fields.js';
import { recordOf } from '../policy.js';
import { isSinkRejected } from '../types.js';
import type { ExportRecord } from '../types.js';
import { heldIds, lokiHeldQuery, lokiPushBody, lokiSinkType, lokiStreams, logsqlHeldQuery, rfc3339Nanos } from './loki-sink.js';
import type { LokiOptions } from './loki-sink.js';

function fields(o: Partial<ExportFields> & { kind?: string } = {}): ExportFields {
  const { kind, ...rest } = o;
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
    regarding: { kind: kind ?? 'Pod', namespace: 'prod', name: 'web-1', uid: 'p-1', apiVersion: 'v1', fieldPath: '' },
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
    ...rest,
  };
}

function record(o: Partial<ExportFields> & { kind?: string } = {}, template?: unknown): ExportRecord {
  return recordOf('occurrences', fields(o), template, undefined)!;
}

function options(yaml = ''): LokiOptions {
  const c = parseExportConfig(`sinks:\n  - name: logs\n    type: loki\n    url: http://127.0.0.1:3100/\n${yaml}`);
  return c.sinks[0]!.options as LokiOptions;
}

function issues(yaml: string): string[] {
  try {
    parseExportConfig(`sinks:\n  - name: logs\n    type: loki\n${yaml}`, 'x.yaml');
  } catch (e) {
    assert.ok(isConfigError(e), String(e));
    return e.message.split('\n');
  }
  assert.fail('the config was accepted');
}

void describe('rfc3339Nanos', () => {
  const cases: [string, string | undefined][] = [
    ['1970-01-01T00:00:00Z', '0'],
    ['2025-01-01T00:00:05.123456Z', '1735689605123456000'],
    ['2025-01-01T00:00:05.123456789Z', '1735689605123456789'],
    ['2025-01-01T01:00:05.5+01:00', '1735689605500000000'],
    ['2025-01-01 00:00:05Z', undefined],
    ['', undefined],
  ];
  for (const [text, want] of cases) void it(`reads ${JSON.stringify(text)}`, () => assert.equal(rfc3339Nanos(text), want));
});

void describe('lokiPushBody', () => {
  void it('groups a batch into streams by their bounded labels, entries in time order with the record id as structured metadata', () => {
    const o = options();
    const a = record({ changeId: 3, observedTime: '2025-01-01T00:00:09Z' });
    const b = record({ changeId: 4, observedTime: '2025-01-01T00:00:01.000000001Z' });
    const c = record({ changeId: 5, type: 'Normal', reason: 'Pulled', kind: 'Node', namespace: 'default', cluster: 'eu-1' });
    const body = JSON.parse(lokiPushBody([a, c, b], o)) as { streams: { stream: Record<string, string>; values: unknown[][] }[] };
    assert.deepEqual(body.streams, [
      {
        stream: { namespace: 'prod', kind: 'Pod', reason: 'BackOff', type: 'Warning' },
        values: [
          ['1735689601000000001', JSON.stringify(b.payload), { kevents_id: 'u-1.4' }],
          ['1735689609000000000', JSON.stringify(a.payload), { kevents_id: 'u-1.3' }],
        ],
      },
      {
        stream: { namespace: 'default', kind: 'Node', reason: 'Pulled', type: 'Normal', cluster: 'eu-1' },
        values: [['1735689605123456000', JSON.stringify(c.payload), { kevents_id: 'u-1.5' }]],
      },
    ]);
    // The line is the payload: the whole field set, never cut into labels.
    assert.equal((JSON.parse(body.streams[0]!.values[0]![1] as string) as ExportFields).name, 'web.1');
  });

  void it('takes the chosen labels, static labels, a template, the event time, and no metadata when told', () => {
    const o = options('    labels: [namespace]\n    staticLabels: { service_name: kevents }\n    timestamp: lastSeen\n    structuredMetadata: false\n');
    const [s] = lokiStreams([record({}, { what: '{{ reason }} {{ regarding.name }}' })], o);
    assert.deepEqual(s, { stream: { service_name: 'kevents', namespace: 'prod' }, values: [['1735689605000000000', '{"what":"BackOff web-1"}']] });
  });
});

void describe('the loki config', () => {
  const cases: [string, string, string][] = [
    ['upsert', '    url: http://x\n    policy: upsert\n', 'x.yaml:5:13: sinks[0].policy: a loki sink takes policy occurrences (the default) or first, not upsert'],
    ['the object name as a label', '    url: http://x\n    labels: [namespace, name]\n', 'x.yaml:5:25: sinks[0].labels[1]: "name" has a value per object or event'],
    ['the uid as a label', '    url: http://x\n    labels: [uid]\n', 'x.yaml:5:14: sinks[0].labels[0]: "uid" has a value per object or event'],
    ['the message as a label', '    url: http://x\n    labels: [message]\n', 'x.yaml:5:14: sinks[0].labels[0]: "message" has a value per object or event'],
    ['an unknown label', '    url: http://x\n    labels: [node]\n', 'x.yaml:5:14: sinks[0].labels[0]: must be one of namespace, kind, reason, type, cluster, not "node"'],
    ['a bad static label name', '    url: http://x\n    staticLabels: { app-name: x }\n', 'x.yaml:5:31: sinks[0].staticLabels.app-name: "app-name" is not a Loki label name'],
    ['a static label taken from events', '    url: http://x\n    staticLabels: { kind: x }\n', 'x.yaml:5:27: sinks[0].staticLabels.kind: kind is already a label taken from each event'],
    ['no label at all', '    url: http://x\n    labels: []\n', 'x.yaml:5:13: sinks[0].labels: a Loki stream needs at least one label'],
    ['a url with a path query', '    url: http://x/?a=1\n', 'x.yaml:4:10: sinks[0].url: "http://x/?a=1" must be an http:// or https:// base URL'],
    ['half of basic auth', '    url: http://x\n    username: me\n', 'x.yaml:5:15: sinks[0].username: basic auth needs both username and passwordEnv'],
    ['a query without its api', '    url: http://x\n    query: { path: /q }\n', 'x.yaml:5:12: sinks[0].query.api: is required'],
    ['a query without metadata', '    url: http://x\n    structuredMetadata: false\n    query: { api: loki }\n', 'x.yaml:6:12: sinks[0].query: finding held records needs structuredMetadata'],
  ];
  for (const [what, yaml, want] of cases) {
    void it(`refuses ${what}`, () => {
      const got = issues(yaml);
      assert.ok(got.some((l) => l.startsWith(want)), `want ${want}\ngot ${got.join('\n')}`);
    });
  }

  void it('defaults to occurrences, Loki\'s push path, the five bounded labels and the observed time', () => {
    const c = parseExportConfig('sinks:\n  - name: logs\n    type: loki\n    url: http://127.0.0.1:3100/\n    query: { api: logsql }\n');
    assert.equal(c.sinks[0]!.policy, 'occurrences');
    const o = c.sinks[0]!.options as LokiOptions;
    assert.equal(o.pushUrl, 'http://127.0.0.1:3100/loki/api/v1/push');
    assert.deepEqual(o.labels, ['namespace', 'kind', 'reason', 'type', 'cluster']);
    assert.equal(o.timestamp, 'observedTime');
    assert.deepEqual(o.query, { api: 'logsql', url: 'http://127.0.0.1:3100/select/logsql/query', settleMs: 5_000 });
  });
});

void describe('the held-records queries', () => {
  void it('asks Loki for one stream by its exact selector, the ids as a metadata filter, over the stream\'s time span', () => {
    const o = options();
    const [s] = lokiStreams([record({ changeId: 1 }), record({ changeId: 2, observedTime: '2025-01-01T00:00:06Z' })], o);
    const q = lokiHeldQuery(s!, o.labels, ['u-1.1', 'u-1.2']);
    assert.equal(q.get('query'), '{cluster="", kind="Pod", namespace="prod", reason="BackOff", type="Warning"} | kevents_id=~"u-1\\\\.1|u-1\\\\.2"');
    assert.equal(q.get('start'), '1735689605123456000');
    assert.equal(q.get('end'), '1735689606000000001');
  });

  void it('asks VictoriaLogs for the ids over whole seconds around the span', () => {
    const q = logsqlHeldQuery(['a.1', 'b"2'], '1735689605123456000', '1735689606000000000');
    assert.equal(q.get('query'), 'kevents_id:in("a.1","b\\"2") | fields kevents_id');
    assert.equal(q.get('start'), '1735689604');
    assert.equal(q.get('end'), '1735689608');
  });

  void it('reads ids from Loki\'s answer in both label encodings', () => {
    const text = JSON.stringify({
      status: 'success',
      data: {
        resultType: 'streams',
        result: [
          { stream: { namespace: 'prod', kevents_id: 'u-1.1' }, values: [['1', 'x']] },
          { stream: { namespace: 'prod' }, values: [['2', 'y', { structuredMetadata: { kevents_id: 'u-1.2' } }]] },
        ],
      },
    });
    assert.deepEqual(heldIds(text), ['u-1.1', 'u-1.2']);
  });
});

void describe('the loki sink over HTTP', () => {
  const seen: { url: string; headers: IncomingMessage['headers']; body: string }[] = [];
  let status = 204;
  let answer = '';
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', headers: req.headers, body });
      res.writeHead(status).end(answer);
    });
  });
  const ready = new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}`)));
  after(() => new Promise((r) => server.close(r)));

  async function sink(yaml: string, env: Record<string, string> = {}): Promise<ReturnType<typeof lokiSinkType.create>> {
    const url = await ready;
    const c = parseExportConfig(`sinks:\n  - name: logs\n    type: loki\n    url: ${url}\n${yaml}`);
    return lokiSinkType.create(c.sinks[0]!.options as LokiOptions, { logger: undefined as never, env });
  }

  void it('pushes JSON with the tenant and basic auth, and classes 400 as refused, 429 and 5xx as unavailable', async () => {
    const s = await sink('    tenant: team-a\n    username: me\n    passwordEnv: LOKI_PASSWORD\n', { LOKI_PASSWORD: 'pw' });
    status = 204;
    await s.send([record()], new AbortController().signal);
    const push = seen.at(-1)!;
    assert.equal(push.url, '/loki/api/v1/push');
    assert.equal(push.headers['content-type'], 'application/json');
    assert.equal(push.headers['x-scope-orgid'], 'team-a');
    assert.equal(push.headers.authorization, `Basic ${Buffer.from('me:pw').toString('base64')}`);
    assert.equal((JSON.parse(push.body) as { streams: unknown[] }).streams.length, 1);
    for (const [code, rejected] of [[400, true], [429, false], [500, false], [503, false]] as const) {
      status = code;
      answer = 'entry too far behind';
      await assert.rejects(s.send([record()], new AbortController().signal), (e) => isSinkRejected(e) === rejected, `status ${code}`);
    }
  });

  void it('sends a bearer token and refuses to start without its variable', async () => {
    await assert.rejects(sink('    tokenEnv: LOKI_TOKEN\n'), /LOKI_TOKEN is not set/);
    const s = await sink('    tokenEnv: LOKI_TOKEN\n    path: /insert/loki/api/v1/push?disable_message_parsing=1\n', { LOKI_TOKEN: 't0k' });
    status = 204;
    await s.send([record()], new AbortController().signal);
    assert.equal(seen.at(-1)!.url, '/insert/loki/api/v1/push?disable_message_parsing=1');
    assert.equal(seen.at(-1)!.headers.authorization, 'Bearer t0k');
  });

  void it('finds held records through LogsQL with the tenant as AccountID and ProjectID, and fails when the query does', async () => {
    const s = await sink('    tenant: "3:4"\n    query: { api: logsql, settle: 0 }\n');
    status = 200;
    answer = `${JSON.stringify({ kevents_id: 'u-1.1' })}\n`;
    const held = await s.delivered!([record({ changeId: 1 }), record({ changeId: 2 })], new AbortController().signal);
    assert.deepEqual([...held], ['u-1.1']);
    const q = seen.at(-1)!;
    assert.equal(q.url, '/select/logsql/query');
    assert.equal(q.headers.accountid, '3');
    assert.equal(q.headers.projectid, '4');
    assert.match(new URLSearchParams(q.body).get('query')!, /^kevents_id:in\("u-1\.1","u-1\.2"\)/);
    status = 500;
    await assert.rejects(s.delivered!([record()], new AbortController().signal), /500/);
  });

  void it('finds held records through Loki\'s query_range, one query per stream', async () => {
    const s = await sink('    query: { api: loki }\n');
    status = 200;
    answer = JSON.stringify({ status: 'success', data: { resultType: 'streams', result: [{ stream: { kevents_id: 'u-1.2' }, values: [['1', 'x']] }] } });
    const before = seen.length;
    const held = await s.delivered!([record({ changeId: 1 }), record({ changeId: 2 }), record({ changeId: 3, namespace: 'dev' })], new AbortController().signal);
    assert.deepEqual([...held], ['u-1.2']);
    assert.equal(seen.length - before, 2);
    assert.match(seen.at(-1)!.url, /^\/loki\/api\/v1\/query_range\?query=/);
  });
});
