import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString, isInvalid } from './status.js';
import type { CoreEvent, EventApi } from './types.js';
import {
  eventInvalidError,
  validateEventCreate,
  validateEventCreateRequest,
  validateEventUpdate,
  validateEventUpdateRequest,
  validateGenericCreateMeta,
  validateGenericUpdateMeta,
} from './validation.js';

const CORE: EventApi = 'v1';
const EVENTS: EventApi = 'events.k8s.io/v1';

const T1 = '2024-05-01T10:00:00Z';
const T2 = '2024-05-01T10:05:00Z';
const MT1 = '2024-05-01T10:00:00.123456Z';

const NAME_PART_REGEX =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const SUBDOMAIN_REGEX =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_VALUE_REGEX =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/** An event as the legacy recorder writes it: no eventTime. */
function oldStyle(): CoreEvent {
  return {
    metadata: { name: 'web.17a9c', namespace: 'default', resourceVersion: '7' },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'web', apiVersion: 'v1' },
    reason: 'Started',
    message: 'Started container web',
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: T1,
    lastTimestamp: T1,
    count: 1,
    type: 'Normal',
  };
}

/** An event as events.k8s.io/v1 stores it: eventTime and reporting fields, no deprecated fields. */
function newStyle(): CoreEvent {
  return {
    metadata: { name: 'web.17a9c', namespace: 'default', resourceVersion: '7' },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'web', apiVersion: 'v1' },
    reason: 'Started',
    message: 'Started container web',
    type: 'Normal',
    eventTime: MT1,
    action: 'Start',
    reportingComponent: 'kubelet',
    reportingInstance: 'kubelet-node-1',
  };
}

type Mutate = (e: CoreEvent) => void;

interface CreateCase {
  name: string;
  api: EventApi;
  base: () => CoreEvent;
  mutate?: Mutate;
  want: string[];
}

const bytes = (ch: string, n: number): string => ch.repeat(n);

