import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Incident, IncidentList } from '../api/index.js';
import { formatIncidents } from './format-incidents.js';

const NOW = Date.parse('2026-01-01T01:00:00Z');

function incident(o: Partial<Incident>): Incident {
  return {
    kind: 'create-forbidden-quota',
    cause: 'ReplicaSet "web-1" cannot create pods: ResourceQuota "q" would be exceeded.',
    facts: {},
    namespace: 'shop',
    root: 'Deployment/web',
    objects: ['Deployment/web'],
    start: { time: '2026-01-01T00:32:00Z', estimated: false },
    lastSeen: '2026-01-01T00:59:00Z',
    ongoing: true,
    occurrences: 14,
    hints: [{ command: 'kubectl describe resourcequota q -n shop', why: "the quota's limits" }],
    evidence: [],
    ...o,
  };
}

const list: IncidentList = {
  window: { since: '2026-01-01T00:00:00Z', until: null },
  incidents: [
    incident({}),
    incident({ kind: 'other', cause: 'Pod "x" reported "Boom": "a\u001b[31m | b".', root: 'Pod/x\u001b]0;t\u0007', ongoing: false, start: { time: '2026-01-01T00:10:00Z', estimated: true, earliest: null, latest: '2026-01-01T00:10:00Z' }, hints: [] }),
  ],
};

describe('formatIncidents', () => {
  it('table: one line per incident, escaped', () => {
    assert.equal(
      formatIncidents(list, { format: 'table', now: NOW }),
      [
        'STATUS    SINCE   ROOT             CAUSE',
        'ongoing   28m     Deployment/web   ReplicaSet "web-1" cannot create pods: ResourceQuota "q" would be exceeded.',
        'stopped   ~50m    Pod/x^[]0;t^G    Pod "x" reported "Boom": "a^[[31m | b".',
        '',
      ].join('\n'),
    );
  });

  it('table with -A names the namespace; nothing found says so', () => {
    assert.match(formatIncidents(list, { format: 'table', now: NOW, showNamespace: true }), /^NAMESPACE {3}STATUS {4}SINCE/);
    assert.equal(formatIncidents({ window: list.window, incidents: [] }, { format: 'table', now: NOW, namespace: 'shop' }), 'No incidents found in shop namespace.\n');
  });

  it('json is the document as served', () => {
    assert.deepEqual(JSON.parse(formatIncidents(list, { format: 'json', now: NOW })), list);
  });

  it('markdown: a table whose cells cannot break, and each next step in a code block', () => {
    const md = formatIncidents(list, { format: 'markdown', now: NOW });
    assert.match(md, /^\| ongoing \| 2026-01-01T00:32:00Z \| shop \| `Deployment\/web` \| ReplicaSet "web-1" cannot create pods: ResourceQuota "q" would be exceeded\. \|$/m);
    assert.ok(md.includes('| stopped | ~2026-01-01T00:10:00Z | shop | `Pod/x^[]0;t^G` | Pod "x" reported "Boom": "a^\\[\\[31m \\| b". |\n'), md);
    assert.match(md, /```sh\n {2}kubectl describe resourcequota q -n shop\n {2}```/);
  });
});
