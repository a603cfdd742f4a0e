import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CoreEvent } from '../api/index.js';
import { CLUSTER_LABEL, CLUSTER_UID_ANNOTATION } from '../api/index.js';
import { archivedEvent, archiveWrite, compareResourceVersions, SOURCE_NAME_ANNOTATION, SOURCE_RESOURCE_VERSION_ANNOTATION } from './archived-event.js';

function source(o: { uid?: string; rv: string; count?: number; message?: string; name?: string }): CoreEvent {
  return {
    metadata: {
      name: o.name ?? 'web.1',
      namespace: 'prod',
      uid: o.uid ?? 'aaaaaaaa-1111-2222-3333-444444444444',
      resourceVersion: o.rv,
      creationTimestamp: '2025-01-01T00:00:00Z',
      managedFields: [{ manager: 'kubelet' }],
    },
    involvedObject: { kind: 'Pod', namespace: 'prod', name: 'web' },
    reason: 'BackOff',
    message: o.message ?? 'Back-off restarting failed container',
    count: o.count ?? 1,
    lastTimestamp: '2025-01-01T00:00:00Z',
    type: 'Warning',
  };
}

void describe('compareResourceVersions', () => {
  const cases: [string, string, number][] = [
    ['5', '5', 0],
    ['5', '10', -1],
    ['100', '99', 1],
    ['123456789012345678901', '123456789012345678900', 1],
    ['abc', 'abc', 0],
  ];
  for (const [a, b, want] of cases) {
    void it(`${a} vs ${b} is ${want}`, () => assert.equal(compareResourceVersions(a, b), want));
  }
  void it('opaque versions that differ are unordered', () => assert.ok(Number.isNaN(compareResourceVersions('a', 'b'))));
});

void describe('archivedEvent', () => {
  void it('keeps the identity, records the source resourceVersion and cluster, drops managedFields', () => {
    const a = archivedEvent(source({ rv: '42' }), { cluster: 'east' });
    assert.equal(a.metadata.uid, 'aaaaaaaa-1111-2222-3333-444444444444');
    assert.equal(a.metadata.name, 'web.1');
    assert.equal(a.metadata.creationTimestamp, '2025-01-01T00:00:00Z');
    assert.equal(a.metadata.resourceVersion, undefined);
    assert.equal(a.metadata.managedFields, undefined);
    assert.equal(a.metadata.annotations?.[SOURCE_RESOURCE_VERSION_ANNOTATION], '42');
    assert.equal(a.metadata.labels?.[CLUSTER_LABEL], 'east');
    assert.equal(a.kind, 'Event');
    assert.equal(a.apiVersion, 'v1');
  });
  void it('notes the source name when archived under another one', () => {
    const a = archivedEvent(source({ rv: '1' }), { name: 'web.1.aaaaaaaa' });
    assert.equal(a.metadata.name, 'web.1.aaaaaaaa');
    assert.equal(a.metadata.annotations?.[SOURCE_NAME_ANNOTATION], 'web.1');
    assert.equal(a.metadata.labels, undefined);
  });
  void it("drops a source event's own archive.kevents.io/* labels and annotations, whatever the mirror's cluster", () => {
    const forged = source({ rv: '7' });
    forged.metadata.labels = { app: 'web', [CLUSTER_LABEL]: 'prod' };
    forged.metadata.annotations = { note: 'kept', [CLUSTER_UID_ANNOTATION]: 'forged-uid', [SOURCE_RESOURCE_VERSION_ANNOTATION]: '999', [SOURCE_NAME_ANNOTATION]: 'other' };
    const unnamed = archivedEvent(forged, {});
    assert.deepEqual(unnamed.metadata.labels, { app: 'web' });
    assert.deepEqual(unnamed.metadata.annotations, { note: 'kept', [SOURCE_RESOURCE_VERSION_ANNOTATION]: '7' });
    const named = archivedEvent(forged, { cluster: 'dev', clusterUID: 'real-uid' });
    assert.deepEqual(named.metadata.labels, { app: 'web', [CLUSTER_LABEL]: 'dev' });
    assert.equal(named.metadata.annotations?.[CLUSTER_UID_ANNOTATION], 'real-uid');
    forged.metadata.labels = { [CLUSTER_LABEL]: 'prod' };
    assert.equal(archivedEvent(forged, {}).metadata.labels, undefined);
  });
});

void describe('archiveWrite decisions', () => {
  const stored = (o: Parameters<typeof source>[0]): CoreEvent => archivedEvent(source(o), {});
  const cases: { name: string; incoming: Parameters<typeof source>[0]; current?: CoreEvent; at?: string; want: string }[] = [
    { name: 'a new event is written with a creation occurrence', incoming: { rv: '5', count: 3 }, want: 'write 0->3' },
    { name: 'the same version is skipped', incoming: { rv: '5' }, current: stored({ rv: '5' }), want: 'skip' },
    { name: 'an older version is skipped (a replay after a restart)', incoming: { rv: '4' }, current: stored({ rv: '5' }), want: 'skip' },
    { name: 'a count bump is written with its occurrence', incoming: { rv: '9', count: 2 }, current: stored({ rv: '5', count: 1 }), want: 'write 1->2' },
    { name: 'a new message is an occurrence without a count change', incoming: { rv: '9', message: 'other' }, current: stored({ rv: '5' }), want: 'write 1->1' },
    { name: 'a metadata-only change is written without an occurrence', incoming: { rv: '9' }, current: stored({ rv: '5' }), want: 'write' },
    {
      name: 'another event holding the name redirects to the uid-suffixed name',
      incoming: { rv: '9' },
      current: stored({ rv: '5', uid: 'bbbbbbbb-0000-0000-0000-000000000000' }),
      want: 'redirect web.1.aaaaaaaa',
    },
    {
      name: 'a second collision redirects to the full uid',
      incoming: { rv: '9' },
      current: stored({ rv: '5', uid: 'aaaaaaaa-9999-0000-0000-000000000000' }),
      at: 'web.1.aaaaaaaa',
      want: 'redirect web.1.aaaaaaaa111122223333444444444444',
    },
  ];
  for (const c of cases) {
    void it(c.name, () => {
      const w = archiveWrite(source(c.incoming));
      const d = w.decide(c.current, c.at ?? w.name);
      const got =
        d.action === 'skip'
          ? 'skip'
          : d.action === 'redirect'
            ? `redirect ${d.name}`
            : `write${d.occurrence !== undefined ? ` ${d.occurrence.countBefore}->${d.occurrence.countAfter}` : ''}`;
      assert.equal(got, c.want);
      if (d.action === 'write') assert.equal(d.object.metadata.name, c.at ?? 'web.1');
    });
  }
});
