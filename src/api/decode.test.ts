import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { toCoreV1 } from './conversion.js';
import { decodeEvent, decodeEventJson } from './decode.js';
import type { FieldValidation } from './decode.js';
import { isStatusError } from './status.js';
import type { EventApi, EventsV1Event } from './types.js';

const CORE: EventApi = 'v1';
const EVENTS: EventApi = 'events.k8s.io/v1';
const M = '"2006-01-02T15:04:05.000000Z07:00"';

function badRequest(fn: () => unknown, message: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(isStatusError(e), 'a StatusError');
    assert.equal(e.status.code, 400);
    assert.equal(e.status.reason, 'BadRequest');
    assert.equal(e.status.message, message);
    return true;
  });
}

const unrecognized = (err: string, summary: string): string =>
  `the object provided is unrecognized (must be of type Event): couldn't get version/kind; json parse error: ${err} (${summary})`;
const cannot = (err: string, kind = 'Event', version = 'v1'): string =>
  `${kind} in version "${version}" cannot be handled as a Event: ${err}`;

void describe('malformed JSON gives the apiserver 400 with Go scanner text', () => {
  const cases: [string, string][] = [
    ['', unrecognized('unexpected end of JSON input', '<empty>')],
    ['{', unrecognized('unexpected end of JSON input', '{')],
    ['{"a":1', unrecognized('unexpected end of JSON input', '{"a":1')],
    ['{"a":"x', unrecognized('unexpected end of JSON input', '{"a":"x')],
    ['{"a":}', unrecognized("invalid character '}' looking for beginning of value", '{"a":}')],
    ['{a:1}', unrecognized("invalid character 'a' looking for beginning of object key string", '{a:1}')],
    ['{"a",1}', unrecognized("invalid character ',' after object key", '{"a",1}')],
    ['{"a":1 "b":2}', unrecognized(`invalid character '"' after object key:value pair`, '{"a":1 "b":2}')],
    ['{"a":[1 2]}', unrecognized("invalid character '2' after array element", '{"a":[1 2]}')],
    ['{"a":1,}', unrecognized("invalid character '}' looking for beginning of object key string", '{"a":1,}')],
    ['{} {}', unrecognized("invalid character '{' after top-level value", '{} {}')],
    ['{"a":01}', unrecognized("invalid character '1' after object key:value pair", '{"a":01}')],
    ['{"a":-x}', unrecognized("invalid character 'x' in numeric literal", '{"a":-x}')],
    ['{"a":1.}', unrecognized("invalid character '}' after decimal point in numeric literal", '{"a":1.}')],
    ['{"a":1e}', unrecognized("invalid character '}' in exponent of numeric literal", '{"a":1e}')],
    ['{"a":1.', unrecognized("invalid character ' ' after decimal point in numeric literal", '{"a":1.')],
    ['{"a":tx}', unrecognized("invalid character 'x' in literal true (expecting 'r')", '{"a":tx}')],
    ['{"a":fals', unrecognized("invalid character ' ' in literal false (expecting 'e')", '{"a":fals')],
    ['{"a":nul}', unrecognized("invalid character '}' in literal null (expecting 'l')", '{"a":nul}')],
    ['{"a":"\\q"}', unrecognized("invalid character 'q' in string escape code", '{"a":"\\q"}')],
    ['{"a":"\\u12g4"}', unrecognized("invalid character 'g' in \\u hexadecimal character escape", '{"a":"\\u12g4"}')],
    ['{"a":"x\ty"}', unrecognized("invalid character '\\t' in string literal", '{"a":"x\ty"}')],
    ["{'a':1}", unrecognized("invalid character '\\'' looking for beginning of object key string", "{'a':1}")],
    ['{"a":é}', unrecognized("invalid character 'Ã' looking for beginning of value", '{"a":é}')],
    ['apiVersion: v1\nkind: Event\n', unrecognized("invalid character 'a' looking for beginning of value", '61706956657273696f6e3a2076310a6b696e643a204576656e740a')],
    [
      'apiVersion: v1\r\nkind: PersistentVolume\r\n',
      unrecognized("invalid character 'a' looking for beginning of value", '61706956657273696f6e3a2076310d0a6b696e643a205065727369737465 ...'),
    ],
    [
      '{"metadata":{"name":"a-very-long-name"},"x":}',
      unrecognized("invalid character '}' looking for beginning of value", '{"metadata":{"name":"a-very-lo ...'),
    ],
  ];
  for (const [body, message] of cases) {
    void it(JSON.stringify(body), () => badRequest(() => decodeEventJson(body, CORE, { fieldValidation: 'Strict' }), message));
  }
  void it('nesting deeper than 10000 levels', () => {
    const body = `{"x":${'['.repeat(10001)}`;
    badRequest(() => decodeEventJson(body, CORE), unrecognized("invalid character '[' exceeded max depth", '{"x":[[[[[[[[[[[[[[[[[[[[[[[[[ ...'));
  });
});

