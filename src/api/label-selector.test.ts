import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  LABEL_SELECTOR_NOTHING,
  goQuote,
  labelSelectorFromMatch,
  parseLabelSelector,
} from './label-selector.js';
import type { MetaLabelSelector } from './label-selector.js';
import { isStatusError } from './status.js';

function assertBadRequest(fn: () => unknown, message: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(isStatusError(e), 'expected a StatusError');
    assert.equal(e.status.code, 400);
    assert.equal(e.status.reason, 'BadRequest');
    assert.equal(e.status.message, message);
    return true;
  });
}

const keyName =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const valueRule =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const prefixRule =
  "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const operators = 'in, notin, =, ==, !=, gt, lt';

void describe('parseLabelSelector: accepted syntax', () => {
  const cases: [string, string][] = [
    ['', ''],
    ['x=a,y=b,z=c', 'x=a,y=b,z=c'],
    ['x!=a,y=b', 'x!=a,y=b'],
    ['x==a', 'x==a'],
    ['x=', 'x='],
    ['x= ', 'x='],
    ['x=,z= ', 'x=,z='],
    ['x= ,z= ', 'x=,z='],
    ['!x', '!x'],
    ['x', 'x'],
    ['a ', 'a'],
    ['\rx', 'x'],
    ['x>1', 'x>1'],
    ['x>1,z<5', 'x>1,z<5'],
    ['x<0', 'x<0'],
    ['a=b,c\u0000=d', 'a=b,c=d'],
    ['a=b,\u0000c', 'a=b,c'],
    ['a=b \u0000,c', 'a=b'],
    ['z=a,a=z', 'a=z,z=a'],
    ['x in (b,a)', 'x in (a,b)'],
    ['x in (abc,abc)', 'x in (abc)'],
    ['x in ()', 'x in ()'],
    ['x in (abc,)', 'x in (,abc)'],
    ['x in (a,,a,,a,,a,,)', 'x in (,a)'],
    ['x notin ( )', 'x notin ()'],
    ['x notin (, a)', 'x notin (,a)'],
    ['foo  in\t (abc)', 'foo in (abc)'],
    ['x notin\n (abc)', 'x notin (abc)'],
    ['x notin (abc,,def),bar,z in (),w', 'bar,w,x notin (,abc,def),z in ()'],
    ['a in (x,y,notin, z,in)', 'a in (in,notin,x,y,z)'],
    ['in in (in)', 'in in (in)'],
    ['notin=in', 'notin=in'],
    ['this-is-a-dns.domain.com/key-with-dash', 'this-is-a-dns.domain.com/key-with-dash'],
    ['0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)', '0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)'],
    ['tier notin (db),!canary,app.kubernetes.io/name=web', 'app.kubernetes.io/name=web,!canary,tier notin (db)'],
  ];
  for (const [text, printed] of cases) {
    void it(`parses ${JSON.stringify(text)} and prints ${JSON.stringify(printed)}`, () => {
      const s = parseLabelSelector(text);
      assert.equal(s.toString(), printed);
      assert.equal(String(s), printed);
      assert.equal(s.empty, printed === '');
    });
  }

  void it('keeps each requirement with its operator and sorted values', () => {
    assert.deepEqual(parseLabelSelector('x notin (b,a),!y,z,w>3,v==1').requirements, [
      { key: 'v', operator: '==', values: ['1'] },
      { key: 'w', operator: 'gt', values: ['3'] },
      { key: 'x', operator: 'notin', values: ['a', 'b'] },
      { key: 'y', operator: '!', values: [] },
      { key: 'z', operator: 'exists', values: [] },
    ]);
  });
});

void describe('parseLabelSelector: matching', () => {
  const cases: [string, Record<string, string> | undefined, boolean][] = [
    ['', { x: 'y' }, true],
    ['', undefined, true],
    ['x=y', { x: 'y' }, true],
    ['x=y', { x: 'z' }, false],
    ['x=y', undefined, false],
    ['x==y', { x: 'y' }, true],
    ['x=y,z=w', { x: 'y', z: 'w' }, true],
    ['x=y,z=w', { x: 'w', z: 'w' }, false],
    ['x!=y,z!=w', { x: 'z', z: 'a' }, true],
    ['x!=y,z!=w', { x: 'z', z: 'w' }, false],
    ['x!=y', {}, true],
    ['x!=y', undefined, true],
    ['x=', { x: '' }, true],
    ['x=', {}, false],
    ['notin=in', { notin: 'in' }, true],
    ['x', { x: 'z' }, true],
    ['x', { x: '' }, true],
    ['x', { y: 'z' }, false],
    ['!x', { y: 'z' }, true],
    ['!x', { x: 'z' }, false],
    ['!x', undefined, true],
    ['x in (a,b)', { x: 'b' }, true],
    ['x in (a,b)', { x: 'c' }, false],
    ['x in (a,b)', {}, false],
    ['x in ()', { x: '' }, true],
    ['x notin (a,b)', { x: 'c' }, true],
    ['x notin (a,b)', { x: 'a' }, false],
    ['x notin (a,b)', {}, true],
    ['x>1', { x: '2' }, true],
    ['x>1', { x: '1' }, false],
    ['x>1', { x: '0' }, false],
    ['x<1', { x: '0' }, true],
    ['x<1', { x: '2' }, false],
    ['x<1', { x: 'abc' }, false],
    ['x>1', {}, false],
    ['x>9223372036854775806', { x: '9223372036854775807' }, true],
    ['x<1', { x: '-9223372036854775809' }, false],
    ['constructor', {}, false],
    ['!constructor', {}, true],
    ['app.kubernetes.io/name=web,tier notin (db)', { 'app.kubernetes.io/name': 'web', tier: 'fe' }, true],
  ];
  for (const [text, labels, want] of cases) {
    void it(`${JSON.stringify(text)} on ${JSON.stringify(labels)} → ${want}`, () => {
      assert.equal(parseLabelSelector(text).matches(labels), want);
    });
  }
});

