import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CLUSTER_LABEL } from '../../../api/index.js';
import type { CoreEvent, SearchResultItem } from '../../../api/index.js';
import { formatSearchTable } from './printer.js';
import type { SearchTableOptions } from './printer.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');

function hit(name: string, message: string, agoMs: number, extra: Partial<CoreEvent> = {}, matched = ['message']): SearchResultItem {
  const t = new Date(NOW - agoMs).toISOString();
  return {
    event: {
      metadata: { namespace: 'shop', name, labels: { [CLUSTER_LABEL]: 'prod' } },
      involvedObject: { kind: 'Pod', namespace: 'shop', name: `pod-${name}` },
      reason: 'FailedMount',
      type: 'Warning',
      message,
      count: 3,
      firstTimestamp: t,
      lastTimestamp: t,
      source: { component: 'kubelet', host: 'worker-3' },
      ...extra,
    },
    occurrences: [],
    matched,
  };
}

const base: SearchTableOptions = { now: NOW, allNamespaces: false, withCluster: false, wide: false, noHeaders: false };
const items = [hit('a', 'MountVolume.SetUp failed for volume "certs"', 65_000), hit('b', 'secret "certs" not found', 3 * 3_600_000, { count: 1, reason: 'Failed' })];

void describe('formatSearchTable', () => {
  void it('prints kubectl-aligned rows in the server\'s order', () => {
    assert.equal(
      formatSearchTable(items, base),
      [
        'LAST SEEN   OBJECT      REASON        COUNT   MESSAGE',
        '65s         pod/pod-a   FailedMount   3       MountVolume.SetUp failed for volume "certs"',
        '3h          pod/pod-b   Failed        1       secret "certs" not found',
        '',
      ].join('\n'),
    );
  });

  void it('adds CLUSTER and NAMESPACE when asked, and the wide columns', () => {
    assert.equal(
      formatSearchTable(items.slice(0, 1), { ...base, allNamespaces: true, withCluster: true, wide: true, noHeaders: true }),
      '65s   prod   shop   Warning   pod/pod-a   FailedMount   3     worker-3   kubelet   message   MountVolume.SetUp failed for volume "certs"\n',
    );
  });

  void it('marks the query\'s words, whole and in any case, in the message only', () => {
    const out = formatSearchTable(items.slice(0, 1), { ...base, noHeaders: true, words: new Set(['certs', 'mountvolume']), mark: (w) => `[${w}]` });
    assert.equal(out, '65s   pod/pod-a   FailedMount   3     [MountVolume].SetUp failed for volume "[certs]"\n');
  });

  void it('shows the control characters of a stranger\'s event, on one line, and never marks inside them', () => {
    const hostile = hit('x', 'line1\nline2\t\u001b[31mred\u001b[0m \u202eevil', 1000, { reason: 'Bad\u0007' });
    const out = formatSearchTable([hostile], { ...base, noHeaders: true, words: new Set(['line1', '31m']), mark: (w) => `[${w}]` });
    assert.equal(out, '1s    pod/pod-x   Bad^G   3     [line1]^Jline2^I^[[31mred^[[0m \\u202eevil\n');
  });
});
