import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { parseExportConfig } from '../config.js';
import { isConfigError } from '../config-reader.js';
import type { ExportFields } from '../fields.js';
import { isSinkRejected } from '../types.js';
import type { ExportRecord, PolicyName } from '../types.js';
import { bulkBody, bulkOutcome, checkIndexPattern, indexName, indexTemplate, opensearchSinkType, recordTime } from './opensearch-sink.js';

function record(o: { uid: string; change: number; policy: PolicyName; count?: number; firstSeen?: string; lastSeen?: string; topic?: string }): ExportRecord {
  const fields: ExportFields = {
    changeId: o.change,
    cluster: '',
    namespace: 'prod',
    name: `web.${o.uid}`,
    uid: o.uid,
    type: 'Warning',
    reason: 'BackOff',
    message: 'Back-off restarting failed container',
    action: '',
    regarding: { kind: 'Pod', namespace: 'prod', name: 'web', uid: '', apiVersion: 'v1', fieldPath: '' },
    related: null,
    reportingController: 'kubelet',
    reportingInstance: 'node-1',
    count: o.count ?? 1,
    countBefore: (o.count ?? 1) - 1,
    isNew: (o.count ?? 1) === 1,
    firstSeen: o.firstSeen ?? '2025-03-01T23:59:00Z',
    lastSeen: o.lastSeen ?? '2025-03-02T00:01:00Z',
    observedTime: '2025-03-02T00:01:01Z',
    labels: {},
    annotations: {},
  };
  const r: ExportRecord = {
    id: o.policy === 'upsert' ? `${o.uid}:${o.change}` : `${o.uid}.${o.change}`,
    documentId: o.uid,
    key: o.uid,
    version: o.change,
    policy: o.policy,
    fields,
    payload: { uid: o.uid, count: fields.count },
  };
  if (o.topic !== undefined) r.topic = o.topic;
  return r;
}

const lines = (body: string): unknown[] =>
  body
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);

const records = [record({ uid: 'a', change: 1, policy: 'upsert' }), record({ uid: 'b', change: 2, policy: 'occurrences' }), record({ uid: 'c', change: 3, policy: 'occurrences' })];
const answer = (...items: object[]): string => JSON.stringify({ errors: true, items: items.map((i) => ({ index: i })) });

void describe('opensearch sink: index names', () => {
  const cases: [string, string, string][] = [
    ['kevents-events-{yyyy.MM.dd}', '2025-03-02T00:01:00Z', 'kevents-events-2025.03.02'],
    ['kevents-{yyyy-MM}', '2025-12-31T23:59:59.999Z', 'kevents-2025-12'],
    ['k-{yyyy.MM.dd}-{HH}', '2025-03-02T01:30:00+02:00', 'k-2025.03.01-23'],
    ['events', '2025-03-02T00:01:00Z', 'events'],
  ];
  for (const [pattern, time, want] of cases) {
    void it(`fills ${pattern} from ${time} in UTC`, () => assert.equal(indexName(pattern, time), want));
  }

  const bad: [string, RegExp][] = [
    ['Kevents-{yyyy}', /not an index name/],
    ['kevents-{yyyy/MM}', /time part holds/],
    ['_kevents', /not an index name/],
    ['kevents {dd}', /not an index name/],
  ];
  for (const [pattern, want] of bad) {
    void it(`refuses the pattern ${pattern}`, () => assert.match(checkIndexPattern(pattern) ?? '', want));
  }

  void it('names an upserted document from its first occurrence and an occurrence from its own time', () => {
    // firstSeen is before midnight, lastSeen after: the document stays in the first day's index.
    assert.equal(indexName('e-{yyyy.MM.dd}', recordTime(record({ uid: 'a', change: 9, policy: 'upsert', count: 5 }))), 'e-2025.03.01');
    assert.equal(indexName('e-{yyyy.MM.dd}', recordTime(record({ uid: 'a', change: 9, policy: 'occurrences', count: 5 }))), 'e-2025.03.02');
  });

  void it('installs a template matching every index of the pattern, with keyword and date fields', () => {
    const t = indexTemplate('kevents-events-{yyyy.MM.dd}');
    assert.equal(t.name, 'kevents-events');
    assert.deepEqual(t.body.index_patterns, ['kevents-events-*']);
    const props = ((t.body.template as { mappings: { properties: Record<string, { type?: string }> } }).mappings.properties);
    for (const f of ['namespace', 'name', 'reason', 'type']) assert.equal(props[f]?.type, 'keyword', f);
    for (const f of ['firstSeen', 'lastSeen', 'observedTime']) assert.equal(props[f]?.type, 'date', f);
  });
});