void describe('parseLabelSelector: errors', () => {
  const req = (m: string): string => `unable to parse requirement: ${m}`;
  const cases: [string, string][] = [
    ['x=a||y=b', req(`values[0][x]: Invalid value: "a||y": ${valueRule}`)],
    ['x==a==b', "found '==', expected: ',' or 'end of string'"],
    ['!x=a', "found '=', expected: ',' or 'end of string'"],
    ['x<a', req(`values[0]: Invalid value: "a": for 'Gt', 'Lt' operators, the value must be an integer`)],
    ['x>', req(`values[0]: Invalid value: "": for 'Gt', 'Lt' operators, the value must be an integer`)],
    ['x<-1', req(`values[0][x]: Invalid value: "-1": ${valueRule}`)],
    ['x>99999999999999999999', req(`values[0]: Invalid value: "99999999999999999999": for 'Gt', 'Lt' operators, the value must be an integer`)],
    ['x,,y', "found ',', expected: identifier after ','"],
    [',x,y', "found ',', expected: !, identifier, or 'end of string'"],
    ['x nott in (y)', req(`found 'nott', expected: ${operators}`)],
    ['a in (xyz),', "found '', expected: identifier after ','"],
    ['a in (xyz)b notin ()', "found 'b', expected: ',' or 'end of string'"],
    ['a in (xyz abc)', req("found 'abc', expected: ',' or ')'")],
    ['a in (x=)', req("found '=', expected: ',' or ')'")],
    ['a in (=)', req("found '=', expected: ',', ')' or identifier")],
    ['a in (,=)', req("found '=', expected: ',', or identifier")],
    ['a notin(', req("found '', expected: ',', ')' or identifier")],
    ['x notin', req("found '' expected: '('")],
    ['x in a', req("found 'a' expected: '('")],
    ['a (', req(`found '(', expected: ${operators}`)],
    ['a !', req(`found '!', expected: ${operators}`)],
    ['(', "found '(', expected: !, identifier, or 'end of string'"],
    ['=a', "found '=', expected: !, identifier, or 'end of string'"],
    ['!=a', "found '!=', expected: !, identifier, or 'end of string'"],
    ['x=(a)', req("found '(', expected: identifier")],
    ['!', req("found '', expected: identifier")],
    ['!!x', req("found '!', expected: identifier")],
    ['Foo_=bar', req(`<nil>: Invalid value: "Foo_": ${keyName}`)],
    ['-x', req(`<nil>: Invalid value: "-x": ${keyName}`)],
    ['x/', req(`<nil>: Invalid value: "x/": name part must be non-empty; ${keyName}`)],
    ['/x', req(`<nil>: Invalid value: "/x": prefix part must be non-empty`)],
    ['Example.com/x', req(`<nil>: Invalid value: "Example.com/x": ${prefixRule}`)],
    [
      'a/b/c',
      req(
        `<nil>: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character ` +
          `(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
      ),
    ],
    [`${'p'.repeat(254)}/k`, req(`<nil>: Invalid value: "${'p'.repeat(254)}/k": prefix part must be no more than 253 bytes`)],
    [`${'k'.repeat(64)}`, req(`<nil>: Invalid value: "${'k'.repeat(64)}": name part must be no more than 63 bytes`)],
    [`x=${'v'.repeat(64)}`, req(`values[0][x]: Invalid value: "${'v'.repeat(64)}": must be no more than 63 bytes`)],
    [`x=-${'v'.repeat(63)}`, req(`values[0][x]: Invalid value: "-${'v'.repeat(63)}": must be no more than 63 bytes; ${valueRule}`)],
    ['x in (-b,-a)', req(`[values[0][x]: Invalid value: "-a": ${valueRule}, values[1][x]: Invalid value: "-b": ${valueRule}]`)],
    ['x=é', req(`values[0][x]: Invalid value: "é": ${valueRule}`)],
    ['x=a\u0007b', req(`values[0][x]: Invalid value: "a\\ab": ${valueRule}`)],
    ['a\u0000b', req(`found 'b', expected: ${operators}`)],
    // A NUL met at the start of a token ends the input; one met inside a token is dropped.
    ['a=b, \u0000c', "found '', expected: identifier after ','"],
  ];
  for (const [text, message] of cases) {
    void it(`rejects ${JSON.stringify(text)}`, () => {
      assertBadRequest(() => parseLabelSelector(text), message);
    });
  }
});

void describe('goQuote', () => {
  const cases: [string, string][] = [
    ['abc', '"abc"'],
    ['a"b\\c', '"a\\"b\\\\c"'],
    ['\t\n\r\u0007\b\f\v', '"\\t\\n\\r\\a\\b\\f\\v"'],
    ['\u0001\u007f', '"\\x01\\x7f"'],
    ['héllo 世界', '"héllo 世界"'],
    ['\u00a0', '"\\u00a0"'],
    ['\u{1F600}', '"\u{1F600}"'],
  ];
  for (const [input, want] of cases) {
    void it(`quotes ${JSON.stringify(input)}`, () => {
      assert.equal(goQuote(input), want);
    });
  }
});

void describe('labelSelectorFromMatch', () => {
  void it('selects nothing when absent', () => {
    for (const sel of [undefined, null]) {
      const s = labelSelectorFromMatch(sel);
      assert.equal(s, LABEL_SELECTOR_NOTHING);
      assert.equal(s.matches({}), false);
      assert.equal(s.matches(undefined), false);
      assert.equal(s.empty, false);
      assert.equal(s.toString(), '');
    }
  });

  void it('selects everything when empty', () => {
    for (const sel of [{}, { matchLabels: {}, matchExpressions: [] }]) {
      const s = labelSelectorFromMatch(sel);
      assert.equal(s.empty, true);
      assert.equal(s.matches(undefined), true);
    }
  });

  const cases: [MetaLabelSelector, string, Record<string, string>, boolean][] = [
    [{ matchLabels: { app: 'web' } }, 'app=web', { app: 'web' }, true],
    [{ matchLabels: { tier: 'fe', app: 'web' } }, 'app=web,tier=fe', { app: 'web' }, false],
    [
      { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['fe', 'be'] }] },
      'app=web,tier in (be,fe)',
      { app: 'web', tier: 'be' },
      true,
    ],
    [{ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] }, 'tier notin (db)', {}, true],
    [{ matchExpressions: [{ key: 'canary', operator: 'Exists' }] }, 'canary', { canary: '' }, true],
    [{ matchExpressions: [{ key: 'canary', operator: 'DoesNotExist', values: [] }] }, '!canary', { canary: '' }, false],
    [
      { matchExpressions: [{ key: 'z', operator: 'Exists' }, { key: 'a', operator: 'In', values: ['y', 'x', 'y'] }] },
      'a in (x,y,y),z',
      { a: 'x', z: '1' },
      true,
    ],
  ];
  for (const [sel, printed, labels, want] of cases) {
    void it(`converts ${JSON.stringify(sel)}`, () => {
      const s = labelSelectorFromMatch(sel);
      assert.equal(s.toString(), printed);
      assert.equal(s.matches(labels), want);
    });
  }

  const bad: [MetaLabelSelector, string][] = [
    [{ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }, '"Gt" is not a valid label selector operator'],
    [{ matchExpressions: [{ key: 'a', operator: 'in', values: ['1'] }] }, '"in" is not a valid label selector operator'],
    [{ matchExpressions: [{ key: 'a', operator: 'In' }] }, "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"],
    [{ matchExpressions: [{ key: 'a', operator: 'NotIn', values: [] }] }, "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"],
    [
      { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['<b>'] }] },
      `[values: Invalid value: ["\\u003cb\\u003e"]: values set must be empty for exists and does not exist, values[0][a]: Invalid value: "<b>": ${valueRule}]`,
    ],
    [{ matchLabels: { Foo_: 'x' } }, `key: Invalid value: "Foo_": ${keyName}`],
    [{ matchLabels: { b: '-', a: '-' } }, `values[0][a]: Invalid value: "-": ${valueRule}`],
    [
      { matchExpressions: [{ key: '_k', operator: 'In', values: ['-v'] }] },
      `[key: Invalid value: "_k": ${keyName}, values[0][_k]: Invalid value: "-v": ${valueRule}]`,
    ],
  ];
  for (const [sel, message] of bad) {
    void it(`rejects ${JSON.stringify(sel)}`, () => {
      assertBadRequest(() => labelSelectorFromMatch(sel), message);
    });
  }
});
