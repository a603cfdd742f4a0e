import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { escapeMarkdown, markdownCode } from './markdown.js';

interface MarkdownIt {
  render(src: string): string;
}
const markdownIt = createRequire(import.meta.url)('markdown-it') as (preset: string, options: object) => MarkdownIt;
/** md is a CommonMark renderer with GFM tables and raw HTML on, as a permissive viewer would be. */
const md = markdownIt('default', { html: true, linkify: false });

const HOSTILE = [
  '[click here](https://evil.example/x)',
  '![](https://tracker.example/pixel.png)',
  '![alt][ref]\n\n[ref]: https://evil.example',
  '<https://evil.example>',
  '<img src=x onerror=alert(1)>',
  '<script>alert(1)</script>',
  '`code` and ``more``',
  'a | b | c',
  '**bold** _em_ ~~gone~~',
  '&lt;b&gt; &#x5B;x&#x5D;(https://evil.example)',
  '\\[x\\](https://evil.example)',
  'line one\n\n# heading\n- item',
  'esc \x1b[31m c1 \x9b bidi \u202e',
];

void test('escapeMarkdown renders as the text it holds: no link, image, HTML, code or emphasis', () => {
  for (const s of HOSTILE) {
    const html = md.render(`x ${escapeMarkdown(s)}`);
    assert.doesNotMatch(html, /<(a|img|script|code|strong|em|s|h1|li|ul)\b/, `${JSON.stringify(s)} -> ${html}`);
    assert.ok(!/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]/.test(escapeMarkdown(s)), JSON.stringify(s));
  }
  assert.equal(md.render(escapeMarkdown('[a](b) *c* <d> e|f')), '<p>[a](b) *c* &lt;d&gt; e|f</p>\n');
  assert.equal(escapeMarkdown('Back-off restarting failed container api in pod api-1_shop(1234)'), 'Back-off restarting failed container api in pod api-1\\_shop(1234)');
});

void test('escapeMarkdown keeps a table row to its cells', () => {
  for (const s of HOSTILE) {
    const html = md.render(`| a | b |\n|---|---|\n| ${escapeMarkdown(s)} | end |\n`);
    assert.equal((html.match(/<td>/g) ?? []).length, 2, `${JSON.stringify(s)} -> ${html}`);
    assert.match(html, /<td>end<\/td>/);
  }
});

void test('markdownCode is one code span whatever backticks the text holds', () => {
  const cases: [string, string][] = [
    ['Pod/web-0', '`Pod/web-0`'],
    ['a`b', '``a`b``'],
    ['``x', '``` ``x ```'],
    ['a|b', '`a\\|b`'],
  ];
  for (const [input, want] of cases) assert.equal(markdownCode(input), want);
  for (const s of [...HOSTILE, '`', '```', 'x`']) {
    const html = md.render(`see ${markdownCode(s)} here`);
    assert.equal((html.match(/<code>/g) ?? []).length, 1, `${JSON.stringify(s)} -> ${html}`);
    assert.doesNotMatch(html, /<(a|img|script)\b/, html);
  }
});