const createCases: CreateCase[] = [
  // §1.2 A: eventTime zero
  { name: 'A: valid old-style event', api: CORE, base: oldStyle, want: [] },
  {
    name: 'A: empty involvedObject.namespace allowed in default',
    api: CORE,
    base: oldStyle,
    mutate: (e) => (e.involvedObject.namespace = ''),
    want: [],
  },
  {
    name: 'A: empty involvedObject.namespace allowed in an empty namespace (but the namespace fails its own check)',
    api: CORE,
    base: oldStyle,
    mutate: (e) => {
      e.involvedObject.namespace = '';
      e.metadata.namespace = '';
    },
    want: [`namespace: Invalid value: "": ${SUBDOMAIN_REGEX}`],
  },
  {
    name: 'A: empty involvedObject.namespace rejected in kube-system',
    api: CORE,
    base: oldStyle,
    mutate: (e) => {
      e.involvedObject.namespace = '';
      e.metadata.namespace = 'kube-system';
    },
    want: ['involvedObject.namespace: Invalid value: "": does not match event.namespace'],
  },
  {
    name: 'A: involvedObject.namespace must equal the namespace',
    api: CORE,
    base: oldStyle,
    mutate: (e) => (e.involvedObject.namespace = 'other'),
    want: ['involvedObject.namespace: Invalid value: "other": does not match event.namespace'],
  },
  {
    name: 'A: nothing else is checked (reason, type, reporting fields)',
    api: CORE,
    base: oldStyle,
    mutate: (e) => {
      e.reason = bytes('r', 300);
      e.message = bytes('m', 5000);
      e.type = 'Bogus';
    },
    want: [],
  },
  {
    name: 'A: a bad namespace is reported at path namespace',
    api: CORE,
    base: oldStyle,
    mutate: (e) => {
      e.metadata.namespace = 'Team_A';
      e.involvedObject.namespace = 'Team_A';
    },
    want: [`namespace: Invalid value: "Team_A": ${SUBDOMAIN_REGEX}`],
  },
  {
    name: 'A: the namespace length error says bytes',
    api: CORE,
    base: oldStyle,
    mutate: (e) => {
      e.metadata.namespace = bytes('a', 254);
      e.involvedObject.namespace = bytes('a', 254);
    },
    want: [`namespace: Invalid value: "${bytes('a', 254)}": must be no more than 253 bytes`],
  },
  // §1.2 B: eventTime set, through core/v1
  { name: 'B: valid new-style event through core/v1', api: CORE, base: newStyle, want: [] },
  {
    name: 'B: empty involvedObject.namespace allowed in kube-system',
    api: CORE,
    base: newStyle,
    mutate: (e) => {
      e.involvedObject.namespace = '';
      e.metadata.namespace = 'kube-system';
    },
    want: [],
  },
  {
    name: 'B: empty involvedObject.namespace rejected elsewhere',
    api: CORE,
    base: newStyle,
    mutate: (e) => {
      e.involvedObject.namespace = '';
      e.metadata.namespace = 'team-a';
    },
    want: ['involvedObject.namespace: Invalid value: "": does not match event.namespace'],
  },
  {
    name: 'B: a non-empty involvedObject.namespace may differ',
    api: CORE,
    base: newStyle,
    mutate: (e) => (e.involvedObject.namespace = 'other'),
    want: [],
  },
  {
    name: 'B: core/v1 names the empty controller reportingComponent, three times',
    api: CORE,
    base: newStyle,
    mutate: (e) => delete e.reportingComponent,
    want: [
      'reportingComponent: Required value',
      'reportingComponent: Invalid value: "": name part must be non-empty',
      `reportingComponent: Invalid value: "": ${NAME_PART_REGEX}`,
    ],
  },
  {
    name: 'B: events.k8s.io names it reportingController',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.reportingComponent = ''),
    want: [
      'reportingController: Required value',
      'reportingController: Invalid value: "": name part must be non-empty',
      `reportingController: Invalid value: "": ${NAME_PART_REGEX}`,
    ],
  },
  {
    name: 'B: the controller must be a qualified name (value shown, Go-quoted)',
    api: CORE,
    base: newStyle,
    mutate: (e) => (e.reportingComponent = 'my\tcontroller'),
    want: [`reportingComponent: Invalid value: "my\\tcontroller": ${NAME_PART_REGEX}`],
  },
  {
    name: 'B: a prefixed controller is fine',
    api: CORE,
    base: newStyle,
    mutate: (e) => (e.reportingComponent = 'example.com/my-controller'),
    want: [],
  },
  {
    name: 'B: reportingInstance required',
    api: CORE,
    base: newStyle,
    mutate: (e) => delete e.reportingInstance,
    want: ['reportingInstance: Required value'],
  },
  {
    name: 'B: reportingInstance of 128 bytes is fine',
    api: CORE,
    base: newStyle,
    mutate: (e) => (e.reportingInstance = bytes('i', 128)),
    want: [],
  },
  {
    name: 'B: reportingInstance over 128 bytes (43 three-byte chars), value shown as ""',
    api: CORE,
    base: newStyle,
    mutate: (e) => (e.reportingInstance = bytes('€', 43)),
    want: ['reportingInstance: Invalid value: "": can have at most 128 characters'],
  },
  {
    name: 'B: action required',
    api: CORE,
    base: newStyle,
    mutate: (e) => (e.action = ''),
    want: ['action: Required value'],
  },
  {
    name: 'B: action over 128 bytes',
    api: CORE,
    base: newStyle,
    mutate: (e) => (e.action = bytes('a', 129)),
    want: ['action: Invalid value: "": can have at most 128 characters'],
  },
  {
    name: 'B: reason required',
    api: CORE,
    base: newStyle,
    mutate: (e) => delete e.reason,
    want: ['reason: Required value'],
  },
  {
    name: 'B: reason over 128 bytes',
    api: CORE,
    base: newStyle,
    mutate: (e) => (e.reason = bytes('r', 129)),
    want: ['reason: Invalid value: "": can have at most 128 characters'],
  },
  {
    name: 'B: message of 1024 bytes is fine, and it is not required',
    api: CORE,
    base: newStyle,
    mutate: (e) => (e.message = bytes('m', 1024)),
    want: [],
  },
  {
    name: 'B: message over 1024 bytes (342 three-byte chars)',
    api: CORE,
    base: newStyle,
    mutate: (e) => (e.message = bytes('€', 342)),
    want: ['message: Invalid value: "": can have at most 1024 characters'],
  },
  {
    name: 'B: type is not validated through core/v1',
    api: CORE,
    base: newStyle,
    mutate: (e) => (e.type = ''),
    want: [],
  },
  {
    name: 'B: a bad namespace is reported at path namespace',
    api: CORE,
    base: newStyle,
    mutate: (e) => (e.metadata.namespace = 'Team_A'),
    want: [`namespace: Invalid value: "Team_A": ${SUBDOMAIN_REGEX}`],
  },
  {
    name: 'core/v1 accepts a name that is not a DNS subdomain',
    api: CORE,
    base: oldStyle,
    mutate: (e) => (e.metadata.name = 'Foo_Bar'),
    want: [],
  },
  // §1.3 strict create
  { name: 'strict: valid event', api: EVENTS, base: newStyle, want: [] },
  {
    name: 'strict: the name must be a DNS subdomain',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.metadata.name = 'Foo_Bar'),
    want: [`metadata.name: Invalid value: "Foo_Bar": ${SUBDOMAIN_REGEX}`],
  },
  {
    name: 'strict: a name over 253 bytes',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.metadata.name = bytes('a', 254)),
    want: [`metadata.name: Invalid value: "${bytes('a', 254)}": must be no more than 253 characters`],
  },
  {
    name: 'strict: a name is required',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => delete e.metadata.name,
    want: ['metadata.name: Required value: name or generateName is required'],
  },
  {
    name: 'strict: generateName with a trailing dash is fine',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.metadata.generateName = 'web-'),
    want: [],
  },
  {
    name: 'strict: generateName is checked as a DNS-subdomain prefix',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.metadata.generateName = 'Web_'),
    want: [`metadata.generateName: Invalid value: "Web_": ${SUBDOMAIN_REGEX}`],
  },
  {
    name: 'strict: labels are checked (key and value)',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.metadata.labels = { 'bad key': 'ok', good: 'bad value' }),
    want: [`metadata.labels: Invalid value: "bad key": ${NAME_PART_REGEX}`, `metadata.labels: Invalid value: "bad value": ${LABEL_VALUE_REGEX}`],
  },
  {
    name: 'strict: annotation keys are checked, case-insensitively',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.metadata.annotations = { 'Example.com/Key': 'x', 'a b': 'y' }),
    want: [`metadata.annotations: Invalid value: "a b": ${NAME_PART_REGEX}`],
  },
  {
    name: 'strict: finalizers must be standard or qualified',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.metadata.finalizers = ['kubernetes', 'custom', 'example.com/ok']),
    want: ['metadata.finalizers[1]: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified'],
  },
  {
    name: 'strict: series.count at least 2',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.series = { count: 1, lastObservedTime: MT1 }),
    want: ['series.count: Invalid value: "": should be at least 2'],
  },
  {
    name: 'strict: series.lastObservedTime required',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.series = { count: 2, lastObservedTime: null }),
    want: ['series.lastObservedTime: Required value'],
  },
  {
    name: 'strict: a valid series',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.series = { count: 5, lastObservedTime: MT1 }),
    want: [],
  },
  {
    name: 'core/v1 does not check series',
    api: CORE,
    base: newStyle,
    mutate: (e) => (e.series = { count: 0, lastObservedTime: null }),
    want: [],
  },
  {
    name: 'strict: eventTime required (and the old-style branch runs)',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => {
      e.eventTime = null;
      e.involvedObject.namespace = 'other';
    },
    want: ['involvedObject.namespace: Invalid value: "other": does not match event.namespace', 'eventTime: Required value'],
  },
  {
    name: "strict: Go's zero time counts as no eventTime",
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.eventTime = '0001-01-01T00:00:00.000000Z'),
    want: ['eventTime: Required value'],
  },
  {
    name: 'strict: type is case-sensitive',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.type = 'normal'),
    want: ['type: Invalid value: "": has invalid value: normal'],
  },
  {
    name: 'strict: type required',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => delete e.type,
    want: ['type: Invalid value: "": has invalid value: '],
  },
  {
    name: 'strict: Warning is fine',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.type = 'Warning'),
    want: [],
  },
  {
    name: 'strict: deprecated fields need to be unset, at their core paths',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => {
      e.firstTimestamp = T1;
      e.lastTimestamp = T1;
      e.count = 3;
      e.source = { host: 'node-1' };
    },
    want: [
      'firstTimestamp: Invalid value: "": needs to be unset',
      'lastTimestamp: Invalid value: "": needs to be unset',
      'count: Invalid value: "": needs to be unset',
      'source: Invalid value: "": needs to be unset',
    ],
  },
  {
    name: 'strict: an empty source is unset',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.source = { component: '', host: '' }),
    want: [],
  },
  {
    name: 'strict: legacy errors come first, then metadata, series, eventTime, type, deprecated',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => {
      e.action = '';
      e.metadata.name = 'Bad';
      e.series = { count: 1, lastObservedTime: MT1 };
      e.type = 'x';
      e.count = 2;
    },
    want: [
      'action: Required value',
      `metadata.name: Invalid value: "Bad": ${SUBDOMAIN_REGEX}`,
      'series.count: Invalid value: "": should be at least 2',
      'type: Invalid value: "": has invalid value: x',
      'count: Invalid value: "": needs to be unset',
    ],
  },
];

