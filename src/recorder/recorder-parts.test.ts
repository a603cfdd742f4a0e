import { test } from 'node:test';
import assert from 'node:assert/strict';
import { failureStatus, newInternalError, newNotFound, newTooManyRequests, StatusError } from '../api/index.js';
import { checkEventFields } from './event-checks.js';
import { EventNamer, isDnsSubdomain } from './event-name.js';
import { FakeRecorder } from './fake-recorder.js';
import { getReference } from './reference.js';
import { classifyWriteError, isNotFoundAnswer } from './write-error.js';

void test('getReference: objects need kind and apiVersion; references are copied without empty fields', () => {
  assert.deepEqual(getReference({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'n', uid: 'u', resourceVersion: '3' } }), {
    kind: 'Deployment',
    namespace: 'n',
    name: 'd',
    uid: 'u',
    apiVersion: 'apps/v1',
    resourceVersion: '3',
  });
  assert.deepEqual(getReference({ kind: 'Node', name: 'n1', namespace: '', fieldPath: 'x' }), { kind: 'Node', name: 'n1', fieldPath: 'x' });
  assert.ok(getReference({ metadata: { name: 'x' } }) instanceof Error);
  assert.ok(getReference(null) instanceof Error);
});

void test('EventNamer: hex nanoseconds, strictly increasing, UUID for invalid names unless told not to', () => {
  const n = new EventNamer();
  assert.equal(n.name('web', 1), 'web.f4240');
  assert.equal(n.name('web', 1), 'web.f4241');
  assert.equal(n.name('web', 0), 'web.f4242');
  assert.match(n.name('Web_1', 5), /^[0-9a-f-]{36}$/);
  assert.equal(n.name('Web_1', 5, false).startsWith('Web_1.'), true);
  const cases: [string, boolean][] = [
    ['a.b-c', true],
    ['A', false],
    ['-a', false],
    ['a.', false],
    ['a'.repeat(253), true],
    ['a'.repeat(254), false],
  ];
  for (const [name, ok] of cases) assert.equal(isDnsSubdomain(name), ok, name);
});

void test('checkEventFields: one row per rule', () => {
  const cases: [Parameters<typeof checkEventFields>[0], string[]][] = [
    [{ reason: 'Started', action: 'Run', note: 'ok', noteField: 'note' }, []],
    [{ reason: 'started', noteField: 'message' }, ['reason is not UpperCamelCase']],
    [{ reason: '', noteField: 'message' }, ['reason is empty']],
    [{ reason: 'Image_Pull', noteField: 'message' }, ['reason is not UpperCamelCase']],
    [{ reason: 'R' + 'a'.repeat(128), noteField: 'message' }, ['reason is 129 bytes, the limit is 128']],
    [{ reason: 'Ok', action: '', noteField: 'note' }, ['action is empty']],
    [{ reason: 'Ok', action: 'A' + 'b'.repeat(128), noteField: 'note' }, ['action is 129 bytes, the limit is 128']],
    [{ reason: 'Ok', note: 'é'.repeat(513), noteField: 'note' }, ['note is 1026 bytes, the limit is 1024']],
    [{ reason: 'Ok', note: 'x'.repeat(1024), noteField: 'message' }, []],
  ];
  for (const [input, want] of cases) {
    assert.deepEqual(
      checkEventFields(input).map((p) => `${p.field} ${p.problem}`),
      want,
      JSON.stringify(input).slice(0, 60),
    );
  }
});

void test('classifyWriteError: what is retried', () => {
  const status = (code: number, reason: string, extra: object = {}) =>
    new StatusError({ ...failureStatus(code, reason as never, 'x'), ...extra });
  const ctor = Object.assign(new Error('bad url'), { name: 'RequestConstructionError' });
  const cases: [string, unknown, boolean, { retry: boolean; quiet: boolean; retryAfterMs?: number }][] = [
    ['transport', new Error('ECONNRESET'), false, { retry: true, quiet: false }],
    ['construction', ctor, false, { retry: false, quiet: false }],
    ['500', newInternalError('x'), false, { retry: true, quiet: false }],
    ['503', status(503, 'ServiceUnavailable'), false, { retry: true, quiet: false }],
    ['429 Retry-After', newTooManyRequests('x', 7), false, { retry: true, quiet: false, retryAfterMs: 7000 }],
    ['403', status(403, 'Forbidden'), false, { retry: false, quiet: false }],
    ['422', status(422, 'Invalid'), false, { retry: false, quiet: false }],
    ['409 core', status(409, 'AlreadyExists'), false, { retry: false, quiet: true }],
    ['409 series', status(409, 'AlreadyExists'), true, { retry: true, quiet: true }],
    [
      'namespace terminating',
      new StatusError(failureStatus(403, 'Forbidden', 'x', { causes: [{ reason: 'NamespaceTerminating' }] })),
      false,
      { retry: false, quiet: true },
    ],
  ];
  for (const [name, err, series, want] of cases) {
    const got = classifyWriteError(err, series);
    assert.deepEqual({ retry: got.retry, quiet: got.quiet, ...(got.retryAfterMs ? { retryAfterMs: got.retryAfterMs } : {}) }, want, name);
  }
  assert.equal(isNotFoundAnswer(newNotFound({ group: '', resource: 'events' }, 'x')), true);
  assert.equal(isNotFoundAnswer(new Error('404')), false);
});

void test('FakeRecorder keeps client-go style lines for both APIs', () => {
  const r = new FakeRecorder({ includeObject: true });
  r.event({ regarding: { kind: 'Pod', apiVersion: 'v1', name: 'x' }, type: 'Warning', reason: 'ImageNotFound', action: 'Pull', note: 'tag v2' });
  r.event({ involvedObject: { kind: 'Node', apiVersion: 'v1', name: 'n' }, type: 'Normal', reason: 'Ready', message: 'node ready' });
  assert.deepEqual(r.events, ['Warning ImageNotFound tag v2 involvedObject{kind=Pod,apiVersion=v1}', 'Normal Ready node ready involvedObject{kind=Node,apiVersion=v1}']);
  assert.equal(r.records[0]!.action, 'Pull');
  assert.equal(r.validTypes(), true);
  r.event({ involvedObject: { kind: 'Node' }, type: 'Critical' as never, reason: 'X', message: '' });
  assert.equal(r.validTypes(), false);
  r.clear();
  assert.equal(r.events.length, 0);
});
