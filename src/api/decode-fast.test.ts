import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeEventJson, decodeEventJsonFast, decodeEventJsonFully } from './decode.js';
import type { DecodedEvent, FieldValidation } from './decode.js';
import { isStatusError } from './status.js';
import type { EventApi } from './types.js';

/**
 * The fast path of decodeEventJson (JSON.parse) must read every body it decides exactly as the full
 * decoder (Go's scanner and sigs.k8s.io/json semantics) does, and leave every other body to it.
 */

const MODES: FieldValidation[] = ['Strict', 'Warn', 'Ignore'];
const enc = new TextEncoder();

type Outcome = { ok: true; event: string; warnings: string[] } | { ok: false; code: number | undefined; message: string };

function outcome(fn: () => DecodedEvent): Outcome {
  try {
    const d = fn();
    // The stored text is what matters, property order included.
    return { ok: true, event: JSON.stringify(d.event), warnings: d.warnings };
  } catch (e) {
    if (!isStatusError(e)) throw e;
    return { ok: false, code: e.status.code, message: e.status.message ?? '' };
  }
}

/** same asserts that decodeEventJson (with its fast path) and the full decoder agree on `body` in every mode. */
function same(body: Uint8Array, api: EventApi, what: string): void {
  for (const fieldValidation of MODES) {
    const full = outcome(() => decodeEventJsonFully(body, api, { fieldValidation }));
    const fast = outcome(() => decodeEventJson(body, api, { fieldValidation }));
    assert.deepEqual(fast, full, `${what} (${fieldValidation}): ${Buffer.from(body).toString('utf8').slice(0, 400)}`);
  }
}

const T = '2026-12-05T10:00:00Z';
const MT = '2026-12-05T10:00:00.123456Z';

/** coreEvent is what client-go's recorder posts (nulls where Go marshals zero times). */
function coreEvent(i: number): Record<string, unknown> {
  return {
    kind: 'Event',
    apiVersion: 'v1',
    metadata: {
      name: `web-${i}.17a2b3c4d5e6f${i}`,
      namespace: 'default',
      creationTimestamp: null,
      labels: { app: 'web', tier: `t${i % 3}` },
      annotations: { note: 'x' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: `web-${i}`, uid: `u-${i}`, controller: true, blockOwnerDeletion: false }],
      finalizers: ['example.com/keep'],
      managedFields: [{ manager: 'kubectl', operation: 'Update', apiVersion: 'v1', time: T, fieldsType: 'FieldsV1', fieldsV1: { 'f:count': {}, 'f:message': {} } }],
    },
    involvedObject: { kind: 'Pod', namespace: 'default', name: `web-${i}`, uid: `7c3a${i}-1111`, apiVersion: 'v1', resourceVersion: '42', fieldPath: 'spec.containers{app}' },
    reason: 'BackOff',
    message: 'Back-off restarting failed container app in pod web_default(7c3a)',
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: T,
    lastTimestamp: T,
    count: 3,
    type: 'Warning',
    eventTime: null,
    reportingComponent: 'kubelet',
    reportingInstance: 'node-1',
  };
}

/** eventsEvent is what an events.k8s.io/v1 recorder posts. */
function eventsEvent(i: number): Record<string, unknown> {
  return {
    kind: 'Event',
    apiVersion: 'events.k8s.io/v1',
    metadata: { name: `sched-${i}.17a2b3c4d5e6f${i}`, namespace: 'default', creationTimestamp: null },
    eventTime: MT,
    series: { count: 2, lastObservedTime: MT },
    reportingController: 'default-scheduler',
    reportingInstance: 'default-scheduler-node-1',
    action: 'Scheduling',
    reason: 'FailedScheduling',
    regarding: { kind: 'Pod', namespace: 'default', name: `web-${i}`, uid: `u-${i}`, apiVersion: 'v1' },
    related: { kind: 'Node', name: 'node-1' },
    note: '0/3 nodes are available: 3 Insufficient cpu.',
    type: 'Warning',
  };
}

