import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ExportChange } from '../../storage/index.js';
import { parseEventMetricsConfig } from './event-metrics-config.js';

function change(reason: string, namespace: string): ExportChange {
  return {
    id: 1,
    observedMicros: 0,
    occurrence: {
      metadata: { name: 'e.1', namespace },
      event: { name: 'e', namespace },
      observedTime: '2025-01-01T00:00:00.000000Z',
      lastSeen: '2025-01-01T00:00:00.000000Z',
      countBefore: 0,
      countAfter: 1,
      reason,
      type: 'Warning',
      regarding: { kind: 'Pod', namespace, name: 'p' },
    },
  };
}

describe('event metrics config', () => {
  it('reads labels, rules, the cap, the idle time and the compatibility names', () => {
    const o = parseEventMetricsConfig(
      ['labels: [namespace, name, reason]', 'match: [{namespace: prod-.*}]', 'drop: [{reason: Pulled}]', 'maxSeries: 500', 'idleAfter: 30m', 'compatibility: [caicloud]'].join('\n'),
    );
    assert.deepEqual(o.labels, ['namespace', 'name', 'reason']);
    assert.equal(o.maxSeries, 500);
    assert.equal(o.idleAfterMs, 1_800_000);
    assert.equal(o.caicloud, true);
    assert.equal(o.filter?.(change('BackOff', 'prod-eu')), true);
    assert.equal(o.filter?.(change('Pulled', 'prod-eu')), false);
    assert.equal(o.filter?.(change('BackOff', 'dev')), false);
  });

  const bad: [string, string, RegExp][] = [
    ['an unknown label', 'labels:\n  - namespace\n  - node\n', /^m\.yaml:3:5: labels\[1\]: must be one of cluster, namespace, kind, name, reason, type, reporting_controller, not "node"$/],
    ['a cap of 0', 'maxSeries: 0\n', /^m\.yaml:1:12: maxSeries: must be at least 1$/],
    ['a label twice', 'labels: [reason, reason]\n', /^m\.yaml:1:18: labels\[1\]: reason is listed twice$/],
    ['an unknown field', 'labels: [reason]\nmaxSerie: 3\n', /^m\.yaml:2:1: maxSerie: unknown field/],
    ['a rule with an unknown condition', 'drop:\n  - {node: x}\n', /^m\.yaml:2:6: drop\[0\]\.node: unknown field/],
    ['a bad duration', 'idleAfter: soon\n', /^m\.yaml:1:12: idleAfter: must be a duration/],
    ['an unknown compatibility', 'compatibility: [sysdig]\n', /^m\.yaml:1:17: compatibility\[0\]: must be one of caicloud/],
  ];
  for (const [what, text, message] of bad) {
    it(`reports ${what} with its line and column`, () => {
      assert.throws(() => parseEventMetricsConfig(text, 'm.yaml'), (e: Error) => {
        assert.match(e.message, message);
        return true;
      });
    });
  }
});
