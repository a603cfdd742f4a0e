import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeObject, encodeObject, encodeObjectBase64 } from './object-codec.js';

const EVENT = JSON.stringify({
  kind: 'Event',
  apiVersion: 'v1',
  metadata: {
    name: 'web-7d9f8b6c4-x2v9k.17a2b3c4d5e6f7a',
    namespace: 'shop',
    uid: 'c20f3255-c013-4c65-8f62-677eda0bd13d',
    creationTimestamp: '2025-06-01T12:00:00Z',
    annotations: { 'archive.kevents.io/source-resource-version': '123456' },
  },
  involvedObject: { kind: 'Pod', namespace: 'shop', name: 'web-7d9f8b6c4-x2v9k', uid: '0e2b1f3a-5c6d-4e7f-8a9b-0c1d2e3f4a5b', apiVersion: 'v1', fieldPath: 'spec.containers{app}' },
  reason: 'BackOff',
  message: 'Back-off restarting failed container app in pod web-7d9f8b6c4-x2v9k_shop(0e2b1f3a-5c6d-4e7f-8a9b-0c1d2e3f4a5b)',
  source: { component: 'kubelet', host: 'node-7' },
  firstTimestamp: '2025-06-01T12:00:00Z',
  lastTimestamp: '2025-06-01T12:04:10Z',
  count: 9,
  type: 'Warning',
  reportingComponent: 'kubelet',
  reportingInstance: 'node-7',
});

/** random is a deterministic generator, so a failing case can be run again. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x / 2 ** 32;
  };
}

const cases: { name: string; text: string }[] = [
  { name: 'the empty string', text: '' },
  { name: 'shorter than a match', text: 'abc' },
  { name: 'an event', text: EVENT },
  { name: 'non-ASCII text (accents, CJK, emoji, escapes)', text: JSON.stringify({ message: 'Échec: 容器启动失败 🚀 "quoted" \\ \n\t\u0001' }) },
  { name: 'uppercase and broken UUIDs, odd hex runs', text: 'C20F3255-C013-4C65-8F62-677EDA0BD13D c20f3255-c013-4c65-8f62-677eda0bd13 deadbeefcafe1 abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef01' },
  { name: 'a UUID at the very end', text: '"uid":"c20f3255-c013-4c65-8f62-677eda0bd13d' },
  { name: 'a long repeated message (matches longer than one token, far back)', text: `${'x'.repeat(1000)}${EVENT.repeat(200)}${'0123456789abcdef'.repeat(5000)}` },
];
const r = random(42);
for (let i = 0; i < 20; i++) {
  const alphabet = ['a', 'b', '0', 'f', '-', '"', ':', '{', 'é', '💥', 'kind', '"name":"', 'c20f3255-c013-4c65-8f62-677eda0bd13d'];
  let text = '';
  const n = Math.floor(r() * 3000);
  while (text.length < n) text += alphabet[Math.floor(r() * alphabet.length)]!;
  cases.push({ name: `random text ${i} (${n} chars)`, text });
}

for (const c of cases) {
  void test(`encodeObject and decodeObject round-trip ${c.name}`, () => {
    assert.equal(decodeObject(encodeObject(c.text)), c.text);
  });
}

// The last text is longer than any encoded before it, so the encoder's buffer grows during that call.
for (const c of [...cases, { name: 'a text that outgrows every buffer before it', text: EVENT.repeat(2000) }]) {
  void test(`encodeObjectBase64 is encodeObject's bytes in base64: ${c.name}`, () => {
    const packed = encodeObjectBase64(c.text);
    assert.equal(packed, encodeObject(c.text).toString('base64'));
    assert.equal(decodeObject(Buffer.from(packed, 'base64')), c.text);
  });
}

void test('an event is stored in under a third of its JSON size', () => {
  const size = encodeObject(EVENT).length;
  assert.ok(size < Buffer.byteLength(EVENT) / 3, `${size} bytes of ${Buffer.byteLength(EVENT)}`);
});

void test('decodeObject refuses an unknown encoding or a damaged value', () => {
  const good = encodeObject(EVENT);
  assert.throws(() => decodeObject(Buffer.from(EVENT)), /unknown encoding 123/);
  assert.throws(() => decodeObject(Buffer.alloc(0)), /unknown encoding/);
  assert.throws(() => decodeObject(good.subarray(0, good.length - 3)), /past the end|shorter than its length/);
  // A copy from further back than the dictionary reaches.
  const badCopy = Buffer.from([1, 10, 0x80, 0xff, 0xff, 0x7f]);
  assert.throws(() => decodeObject(badCopy), /out of bounds/);
});