/** bodiesOf are the i-th body of each API, with the API it is posted to. */
const bodiesOf = (i: number): [EventApi, Record<string, unknown>][] => [
  ['v1', coreEvent(i)],
  ['events.k8s.io/v1', eventsEvent(i)],
];

/** goStyle is JSON.stringify's text as Go's encoder writes it: <, >, &, U+2028 and U+2029 escaped. */
const goStyle = (text: string): string => text.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** A small seeded PRNG (mulberry32), so that a failure names a body that comes back. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** paths lists every property path of a JSON value (object keys and array indexes). */
function paths(v: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (typeof v === 'object' && v !== null) {
    for (const [k, x] of Array.isArray(v) ? v.map((x, i) => [i, x] as const) : Object.entries(v)) {
      out.push([...at, k]);
      paths(x, [...at, k], out);
    }
  }
  return out;
}

const ODD_VALUES: unknown[] = [
  '<b>&</b>', 'a\u2028b', 'tab\there', 'nul\u0000', null, true, false, 0, -1, 1.5, 2147483647, 2147483648, -2147483649, 9007199254740991, 1e21, '', 'x', '2026-12-05T10:00:00Z',
  '2026-12-05T10:00:00.5+02:00', '2026-13-05T10:00:00Z', 'not a time', [], ['a'], [null], {}, { a: 'b' }, { a: 1 }, { a: null },
];
const ODD_KEYS = ['Kind', 'KIND', 'apiversion', 'ApiVersion', 'unknownField', '__proto__', '1', 'metadata', 'kind', 'count', 'ſpec', 'K\u212aind'];

/** mutate changes one random place of a deep copy of `base`: a value of another type, a new key, a removed key. */
function mutate(base: Record<string, unknown>, rand: () => number): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
  const all = paths(copy);
  const pick = <X>(xs: readonly X[]): X => xs[Math.floor(rand() * xs.length)]!;
  const path = pick(all);
  let parent: Record<string | number, unknown> = copy;
  for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  const r = rand();
  if (r < 0.6) parent[last] = pick(ODD_VALUES);
  else if (r < 0.8 && !Array.isArray(parent)) Object.defineProperty(parent, pick(ODD_KEYS), { value: pick(ODD_VALUES), enumerable: true, writable: true, configurable: true });
  else if (!Array.isArray(parent)) delete parent[last];
  else parent[last] = pick(ODD_VALUES);
  return copy;
}