void describe('opensearch sink: bulk requests', () => {
  void it('writes upserts as index at an external version, other policies as create keyed on the record id', () => {
    const body = bulkBody(
      [record({ uid: 'a', change: 7, policy: 'upsert', count: 3 }), record({ uid: 'b', change: 8, policy: 'occurrences' }), record({ uid: 'c', change: 9, policy: 'first', topic: 'other' })],
      (r) => r.topic ?? 'ev-{yyyy.MM.dd}',
    );
    assert.ok(body.endsWith('\n'));
    assert.deepEqual(lines(body), [
      { index: { _index: 'ev-2025.03.01', _id: 'a', version: 7, version_type: 'external' } },
      { uid: 'a', count: 3 },
      { create: { _index: 'ev-2025.03.02', _id: 'b.8' } },
      { uid: 'b', count: 1 },
      { create: { _index: 'other', _id: 'c.9' } },
      { uid: 'c', count: 1 },
    ]);
  });

  void it('takes version conflicts as delivered (the server holds this or a later version)', () => {
    const o = bulkOutcome(records, answer({ status: 201 }, { status: 409, error: { type: 'version_conflict_engine_exception', reason: 'higher or equal' } }, { status: 200 }));
    assert.deepEqual(o, { unavailable: [], refused: [] });
  });

  void it('sorts failed items into unavailable (429, 5xx) and refused (other), each with its record', () => {
    const o = bulkOutcome(
      records,
      answer({ status: 429, error: { type: 'es_rejected_execution_exception', reason: 'queue full' } }, { status: 400, error: { type: 'mapper_parsing_exception', reason: 'bad date' } }, { status: 503, error: { type: 'unavailable_shards_exception' } }),
    );
    assert.deepEqual(o.unavailable.map((u) => u.record.id), ['a:1', 'c.3']);
    assert.deepEqual(o.refused.map((u) => [u.record.id, u.error]), [['b.2', '400 mapper_parsing_exception: bad date']]);
  });

  void it('reads a clean answer without items (filter_path drops nothing but errors) and refuses a short one', () => {
    assert.deepEqual(bulkOutcome(records, '{"errors":false}'), { unavailable: [], refused: [] });
    assert.throws(() => bulkOutcome(records, answer({ status: 201 })), /1 items for 3 records/);
    assert.throws(() => bulkOutcome(records, '<html>'), /not JSON/);
  });
});

void describe('opensearch sink: config', () => {
  const issues = (text: string): string => {
    try {
      parseExportConfig(text, 'x.yaml');
    } catch (e) {
      assert.ok(isConfigError(e), String(e));
      return e.message;
    }
    return '';
  };
  const head = 'sinks:\n  - name: s\n    type: opensearch\n    url: http://127.0.0.1:9200\n';
  const cases: [string, string, string][] = [
    ['a missing url', 'sinks:\n  - name: s\n    type: elasticsearch\n', 'x.yaml:2:5: sinks[0].url: is required'],
    ['an upper-case index', `${head}    index: Events-{yyyy}\n`, 'sinks[0].index: "Events-{yyyy}" is not an index name'],
    ['an unknown time part', `${head}    index: e-{week}\n`, 'sinks[0].index: "e-{week}" has {week}'],
    ['both auths', `${head}    username: u\n    apiKeyEnv: K\n`, 'sinks[0].apiKeyEnv: give username (and passwordEnv) or apiKeyEnv, not both'],
    ['a password without user', `${head}    passwordEnv: P\n`, 'sinks[0].passwordEnv: needs username'],
  ];
  for (const [what, text, want] of cases) void it(`reports ${what}`, () => assert.ok(issues(text).includes(want), issues(text)));

  void it('defaults to upsert into a daily index', () => {
    const c = parseExportConfig(head);
    assert.equal(c.sinks[0]!.policy, 'upsert');
    assert.equal((c.sinks[0]!.options as { index: string }).index, 'kevents-events-{yyyy.MM.dd}');
  });
});

