import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  FIELD_LABELS,
  compareUtf8,
  compileFieldSelector,
  convertFieldSelector,
  escapeFieldValue,
  eventSelectableFields,
  formatFieldSelector,
  matchesFields,
  parseFieldSelector,
  unescapeFieldValue,
} from './field-selector.js';
import { isStatusError } from './status.js';
import type { CoreEvent, EventApi } from './types.js';

function assertBadRequest(fn: () => unknown, message: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(isStatusError(e), 'expected a StatusError');
    assert.equal(e.status.code, 400);
    assert.equal(e.status.reason, 'BadRequest');
    assert.equal(e.status.message, message);
    return true;
  });
}

/** Written by the legacy recorder through core/v1 (client-go ≥1.28 fills reportingComponent). */
const legacy: CoreEvent = {
  metadata: { name: 'web-0.17f1', namespace: 'shop', labels: { 'archive.kevents.io/cluster': 'prod' } },
  involvedObject: {
    kind: 'Pod',
    namespace: 'shop',
    name: 'web-0',
    uid: 'uid-web-0',
    apiVersion: 'v1',
    resourceVersion: '42',
    fieldPath: 'spec.containers{app}',
  },
  reason: 'BackOff',
  message: 'Back-off restarting failed container',
  source: { component: 'kubelet', host: 'node-1' },
  count: 3,
  type: 'Warning',
  eventTime: null,
  reportingComponent: 'kubelet',
  reportingInstance: 'node-1',
};

/** Written through events.k8s.io/v1: no source, reportingController set. */
const modern: CoreEvent = {
  metadata: { name: 'web-1.17f2', namespace: 'shop' },
  involvedObject: { kind: 'Pod', namespace: 'shop', name: 'web-1', uid: 'uid-web-1', apiVersion: 'v1' },
  reason: 'Scheduled',
  message: 'Successfully assigned shop/web-1 to node-2',
  source: {},
  firstTimestamp: null,
  lastTimestamp: null,
  type: 'Normal',
  eventTime: '2025-06-23T02:57:05.123456Z',
  action: 'Binding',
  reportingComponent: 'default-scheduler',
  reportingInstance: 'default-scheduler-cp-1',
};

/** Differs from `legacy` in every selectable field. */
const other: CoreEvent = {
  metadata: { name: 'db-0.17f9', namespace: 'data' },
  involvedObject: {
    kind: 'StatefulSet',
    namespace: 'data',
    name: 'db',
    uid: 'uid-db',
    apiVersion: 'apps/v1',
    resourceVersion: '7',
    fieldPath: 'spec',
  },
  reason: 'SuccessfulCreate',
  source: { component: 'statefulset-controller' },
  type: 'Normal',
  reportingComponent: 'statefulset-controller',
  reportingInstance: '',
};

/** Written by an old legacy client: source only, empty reportingComponent. */
const oldClient: CoreEvent = {
  metadata: { name: 'node-1.17f3', namespace: 'default' },
  involvedObject: { kind: 'Node', name: 'node-1', uid: 'node-1' },
  reason: 'NodeReady',
  source: { component: 'kubelet', host: 'node-1' },
  type: 'Normal',
  reportingComponent: '',
  reportingInstance: '',
};