void describe('kind and apiVersion', () => {
  void it('are defaulted from the URL when missing (Python client)', () => {
    const core = decodeEventJson('{"metadata":{"name":"a"},"involvedObject":{"kind":"Pod"}}', CORE);
    assert.equal(core.event.kind, 'Event');
    assert.equal(core.event.apiVersion, 'v1');
    const ev = decodeEvent({ metadata: { name: 'a' }, regarding: { kind: 'Pod' }, note: 'n' }, EVENTS);
    assert.deepEqual(ev.event.involvedObject, { kind: 'Pod' });
    assert.equal(ev.event.message, 'n');
  });
  void it('only kind, or only apiVersion, is enough', () => {
    assert.equal(decodeEventJson('{"kind":"Event"}', EVENTS).event.apiVersion, 'v1');
    assert.equal(decodeEventJson('{"apiVersion":"events.k8s.io/v1","note":"x"}', EVENTS).event.message, 'x');
    assert.equal(decodeEventJson('{"apiVersion":"events.k8s.io/","note":"x"}', EVENTS).event.message, 'x');
  });

  const cases: [string, EventApi, string][] = [
    ['{"apiVersion":"v1","kind":"Event"}', EVENTS, 'the API version in the data (v1) does not match the expected API version (events.k8s.io/v1)'],
    ['{"apiVersion":"events.k8s.io/v1","kind":"Event"}', CORE, 'the API version in the data (events.k8s.io/v1) does not match the expected API version (v1)'],
    [
      '{"apiVersion":"events.k8s.io/v1beta1","kind":"Event"}',
      EVENTS,
      'the API version in the data (events.k8s.io/v1beta1) does not match the expected API version (events.k8s.io/v1)',
    ],
    ['{"kind":"Pod","apiVersion":"v1"}', CORE, cannot('converting (v1.Pod) to (core.Event): unknown conversion', 'Pod')],
    ['{"kind":"Status"}', EVENTS, cannot('converting (v1.Status) to (core.Event): unknown conversion', 'Status')],
    [
      '{"kind":"Pod"}',
      EVENTS,
      cannot('no kind "Pod" is registered for version "events.k8s.io/v1" in scheme "pkg/api/legacyscheme/scheme.go:30"', 'Pod'),
    ],
    [
      '{"kind":"event"}',
      CORE,
      cannot('no kind "event" is registered for version "v1" in scheme "pkg/api/legacyscheme/scheme.go:30"', 'event'),
    ],
    [
      '{"apiVersion":"events.k8s.io"}',
      EVENTS,
      cannot('no kind "Event" is registered for version "events.k8s.io" in scheme "pkg/api/legacyscheme/scheme.go:30"', 'Event', 'events.k8s.io'),
    ],
    [
      '{"apiVersion":"example.com/v1"}',
      CORE,
      cannot('no kind "Event" is registered for version "example.com/v1" in scheme "pkg/api/legacyscheme/scheme.go:30"'),
    ],
    [
      '{"apiVersion":"a/b/c"}',
      CORE,
      'the object provided is unrecognized (must be of type Event): unexpected GroupVersion string: a/b/c ({"apiVersion":"a/b/c"})',
    ],
    ['{"kind":5}', CORE, unrecognized('json: cannot unmarshal number into Go struct field .kind of type string', '{"kind":5}')],
    ['{"apiVersion":{}}', CORE, unrecognized('json: cannot unmarshal object into Go struct field .apiVersion of type string', '{"apiVersion":{}}')],
    [
      '["kind"]',
      CORE,
      unrecognized(
        'json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }',
        '5b226b696e64225d',
      ),
    ],
    // The meta factory matches keys case-insensitively, like encoding/json; the decoder does not.
    ['{"KIND":"Pod","apiversion":"v1"}', EVENTS, cannot('converting (v1.Pod) to (core.Event): unknown conversion', 'Pod')],
  ];
  for (const [body, api, message] of cases) {
    void it(`${body} to ${api}`, () => badRequest(() => decodeEventJson(body, api, { fieldValidation: 'Strict' }), message));
  }
  void it('a case-folded kind key is an unknown field to the case-sensitive decoder', () => {
    const r = decodeEventJson('{"Kind":"Event","note":"x"}', EVENTS, { fieldValidation: 'Warn' });
    assert.deepEqual(r.warnings, ['unknown field "Kind"']);
  });
  void it('a null body decodes to an empty event', () => {
    assert.deepEqual(decodeEventJson('null', CORE).event.metadata, {});
  });
});