void describe('opensearch sink: against a fake server', () => {
  async function withServer(handle: (req: IncomingMessage, body: string, res: ServerResponse) => void, f: (url: string) => Promise<void>): Promise<void> {
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => handle(req, body, res));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      await f(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
    } finally {
      await new Promise((r) => server.close(r));
    }
  }
  const sink = (url: string, extra: Record<string, unknown> = {}, env: Record<string, string> = {}) =>
    opensearchSinkType.create(
      { flavour: 'opensearch', url, index: 'ev-{yyyy.MM.dd}', template: true, headers: {}, timeoutMs: 5_000, ...extra },
      { logger: { debug() {}, info() {}, warn() {}, error() {} }, env },
    );

  void it('installs the template once, before the first bulk, with the credentials', async () => {
    const seen: string[] = [];
    await withServer(
      (req, body, res) => {
        seen.push(`${req.method} ${req.url?.split('?')[0]} ${req.headers.authorization} ${req.headers['content-type']}`);
        if (req.url?.startsWith('/_bulk')) {
          const n = lines(body).length / 2;
          res.end(JSON.stringify({ errors: false, items: Array.from({ length: n }, () => ({ index: { status: 201 } })) }));
        } else res.end('{"acknowledged":true}');
      },
      async (url) => {
        const s = sink(url, { username: 'kevents', passwordEnv: 'PW' }, { PW: 's3cret' });
        await s.send(records, AbortSignal.timeout(5_000));
        await s.send(records, AbortSignal.timeout(5_000));
      },
    );
    const auth = `Basic ${Buffer.from('kevents:s3cret').toString('base64')}`;
    assert.deepEqual(seen, [`PUT /_index_template/kevents-ev ${auth} application/json`, `POST /_bulk ${auth} application/x-ndjson`, `POST /_bulk ${auth} application/x-ndjson`]);
  });

  void it('throws unavailable while any item is, SinkRejected naming the refused records otherwise', async () => {
    const answers = [answer({ status: 201 }, { status: 429, error: { type: 'es_rejected_execution_exception' } }, { status: 400, error: { type: 'mapper_parsing_exception', reason: 'bad' } })];
    answers.push(answer({ status: 409, error: { type: 'version_conflict_engine_exception' } }, { status: 201 }, { status: 400, error: { type: 'mapper_parsing_exception', reason: 'bad' } }));
    await withServer(
      (req, _body, res) => {
        if (req.url?.startsWith('/_bulk')) res.end(answers.shift());
        else res.end('{}');
      },
      async (url) => {
        const s = sink(url, { template: false });
        const first = await s.send(records, AbortSignal.timeout(5_000)).catch((e: unknown) => e as Error);
        assert.ok(first instanceof Error && !isSinkRejected(first), String(first));
        assert.match(first.message, /opensearch: bulk: 1 of 3 records: b\.2: 429/);
        const second = await s.send(records, AbortSignal.timeout(5_000)).catch((e: unknown) => e as Error);
        assert.ok(isSinkRejected(second), String(second));
        assert.match((second as Error).message, /refused 1 of 3 records: c\.3: 400 mapper_parsing_exception: bad/);
      },
    );
  });

  void it('takes a refused template as unavailable (a config matter, not a reason to drop records)', async () => {
    await withServer(
      (_req, _body, res) => {
        res.statusCode = 400;
        res.end('{"error":"index template [kevents-ev] has index patterns [ev-*] matching patterns from existing templates"}');
      },
      async (url) => {
        const e = await sink(url).send(records, AbortSignal.timeout(5_000)).catch((err: unknown) => err as Error);
        assert.ok(e instanceof Error && !isSinkRejected(e));
        assert.match(e.message, /cannot install the index template kevents-ev: PUT .*400/);
      },
    );
  });
});