void describe('eventSelectableFields', () => {
  void it('is the full internal field set of a legacy event', () => {
    assert.deepEqual(eventSelectableFields(legacy), {
      'metadata.name': 'web-0.17f1',
      'metadata.namespace': 'shop',
      'involvedObject.kind': 'Pod',
      'involvedObject.namespace': 'shop',
      'involvedObject.name': 'web-0',
      'involvedObject.uid': 'uid-web-0',
      'involvedObject.apiVersion': 'v1',
      'involvedObject.resourceVersion': '42',
      'involvedObject.fieldPath': 'spec.containers{app}',
      reason: 'BackOff',
      reportingComponent: 'kubelet',
      source: 'kubelet',
      type: 'Warning',
      'kevents.io/cluster': 'prod',
    });
  });

  void it('falls back from an empty source.component to reportingController, absent fields are ""', () => {
    const f = eventSelectableFields(modern);
    assert.equal(f.source, 'default-scheduler');
    assert.equal(f.reportingComponent, 'default-scheduler');
    assert.equal(f['involvedObject.resourceVersion'], '');
    assert.equal(f['involvedObject.fieldPath'], '');
  });

  void it('keeps source.component when it is set and reportingComponent is empty', () => {
    const f = eventSelectableFields(oldClient);
    assert.equal(f.source, 'kubelet');
    assert.equal(f.reportingComponent, '');
    assert.equal(f['involvedObject.namespace'], '');
  });

  void it('gives "" for every field of an event with nothing set', () => {
    const bare = { metadata: {}, involvedObject: {} } as CoreEvent;
    for (const [k, v] of Object.entries(eventSelectableFields(bare))) assert.equal(v, '', k);
    const broken = JSON.parse('{}') as CoreEvent;
    assert.equal(eventSelectableFields(broken)['involvedObject.name'], '');
  });

  void it('prefers source.component over reportingController when both are set and differ', () => {
    const e: CoreEvent = { ...legacy, source: { component: 'kubelet' }, reportingComponent: 'other' };
    assert.equal(eventSelectableFields(e).source, 'kubelet');
  });
});

interface AcceptedRow {
  api: EventApi;
  label: string;
  internal: string;
  /** value that the legacy event has under this label */
  legacyValue: string;
}

const accepted: AcceptedRow[] = [
  { api: 'v1', label: 'involvedObject.kind', internal: 'involvedObject.kind', legacyValue: 'Pod' },
  { api: 'v1', label: 'involvedObject.namespace', internal: 'involvedObject.namespace', legacyValue: 'shop' },
  { api: 'v1', label: 'involvedObject.name', internal: 'involvedObject.name', legacyValue: 'web-0' },
  { api: 'v1', label: 'involvedObject.uid', internal: 'involvedObject.uid', legacyValue: 'uid-web-0' },
  { api: 'v1', label: 'involvedObject.apiVersion', internal: 'involvedObject.apiVersion', legacyValue: 'v1' },
  { api: 'v1', label: 'involvedObject.resourceVersion', internal: 'involvedObject.resourceVersion', legacyValue: '42' },
  { api: 'v1', label: 'involvedObject.fieldPath', internal: 'involvedObject.fieldPath', legacyValue: 'spec.containers{app}' },
  { api: 'v1', label: 'reason', internal: 'reason', legacyValue: 'BackOff' },
  { api: 'v1', label: 'reportingComponent', internal: 'reportingComponent', legacyValue: 'kubelet' },
  { api: 'v1', label: 'source', internal: 'source', legacyValue: 'kubelet' },
  { api: 'v1', label: 'type', internal: 'type', legacyValue: 'Warning' },
  { api: 'v1', label: 'metadata.namespace', internal: 'metadata.namespace', legacyValue: 'shop' },
  { api: 'v1', label: 'metadata.name', internal: 'metadata.name', legacyValue: 'web-0.17f1' },
  { api: 'v1', label: 'kevents.io/cluster', internal: 'kevents.io/cluster', legacyValue: 'prod' },
  { api: 'events.k8s.io/v1', label: 'regarding.kind', internal: 'involvedObject.kind', legacyValue: 'Pod' },
  { api: 'events.k8s.io/v1', label: 'regarding.namespace', internal: 'involvedObject.namespace', legacyValue: 'shop' },
  { api: 'events.k8s.io/v1', label: 'regarding.name', internal: 'involvedObject.name', legacyValue: 'web-0' },
  { api: 'events.k8s.io/v1', label: 'regarding.uid', internal: 'involvedObject.uid', legacyValue: 'uid-web-0' },
  { api: 'events.k8s.io/v1', label: 'regarding.apiVersion', internal: 'involvedObject.apiVersion', legacyValue: 'v1' },
  { api: 'events.k8s.io/v1', label: 'regarding.resourceVersion', internal: 'involvedObject.resourceVersion', legacyValue: '42' },
  { api: 'events.k8s.io/v1', label: 'regarding.fieldPath', internal: 'involvedObject.fieldPath', legacyValue: 'spec.containers{app}' },
  { api: 'events.k8s.io/v1', label: 'reportingController', internal: 'reportingComponent', legacyValue: 'kubelet' },
  { api: 'events.k8s.io/v1', label: 'reason', internal: 'reason', legacyValue: 'BackOff' },
  { api: 'events.k8s.io/v1', label: 'type', internal: 'type', legacyValue: 'Warning' },
  { api: 'events.k8s.io/v1', label: 'metadata.namespace', internal: 'metadata.namespace', legacyValue: 'shop' },
  { api: 'events.k8s.io/v1', label: 'metadata.name', internal: 'metadata.name', legacyValue: 'web-0.17f1' },
  { api: 'events.k8s.io/v1', label: 'kevents.io/cluster', internal: 'kevents.io/cluster', legacyValue: 'prod' },
];

