import assert from 'node:assert/strict';
import { test } from 'node:test';
import { latin1Decode, utf8Decode, utf8Encode, utf8Length } from './utf8.js';

const SAMPLES = ['', 'abc', 'é', '€', '😀', 'a\ud800b', `${'x'.repeat(100)}日本語`];

test('utf8Length counts UTF-8 bytes as Buffer does', () => {
  for (const s of SAMPLES) assert.equal(utf8Length(s), Buffer.byteLength(s), JSON.stringify(s));
});

test('utf8Encode, utf8Decode and latin1Decode read and write as Buffer does, a cut character included', () => {
  for (const s of SAMPLES) {
    const bytes = Buffer.from(s, 'utf8');
    assert.deepEqual(Buffer.from(utf8Encode(s)), bytes, JSON.stringify(s));
    assert.equal(latin1Decode(utf8Encode(s)), bytes.toString('latin1'));
    for (let cut = 0; cut <= bytes.length; cut++) assert.equal(utf8Decode(utf8Encode(s).subarray(0, cut)), bytes.subarray(0, cut).toString('utf8'), `${JSON.stringify(s)} cut at ${cut}`);
  }
  const long = 'ä'.repeat(20_000);
  assert.equal(latin1Decode(utf8Encode(long)), Buffer.from(long).toString('latin1'), 'more bytes than one fromCharCode call takes');
});