void describe('validateEventCreate', () => {
  for (const c of createCases) {
    void it(`${c.name} [${c.api}]`, () => {
      const e = c.base();
      c.mutate?.(e);
      assert.deepEqual(validateEventCreate(e, c.api).map(fieldErrorString), c.want);
    });
  }
});

interface UpdateCase {
  name: string;
  api: EventApi;
  base: () => CoreEvent;
  mutatePrev?: Mutate;
  mutate: Mutate;
  want: string[];
}

const updateCases: UpdateCase[] = [
  {
    name: 'core/v1: anything may change',
    api: CORE,
    base: oldStyle,
    mutate: (e) => {
      e.count = 2;
      e.lastTimestamp = T2;
      e.message = 'changed';
      e.reason = 'Other';
      e.involvedObject.uid = 'abc';
    },
    want: [],
  },
  {
    name: 'core/v1: legacy rules still run on the new object',
    api: CORE,
    base: newStyle,
    mutate: (e) => (e.action = ''),
    want: ['action: Required value'],
  },
  {
    name: 'strict: eventTime is not required on update',
    api: EVENTS,
    base: oldStyle,
    mutate: (e) => (e.metadata.labels = { team: 'a' }),
    want: [],
  },
  {
    name: 'strict: legacy rules run on the new object',
    api: EVENTS,
    base: newStyle,
    mutatePrev: (e) => (e.reportingInstance = ''),
    mutate: (e) => (e.reportingInstance = ''),
    want: ['reportingInstance: Required value'],
  },
  {
    name: 'strict: involvedObject is immutable, printed as the internal Go struct',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.involvedObject.name = 'web-2'),
    want: [
      'involvedObject: Invalid value: {"Kind":"Pod","Namespace":"default","Name":"web-2","UID":"","APIVersion":"v1","ResourceVersion":"","FieldPath":""}: field is immutable',
    ],
  },
  {
    name: 'strict: reason is immutable and reported twice',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.reason = 'Killing'),
    want: ['reason: Invalid value: "Killing": field is immutable', 'reason: Invalid value: "Killing": field is immutable'],
  },
  {
    name: 'strict: message is immutable',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.message = 'new <note>'),
    want: ['message: Invalid value: "new <note>": field is immutable'],
  },
  {
    name: 'strict: source is immutable (struct JSON, HTML-escaped as Go does)',
    api: EVENTS,
    base: oldStyle,
    mutate: (e) => (e.source = { component: 'a<b>&c' }),
    want: ['source: Invalid value: {"Component":"a\\u003cb\\u003e\\u0026c","Host":""}: field is immutable'],
  },
  {
    name: 'strict: firstTimestamp is immutable, printed in UTC',
    api: EVENTS,
    base: oldStyle,
    mutate: (e) => (e.firstTimestamp = '2024-05-01T14:00:00+02:00'),
    want: ['firstTimestamp: Invalid value: "2024-05-01T12:00:00Z": field is immutable'],
  },
  {
    name: 'strict: the same instant in another zone is not a change',
    api: EVENTS,
    base: oldStyle,
    mutate: (e) => (e.firstTimestamp = '2024-05-01T12:00:00+02:00'),
    want: [],
  },
  {
    name: 'strict: lastTimestamp is immutable; clearing it prints null',
    api: EVENTS,
    base: oldStyle,
    mutate: (e) => (e.lastTimestamp = null),
    want: ['lastTimestamp: Invalid value: null: field is immutable'],
  },
  {
    name: 'strict: count is immutable',
    api: EVENTS,
    base: oldStyle,
    mutate: (e) => (e.count = 2),
    want: ['count: Invalid value: 2: field is immutable'],
  },
  {
    name: 'strict: type is immutable',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.type = 'Warning'),
    want: ['type: Invalid value: "Warning": field is immutable'],
  },
  {
    name: 'strict: eventTime is immutable at microsecond precision',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.eventTime = '2024-05-01T10:00:00.123457Z'),
    want: ['eventTime: Invalid value: "2024-05-01T10:00:00.123457Z": field is immutable'],
  },
  {
    name: 'strict: sub-microsecond eventTime differences are tolerated',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.eventTime = '2024-05-01T10:00:00.123456789Z'),
    want: [],
  },
  {
    name: 'strict: action is immutable',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.action = 'Stop'),
    want: ['action: Invalid value: "Stop": field is immutable'],
  },
  {
    name: 'strict: related is immutable (set)',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.related = { kind: 'Node', name: 'n1' }),
    want: [
      'related: Invalid value: {"Kind":"Node","Namespace":"","Name":"n1","UID":"","APIVersion":"","ResourceVersion":"","FieldPath":""}: field is immutable',
    ],
  },
  {
    name: 'strict: related is immutable (cleared prints null)',
    api: EVENTS,
    base: newStyle,
    mutatePrev: (e) => (e.related = { kind: 'Node', name: 'n1' }),
    mutate: (e) => (e.related = null),
    want: ['related: Invalid value: null: field is immutable'],
  },
  {
    name: 'strict: an empty related differs from none',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.related = {}),
    want: [
      'related: Invalid value: {"Kind":"","Namespace":"","Name":"","UID":"","APIVersion":"","ResourceVersion":"","FieldPath":""}: field is immutable',
    ],
  },
  {
    name: 'strict: reportingController is immutable, at that path',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.reportingComponent = 'scheduler'),
    want: ['reportingController: Invalid value: "scheduler": field is immutable'],
  },
  {
    name: 'strict: reportingInstance is immutable',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.reportingInstance = 'kubelet-node-2'),
    want: ['reportingInstance: Invalid value: "kubelet-node-2": field is immutable'],
  },
  {
    name: 'strict: a changed series is validated',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.series = { count: 1, lastObservedTime: null }),
    want: ['series.count: Invalid value: "": should be at least 2', 'series.lastObservedTime: Required value'],
  },
  {
    name: 'strict: an unchanged series is not re-validated',
    api: EVENTS,
    base: newStyle,
    mutatePrev: (e) => (e.series = { count: 1, lastObservedTime: MT1 }),
    mutate: (e) => (e.series = { count: 1, lastObservedTime: MT1 }),
    want: [],
  },
  {
    name: 'strict: the series may change',
    api: EVENTS,
    base: newStyle,
    mutatePrev: (e) => (e.series = { count: 2, lastObservedTime: MT1 }),
    mutate: (e) => (e.series = { count: 3, lastObservedTime: '2024-05-01T10:30:00.000000Z' }),
    want: [],
  },
  {
    name: 'strict: metadata name and namespace are immutable',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => {
      e.metadata.name = 'other';
      e.metadata.namespace = 'kube-system';
      e.involvedObject.namespace = 'kube-system';
    },
    want: [
      'metadata.name: Invalid value: "other": field is immutable',
      'metadata.namespace: Invalid value: "kube-system": field is immutable',
      'involvedObject: Invalid value: {"Kind":"Pod","Namespace":"kube-system","Name":"web","UID":"","APIVersion":"v1","ResourceVersion":"","FieldPath":""}: field is immutable',
    ],
  },
  {
    name: 'strict: resourceVersion must be specified',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => delete e.metadata.resourceVersion,
    want: ['metadata.resourceVersion: Invalid value: "": must be specified for an update'],
  },
  {
    name: 'strict: labels are checked on update',
    api: EVENTS,
    base: newStyle,
    mutate: (e) => (e.metadata.labels = { k: '-' }),
    want: [`metadata.labels: Invalid value: "-": ${LABEL_VALUE_REGEX}`],
  },
];