void describe('the fast path of decodeEventJson', () => {
  it('decides the bodies recorders send, and reads them as the full decoder does', () => {
    for (let i = 0; i < 50; i++) {
      for (const [api, body] of bodiesOf(i)) {
        const bytes = enc.encode(JSON.stringify(body));
        assert.notEqual(decodeEventJsonFast(bytes, api), undefined, `the fast path decides ${JSON.stringify(body)}`);
        same(bytes, api, 'a recorder body');
      }
    }
  });

  it("decides what Go's encoder writes: <, >, &, U+2028 and U+2029 escaped, and a final newline", () => {
    const e = coreEvent(7);
    e.message = 'Readiness probe failed: <html> & "quotes" \u2028 line';
    const bytes = enc.encode(`${goStyle(JSON.stringify(e))}\n`);
    assert.ok(Buffer.from(bytes).toString().includes('\\u003chtml\\u003e \\u0026'), 'escaped as Go escapes');
    assert.notEqual(decodeEventJsonFast(bytes, 'v1'), undefined, 'the fast path decides it');
    same(bytes, 'v1', "Go's encoder output");
  });

  it('leaves to the full decoder what JSON.parse cannot show: whitespace, duplicates, number forms, escapes, bad UTF-8, a BOM', () => {
    const core = JSON.stringify(coreEvent(1));
    const bodies: [string | Uint8Array, string][] = [
      [JSON.stringify(coreEvent(1), null, 2), 'indented'],
      [core.replace('"reason":"BackOff"', '"reason":"BackOff","reason":"Other"'), 'a duplicate string field'],
      [core.replace('"metadata":{', '"metadata":{"labels":{"z":"1"},'), 'a duplicate map, merged by Go'],
      [core.replace('"count":3', '"count":3.0'), 'an integer written with a fraction'],
      [core.replace('"count":3', '"count":3e0'), 'an integer with an exponent'],
      [core.replace('"count":3', '"count":-0'), 'minus zero'],
      [core.replace('"count":3', '"count":12345678901234567890'), 'a number past int64'],
      [core.replace('"reason":"BackOff"', '"reason":"Back\\u004fff"'), 'a \\u escape'],
      [core.replace('"reason":"BackOff"', '"reason":"\\ud800"'), 'a lone surrogate'],
      [core.replace('"reason":"BackOff"', '"reason":"a\\/b"'), 'an escaped slash'],
      [core.replace('"message":"', '"message":"<b>&amp;</b> '), 'HTML characters'],
      [Buffer.concat([Buffer.from(core.slice(0, 20)), Buffer.from([0xff, 0xfe]), Buffer.from(core.slice(20))]), 'bytes that are not UTF-8'],
      [Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(core)]), 'a byte order mark'],
      [core.replace('"kind":"Event"', '"Kind":"Event"'), 'kind with another case'],
      [core.replace('"kind":"Event"', '"kind":"Pod"'), 'another kind'],
      [core.replace('"apiVersion":"v1"', '"apiVersion":"events.k8s.io/v1"'), 'another API version'],
      [core.replace('"apiVersion":"v1"', '"apiVersion":"a/b/c"'), 'a bad API version'],
      [core.replace('"type":"Warning"', '"type":"Warning","extra":1'), 'an unknown field'],
      [core.replace('"firstTimestamp":"2026-12-05T10:00:00Z"', '"firstTimestamp":"yesterday"'), 'a bad time'],
      ['null', 'null'],
      ['[]', 'an array'],
      ['"x"', 'a string'],
      ['{}', 'an empty object'],
      [`{"a":${'['.repeat(20)}${']'.repeat(20)}}`, 'nesting'],
      [`${core.slice(0, -1)},"metadata":{"name":"${'x'.repeat(17 * 1024)}"}}`, 'a body past the fast path bound'],
    ];
    for (const [body, what] of bodies) {
      const bytes = typeof body === 'string' ? enc.encode(body) : body;
      same(bytes, 'v1', what);
      same(bytes, 'events.k8s.io/v1', what);
    }
    assert.equal(decodeEventJsonFast(enc.encode(JSON.stringify(coreEvent(1), null, 2)), 'v1'), undefined, 'indented text is left to the full decoder');
  });

  it('agrees with the full decoder on 4,000 bodies of JSON.stringify form with odd values and keys anywhere', () => {
    const rand = prng(20261205);
    let decided = 0;
    for (let i = 0; i < 2000; i++) {
      for (const [api, base] of bodiesOf(i)) {
        let body = base;
        const changes = 1 + Math.floor(rand() * 3);
        for (let k = 0; k < changes; k++) body = mutate(body, rand);
        // The text as JSON.stringify writes it, or as Go's encoder does, sometimes with a surrogate escaped.
        let text = JSON.stringify(body);
        const form = rand();
        if (form < 0.3) text = `${goStyle(text)}\n`;
        else if (form < 0.35) text = text.replace('"reason":"', '"reason":"\\ud83d');
        else if (form < 0.4) text = text.replace('"reason":"', '"reason":"\\ud83d\\ude00');
        const bytes = enc.encode(text);
        if (decodeEventJsonFast(bytes, api) !== undefined) decided++;
        same(bytes, api, `mutated body ${i}`);
      }
    }
    // The property must have been tested on both paths.
    assert.ok(decided > 200 && decided < 3800, `the fast path decided ${decided} of 4000`);
  });
});