void describe('accepted field labels', () => {
  void it('the table lists exactly the labels each API accepts', () => {
    for (const api of ['v1', 'events.k8s.io/v1'] as const) {
      const fromTable = accepted.filter((r) => r.api === api).map((r) => r.label).sort();
      assert.deepEqual([...FIELD_LABELS[api].keys()].sort(), fromTable, api);
    }
  });

  for (const row of accepted) {
    void it(`${row.api} ${row.label} → ${row.internal}`, () => {
      const reqs = convertFieldSelector(parseFieldSelector(`${row.label}=${escapeFieldValue(row.legacyValue)}`), row.api);
      assert.deepEqual(reqs, [{ field: row.internal, operator: '=', value: row.legacyValue }]);

      const eq = compileFieldSelector(`${row.label}=${escapeFieldValue(row.legacyValue)}`, row.api);
      assert.equal(eq.matches(legacy), true, 'equal value matches');
      assert.equal(eq.matches(other), false, 'other event does not match');
      const ne = compileFieldSelector(`${row.label}!=${escapeFieldValue(row.legacyValue)}`, row.api);
      assert.equal(ne.matches(legacy), false, '!= the same value does not match');
      assert.equal(ne.matches(other), true, '!= matches another event');
      const dbl = compileFieldSelector(`${row.label}==${escapeFieldValue(row.legacyValue)}`, row.api);
      assert.equal(dbl.matches(legacy), true, '== is =');
    });
  }

  const modernCases: [EventApi, string, boolean][] = [
    ['v1', 'source=default-scheduler', true],
    ['v1', 'reportingComponent=default-scheduler', true],
    ['events.k8s.io/v1', 'reportingController=default-scheduler', true],
    ['v1', 'source=', false],
    ['events.k8s.io/v1', 'regarding.resourceVersion=', true],
    ['v1', 'involvedObject.fieldPath=', true],
    ['events.k8s.io/v1', 'regarding.name=web-1,reason=Scheduled,type=Normal', true],
    ['events.k8s.io/v1', 'regarding.name=web-1,reason=Scheduled,type=Warning', false],
  ];
  for (const [api, text, want] of modernCases) {
    void it(`events.k8s.io-created event: ${api} ${text} → ${want}`, () => {
      assert.equal(compileFieldSelector(text, api).matches(modern), want);
    });
  }

  const oldClientCases: [EventApi, string, boolean][] = [
    ['v1', 'source=kubelet', true],
    ['events.k8s.io/v1', 'reportingController=', true],
    ['v1', 'reportingComponent=kubelet', false],
    ['v1', 'involvedObject.namespace=', true],
  ];
  for (const [api, text, want] of oldClientCases) {
    void it(`old legacy client event: ${api} ${text} → ${want}`, () => {
      assert.equal(compileFieldSelector(text, api).matches(oldClient), want);
    });
  }
});