void describe('validateEventUpdate', () => {
  for (const c of updateCases) {
    void it(`${c.name} [${c.api}]`, () => {
      const prev = c.base();
      c.mutatePrev?.(prev);
      const next = c.base();
      c.mutatePrev?.(next);
      c.mutate(next);
      assert.deepEqual(validateEventUpdate(next, prev, c.api).map(fieldErrorString), c.want);
    });
  }
});

void describe('generic ObjectMeta checks (path-segment names)', () => {
  const cases: Array<[string, Mutate, string[]]> = [
    ['a valid name', () => undefined, []],
    ['name required', (e) => delete e.metadata.name, ['metadata.name: Required value: name or generateName is required']],
    ['.', (e) => (e.metadata.name = '.'), ['metadata.name: Invalid value: ".": may not be \'.\'']],
    ['..', (e) => (e.metadata.name = '..'), ['metadata.name: Invalid value: "..": may not be \'..\'']],
    [
      '/ and %',
      (e) => (e.metadata.name = 'a/b%c'),
      ['metadata.name: Invalid value: "a/b%c": may not contain \'/\'', 'metadata.name: Invalid value: "a/b%c": may not contain \'%\''],
    ],
    [
      'generateName with a slash',
      (e) => {
        e.metadata.generateName = 'a/';
        e.metadata.name = 'a/xyz12';
      },
      ['metadata.generateName: Invalid value: "a/": may not contain \'/\'', 'metadata.name: Invalid value: "a/xyz12": may not contain \'/\''],
    ],
    ['uppercase and underscores pass', (e) => (e.metadata.name = 'Foo_Bar'), []],
    [
      'namespace must be a DNS label',
      (e) => (e.metadata.namespace = 'a.b'),
      ['metadata.namespace: Invalid value: "a.b": must not contain dots'],
    ],
    ['namespace required', (e) => delete e.metadata.namespace, ['metadata.namespace: Required value']],
  ];
  for (const [name, mutate, want] of cases) {
    void it(name, () => {
      const e = oldStyle();
      mutate(e);
      assert.deepEqual(validateGenericCreateMeta(e).map(fieldErrorString), want);
    });
  }
});

