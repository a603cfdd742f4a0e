import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatNameLines } from './name-printer.js';
import type { CoreEvent } from '../api/index.js';

const named = (name: string): CoreEvent => ({ metadata: { name, namespace: 'default' }, involvedObject: {} });

void test('formatNameLines prints one line per event, whatever its name holds', () => {
  assert.equal(formatNameLines([]), '');
  assert.equal(formatNameLines([named('web.17a'), named('db.18b')]), 'event/web.17a\nevent/db.18b\n');
  assert.equal(formatNameLines([named('x\nevent/kube-apiserver')]), 'event/x^Jevent/kube-apiserver\n');
  assert.equal(formatNameLines([named('x\x1b]0;pwned\x07\r\u202e')]), 'event/x^[]0;pwned^G\\r\\u202e\n');
});