const rejected: [EventApi, string][] = [
  ['v1', 'source.component'],
  ['v1', 'source.host'],
  ['v1', 'reportingInstance'],
  ['v1', 'reportingController'],
  ['v1', 'message'],
  ['v1', 'note'],
  ['v1', 'count'],
  ['v1', 'firstTimestamp'],
  ['v1', 'lastTimestamp'],
  ['v1', 'eventTime'],
  ['v1', 'action'],
  ['v1', 'series.count'],
  ['v1', 'related.name'],
  ['v1', 'regarding.name'],
  ['v1', 'metadata.uid'],
  ['v1', 'Reason'],
  ['v1', ''],
  ['events.k8s.io/v1', 'involvedObject.kind'],
  ['events.k8s.io/v1', 'involvedObject.namespace'],
  ['events.k8s.io/v1', 'involvedObject.name'],
  ['events.k8s.io/v1', 'involvedObject.uid'],
  ['events.k8s.io/v1', 'involvedObject.apiVersion'],
  ['events.k8s.io/v1', 'involvedObject.resourceVersion'],
  ['events.k8s.io/v1', 'involvedObject.fieldPath'],
  ['events.k8s.io/v1', 'reportingInstance'],
  ['events.k8s.io/v1', 'reportingComponent'],
  ['events.k8s.io/v1', 'note'],
  ['events.k8s.io/v1', 'message'],
  ['events.k8s.io/v1', 'deprecatedSource.component'],
  ['events.k8s.io/v1', 'deprecatedCount'],
  ['events.k8s.io/v1', 'regarding'],
  ['events.k8s.io/v1', 'action'],
  // kube-apiserver 1.33 refuses source on events.k8s.io/v1 (seen in the differential suite).
  ['events.k8s.io/v1', 'source'],
  ['events.k8s.io/v1', ''],
];

void describe('rejected field labels', () => {
  for (const [api, label] of rejected) {
    void it(`${api} rejects "${label}" with 400`, () => {
      assertBadRequest(() => compileFieldSelector(`${label}=x`, api), `field label not supported: ${label}`);
      assertBadRequest(() => compileFieldSelector(`${label}!=x`, api), `field label not supported: ${label}`);
    });
  }

  void it('reports the first unsupported label in sorted term order', () => {
    assertBadRequest(() => compileFieldSelector('type=Normal,zzz=1,bogus=1', 'v1'), 'field label not supported: bogus');
  });

  void it('does not trim spaces: a label with a leading space is unsupported', () => {
    assertBadRequest(() => compileFieldSelector('type=Normal, reason=BackOff', 'v1'), 'field label not supported:  reason');
  });
});

