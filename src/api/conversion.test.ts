import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  encodeCoreEvent,
  encodeEvent,
  encodeEventList,
  encodeEventsV1Event,
  encodeObjectMeta,
  marshalJson,
  toCoreV1,
  toEventsV1,
} from './conversion.js';
import type { CoreEvent, EventsV1Event } from './types.js';

/** A core/v1 event with every field of both types set, in canonical encoded form. */
const fullCore: CoreEvent = {
  kind: 'Event',
  apiVersion: 'v1',
  metadata: {
    name: 'web-0.17e4b1c1d2a3b4c5',
    generateName: 'web-0.',
    namespace: 'shop',
    uid: '0b7c9a2e-6a51-4d7e-9f0e-3c1d2e4f5a6b',
    resourceVersion: '1234',
    generation: 2,
    creationTimestamp: '2025-06-23T02:57:05Z',
    deletionTimestamp: '2025-06-23T03:57:05Z',
    deletionGracePeriodSeconds: 0,
    labels: { app: 'web', tier: 'front' },
    annotations: { note: 'x' },
    ownerReferences: [
      { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'u-1', controller: true, blockOwnerDeletion: false },
    ],
    finalizers: ['example.com/keep'],
    managedFields: [
      {
        manager: 'kube-scheduler',
        operation: 'Update',
        apiVersion: 'events.k8s.io/v1',
        time: '2025-06-23T02:57:05Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:note': {} },
        subresource: 'status',
      },
    ],
  },
  involvedObject: {
    kind: 'Pod',
    namespace: 'shop',
    name: 'web-0',
    uid: 'a1b2',
    apiVersion: 'v1',
    resourceVersion: '42',
    fieldPath: 'spec.containers{web}',
  },
  reason: 'FailedScheduling',
  message: '0/3 nodes are available',
  source: { component: 'default-scheduler', host: 'cp-1' },
  firstTimestamp: '2025-06-23T02:57:05Z',
  lastTimestamp: '2025-06-23T03:01:10Z',
  count: 7,
  type: 'Warning',
  eventTime: '2025-06-23T02:57:05.123456Z',
  series: { count: 2, lastObservedTime: '2025-06-23T03:27:05.654321Z' },
  action: 'Scheduling',
  related: { kind: 'Node', name: 'node-1', uid: 'n-1', apiVersion: 'v1' },
  reportingComponent: 'scheduler-reporting',
  reportingInstance: 'scheduler-cp-1',
};

/** fullEvents is fullCore viewed through events.k8s.io/v1. */
const fullEvents: EventsV1Event = {
  kind: 'Event',
  apiVersion: 'events.k8s.io/v1',
  metadata: fullCore.metadata,
  eventTime: '2025-06-23T02:57:05.123456Z',
  series: { count: 2, lastObservedTime: '2025-06-23T03:27:05.654321Z' },
  reportingController: 'scheduler-reporting',
  reportingInstance: 'scheduler-cp-1',
  action: 'Scheduling',
  reason: 'FailedScheduling',
  regarding: fullCore.involvedObject,
  related: { kind: 'Node', name: 'node-1', uid: 'n-1', apiVersion: 'v1' },
  note: '0/3 nodes are available',
  type: 'Warning',
  deprecatedSource: { component: 'default-scheduler', host: 'cp-1' },
  deprecatedFirstTimestamp: '2025-06-23T02:57:05Z',
  deprecatedLastTimestamp: '2025-06-23T03:01:10Z',
  deprecatedCount: 7,
};

void describe('round trips', () => {
  void it('core -> events.k8s.io -> core is the identity on a fully populated event', () => {
    assert.equal(marshalJson(toCoreV1(toEventsV1(fullCore))), marshalJson(fullCore));
    assert.deepEqual(toCoreV1(toEventsV1(fullCore)), fullCore);
  });
  void it('events.k8s.io -> core -> events.k8s.io is the identity on a fully populated event', () => {
    assert.equal(marshalJson(toEventsV1(toCoreV1(fullEvents))), marshalJson(encodeEventsV1Event(fullEvents)));
    assert.deepEqual(toEventsV1(fullCore), encodeEventsV1Event(fullEvents));
  });
  void it('encoding is idempotent', () => {
    assert.equal(marshalJson(encodeCoreEvent(encodeCoreEvent(fullCore))), marshalJson(fullCore));
    assert.equal(marshalJson(encodeEventsV1Event(toEventsV1(fullCore))), marshalJson(toEventsV1(fullCore)));
  });
  void it('round trips keep empty events empty', () => {
    const core = encodeCoreEvent({ metadata: {}, involvedObject: {} });
    assert.deepEqual(toCoreV1(toEventsV1(core)), core);
    const ev = encodeEventsV1Event({ metadata: {}, eventTime: null });
    assert.deepEqual(toEventsV1(toCoreV1(ev)), ev);
  });
});