void describe('values of the wrong JSON type', () => {
  const cases: [string, EventApi, string][] = [
    ['{"count":"3"}', CORE, 'json: cannot unmarshal string into Go struct field Event.count of type int32'],
    ['{"count":1.5}', CORE, 'json: cannot unmarshal number 1.5 into Go struct field Event.count of type int32'],
    ['{"count":1e2}', CORE, 'json: cannot unmarshal number 1e2 into Go struct field Event.count of type int32'],
    ['{"count":2147483648}', CORE, 'json: cannot unmarshal number 2147483648 into Go struct field Event.count of type int32'],
    ['{"deprecatedCount":true}', EVENTS, 'json: cannot unmarshal bool into Go struct field Event.deprecatedCount of type int32'],
    ['{"reason":5}', CORE, 'json: cannot unmarshal number into Go struct field Event.reason of type string'],
    ['{"note":["x"]}', EVENTS, 'json: cannot unmarshal array into Go struct field Event.note of type string'],
    ['{"involvedObject":"pod"}', CORE, 'json: cannot unmarshal string into Go struct field Event.involvedObject of type v1.ObjectReference'],
    ['{"involvedObject":{"uid":1}}', CORE, 'json: cannot unmarshal number into Go struct field ObjectReference.involvedObject.uid of type types.UID'],
    ['{"regarding":{"name":{}}}', EVENTS, 'json: cannot unmarshal object into Go struct field ObjectReference.regarding.name of type string'],
    ['{"related":[]}', EVENTS, 'json: cannot unmarshal array into Go struct field Event.related of type v1.ObjectReference'],
    ['{"source":{"host":false}}', CORE, 'json: cannot unmarshal bool into Go struct field EventSource.source.host of type string'],
    ['{"series":"x"}', CORE, 'json: cannot unmarshal string into Go struct field Event.series of type v1.EventSeries'],
    ['{"series":{"count":"2"}}', EVENTS, 'json: cannot unmarshal string into Go struct field EventSeries.series.count of type int32'],
    ['{"metadata":[]}', CORE, 'json: cannot unmarshal array into Go struct field Event.metadata of type v1.ObjectMeta'],
    ['{"metadata":{"generation":"1"}}', CORE, 'json: cannot unmarshal string into Go struct field ObjectMeta.metadata.generation of type int64'],
    ['{"metadata":{"labels":"a=b"}}', CORE, 'json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string'],
    ['{"metadata":{"labels":{"a":1}}}', CORE, 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string'],
    ['{"metadata":{"finalizers":"f"}}', CORE, 'json: cannot unmarshal string into Go struct field ObjectMeta.metadata.finalizers of type []string'],
    ['{"metadata":{"finalizers":[1]}}', CORE, 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.finalizers of type string'],
    [
      '{"metadata":{"ownerReferences":{}}}',
      CORE,
      'json: cannot unmarshal object into Go struct field ObjectMeta.metadata.ownerReferences of type []v1.OwnerReference',
    ],
    [
      '{"metadata":{"ownerReferences":[{"controller":"yes"}]}}',
      CORE,
      'json: cannot unmarshal string into Go struct field OwnerReference.metadata.ownerReferences.controller of type bool',
    ],
    [
      '{"metadata":{"deletionGracePeriodSeconds":"30"}}',
      CORE,
      'json: cannot unmarshal string into Go struct field ObjectMeta.metadata.deletionGracePeriodSeconds of type int64',
    ],
    [
      '{"metadata":{"managedFields":[{"operation":1}]}}',
      CORE,
      'json: cannot unmarshal number into Go struct field ManagedFieldsEntry.metadata.managedFields.operation of type v1.ManagedFieldsOperationType',
    ],
    // The first type error wins; decoding goes on past it only to find a fatal one.
    ['{"reason":1,"count":"x"}', CORE, 'json: cannot unmarshal number into Go struct field Event.reason of type string'],
  ];
  for (const [body, api, err] of cases) {
    void it(body, () => badRequest(() => decodeEventJson(body, api, { fieldValidation: 'Ignore' }), cannot(err)));
  }
  void it('from a parsed value too', () => {
    badRequest(
      () => decodeEvent({ count: 3.5 }, CORE),
      cannot('json: cannot unmarshal number 3.5 into Go struct field Event.count of type int32'),
    );
  });
});

void describe('times', () => {
  const cases: [string, EventApi, string][] = [
    [
      '{"eventTime":"2020-09-11T02:42:23Z"}',
      EVENTS,
      `parsing time "2020-09-11T02:42:23Z" as ${M}: cannot parse "Z" as ".000000"`,
    ],
    [
      '{"series":{"count":2,"lastObservedTime":"2020-09-11T02:42:23.1Z"}}',
      EVENTS,
      `parsing time "2020-09-11T02:42:23.1Z" as ${M}: cannot parse ".1Z" as ".000000"`,
    ],
    ['{"firstTimestamp":"yesterday"}', CORE, 'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"'],
    ['{"metadata":{"creationTimestamp":"2020-02-30T00:00:00Z"}}', CORE, 'parsing time "2020-02-30T00:00:00Z": day out of range'],
    ['{"eventTime":5}', CORE, 'json: cannot unmarshal number into Go struct field Event.eventTime of type string'],
    ['{"deprecatedLastTimestamp":{}}', EVENTS, 'json: cannot unmarshal object into Go struct field Event.deprecatedLastTimestamp of type string'],
    [
      '{"series":{"lastObservedTime":true}}',
      CORE,
      'json: cannot unmarshal bool into Go struct field EventSeries.series.lastObservedTime of type string',
    ],
    [
      '{"metadata":{"managedFields":[{"time":1}]}}',
      CORE,
      'json: cannot unmarshal number into Go struct field ManagedFieldsEntry.metadata.managedFields.time of type string',
    ],
    // A bad time stops decoding at once, so it beats an earlier type error.
    ['{"count":"x","eventTime":"bad"}', CORE, `parsing time "bad" as ${M}: cannot parse "bad" as "2006"`],
  ];
  for (const [body, api, err] of cases) {
    void it(body, () => badRequest(() => decodeEventJson(body, api, { fieldValidation: 'Strict' }), cannot(err)));
  }
  void it('are stored in canonical form', () => {
    const { event } = decodeEventJson(
      '{"firstTimestamp":"2025-06-23T04:57:05.9+02:00","lastTimestamp":null,"eventTime":"2025-06-23T04:57:05.000001+02:00",' +
        '"series":{"count":2,"lastObservedTime":"2025-06-23T02:57:06.000000Z"},"metadata":{"creationTimestamp":"0001-01-01T00:00:00Z"}}',
      CORE,
    );
    assert.equal(event.firstTimestamp, '2025-06-23T02:57:05Z');
    assert.equal(event.lastTimestamp, null);
    assert.equal(event.eventTime, '2025-06-23T02:57:05.000001Z');
    assert.deepEqual(event.series, { count: 2, lastObservedTime: '2025-06-23T02:57:06.000000Z' });
    assert.equal('creationTimestamp' in event.metadata, false);
  });
});

void describe('unknown and duplicate fields', () => {
  const body =
    '{"metadata":{"name":"a","foo":1,"labels":{"x":"1","x":"2"},"ownerReferences":[{"name":"o","zz":true}]},' +
    '"involvedObject":{"kind":"Pod","bar":2},"spec":{"nested":{"deep":1}},"source":{"component":"c","extra":""},' +
    '"series":{"count":2,"lastObservedTime":null,"state":"Ongoing"},"related":{"q":1},"reason":"R","reason":"S","spec":1}';
  const errors = [
    'unknown field "metadata.foo"',
    'duplicate field "metadata.labels.x"',
    'unknown field "metadata.ownerReferences[0].zz"',
    'unknown field "involvedObject.bar"',
    'unknown field "spec"',
    'unknown field "source.extra"',
    'unknown field "series.state"',
    'unknown field "related.q"',
    'duplicate field "reason"',
  ];

  void it('Strict: one 400 listing every problem in document order', () => {
    badRequest(() => decodeEventJson(body, CORE, { fieldValidation: 'Strict' }), cannot(`strict decoding error: ${errors.join(', ')}`));
  });
  void it('Warn: the same texts as warnings, and the event without the unknown fields', () => {
    const r = decodeEventJson(body, CORE, { fieldValidation: 'Warn' });
    assert.deepEqual(r.warnings, errors);
    assert.deepEqual(r.event.metadata, { name: 'a', labels: { x: '2' }, ownerReferences: [{ apiVersion: '', kind: '', name: 'o', uid: '' }] });
    assert.deepEqual(r.event.involvedObject, { kind: 'Pod' });
    assert.equal(r.event.reason, 'S');
  });
  void it('Warn is the default', () => {
    assert.deepEqual(decodeEventJson('{"spec":1}', CORE).warnings, ['unknown field "spec"']);
  });
  void it('Ignore: no warnings, unknown fields dropped', () => {
    const r = decodeEventJson(body, CORE, { fieldValidation: 'Ignore' });
    assert.deepEqual(r.warnings, []);
    assert.equal(r.event.reason, 'S');
    assert.deepEqual(r.event.source, { component: 'c' });
  });
  void it('events.k8s.io field names: core names are unknown there', () => {
    badRequest(
      () => decodeEventJson('{"involvedObject":{},"message":"m","regarding":{"x":1}}', EVENTS, { fieldValidation: 'Strict' }),
      cannot('strict decoding error: unknown field "involvedObject", unknown field "message", unknown field "regarding.x"'),
    );
  });
  void it('keys are matched case-sensitively', () => {
    assert.deepEqual(decodeEventJson('{"Reason":"x","metadata":{"Name":"n"}}', CORE).warnings, [
      'unknown field "Reason"',
      'unknown field "metadata.Name"',
    ]);
  });
  void it('paths are Go-quoted', () => {
    assert.deepEqual(decodeEventJson('{"a\\"b\\u0001":1}', CORE).warnings, ['unknown field "a\\"b\\x01"']);
  });
  void it('a type error hides strict errors', () => {
    badRequest(
      () => decodeEventJson('{"spec":1,"count":"x"}', CORE, { fieldValidation: 'Strict' }),
      cannot('json: cannot unmarshal string into Go struct field Event.count of type int32'),
    );
  });
  void it('strict errors come before the API version check', () => {
    badRequest(
      () => decodeEventJson('{"apiVersion":"v1","kind":"Event","regarding":{}}', EVENTS, { fieldValidation: 'Strict' }),
      cannot('strict decoding error: unknown field "regarding"'),
    );
  });
  void it('a repeated struct field merges into the first, as Go decodes it (Ignore)', () => {
    const r = decodeEventJson(
      '{"metadata":{"name":"a","labels":{"x":"1"}},"metadata":{"namespace":"ns","labels":{"y":"2"}}}',
      CORE,
      { fieldValidation: 'Ignore' },
    );
    assert.deepEqual(r.event.metadata, { name: 'a', namespace: 'ns', labels: { x: '1', y: '2' } });
  });
  void it('unknown fields of a parsed value are found too', () => {
    assert.deepEqual(decodeEvent({ metadata: { name: 'a', bogus: true }, extra: 1 }, CORE).warnings, [
      'unknown field "metadata.bogus"',
      'unknown field "extra"',
    ]);
  });
});

void describe('null and absent values', () => {
  void it('null is a no-op for non-pointer fields and clears pointers', () => {
    const { event } = decodeEventJson(
      '{"reason":null,"involvedObject":null,"count":null,"series":null,"related":null,"metadata":{"labels":{"a":null},"deletionTimestamp":null}}',
      CORE,
      { fieldValidation: 'Strict' },
    );
    assert.equal('reason' in event, false);
    assert.deepEqual(event.involvedObject, {});
    assert.equal('series' in event, false);
    assert.equal('related' in event, false);
    assert.deepEqual(event.metadata, { labels: { a: '' } });
  });
  void it('fieldsV1 is kept as given', () => {
    const { event } = decodeEventJson('{"metadata":{"managedFields":[{"manager":"m","fieldsV1":{"f:note":{},"x":[1,2]}}]}}', CORE);
    assert.deepEqual(event.metadata.managedFields, [{ manager: 'm', fieldsV1: { 'f:note': {}, x: [1, 2] } }]);
  });
});

void describe('decoded bodies are the stored form', () => {
  void it('an events.k8s.io/v1 body equals its core/v1 conversion', () => {
    const body: EventsV1Event = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'web-0.1', namespace: 'default' },
      eventTime: '2025-06-23T02:57:05.123456Z',
      reportingController: 'default-scheduler',
      reportingInstance: 'default-scheduler-cp-1',
      action: 'Scheduling',
      reason: 'FailedScheduling',
      regarding: { kind: 'Pod', namespace: 'default', name: 'web-0' },
      note: '0/3 nodes are available',
      type: 'Warning',
    };
    for (const decoded of [decodeEvent(body, EVENTS), decodeEventJson(JSON.stringify(body), EVENTS), decodeEventJson(new TextEncoder().encode(JSON.stringify(body)), EVENTS)]) {
      assert.deepEqual(decoded, { event: toCoreV1(body), warnings: [] });
    }
  });
  void it('a core/v1 body keeps source and reportingComponent apart', () => {
    const { event } = decodeEvent({ source: { component: 'kubelet', host: 'n1' }, reportingComponent: '' }, CORE);
    assert.deepEqual(event.source, { component: 'kubelet', host: 'n1' });
    assert.equal(event.reportingComponent, '');
  });
  void it('selfLink is accepted and dropped', () => {
    const r = decodeEventJson('{"metadata":{"name":"a","selfLink":"/api/v1/x"}}', CORE, { fieldValidation: 'Strict' });
    assert.deepEqual(r.event.metadata, { name: 'a' });
  });
  void it('every fieldValidation mode accepts a clean body', () => {
    for (const mode of ['Strict', 'Warn', 'Ignore'] satisfies FieldValidation[]) {
      assert.deepEqual(decodeEventJson('{"reason":"R"}', CORE, { fieldValidation: mode }).warnings, []);
    }
  });
});
