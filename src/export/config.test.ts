import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseExportConfig } from './config.js';
import { isConfigError } from './config-reader.js';
import { fieldsOf } from './fields.js';
import type { ExportFields } from './fields.js';
import { routeTargets } from './route.js';
import { renderTemplate } from './template.js';
import type { ExportChange } from '../storage/index.js';

function issues(text: string): string[] {
  try {
    parseExportConfig(text, 'x.yaml');
  } catch (e) {
    assert.ok(isConfigError(e), String(e));
    return e.message.split('\n');
  }
  assert.fail('the config was accepted');
}

const SINK = 'sinks:\n  - name: a\n    type: stdout\n';

void describe('parseExportConfig', () => {
  const cases: [string, string, string][] = [
    ['no sinks', 'route: {}\n', 'x.yaml:1:1: sinks: is required'],
    ['an unknown type', 'sinks:\n  - name: a\n    type: loky\n', 'x.yaml:3:11: sinks[0].type: must be one of file, stdout, webhook, slack, alertmanager, kafka, nats, loki, opensearch, elasticsearch, otlp, not "loky"'],
    ['an unknown field', `${SINK}    colour: red\n`, 'x.yaml:4:5: sinks[0].colour: unknown field'],
    ['a bad policy', `${SINK}    policy: every\n`, 'x.yaml:4:13: sinks[0].policy: must be one of upsert, occurrences, first, alert, not "every"'],
    ['a bad duration', `${SINK}    stuckAfter: soon\n`, 'x.yaml:4:17: sinks[0].stuckAfter: must be a duration'],
    ['a webhook without url', 'sinks:\n  - name: h\n    type: webhook\n', 'x.yaml:2:5: sinks[0].url: is required'],
    ['a webhook url that is not http', 'sinks:\n  - name: h\n    type: webhook\n    url: ftp://x\n', 'x.yaml:4:10: sinks[0].url: "ftp://x" must be an http:// or https:// URL'],
    ['a route to an unknown sink', `${SINK}route:\n  sinks: [b]\n`, 'x.yaml:5:11: route.sinks[0]: no sink is named "b"'],
    ['a bad regular expression', `${SINK}route:\n  match:\n    - reason: "(("\n`, 'x.yaml:6:15: route.match[0].reason: is not a regular expression'],
    ['an unknown rule field', `${SINK}route:\n  drop:\n    - colour: red\n`, 'x.yaml:6:7: route.drop[0].colour: unknown field'],
    ['a template field that does not exist', `${SINK}    template:\n      who: "{{ regarding.nam }}"\n`, 'x.yaml:5:12: sinks[0].template.who: unknown field "regarding.nam"'],
    ['a template filter that does not exist', `${SINK}    template:\n      text: "{{ message | html }}"\n`, 'x.yaml:5:13: sinks[0].template.text: unknown filter "html" (filters: mrkdwn, json)'],
    ['the cause in the template of a sink that does not alert', `${SINK}    template:\n      why: "{{ cause }}"\n`, "x.yaml:5:12: sinks[0].template.why: cause is given to the alert policy's messages only (this sink's policy is occurrences)"],
    ['alert controls on an upsert sink', `${SINK}    policy: upsert\n    alert: { minCount: 2 }\n`, 'x.yaml:5:12: sinks[0].alert: alerting controls need policy: alert'],
    ['a bad rate limit', 'sinks:\n  - name: c\n    type: slack\n    url: http://x\n    alert:\n      rateLimit: { perReason: lots }\n', 'x.yaml:6:31: sinks[0].alert.rateLimit.perReason: "lots" must be COUNT/DURATION'],
    ['a kafka client that does not exist', 'sinks:\n  - name: k\n    type: kafka\n    brokers: [b:9092]\n    topic: t\n    client: rdkafka\n', 'x.yaml:6:13: sinks[0].client: must be one of librdkafka, kafkajs, not "rdkafka"'],
    ['an alertmanager url that is not http', 'sinks:\n  - name: am\n    type: alertmanager\n    urls: [http://a:9093, "unix:/x"]\n', 'x.yaml:4:27: sinks[0].urls[1]: "unix:/x" must be an http:// or https:// URL'],
    ['an alertmanager label that does not exist', 'sinks:\n  - name: am\n    type: alertmanager\n    url: http://a:9093\n    labels: [reason, node]\n', 'x.yaml:5:22: sinks[0].labels[1]: must be one of namespace, kind, name, reason, type, cluster, not "node"'],
    ['an alertmanager label a burst does not hold constant', 'sinks:\n  - name: am\n    type: alertmanager\n    url: http://a:9093\n    labels: [reason, name]\n    alert: { groupBy: [namespace, reason] }\n', 'x.yaml:5:22: sinks[0].labels[1]: name changes within a burst grouped by namespace, reason'],
    ['an alertmanager static label that is not a label name', 'sinks:\n  - name: am\n    type: alertmanager\n    url: http://a:9093\n    staticLabels: { team-a: x }\n', 'x.yaml:5:29: sinks[0].staticLabels.team-a: "team-a" is not a label name'],
    ['an alertmanager sink without url', 'sinks:\n  - name: am\n    type: alertmanager\n', 'x.yaml:2:5: sinks[0].url: is required (or urls)'],
    ['two sinks with one name', `${SINK}  - name: a\n    type: stdout\n`, 'x.yaml:4:11: sinks[1].name: another sink is named "a"'],
    ['a YAML syntax error', 'sinks: [\n', 'x.yaml:2:1:'],
  ];
  for (const [what, text, want] of cases) {
    void it(`reports ${what} with its line and field`, () => {
      const got = issues(text);
      assert.ok(got.some((l) => l.startsWith(want)), `want ${want}\ngot ${got.join('\n')}`);
    });
  }

  void it('reports every issue at once', () => {
    assert.equal(issues('sinks:\n  - name: A\n    type: stdout\n    policy: x\n').length, 2);
  });

  void it('reads defaults: every sink receives everything without a route, Slack alerts, webhooks upsert', () => {
    const c = parseExportConfig('sinks:\n  - name: c\n    type: slack\n    url: http://x\n  - name: h\n    type: webhook\n    url: http://y\n');
    assert.deepEqual(c.route.sinks, ['c', 'h']);
    assert.equal(c.sinks[0]!.policy, 'alert');
    assert.equal(c.sinks[1]!.policy, 'upsert');
    assert.equal(c.sinks[1]!.start, 'beginning');
  });
});

