import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeTerminal } from './escape.js';

void test('escapeTerminal replaces ESC and CR only', () => {
  const cases: [string, string][] = [
    ['', ''],
    ['plain text', 'plain text'],
    ['\x1b[31mred\x1b[0m', '^[[31mred^[[0m'],
    ['over\rwrite', 'over\\rwrite'],
    ['\r\n', '\\r\n'],
    ['tab\tand\nnewline\fform', 'tab\tand\nnewline\fform'],
    ['\x07bell \x00nul \x9bcsi', '\x07bell \x00nul \x9bcsi'],
    ['naïve ✓ 日本', 'naïve ✓ 日本'],
    ['\x1b\x1b\r\r', '^[^[\\r\\r'],
  ];
  for (const [input, want] of cases) assert.equal(escapeTerminal(input), want, JSON.stringify(input));
});
