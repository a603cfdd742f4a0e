import { parseSearchQuery } from '../../../api/index.js';
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
    messageMarks: [],
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

  const marked = (q: string, extra: Partial<SearchTableOptions> = {}, rows = items.slice(0, 1)): string =>
    formatSearchTable(rows, { ...base, noHeaders: true, query: parseSearchQuery(q, { nowMs: NOW }), mark: (w) => `[${w}]`, ...extra });

  void it('marks the query\'s words, whole and in any case, wherever a cell shows them', () => {
    assert.equal(marked('certs MOUNTVOLUME'), '65s   pod/pod-a   FailedMount   3     [MountVolume].SetUp failed for volume "[certs]"\n');
    assert.equal(marked('cert mount'), '65s   pod/pod-a   FailedMount   3     MountVolume.SetUp failed for volume "certs"\n', 'whole words only');
    assert.equal(marked('pod'), '65s   [pod]/[pod]-a   FailedMount   3     MountVolume.SetUp failed for volume "certs"\n', 'a word in the kind and the name');
  });

  void it('marks a phrase as one run, and not its words apart', () => {
    assert.equal(marked('"failed for volume"'), '65s   pod/pod-a   FailedMount   3     MountVolume.SetUp [failed for volume] "certs"\n');
    assert.equal(marked('setup-failed'), '65s   pod/pod-a   FailedMount   3     MountVolume.[SetUp failed] for volume "certs"\n', 'a word with punctuation is a phrase');
    assert.equal(marked('"volume failed"'), '65s   pod/pod-a   FailedMount   3     MountVolume.SetUp failed for volume "certs"\n');
  });

  void it('marks the value a field term matched, a wildcard\'s whole, in its column', () => {
    assert.equal(marked('name:pod-a*'), '65s   pod/[pod-a]   FailedMount   3     MountVolume.SetUp failed for volume "certs"\n');
    assert.equal(marked('reason:failed*', {}, items), '65s   pod/pod-a   [FailedMount]   3     MountVolume.SetUp failed for volume "certs"\n3h    pod/pod-b   [Failed]        1     secret "certs" not found\n');
    assert.equal(marked('kind:POD'), '65s   [pod]/pod-a   FailedMount   3     MountVolume.SetUp failed for volume "certs"\n');
    assert.equal(
      marked('ns:shop type:warning node:worker-3 controller:kubelet cluster:prod', { allNamespaces: true, withCluster: true, wide: true }),
      '65s   [prod]   [shop]   [Warning]   pod/pod-a   FailedMount   3     [worker-3]   [kubelet]   message   MountVolume.SetUp failed for volume "certs"\n',
    );
    assert.equal(marked('name:pod-b'), '65s   pod/pod-a   FailedMount   3     MountVolume.SetUp failed for volume "certs"\n', 'only a value the term matches');
  });

  void it('marks nothing the query excludes', () => {
    assert.equal(marked('volume -certs -"setup failed" -reason:FailedMount -name:pod-*'), '65s   pod/pod-a   FailedMount   3     MountVolume.SetUp failed for [volume] "certs"\n');
  });

  void it('keeps the columns aligned under a terminal\'s marks', () => {
    const bold = (w: string): string => `\x1b[1m${w}\x1b[22m`;
    assert.equal(
      formatSearchTable(items, { ...base, query: parseSearchQuery('reason:FailedMount certs', { nowMs: NOW }), mark: bold }),
      [
        'LAST SEEN   OBJECT      REASON        COUNT   MESSAGE',
        '65s         pod/pod-a   \x1b[1mFailedMount\x1b[22m   3       MountVolume.SetUp failed for volume "\x1b[1mcerts\x1b[22m"',
        '3h          pod/pod-b   Failed        1       secret "\x1b[1mcerts\x1b[22m" not found',
        '',
      ].join('\n'),
    );
  });

  void it('shows the control characters of a stranger\'s event, on one line, and never marks inside their escapes', () => {
    const hostile = hit('x', 'line1\nline2\t\u001b[31mred\u001b[0m \u202eevil \u001b]8;;http://x\u0007link', 1000, { reason: 'Bad\u0007' });
    const q = (text: string): SearchTableOptions => ({ ...base, noHeaders: true, query: parseSearchQuery(text, { nowMs: NOW }), mark: (w) => `\x1b[1m${w}\x1b[22m` });
    const out = formatSearchTable([hostile], q('line1 red u202e evil 31m j link bad'));
    assert.equal(out, '1s    pod/pod-x   \x1b[1mBad\x1b[22m^G   3     \x1b[1mline1\x1b[22m^Jline2^I^[[31mred^[[0m \\u202e\x1b[1mevil\x1b[22m ^[]8;;http://x^G\x1b[1mlink\x1b[22m\n');
    // The only ESC characters printed are the marks' own: four marks, two each.
    assert.equal(out.split('\x1b').length - 1, 8);
    assert.equal(formatSearchTable([hostile], { ...base, noHeaders: true }), '1s    pod/pod-x   Bad^G   3     line1^Jline2^I^[[31mred^[[0m \\u202eevil ^[]8;;http://x^Glink\n');
  });
});