function change(o: { type?: string; reason?: string; namespace?: string; kind?: string; count?: number; labels?: Record<string, string> } = {}): ExportChange {
  const ns = o.namespace ?? 'prod';
  return {
    id: 42,
    observedMicros: 1_700_000_000_000_000,
    occurrence: {
      metadata: { name: 'web.42', namespace: ns },
      event: { name: 'web.1', namespace: ns, uid: 'u-1' },
      observedTime: '2025-01-01T00:00:00.000000Z',
      lastSeen: '2025-01-01T00:00:00Z',
      countBefore: (o.count ?? 1) - 1,
      countAfter: o.count ?? 1,
      type: o.type ?? 'Normal',
      reason: o.reason ?? 'Pulled',
      message: 'pulled',
      regarding: { kind: o.kind ?? 'Pod', namespace: ns, name: 'web-1' },
      reportingController: 'kubelet',
    },
    event: {
      metadata: { name: 'web.1', namespace: ns, uid: 'u-1', labels: o.labels ?? {} },
      involvedObject: { kind: o.kind ?? 'Pod', namespace: ns, name: 'web-1' },
      count: o.count ?? 1,
    },
  };
}

void describe('routes', () => {
  const config = parseExportConfig(`sinks:
  - { name: all, type: stdout }
  - { name: warn, type: stdout }
  - { name: big, type: stdout }
route:
  drop: [{ namespace: kube-.* }]
  sinks: [all]
  topic: events
  routes:
    - match: [{ type: Warning }, { labels: { team: pay.* } }]
      sinks: [warn]
      routes:
        - match: [{ minCount: 10 }]
          topic: loud
          sinks: [big]
        - match: [{ reason: BackOff }]
          topic: backoff
          sinks: [all]
`);
  const targets = (f: ExportFields): Record<string, string | undefined> => Object.fromEntries(routeTargets(config.route, f));
  const cases: [string, ExportChange, Record<string, string | undefined>][] = [
    ['a Normal event goes to the top route only', change(), { all: 'events' }],
    ['a dropped namespace goes nowhere, nor its nested routes', change({ namespace: 'kube-system', type: 'Warning', count: 50 }), {}],
    ['a Warning goes to the nested route', change({ type: 'Warning' }), { all: 'events', warn: 'events' }],
    ['a label match is a regular expression on the value', change({ labels: { team: 'payments' } }), { all: 'events', warn: 'events' }],
    ['a deeper route takes its own topic', change({ type: 'Warning', count: 10 }), { all: 'events', warn: 'events', big: 'loud' }],
    ['a sink named at two depths takes the deeper matching route\'s topic', change({ type: 'Warning', reason: 'BackOff' }), { all: 'backoff', warn: 'events' }],
  ];
  for (const [what, c, want] of cases) void it(what, () => assert.deepEqual(targets(fieldsOf(c)), want));
});

void describe('renderTemplate', () => {
  const f = fieldsOf(change({ count: 3 }));
  void it('keeps the type of a whole reference and fills text references', () => {
    assert.deepEqual(renderTemplate({ n: '{{ count }}', who: '{{regarding.kind}}/{{ regarding.name }}', r: '{{ regarding }}', list: ['{{ reason }}'], fixed: 1 }, f), {
      n: 3,
      who: 'Pod/web-1',
      r: { kind: 'Pod', namespace: 'prod', name: 'web-1', uid: '', apiVersion: '', fieldPath: '' },
      list: ['Pulled'],
      fixed: 1,
    });
  });
  void it('reads a missing label as nothing', () => assert.deepEqual(renderTemplate({ a: '{{ labels.app }}', b: 'x{{ labels.app }}y' }, f), { a: null, b: 'xy' }));
  void it('escapes a filtered reference for chat text or for JSON inside a string', () => {
    const evil = { ...fieldsOf(change()), message: 'ping <!channel> <https://evil.example|docs> & "quoted"\n</script>\u2028' };
    assert.deepEqual(
      renderTemplate({ text: '*{{ reason }}*: {{ message | mrkdwn }}', body: '{"text":{{ message | json }},"n":{{count|json}}}', whole: '{{ message | mrkdwn }}', none: '{{ labels.app | json }}' }, evil),
      {
        text: '*Pulled*: ping &lt;!channel&gt; &lt;https://evil.example|docs&gt; &amp; "quoted"\n&lt;/script&gt;\u2028',
        body: '{"text":"ping \\u003c!channel\\u003e \\u003chttps://evil.example|docs\\u003e \\u0026 \\"quoted\\"\\n\\u003c/script\\u003e\\u2028","n":1}',
        whole: 'ping &lt;!channel&gt; &lt;https://evil.example|docs&gt; &amp; "quoted"\n&lt;/script&gt;\u2028',
        none: 'null',
      },
    );
    const body = renderTemplate('{"text":{{ message | json }}}', evil) as string;
    assert.equal((JSON.parse(body) as { text: string }).text, evil.message);
  });
});
