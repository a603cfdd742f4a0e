import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  GENERATED_NAME_ALPHABET,
  generateName,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  validatePathSegmentName,
} from './names.js';

const SUBDOMAIN_REGEX_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_REGEX_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const NAME_PART_REGEX_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_REGEX_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

void describe('isDNS1123Subdomain', () => {
  const cases: Array<[string, string, string[]]> = [
    ['valid', 'kube-system', []],
    ['dotted', 'a.b-c.d', []],
    ['empty', '', [SUBDOMAIN_REGEX_MSG]],
    ['uppercase', 'Foo', [SUBDOMAIN_REGEX_MSG]],
    ['underscore', 'foo_bar', [SUBDOMAIN_REGEX_MSG]],
    ['leading dash', '-a', [SUBDOMAIN_REGEX_MSG]],
    ['trailing dot', 'a.', [SUBDOMAIN_REGEX_MSG]],
    ['trailing newline', 'a\n', [SUBDOMAIN_REGEX_MSG]],
    ['253 bytes', 'a'.repeat(253), []],
    ['254 bytes', 'a'.repeat(254), ['must be no more than 253 characters']],
    ['non-ASCII', 'é', [SUBDOMAIN_REGEX_MSG]],
  ];
  for (const [name, value, want] of cases) void it(name, () => assert.deepEqual(isDNS1123Subdomain(value), want));
  void it('says bytes in the content-package wording', () => {
    assert.deepEqual(isDNS1123Subdomain('a'.repeat(254), 'bytes'), ['must be no more than 253 bytes']);
  });
});

void describe('isDNS1123Label', () => {
  const cases: Array<[string, string, string[]]> = [
    ['valid', 'default', []],
    ['dots', 'a.b', ['must not contain dots']],
    ['uppercase', 'Default', [LABEL_REGEX_MSG]],
    ['64 bytes', 'a'.repeat(64), ['must be no more than 63 characters']],
  ];
  for (const [name, value, want] of cases) void it(name, () => assert.deepEqual(isDNS1123Label(value), want));
});

void describe('isQualifiedName', () => {
  const cases: Array<[string, string, string[]]> = [
    ['plain', 'kubelet', []],
    ['mixed case and punctuation', 'My_Name.v2', []],
    ['prefixed', 'example.com/my-controller', []],
    ['empty', '', ['name part must be non-empty', NAME_PART_REGEX_MSG]],
    ['space', 'bad controller', [NAME_PART_REGEX_MSG]],
    ['empty prefix', '/name', ['prefix part must be non-empty']],
    ['bad prefix', 'Example.com/name', [`prefix part ${SUBDOMAIN_REGEX_MSG}`]],
    ['empty name after prefix', 'example.com/', ['name part must be non-empty', NAME_PART_REGEX_MSG]],
    ['63 bytes', 'a'.repeat(63), []],
    ['64 bytes', 'a'.repeat(64), ['name part must be no more than 63 bytes']],
    [
      'two slashes',
      'a/b/c',
      [
        "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      ],
    ],
  ];
  for (const [name, value, want] of cases) void it(name, () => assert.deepEqual(isQualifiedName(value), want));
});

void describe('isValidLabelValue', () => {
  const cases: Array<[string, string, string[]]> = [
    ['empty is fine', '', []],
    ['valid', 'my_value-1', []],
    ['trailing dash', 'v-', [LABEL_VALUE_REGEX_MSG]],
    ['64 bytes', 'a'.repeat(64), ['must be no more than 63 bytes']],
  ];
  for (const [name, value, want] of cases) void it(name, () => assert.deepEqual(isValidLabelValue(value), want));
});

void describe('validatePathSegmentName', () => {
  const cases: Array<[string, string, boolean, string[]]> = [
    ['ordinary', 'Foo_Bar', false, []],
    ['empty passes', '', false, []],
    ['dot', '.', false, ["may not be '.'"]],
    ['dot dot', '..', false, ["may not be '..'"]],
    ['dot as prefix is fine', '.', true, []],
    ['slash and percent', 'a/b%c', false, ["may not contain '/'", "may not contain '%'"]],
    ['slash in prefix', 'a/', true, ["may not contain '/'"]],
  ];
  for (const [name, value, prefix, want] of cases) void it(name, () => assert.deepEqual(validatePathSegmentName(value, prefix), want));
});

void describe('nameIsDNSSubdomain and nameIsDNSLabel', () => {
  void it('accept a generateName ending in a dash', () => {
    assert.deepEqual(nameIsDNSSubdomain('web-', true), []);
    assert.deepEqual(nameIsDNSLabel('web-', true), []);
  });
  void it('reject the same text as a name', () => {
    assert.deepEqual(nameIsDNSSubdomain('web-', false), [SUBDOMAIN_REGEX_MSG]);
  });
  void it('mask two bytes, not one, before a trailing dash', () => {
    // "a.-" becomes "a" + "a": upstream drops the dot too, so it passes.
    assert.deepEqual(nameIsDNSSubdomain('a.-', true), []);
    assert.deepEqual(nameIsDNSSubdomain('A-', true), []);
  });
  void it('does not lose a multi-byte character when masking', () => {
    assert.deepEqual(nameIsDNSSubdomain('é-', true), [SUBDOMAIN_REGEX_MSG]);
  });
});

void describe('generateName', () => {
  void it('appends five characters from the alphabet', () => {
    const name = generateName('topic-operator', () => 0.5);
    assert.match(name, /^topic-operator[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    assert.equal(name, `topic-operator${GENERATED_NAME_ALPHABET[13]!.repeat(5)}`);
  });
  void it('uses the random source for each character', () => {
    const seq = [0, 0.999999, 0.04, 0.5, 0.75];
    let i = 0;
    assert.equal(generateName('x-', () => seq[i++]!), 'x-b9cr2');
  });
  void it('cuts the base to 58 bytes', () => {
    const name = generateName('a'.repeat(100), () => 0);
    assert.equal(name, `${'a'.repeat(58)}bbbbb`);
    assert.equal(name.length, 63);
  });
  void it('keeps a base of exactly 58 bytes', () => {
    assert.equal(generateName('c'.repeat(58), () => 0), `${'c'.repeat(58)}bbbbb`);
  });
  void it('counts the base in bytes', () => {
    const name = generateName('é'.repeat(30), () => 0); // 60 bytes
    assert.equal(Buffer.byteLength(name.slice(0, -5)), 58);
    assert.equal(name.slice(0, -5), 'é'.repeat(29));
  });
});
