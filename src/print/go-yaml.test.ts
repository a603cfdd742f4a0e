import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { goYaml } from './go-yaml.js';

describe('goYaml', () => {
  const cases: [string, unknown, string][] = [
    ['sorted keys, sequences at the key\'s indent', { b: [{ y: 1, x: 'a' }], a: {} }, 'a: {}\nb:\n- x: a\n  "y": 1\n'],
    ['strings (and keys) that read back as other types are double-quoted', { t: '2025-01-01T00:00:00Z', n: '12', e: '', b: 'yes', c: '12:30' }, 'b: "yes"\nc: "12:30"\ne: ""\n"n": "12"\nt: "2025-01-01T00:00:00Z"\n'],
    ['indicators force single quotes', { m: 'a: b', h: '#x', q: "it's" }, "h: '#x'\nm: 'a: b'\nq: it's\n"],
    ['line breaks make a literal block', { m: 'one\ntwo' }, 'm: |-\n  one\n  two\n'],
    ['control characters make a double-quoted string', { m: 'red \x1b[31m' }, 'm: "red \\e[31m"\n'],
    ['long plain text folds at the first space past column 80', { m: `${'word '.repeat(20)}end` }, `m: ${'word '.repeat(15)}word\n  word word word word end\n`],
  ];
  for (const [name, value, want] of cases) it(name, () => assert.equal(goYaml(value), want));
});