void describe('field mapping (one field at a time)', () => {
  const cases: [keyof CoreEvent, unknown, keyof EventsV1Event, unknown][] = [
    ['involvedObject', { name: 'p' }, 'regarding', { name: 'p' }],
    ['reason', 'R', 'reason', 'R'],
    ['message', 'm', 'note', 'm'],
    ['source', { component: 'c', host: 'h' }, 'deprecatedSource', { component: 'c', host: 'h' }],
    ['firstTimestamp', '2025-01-01T00:00:00Z', 'deprecatedFirstTimestamp', '2025-01-01T00:00:00Z'],
    ['lastTimestamp', '2025-01-01T00:00:00Z', 'deprecatedLastTimestamp', '2025-01-01T00:00:00Z'],
    ['count', 4, 'deprecatedCount', 4],
    ['type', 'Normal', 'type', 'Normal'],
    ['eventTime', '2025-01-01T00:00:00.000001Z', 'eventTime', '2025-01-01T00:00:00.000001Z'],
    ['series', { count: 3, lastObservedTime: '2025-01-01T00:00:00.000001Z' }, 'series', { count: 3, lastObservedTime: '2025-01-01T00:00:00.000001Z' }],
    ['action', 'A', 'action', 'A'],
    ['related', { kind: 'Node' }, 'related', { kind: 'Node' }],
    ['reportingComponent', 'rc', 'reportingController', 'rc'],
    ['reportingInstance', 'ri', 'reportingInstance', 'ri'],
  ];
  for (const [coreField, coreValue, evField, evValue] of cases) {
    void it(`${coreField} <-> ${evField}`, () => {
      const ev = toEventsV1({ metadata: {}, involvedObject: {}, [coreField]: coreValue });
      assert.deepEqual(ev[evField], evValue);
      const core = toCoreV1({ metadata: {}, eventTime: null, [evField]: evValue });
      assert.deepEqual(core[coreField], coreValue);
    });
  }
  void it('source.component is not reportingController, nor the reverse', () => {
    const ev = toEventsV1({ metadata: {}, involvedObject: {}, source: { component: 'kubelet' } });
    assert.equal(ev.reportingController, undefined);
    const core = toCoreV1({ metadata: {}, eventTime: null, reportingController: 'ctrl' });
    assert.deepEqual(core.source, {});
    assert.equal(core.reportingComponent, 'ctrl');
  });
});