void describe('request ordering', () => {
  void it('create: strategy errors alone when the strategy fails', () => {
    const e = newStyle();
    e.action = '';
    e.metadata.name = 'a/b';
    assert.deepEqual(validateEventCreateRequest(e, CORE).map(fieldErrorString), ['action: Required value']);
  });
  void it('create: generic name rules once the strategy passed', () => {
    const e = newStyle();
    e.metadata.name = 'a/b';
    assert.deepEqual(validateEventCreateRequest(e, CORE).map(fieldErrorString), [
      'metadata.name: Invalid value: "a/b": may not contain \'/\'',
    ]);
  });
  void it('create: strict mode reports the DNS rule, not the path-segment one', () => {
    const e = newStyle();
    e.metadata.name = 'a/b';
    assert.deepEqual(validateEventCreateRequest(e, EVENTS).map(fieldErrorString), [`metadata.name: Invalid value: "a/b": ${SUBDOMAIN_REGEX}`]);
  });
  void it('create: a valid event passes both steps', () => {
    assert.deepEqual(validateEventCreateRequest(newStyle(), EVENTS), []);
    assert.deepEqual(validateEventCreateRequest(oldStyle(), CORE), []);
  });
  void it('update: generic errors come first, then the strategy, duplicates kept', () => {
    const prev = newStyle();
    const next = newStyle();
    next.metadata.name = 'renamed';
    next.action = 'Stop';
    const errs = validateEventUpdateRequest(next, prev, EVENTS).map(fieldErrorString);
    assert.deepEqual(errs, [
      'metadata.name: Invalid value: "renamed": field is immutable',
      'metadata.name: Invalid value: "renamed": field is immutable',
      'action: Invalid value: "Stop": field is immutable',
    ]);
  });
  void it('update: core/v1 still gets the generic metadata checks', () => {
    const prev = oldStyle();
    const next = oldStyle();
    next.metadata.namespace = 'other';
    next.involvedObject.namespace = 'other';
    assert.deepEqual(validateEventUpdateRequest(next, prev, CORE).map(fieldErrorString), [
      'metadata.namespace: Invalid value: "other": field is immutable',
    ]);
    assert.deepEqual(validateGenericUpdateMeta(prev, prev), []);
  });
});

