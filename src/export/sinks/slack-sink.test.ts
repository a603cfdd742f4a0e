import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startSlackReceiver } from '../../../test/support/sink-receivers.js';
import { CollectingLogger } from '../../internal/index.js';
import { createAlertPolicy, DEFAULT_ALERT } from '../alerting.js';
import type { ExportFields } from '../fields.js';
import type { ExportRecord } from '../types.js';
import { slackSinkType } from './slack-sink.js';

const T0 = Date.UTC(2025, 0, 1);

/** HOSTILE is what an Event's author writes to reach everyone in the channel, or to pass a link off as another. */
const HOSTILE = '<!channel> <!here|here> <!everyone> <@U024BE7LH> <!subteam^SAZ94GDB8> <#C024BE7LR> <https://evil.example/login|Kubernetes docs> <mailto:x@evil.example> &lt;!channel&gt;';

function hostileFields(i: number, o: { type?: string } = {}): ExportFields {
  return {
    changeId: i,
    cluster: `prod ${HOSTILE}`,
    namespace: 'prod',
    name: `web.${i}`,
    uid: `u-${i % 2}`,
    type: o.type ?? 'Warning',
    reason: `BackOff${HOSTILE}`,
    message: `Back-off ${HOSTILE} ${'x'.repeat(i * 700)}`,
    action: '',
    regarding: { kind: 'Pod', namespace: 'prod', name: `web-${i % 2}${HOSTILE}`, uid: '', apiVersion: 'v1', fieldPath: '' },
    related: null,
    reportingController: `kubelet${HOSTILE}`,
    reportingInstance: 'node-1',
    count: i,
    countBefore: i - 1,
    isNew: i === 1,
    firstSeen: new Date(T0).toISOString(),
    lastSeen: new Date(T0 + i * 1000).toISOString(),
    observedTime: new Date(T0 + i * 1000).toISOString(),
    labels: {},
    annotations: {},
  };
}

/** HOSTILE_CAUSE is a cause sentence as the catalogue builds it, repeating the event's hostile text. */
const HOSTILE_CAUSE = `Pod "web-0${HOSTILE}" reported "BackOff${HOSTILE}".`;

/** records are a firing burst folding two events and its resolution, as the alert policy makes them. */
function records(o: { cause?: string } = {}): ExportRecord[] {
  const p = createAlertPolicy({ ...DEFAULT_ALERT, groupWaitMs: 1_000, resolveAfterMs: 60_000, groupBy: ['reason'] }, undefined, undefined);
  const out: ExportRecord[] = [];
  for (let i = 1; i <= 6; i++) out.push(...p.observe({ ...hostileFields(i), ...(o.cause !== undefined ? { cause: o.cause } : {}) }, T0 + i * 10));
  out.push(...p.tick(T0 + 2_000), ...p.tick(T0 + 120_000));
  return out;
}

/** unescaped finds Slack's control sequences in any string of a posted message. */
function unescaped(value: unknown, at = ''): string[] {
  if (typeof value === 'string') return /<[!@#]|<https?:|<mailto:/.test(value) ? [`${at}: ${value.slice(0, 120)}`] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => unescaped(v, `${at}[${i}]`));
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => unescaped(v, `${at}.${k}`));
  return [];
}

void describe('slack sink against a local incoming webhook', () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanups) await c();
  });

  void it('posts no mention, channel link or labelled link from event text, in the blocks or the notification text', async () => {
    const slack = await startSlackReceiver();
    cleanups.push(() => slack.close());
    const sink = slackSinkType.create({ url: slack.url, timeoutMs: 10_000 }, { logger: new CollectingLogger(), env: {} });
    cleanups.push(() => sink.close());
    const rs = records();
    assert.deepEqual(rs.map((r) => r.alert?.state), ['firing', 'resolved']);
    await sink.send(rs, new AbortController().signal);
    assert.deepEqual(slack.problems, []);
    assert.equal(slack.messages.length, 2);
    for (const m of slack.messages) {
      assert.deepEqual(unescaped(m), []);
      assert.match(m.text, /&lt;!channel&gt;/);
      assert.match(m.text, /&lt;https:\/\/evil\.example\/login\|Kubernetes docs&gt;/);
      assert.match(m.text, /&amp;lt;!channel&amp;gt;/, 'an entity in the text is shown as written, not decoded into a mention');
      assert.ok(!/&[a-z]{0,3}…/.test(JSON.stringify(m)), 'no entity is cut in half');
    }
  });

  void it('leads with the cause, in the blocks and the notification text, escaped as the rest', async () => {
    const slack = await startSlackReceiver();
    cleanups.push(() => slack.close());
    const sink = slackSinkType.create({ url: slack.url, timeoutMs: 10_000 }, { logger: new CollectingLogger(), env: {} });
    cleanups.push(() => sink.close());
    await sink.send(records({ cause: HOSTILE_CAUSE }), new AbortController().signal);
    assert.deepEqual(slack.problems, []);
    assert.equal(slack.messages.length, 2);
    const escaped = HOSTILE_CAUSE.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    for (const m of slack.messages) {
      assert.deepEqual(unescaped(m), []);
      const blocks = m.blocks as { type: string; text?: { text: string } }[];
      assert.equal(blocks[1]?.type, 'section');
      assert.equal(blocks[1]?.text?.text, `*Cause*\n${escaped}`, 'the cause comes right after the header');
      assert.ok(m.text.endsWith(`: ${escaped}`), m.text);
    }
  });
});