void describe('golden wire JSON (spec §2.2 cross-reads)', () => {
  const legacy = {
    metadata: {
      name: 'nginx-7c5ddbdf54-x2x9k.17e4b1c1d2a3b4c5',
      namespace: 'default',
      uid: 'e1',
      resourceVersion: '1234',
      creationTimestamp: '2025-06-23T02:57:05Z',
    },
    involvedObject: {
      kind: 'Pod',
      namespace: 'default',
      name: 'nginx-7c5ddbdf54-x2x9k',
      uid: 'p1',
      apiVersion: 'v1',
      resourceVersion: '5678',
      fieldPath: 'spec.containers{nginx}',
    },
    reason: 'Pulled',
    message: 'Container image "nginx:1.27" already present on machine',
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: '2025-06-23T02:57:05Z',
    lastTimestamp: '2025-06-23T03:01:10Z',
    count: 3,
    type: 'Normal',
    eventTime: null,
    reportingComponent: 'kubelet',
    reportingInstance: 'node-1',
  } satisfies CoreEvent;
  const meta =
    '"metadata":{"name":"nginx-7c5ddbdf54-x2x9k.17e4b1c1d2a3b4c5","namespace":"default","uid":"e1","resourceVersion":"1234","creationTimestamp":"2025-06-23T02:57:05Z"}';
  const ref =
    '{"kind":"Pod","namespace":"default","name":"nginx-7c5ddbdf54-x2x9k","uid":"p1","apiVersion":"v1","resourceVersion":"5678","fieldPath":"spec.containers{nginx}"}';

  void it('legacy-recorder event via core/v1', () => {
    assert.equal(
      marshalJson(encodeCoreEvent(legacy)),
      `{"kind":"Event","apiVersion":"v1",${meta},"involvedObject":${ref},"reason":"Pulled",` +
        '"message":"Container image \\"nginx:1.27\\" already present on machine",' +
        '"source":{"component":"kubelet","host":"node-1"},"firstTimestamp":"2025-06-23T02:57:05Z",' +
        '"lastTimestamp":"2025-06-23T03:01:10Z","count":3,"type":"Normal","eventTime":null,' +
        '"reportingComponent":"kubelet","reportingInstance":"node-1"}',
    );
  });
  void it('legacy-recorder event via events.k8s.io/v1', () => {
    assert.equal(
      marshalJson(toEventsV1(legacy)),
      `{"kind":"Event","apiVersion":"events.k8s.io/v1",${meta},"eventTime":null,"reportingController":"kubelet",` +
        `"reportingInstance":"node-1","reason":"Pulled","regarding":${ref},` +
        '"note":"Container image \\"nginx:1.27\\" already present on machine","type":"Normal",' +
        '"deprecatedSource":{"component":"kubelet","host":"node-1"},"deprecatedFirstTimestamp":"2025-06-23T02:57:05Z",' +
        '"deprecatedLastTimestamp":"2025-06-23T03:01:10Z","deprecatedCount":3}',
    );
  });
  void it('an old legacy recorder (no reporting fields) shows empty strings in core/v1 and nothing in events.k8s.io/v1', () => {
    const old = { ...legacy, reportingComponent: '', reportingInstance: '' };
    assert.match(marshalJson(encodeCoreEvent(old)), /"reportingComponent":"","reportingInstance":""\}$/);
    const ev = toEventsV1(old);
    assert.equal('reportingController' in ev, false);
    assert.equal('reportingInstance' in ev, false);
  });

  const scheduled = {
    metadata: { name: 'web-0.17e4', namespace: 'default', creationTimestamp: '2025-06-23T02:57:05Z' },
    eventTime: '2025-06-23T02:57:05.123456Z',
    series: { count: 2, lastObservedTime: '2025-06-23T03:27:05.654321Z' },
    reportingController: 'default-scheduler',
    reportingInstance: 'default-scheduler-cp-1',
    action: 'Scheduling',
    reason: 'FailedScheduling',
    regarding: { kind: 'Pod', namespace: 'default', name: 'web-0', uid: 'w0', apiVersion: 'v1', resourceVersion: '42' },
    related: { kind: 'Node', name: 'node-1', apiVersion: 'v1' },
    note: '0/3 nodes are available',
    type: 'Warning',
  } satisfies EventsV1Event;
  const smeta = '"metadata":{"name":"web-0.17e4","namespace":"default","creationTimestamp":"2025-06-23T02:57:05Z"}';
  const sref = '{"kind":"Pod","namespace":"default","name":"web-0","uid":"w0","apiVersion":"v1","resourceVersion":"42"}';

  void it('events.k8s.io event via events.k8s.io/v1', () => {
    assert.equal(
      marshalJson(encodeEventsV1Event(scheduled)),
      `{"kind":"Event","apiVersion":"events.k8s.io/v1",${smeta},"eventTime":"2025-06-23T02:57:05.123456Z",` +
        '"series":{"count":2,"lastObservedTime":"2025-06-23T03:27:05.654321Z"},"reportingController":"default-scheduler",' +
        '"reportingInstance":"default-scheduler-cp-1","action":"Scheduling","reason":"FailedScheduling",' +
        `"regarding":${sref},"related":{"kind":"Node","name":"node-1","apiVersion":"v1"},"note":"0/3 nodes are available",` +
        '"type":"Warning","deprecatedSource":{},"deprecatedFirstTimestamp":null,"deprecatedLastTimestamp":null}',
    );
  });
  void it('events.k8s.io event via core/v1', () => {
    assert.equal(
      marshalJson(toCoreV1(scheduled)),
      `{"kind":"Event","apiVersion":"v1",${smeta},"involvedObject":${sref},"reason":"FailedScheduling",` +
        '"message":"0/3 nodes are available","source":{},"firstTimestamp":null,"lastTimestamp":null,"type":"Warning",' +
        '"eventTime":"2025-06-23T02:57:05.123456Z","series":{"count":2,"lastObservedTime":"2025-06-23T03:27:05.654321Z"},' +
        '"action":"Scheduling","related":{"kind":"Node","name":"node-1","apiVersion":"v1"},' +
        '"reportingComponent":"default-scheduler","reportingInstance":"default-scheduler-cp-1"}',
    );
  });
});