void describe('eventInvalidError', () => {
  void it('is a 422 Invalid Status for kind Event in the core group', () => {
    const e = newStyle();
    e.reason = '';
    const err = eventInvalidError('web.17a9c', validateEventCreate(e, EVENTS));
    assert.ok(isInvalid(err));
    assert.deepEqual(err.status, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Event "web.17a9c" is invalid: reason: Required value',
      reason: 'Invalid',
      code: 422,
      details: {
        name: 'web.17a9c',
        group: undefined,
        kind: 'Event',
        causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'reason' }],
      },
    });
    assert.equal(JSON.stringify(err.status.details), '{"name":"web.17a9c","kind":"Event","causes":[{"reason":"FieldValueRequired","message":"Required value","field":"reason"}]}');
  });

  void it('lists several errors in brackets', () => {
    const e = newStyle();
    e.action = '';
    e.type = 'normal';
    const err = eventInvalidError('x', validateEventCreate(e, EVENTS));
    assert.equal(err.status.message, 'Event "x" is invalid: [action: Required value, type: Invalid value: "": has invalid value: normal]');
    assert.deepEqual(err.status.details?.causes, [
      { reason: 'FieldValueRequired', message: 'Required value', field: 'action' },
      { reason: 'FieldValueInvalid', message: 'Invalid value: "": has invalid value: normal', field: 'type' },
    ]);
  });

  void it('de-duplicates the message but keeps every cause', () => {
    const prev = newStyle();
    const next = newStyle();
    next.reason = 'Killing';
    const err = eventInvalidError('x', validateEventUpdate(next, prev, EVENTS));
    assert.equal(err.status.message, 'Event "x" is invalid: reason: Invalid value: "Killing": field is immutable');
    assert.equal(err.status.details?.causes?.length, 2);
  });

  void it('matches the upstream text for an events.k8s.io namespace mismatch', () => {
    const e = newStyle();
    e.involvedObject.namespace = '';
    e.metadata.namespace = 'team-a';
    const err = eventInvalidError('x', validateEventCreate(e, EVENTS));
    assert.equal(err.status.message, 'Event "x" is invalid: involvedObject.namespace: Invalid value: "": does not match event.namespace');
  });
});