void describe('parseFieldSelector', () => {
  const good: [string, { field: string; operator: '=' | '!='; value: string }[]][] = [
    ['', []],
    [',,', []],
    ['reason=BackOff', [{ field: 'reason', operator: '=', value: 'BackOff' }]],
    ['reason==BackOff', [{ field: 'reason', operator: '=', value: 'BackOff' }]],
    ['reason!=BackOff', [{ field: 'reason', operator: '!=', value: 'BackOff' }]],
    ['reason=', [{ field: 'reason', operator: '=', value: '' }]],
    ['reason!=', [{ field: 'reason', operator: '!=', value: '' }]],
    ['reason=!x', [{ field: 'reason', operator: '=', value: '!x' }]],
    ['reason= BackOff ', [{ field: 'reason', operator: '=', value: ' BackOff ' }]],
    [
      'type=Warning,reason=BackOff,',
      [
        { field: 'reason', operator: '=', value: 'BackOff' },
        { field: 'type', operator: '=', value: 'Warning' },
      ],
    ],
    ['x=a,a=x', [{ field: 'a', operator: '=', value: 'x' }, { field: 'x', operator: '=', value: 'a' }]],
    ['x=a||y\\=b', [{ field: 'x', operator: '=', value: 'a||y=b' }]],
    ['x=a\\=\\=b', [{ field: 'x', operator: '=', value: 'a==b' }]],
    // Terms sort as raw text, and '2' sorts before '='.
    ['k=\\,,k2=v2', [{ field: 'k2', operator: '=', value: 'v2' }, { field: 'k', operator: '=', value: ',' }]],
    ['k=\\\\,k2=v2', [{ field: 'k2', operator: '=', value: 'v2' }, { field: 'k', operator: '=', value: '\\' }]],
    ['k=\\\\\\,,k2=v2', [{ field: 'k2', operator: '=', value: 'v2' }, { field: 'k', operator: '=', value: '\\,' }]],
    ['함=수,목=록', [{ field: '목', operator: '=', value: '록' }, { field: '함', operator: '=', value: '수' }]],
    ['a!=b', [{ field: 'a', operator: '!=', value: 'b' }]],
    ['a==!b', [{ field: 'a', operator: '=', value: '!b' }]],
  ];
  for (const [text, want] of good) {
    void it(`parses ${JSON.stringify(text)}`, () => {
      assert.deepEqual(parseFieldSelector(text), want);
    });
  }

  const bad: [string, string][] = [
    ['x', "invalid selector: 'x'; can't understand 'x'"],
    ['x in (a)', "invalid selector: 'x in (a)'; can't understand 'x in (a)'"],
    ['x=a,b', "invalid selector: 'x=a,b'; can't understand 'b'"],
    ['b,a', "invalid selector: 'b,a'; can't understand 'a'"],
    ['z=a=b,a', "invalid selector: 'z=a=b,a'; can't understand 'a'"],
    ['type=Warning,reason', "invalid selector: 'type=Warning,reason'; can't understand 'reason'"],
    ['x==a==b', 'invalid field selector: unescaped character in value: 61'],
    ['x=a||y=b', 'invalid field selector: unescaped character in value: 61'],
    ['reason=a=b', 'invalid field selector: unescaped character in value: 61'],
    ['a=b!=c', 'invalid field selector: unescaped character in value: 61'],
    ['reason=\\a', 'invalid field selector: invalid escape sequence: \\a'],
    ['reason=\\!', 'invalid field selector: invalid escape sequence: \\!'],
    ['reason=a\\', 'invalid field selector: invalid escape sequence: \\'],
    ['reason=\\\\\\', 'invalid field selector: invalid escape sequence: \\'],
    ['k=\\수', 'invalid field selector: invalid escape sequence: \\수'],
  ];
  for (const [text, message] of bad) {
    void it(`rejects ${JSON.stringify(text)}`, () => {
      assertBadRequest(() => parseFieldSelector(text), message);
    });
  }

  void it('reports a syntax error before any unsupported label', () => {
    assertBadRequest(() => compileFieldSelector('bogus=1,x', 'v1'), "invalid selector: 'bogus=1,x'; can't understand 'x'");
  });
});

void describe('escaping', () => {
  const cases: [string, string][] = [
    ['', ''],
    ['a', 'a'],
    ['=', '\\='],
    [',', '\\,'],
    ['\\', '\\\\'],
    ['\\=\\,\\', '\\\\\\=\\\\\\,\\\\'],
    ['!', '!'],
  ];
  for (const [raw, escaped] of cases) {
    void it(`escapes ${JSON.stringify(raw)} as ${JSON.stringify(escaped)} and back`, () => {
      assert.equal(escapeFieldValue(raw), escaped);
      assert.equal(unescapeFieldValue(escaped), raw);
    });
  }

  void it('matches values holding separators once escaped', () => {
    const e: CoreEvent = { ...legacy, reason: 'a,b=c\\d' };
    assert.equal(compileFieldSelector(`reason=${escapeFieldValue('a,b=c\\d')}`, 'v1').matches(e), true);
    assert.equal(compileFieldSelector('reason=a\\,b\\=c\\\\d', 'v1').matches(e), true);
    assert.equal(compileFieldSelector('reason=a\\,b\\=c\\\\e', 'v1').matches(e), false);
  });
});