void describe('encoding rules (spec §2.1)', () => {
  void it('an empty core/v1 event', () => {
    assert.equal(
      marshalJson(encodeCoreEvent({})),
      '{"kind":"Event","apiVersion":"v1","metadata":{},"involvedObject":{},"source":{},"firstTimestamp":null,' +
        '"lastTimestamp":null,"eventTime":null,"reportingComponent":"","reportingInstance":""}',
    );
  });
  void it('an empty events.k8s.io/v1 event', () => {
    assert.equal(
      marshalJson(encodeEventsV1Event({})),
      '{"kind":"Event","apiVersion":"events.k8s.io/v1","metadata":{},"eventTime":null,"regarding":{},' +
        '"deprecatedSource":{},"deprecatedFirstTimestamp":null,"deprecatedLastTimestamp":null}',
    );
  });
  void it('zero count and empty strings are omitted where omitempty applies', () => {
    const e = encodeCoreEvent({ count: 0, action: '', reason: '', message: '', type: '', related: null, series: null });
    for (const k of ['count', 'action', 'reason', 'message', 'type', 'related', 'series']) assert.equal(k in e, false, k);
    const v = encodeEventsV1Event({ deprecatedCount: 0, note: '', reportingController: '', reportingInstance: '', action: '', type: '' });
    for (const k of ['deprecatedCount', 'note', 'reportingController', 'reportingInstance', 'action', 'type']) assert.equal(k in v, false, k);
  });
  void it('series.count is omitempty in core/v1 but always written in events.k8s.io/v1', () => {
    const series = { count: 0, lastObservedTime: null };
    assert.equal(marshalJson(encodeCoreEvent({ series }).series), '{"lastObservedTime":null}');
    assert.equal(marshalJson(encodeEventsV1Event({ series }).series), '{"count":0,"lastObservedTime":null}');
  });
  void it('times are written in canonical UTC form', () => {
    const e = encodeCoreEvent({
      firstTimestamp: '2025-06-23T04:57:05.9+02:00',
      eventTime: '2025-06-23T04:57:05.000001+02:00',
      lastTimestamp: '0001-01-01T00:00:00Z',
    });
    assert.equal(e.firstTimestamp, '2025-06-23T02:57:05Z');
    assert.equal(e.eventTime, '2025-06-23T02:57:05.000001Z');
    assert.equal(e.lastTimestamp, null);
  });
  void it('ObjectMeta: Go field order, sorted maps, omitempty, pointers kept at zero', () => {
    const m = encodeObjectMeta({
      managedFields: [],
      finalizers: [],
      labels: JSON.parse('{"b":"2","a":"1","__proto__":"p"}') as Record<string, string>,
      annotations: {},
      deletionGracePeriodSeconds: 0,
      creationTimestamp: null,
      generation: 0,
      namespace: 'ns',
      name: 'n',
      ownerReferences: [{ uid: 'u' } as never],
    });
    assert.equal(
      marshalJson(m),
      '{"name":"n","namespace":"ns","deletionGracePeriodSeconds":0,"labels":{"__proto__":"p","a":"1","b":"2"},' +
        '"ownerReferences":[{"apiVersion":"","kind":"","name":"","uid":"u"}]}',
    );
  });
  void it('selfLink is never written', () => {
    assert.deepEqual(encodeObjectMeta({ name: 'a', selfLink: '/api/v1/x' } as never), { name: 'a' });
  });
  void it('encodeEvent picks the view', () => {
    assert.equal(encodeEvent(fullCore, 'v1').apiVersion, 'v1');
    assert.deepEqual(encodeEvent(fullCore, 'events.k8s.io/v1'), toEventsV1(fullCore));
  });
});

void describe('encodeEventList', () => {
  void it('core/v1 list', () => {
    const list = encodeEventList([{ metadata: { name: 'a' }, involvedObject: {} }], 'v1', { resourceVersion: '7' });
    assert.equal(list.kind, 'EventList');
    assert.equal(list.apiVersion, 'v1');
    assert.deepEqual(list.metadata, { resourceVersion: '7' });
    assert.equal(list.items[0]?.reportingComponent, '');
  });
  void it('events.k8s.io/v1 list converts each item', () => {
    const list = encodeEventList([fullCore], 'events.k8s.io/v1', { continue: 'c', remainingItemCount: 0 });
    assert.equal(list.apiVersion, 'events.k8s.io/v1');
    assert.deepEqual(list.items, [toEventsV1(fullCore)]);
    assert.equal(marshalJson(list.metadata), '{"continue":"c","remainingItemCount":0}');
  });
  void it('an empty list has items [] and metadata {}', () => {
    assert.equal(marshalJson(encodeEventList([], 'v1')), '{"kind":"EventList","apiVersion":"v1","metadata":{},"items":[]}');
  });
});

void describe('marshalJson', () => {
  void it('escapes as Go encoding/json does', () => {
    assert.equal(marshalJson({ note: 'a<b>&c\u2028\u2029"\n' }), '{"note":"a\\u003cb\\u003e\\u0026c\\u2028\\u2029\\"\\n"}');
  });
});
