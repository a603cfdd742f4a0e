import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { validatePathSegmentName } from './names.js';
import {
  goTimeJSON,
  isZeroTime,
  prepareObjectMetaUpdate,
  timeKey,
  validateKubeFinalizerNames,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './object-meta.js';
import { fieldErrorString, formatBadValue } from './status.js';
import type { ObjectMeta } from './types.js';

const base = (): ObjectMeta => ({ name: 'e1', namespace: 'default', resourceVersion: '3' });

void describe('validateObjectMeta', () => {
  const cases: Array<[string, (m: ObjectMeta) => void, string[]]> = [
    ['valid', () => undefined, []],
    ['negative generation', (m) => (m.generation = -1), ['metadata.generation: Invalid value: -1: must be greater than or equal to 0']],
    [
      'annotations over 256 KiB in total',
      (m) => (m.annotations = { a: 'x'.repeat(200 * 1024), b: 'y'.repeat(56 * 1024) }),
      ['metadata.annotations: Too long: may not be more than 262144 bytes'],
    ],
    ['annotations of exactly 256 KiB', (m) => (m.annotations = { a: 'x'.repeat(256 * 1024 - 1) }), []],
    [
      'owner reference fields required',
      (m) => (m.ownerReferences = [{ apiVersion: '', kind: '', name: '', uid: '' }]),
      [
        'metadata.ownerReferences[0].apiVersion: Required value: must not be empty',
        'metadata.ownerReferences[0].kind: Required value: must not be empty',
        'metadata.ownerReferences[0].name: Required value: must not be empty',
        'metadata.ownerReferences[0].uid: Required value: must not be empty',
      ],
    ],
    [
      'owner reference apiVersion syntax',
      (m) => (m.ownerReferences = [{ apiVersion: 'a/b/c', kind: 'K', name: 'n', uid: 'u' }]),
      ['metadata.ownerReferences[0].apiVersion: Invalid value: "a/b/c": must be <group>/<version> or <version>'],
    ],
    [
      'an Event may not be an owner',
      (m) => (m.ownerReferences = [{ apiVersion: 'v1', kind: 'Event', name: 'n', uid: 'u', controller: false }]),
      [
        'metadata.ownerReferences[0]: Invalid value: {"apiVersion":"v1","kind":"Event","name":"n","uid":"u","controller":false}: /v1, Kind=Event is disallowed from being an owner',
      ],
    ],
    [
      'only one controller',
      (m) =>
        (m.ownerReferences = [
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'a', uid: '1', controller: true },
          { apiVersion: 'apps/v1', kind: 'Deployment', name: 'b', uid: '2', controller: true },
        ]),
      [
        'metadata.ownerReferences: Invalid value: [{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"a","uid":"1","controller":true},{"apiVersion":"apps/v1","kind":"Deployment","name":"b","uid":"2","controller":true}]: Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/a and Deployment/b',
      ],
    ],
    [
      'finalizer names are qualified names',
      (m) => (m.finalizers = ['a b']),
      [
        "metadata.finalizers: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      ],
    ],
    [
      'orphan and foregroundDeletion together',
      (m) => (m.finalizers = ['orphan', 'foregroundDeletion']),
      ['metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set'],
    ],
    [
      'managedFields operation',
      (m) => (m.managedFields = [{ manager: 'm' }, { manager: 'm', operation: 'Patch' }]),
      [
        'metadata.managedFields[0].operation: Required value: must not be empty',
        'metadata.managedFields[1].operation: Unsupported value: "Patch": supported values: "Apply", "Update"',
      ],
    ],
    [
      'managedFields fieldsType and manager',
      (m) => (m.managedFields = [{ manager: 'a\tb', operation: 'Update', fieldsType: 'FieldsV2' }]),
      [
        'metadata.managedFields[0].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`',
        'metadata.managedFields[0].manager: Invalid value: "a\\tb": invalid character U+0009 (at position 1)',
      ],
    ],
    [
      'managedFields manager over 128 bytes',
      (m) => (m.managedFields = [{ manager: 'm'.repeat(129), operation: 'Apply' }]),
      ['metadata.managedFields[0].manager: Too long: may not be more than 128 bytes'],
    ],
  ];
  for (const [name, mutate, want] of cases) {
    void it(name, () => {
      const m = base();
      mutate(m);
      assert.deepEqual(validateObjectMeta(m, validatePathSegmentName).map(fieldErrorString), want);
    });
  }
});

void describe('validateKubeFinalizerNames', () => {
  void it('accepts the standard names and prefixed names only', () => {
    assert.deepEqual(validateKubeFinalizerNames(['kubernetes', 'orphan', 'foregroundDeletion', 'x.io/y']), []);
    assert.deepEqual(validateKubeFinalizerNames(['kubernetes', 'mine']).map(fieldErrorString), [
      'metadata.finalizers[1]: Invalid value: "mine": name is neither a standard finalizer name nor is it fully qualified',
    ]);
  });
});

void describe('validateObjectMetaUpdate', () => {
  const cases: Array<[string, (prev: ObjectMeta, next: ObjectMeta) => void, string[]]> = [
    ['unchanged', () => undefined, []],
    ['uid', (_p, n) => (n.uid = 'u2'), ['metadata.uid: Invalid value: "u2": field is immutable']],
    [
      'creationTimestamp (Time, printed in UTC to the second)',
      (p, n) => {
        p.creationTimestamp = '2024-01-01T00:00:00Z';
        n.creationTimestamp = '2024-01-01T00:00:01.5Z';
      },
      ['metadata.creationTimestamp: Invalid value: "2024-01-01T00:00:01Z": field is immutable'],
    ],
    [
      'deletionTimestamp set',
      (_p, n) => (n.deletionTimestamp = '2024-01-01T00:00:00Z'),
      ['metadata.deletionTimestamp: Invalid value: "2024-01-01T00:00:00Z": field is immutable'],
    ],
    [
      'deletionGracePeriodSeconds',
      (p, n) => {
        p.deletionGracePeriodSeconds = 30;
        delete n.deletionGracePeriodSeconds;
      },
      ['metadata.deletionGracePeriodSeconds: Invalid value: null: field is immutable'],
    ],
    [
      'generation may not go down',
      (p, n) => {
        p.generation = 3;
        n.generation = 2;
      },
      ['metadata.generation: Invalid value: 2: must not be decremented'],
    ],
    [
      'no new finalizers while deleting',
      (p, n) => {
        p.deletionTimestamp = '2024-01-01T00:00:00Z';
        n.deletionTimestamp = '2024-01-01T00:00:00Z';
        p.finalizers = ['a.io/x'];
        n.finalizers = ['a.io/x', 'c.io/z', 'b.io/y'];
      },
      ['metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"b.io/y", "c.io/z"}'],
    ],
  ];
  for (const [name, mutate, want] of cases) {
    void it(name, () => {
      const prev = base();
      const next = base();
      mutate(prev, next);
      assert.deepEqual(validateObjectMetaUpdate(next, prev).map(fieldErrorString), want);
    });
  }
});

void describe('prepareObjectMetaUpdate', () => {
  void it('carries server-owned fields over from the stored object', () => {
    const prev: ObjectMeta = {
      ...base(),
      uid: 'u1',
      generation: 4,
      creationTimestamp: '2024-01-01T00:00:00Z',
      deletionTimestamp: '2024-01-02T00:00:00Z',
      deletionGracePeriodSeconds: 30,
    };
    const next: ObjectMeta = { ...base(), generation: 9, creationTimestamp: '2030-01-01T00:00:00Z', labels: { a: 'b' } };
    const out = prepareObjectMetaUpdate(next, prev);
    assert.deepEqual(out, { ...prev, labels: { a: 'b' } });
    assert.deepEqual(validateObjectMetaUpdate(out, prev), []);
    assert.equal(next.generation, 9, 'the input is not modified');
  });
  void it('keeps a uid the client sent, and drops a generation the stored object lacks', () => {
    const out = prepareObjectMetaUpdate({ ...base(), uid: 'mine', generation: 2 }, { ...base(), uid: 'u1' });
    assert.equal(out.uid, 'mine');
    assert.equal('generation' in out, false);
  });
});

void describe('Go time values', () => {
  void it('isZeroTime', () => {
    for (const z of [undefined, null, '', '0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000000Z']) assert.equal(isZeroTime(z), true, String(z));
    assert.equal(isZeroTime('1970-01-01T00:00:00Z'), false);
  });
  void it('goTimeJSON prints UTC at the precision of the type', () => {
    assert.equal(goTimeJSON('2024-05-01T12:30:00.987654321+02:00', 'second'), '2024-05-01T10:30:00Z');
    assert.equal(goTimeJSON('2024-05-01T12:30:00.987654321+02:00', 'micro'), '2024-05-01T10:30:00.987654Z');
    assert.equal(goTimeJSON('2024-05-01T10:30:00Z', 'micro'), '2024-05-01T10:30:00.000000Z');
    assert.equal(goTimeJSON('1969-12-31T23:59:59.5Z', 'micro'), '1969-12-31T23:59:59.500000Z');
    assert.equal(goTimeJSON(null, 'second'), null);
  });
  void it('timeKey compares instants, truncated when asked', () => {
    assert.equal(timeKey('2024-05-01T12:00:00+02:00'), timeKey('2024-05-01T10:00:00Z'));
    assert.notEqual(timeKey('2024-05-01T10:00:00.1Z'), timeKey('2024-05-01T10:00:00Z'));
    assert.equal(timeKey('2024-05-01T10:00:00.0000001Z', 'micro'), timeKey('2024-05-01T10:00:00Z', 'micro'));
    assert.equal(timeKey('garbage'), 'raw:garbage');
  });
});

void describe('formatBadValue (Go %q and json.Marshal)', () => {
  const cases: Array<[string, unknown, string]> = [
    ['plain string', 'abc', '"abc"'],
    ['quotes and backslashes', 'a"b\\c', '"a\\"b\\\\c"'],
    ['control characters', '\x07\n\x01\x7f', '"\\a\\n\\x01\\x7f"'],
    ['printable unicode kept', 'é☃😀', '"é☃😀"'],
    ['non-printable unicode escaped', '\u00a0\u2028', '"\\u00a0\\u2028"'],
    ['numbers and null', 3, '3'],
    ['structs escape HTML', { a: '<&>' }, '{"a":"\\u003c\\u0026\\u003e"}'],
  ];
  for (const [name, v, want] of cases) void it(name, () => assert.equal(formatBadValue(v), want));
});
