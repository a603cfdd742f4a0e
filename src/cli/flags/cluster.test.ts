import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { printTableAsKubectl } from '../../print/index.js';
import type { CoreEvent, Table } from '../../api/index.js';
import { clusterSelector, spansClusters, validateClusterName, withClusterColumn } from './cluster.js';

const from = (cluster: string | undefined): CoreEvent => ({
  metadata: { name: 'e', namespace: 'ns', ...(cluster !== undefined ? { labels: { 'archive.kevents.io/cluster': cluster } } : {}) },
  involvedObject: {},
});

void describe('clusterSelector', () => {
  const cases: [string, string[] | undefined, string | undefined, string | undefined][] = [
    ['no --cluster keeps -l', [], 'app=web', 'app=web'],
    ['no flags at all', undefined, undefined, undefined],
    ['one cluster', ['prod'], undefined, 'archive.kevents.io/cluster in (prod)'],
    ['several, repeats once', ['prod', 'dev', 'prod'], undefined, 'archive.kevents.io/cluster in (prod,dev)'],
    ['joined to -l', ['prod'], 'app=web', 'app=web,archive.kevents.io/cluster in (prod)'],
  ];
  for (const [name, clusters, selector, want] of cases) void it(name, () => assert.equal(clusterSelector(clusters, selector), want));
  void it('refuses a name that is no label value', () => {
    for (const bad of ['', 'a b', '-a', 'a,b', 'x'.repeat(64)]) assert.throws(() => validateClusterName(bad), /invalid --cluster/, bad);
    assert.equal(validateClusterName('kind-prod.eu_1'), 'kind-prod.eu_1');
  });
});

void describe('spansClusters', () => {
  const cases: [string, string[], (string | undefined)[], boolean][] = [
    ['one cluster found', [], ['a', 'a'], false],
    ['two found', [], ['a', 'b'], true],
    ['a local event beside an archived one', [], [undefined, 'a'], true],
    ['two asked for, one found', ['a', 'b'], ['a'], true],
    ['one asked for', ['a'], ['a'], false],
    ['nothing', [], [], false],
  ];
  for (const [name, asked, found, want] of cases) void it(name, () => assert.equal(spansClusters(asked, found.map(from)), want));
});

void describe('withClusterColumn', () => {
  void it('prints CLUSTER first, from each row object', () => {
    const table: Table = {
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: {},
      columnDefinitions: [{ name: 'Reason', type: 'string', format: '', description: '', priority: 0 }],
      rows: [
        { cells: ['BackOff'], object: from('prod') },
        { cells: ['Pulled'], object: from('dev') },
      ],
    };
    assert.equal(printTableAsKubectl(withClusterColumn(table), { wide: false, noHeaders: false, withNamespace: false }), 'CLUSTER   REASON\nprod      BackOff\ndev       Pulled\n');
  });
});