void describe('matchesFields', () => {
  void it('ANDs every requirement', () => {
    const reqs = convertFieldSelector(parseFieldSelector('reason=BackOff,type!=Normal'), 'v1');
    assert.equal(matchesFields(reqs, legacy), true);
    assert.equal(matchesFields(reqs, { ...legacy, type: 'Normal' }), false);
    assert.equal(matchesFields(reqs, { ...legacy, reason: 'Pulled' }), false);
  });

  void it('matches everything with no requirement', () => {
    assert.equal(matchesFields([], legacy), true);
    assert.equal(compileFieldSelector('', 'v1').matches(modern), true);
    assert.equal(compileFieldSelector(undefined, 'events.k8s.io/v1').matches(modern), true);
  });

  void it('reads an unknown field as ""', () => {
    assert.equal(matchesFields([{ field: 'nope', operator: '=', value: '' }], legacy), true);
    assert.equal(matchesFields([{ field: 'constructor', operator: '=', value: '' }], legacy), true);
    assert.equal(matchesFields([{ field: 'nope', operator: '!=', value: '' }], legacy), false);
  });

  void it('never matches two different equalities on one field', () => {
    assert.equal(compileFieldSelector('reason=BackOff,reason=Pulled', 'v1').matches(legacy), false);
  });
});

void describe('compileFieldSelector equalities', () => {
  void it('lists = requirements on indexed fields, in internal names', () => {
    const c = compileFieldSelector(
      'regarding.name=web-0,regarding.kind=Pod,regarding.namespace=shop,regarding.uid=u,reason=BackOff,type!=Normal,' +
        'regarding.apiVersion=v1,metadata.namespace=shop,metadata.name=n,reportingController=kubelet',
      'events.k8s.io/v1',
    );
    assert.deepEqual(c.equalities, {
      'involvedObject.name': 'web-0',
      'involvedObject.kind': 'Pod',
      'involvedObject.namespace': 'shop',
      'involvedObject.uid': 'u',
      reason: 'BackOff',
      'metadata.name': 'n',
    });
  });

  void it('includes == and type=, excludes !=', () => {
    assert.deepEqual(compileFieldSelector('type==Warning,reason!=x', 'v1').equalities, { type: 'Warning' });
  });

  void it('keeps the first equality (in sorted order) when a field repeats', () => {
    assert.deepEqual(compileFieldSelector('reason=Pulled,reason=BackOff', 'v1').equalities, { reason: 'BackOff' });
  });

  void it('is empty without a selector', () => {
    assert.deepEqual(compileFieldSelector('', 'v1').equalities, {});
  });
});

void describe('formatFieldSelector', () => {
  const cases: [string, string][] = [
    ['', ''],
    ['x=a,y=b,z=c', 'x=a,y=b,z=c'],
    ['x!=a,y=b', 'x!=a,y=b'],
    ['x=a||y\\=b', 'x=a||y\\=b'],
    ['x=a\\=\\=b', 'x=a\\=\\=b'],
    ['x=a,a=x', 'a=x,x=a'],
    ['reason==BackOff', 'reason=BackOff'],
    ['k=\\,\\\\', 'k=\\,\\\\'],
  ];
  for (const [text, want] of cases) {
    void it(`prints ${JSON.stringify(text)} as ${JSON.stringify(want)}`, () => {
      assert.equal(formatFieldSelector(parseFieldSelector(text)), want);
    });
  }

  void it('round-trips arbitrary values', () => {
    const reqs = [{ field: 'involvedObject.name', operator: '=' as const, value: 'a,b=c\\' }];
    assert.deepEqual(parseFieldSelector(formatFieldSelector(reqs)), reqs);
  });
});

void describe('compareUtf8', () => {
  void it('orders by code point like Go byte order, unlike UTF-16 order', () => {
    const astral = '\u{1F600}';
    const high = '\uFF01';
    assert.ok(astral < high, 'UTF-16 puts the astral character first');
    assert.equal(compareUtf8(astral, high), 1);
    assert.equal(compareUtf8('a', 'ab'), -1);
    assert.equal(compareUtf8('ab', 'a'), 1);
    assert.equal(compareUtf8('ab', 'ab'), 0);
  });
});
