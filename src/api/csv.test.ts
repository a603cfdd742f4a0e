import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeCsvField } from './csv.js';

void test('escapeCsvField quotes where RFC 4180 needs it and defuses spreadsheet formulas', () => {
  const cases: [string, string][] = [
    ['plain', 'plain'],
    ['', ''],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['=HYPERLINK("https://evil.example","click")', `"'=HYPERLINK(""https://evil.example"",""click"")"`],
    ['+cmd|\' /C calc\'!A0', `'+cmd|' /C calc'!A0`],
    ['-2+3+cmd|\' /C calc\'!A0', `'-2+3+cmd|' /C calc'!A0`],
    ['@SUM(1+1)', "'@SUM(1+1)"],
    ['\t=1+1', "'\t=1+1"],
    ['\r=1+1', "'\\r=1+1"],
    ['a=b', 'a=b'],
    ['2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z'],
    ['esc\x1b[2J c1\x9b bidi\u202e', 'esc^[[2J c1\\u009b bidi\\u202e'],
  ];
  for (const [input, want] of cases) assert.equal(escapeCsvField(input), want, JSON.stringify(input));
});
